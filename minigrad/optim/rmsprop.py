"""RMSprop: the same update as ``torch.optim.RMSprop``, step for step. No chapter uses it;
chapter 8 teaches optimizers with SGD and Adam, and this one follows the same pattern.

Per parameter, a running average of the squared gradient (``square_avg``) scales each
weight's step: ``p -= lr * g / (sqrt(square_avg) + eps)``. Options as in PyTorch: weight
decay, a momentum buffer (``momentum_buffer``) and the centered variant, which subtracts the
square of a running average of the gradient (``grad_avg``) to estimate its variance.
"""

import numpy as np

from ..graph import mark_changed_in_place, no_grad
from ..tensor import _wrap
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``square_avg = alpha * square_avg + (1 - alpha) * g * g``, then
    ``p -= lr * g / (sqrt(square_avg) + eps)`` (with momentum: ``buf = momentum * buf +
    g / (sqrt(square_avg) + eps)`` and ``p -= lr * buf``)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, *, maximize=False):
        # ``not 0.0 <= x`` as PyTorch writes it: refuses NaN too
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum = group["weight_decay"], group["momentum"]
            for p, param, grad in self._gradients(group):
                state = self.state[p]
                if not state:
                    state["step"] = _wrap(np.zeros((), dtype=np.float32))
                    state["square_avg"] = _wrap(np.zeros_like(param))
                    if momentum > 0:
                        state["momentum_buffer"] = _wrap(np.zeros_like(param))
                    if group["centered"]:
                        state["grad_avg"] = _wrap(np.zeros_like(param))
                state["step"]._data += 1
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                # the same operations in the same order as PyTorch's for-loop implementation,
                # so that float64 results agree to the last few bits
                square_avg = state["square_avg"]._data
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                if group["centered"]:
                    grad_avg = state["grad_avg"]._data
                    weight = 1 - alpha
                    if abs(weight) < 0.5:  # PyTorch's lerp_, in its two forms
                        grad_avg += weight * (grad - grad_avg)
                    else:
                        grad_avg[...] = grad - (grad - grad_avg) * (1 - weight)
                    avg = np.sqrt(square_avg + -1 * grad_avg * grad_avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    param += -lr * buf
                else:
                    param += -lr * grad / avg
                mark_changed_in_place(param)  # a graph that saved p can no longer backward
        return loss
