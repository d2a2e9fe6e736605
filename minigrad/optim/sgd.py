"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov
(chapter 8): the same update as ``torch.optim.SGD``, step for step."""

import numpy as np

from ..graph import mark_changed_in_place, no_grad
from ..tensor import _wrap
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
            for p in group["params"]:
                if p.grad is None:
                    continue  # no gradient (set_to_none, or unused): leave p alone
                param = p._data
                grad = p.grad._data if not group["maximize"] else -p.grad._data
                if weight_decay:
                    grad = grad + weight_decay * param
                if momentum:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = _wrap(np.array(grad))
                    else:
                        buf._data *= momentum
                        buf._data += (1 - dampening) * grad
                    grad = grad + momentum * buf._data if group["nesterov"] else buf._data
                param -= lr * grad
                mark_changed_in_place(param)  # a graph that saved p can no longer backward
        return loss
