"""Adam and AdamW (chapters 8 and 10): the same update as ``torch.optim.Adam``.

Per parameter, running averages of the gradient (``exp_avg``) and of its square
(``exp_avg_sq``), corrected for their start at zero, give each weight its own step size.
"""

import math

import numpy as np

from ..graph import mark_changed_in_place, no_grad
from ..tensor import _wrap
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    _decoupled = False  # AdamW decays the weights directly instead of the gradient

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            for p, param, grad in self._gradients(group):
                state = self.state[p]
                if not state:
                    state["step"] = _wrap(np.zeros((), dtype=np.float32))
                    state["exp_avg"] = _wrap(np.zeros_like(param))
                    state["exp_avg_sq"] = _wrap(np.zeros_like(param))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = _wrap(np.zeros_like(param))
                state["step"]._data += 1
                step = float(state["step"]._data)
                if weight_decay:
                    if self._decoupled:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                step_size = lr / (1 - beta1 ** step)
                correction2_sqrt = math.sqrt(1 - beta2 ** step)
                if group["amsgrad"]:
                    best = state["max_exp_avg_sq"]._data
                    np.maximum(best, exp_avg_sq, out=best)
                    denom = np.sqrt(best) / correction2_sqrt + eps
                else:
                    denom = np.sqrt(exp_avg_sq) / correction2_sqrt + eps
                param -= step_size * (exp_avg / denom)
                mark_changed_in_place(param)  # a graph that saved p can no longer backward
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the step."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)
