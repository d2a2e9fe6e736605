"""The arithmetic operators, ``+ - * /`` (chapters 2 and 5): each op's forward, what it
saves and its backward, in one class named like PyTorch's node.

Operands arrive already promoted to one dtype (``Tensor._operands``), as numpy arrays or
Python numbers; gradients are summed back to each operand's shape by ``Op``.
"""

import numpy as np

from .op import Op

__all__ = ["AddBackward0", "SubBackward0", "MulBackward0", "NegBackward0"]


class AddBackward0(Op):
    """``a + b``: each operand gets the gradient as it is."""
    __slots__ = ()

    def forward(self, a, b):
        return a + b

    def backward(self, grad):
        return grad, grad


class SubBackward0(Op):
    """``a - b``: ``a`` gets the gradient, ``b`` its negative."""
    __slots__ = ()

    def forward(self, a, b):
        return a - b

    def backward(self, grad):
        return grad, -grad


class MulBackward0(Op):
    """``a * b``: d(a b) = b da + a db. Each operand is saved only if the other one needs a
    gradient."""
    __slots__ = ()

    def forward(self, a, b):
        needs_a, needs_b = self.needs_input_grad
        self.save_for_backward(a if needs_b else None, b if needs_a else None)
        return a * b

    def backward(self, grad, a, b):
        return (grad * b if b is not None else None,
                grad * a if a is not None else None)


class NegBackward0(Op):
    """``-a``."""
    __slots__ = ()

    def forward(self, a):
        return -a

    def backward(self, grad):
        return -grad
