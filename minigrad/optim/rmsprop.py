"""RMSprop: the same update as ``torch.optim.RMSprop``, step for step. No chapter uses it;
chapter 8 teaches optimizers with SGD and Adam, and this one follows the same pattern.

Per parameter, a running average of the squared gradient (``square_avg``) scales each
weight's step: ``p -= lr * g / (sqrt(square_avg) + eps)``. Options as in PyTorch: weight
decay, a momentum buffer (``momentum_buffer``) and the centered variant, which subtracts the
square of a running average of the gradient (``grad_avg``) to estimate its variance.
"""

import numpy as np

from ..graph import no_grad
from .._tensor import wrap
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
            for param, grad in self._params_with_grad(group):
                state = self.state[param]
                if not state:
                    state["step"] = wrap(np.zeros((), dtype=np.float32))
                    state["square_avg"] = wrap(np.zeros_like(param._data))
                    if momentum > 0:
                        state["momentum_buffer"] = wrap(np.zeros_like(param._data))
                    if group["centered"]:
                        state["grad_avg"] = wrap(np.zeros_like(param._data))
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    param.add_(buf, alpha=-lr)
                else:
                    param.addcdiv_(grad, avg, value=-lr)
        return loss
