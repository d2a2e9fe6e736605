"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov
(chapter 8): the same update as ``torch.optim.SGD``, step for step."""

from ..graph import no_grad
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * g``, where g is the gradient, optionally with weight decay added and
    smoothed by a momentum buffer: ``buf = momentum * buf + (1 - dampening) * g``."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            dampening, weight_decay = group["dampening"], group["weight_decay"]
            nesterov, maximize = group["nesterov"], group["maximize"]
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue  # no gradient (set_to_none, or unused): leave param alone
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                if momentum != 0:
                    state = self.state[param]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.clone().detach()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if nesterov else buf
                # in place: the version of param moves, so a graph that saved it refuses
                # backward from now on
                param.add_(grad, alpha=-lr)
        return loss
