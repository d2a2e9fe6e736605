"""Adadelta: the same update as ``torch.optim.Adadelta``, step for step. No chapter uses it;
it is here for the programs that do (PyTorch's MNIST example trains with it).

Per parameter, a running average of the squared gradient (``square_avg``) and one of the
squared updates (``acc_delta``): the step is ``sqrt(acc_delta + eps) / sqrt(square_avg + eps)
* g``, so its size comes out in the units of the parameter and ``lr`` (1.0 by default) only
scales it.
"""

from .. import creation, dtypes
from ..graph import no_grad
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """``square_avg = rho * square_avg + (1 - rho) * g * g``,
    ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``,
    ``acc_delta = rho * acc_delta + (1 - rho) * delta * delta``, ``p -= lr * delta``.
    ``foreach``, ``capturable`` and ``differentiable`` are accepted for PyTorch's sake and
    change nothing here."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        # ``not 0.0 <= x`` as PyTorch writes it: refuses NaN too
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            weight_decay = group["weight_decay"]
            for param, grad in self._params_with_grad(group):
                state = self.state[param]
                if not state:
                    state["step"] = creation.zeros((), dtype=dtypes.float32)
                    state["square_avg"] = creation.zeros_like(param)
                    state["acc_delta"] = creation.zeros_like(param)
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt()
                delta = acc_delta.add(eps).sqrt()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                param.add_(delta, alpha=-lr)
        return loss
