"""Adagrad: the same update as ``torch.optim.Adagrad``, step for step. No chapter uses it;
chapter 8 teaches optimizers with SGD and Adam, and this one follows the same pattern.

Per parameter, the sum of every squared gradient so far (``sum``) divides the step, so a
weight that has had large gradients takes ever smaller steps:
``p -= clr * g / (sqrt(sum) + eps)`` with ``clr = lr / (1 + (step - 1) * lr_decay)``.
"""

import numpy as np

from ..graph import no_grad
from .._tensor import wrap
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``sum += g * g``, then ``p -= lr / (1 + (step - 1) * lr_decay) * g / (sqrt(sum) + eps)``."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, *, maximize=False):
        # ``not 0.0 <= x`` as PyTorch writes it: refuses NaN too
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      maximize=maximize))
        # as PyTorch: every parameter gets its state now, gradient or not
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p, initial_accumulator_value):
        state = self.state[p]
        state["step"] = wrap(np.zeros((), dtype=np.float32))
        state["sum"] = wrap(np.full_like(p._data, initial_accumulator_value))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay = group["weight_decay"]
            for param, grad in self._params_with_grad(group):
                state = self.state[param]
                if not state:  # a group added later: PyTorch takes the constructor's value
                    self._init_state(param, self.defaults["initial_accumulator_value"])
                step_t, state_sum = state["step"], state["sum"]
                step_t += 1
                step = step_t.item()
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                param.addcdiv_(grad, std, value=-clr)
        return loss
