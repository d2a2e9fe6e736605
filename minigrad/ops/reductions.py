"""Reductions (chapters 2 and 5): ops that combine many elements into fewer, each with its
forward, what it saves and its backward in one class named like PyTorch's node."""

import numpy as np

from . import formulas
from .op import Op

__all__ = ["SumBackward0", "SumBackward1"]


class SumBackward0(Op):
    """The sum of every element: each element gets the whole gradient."""
    __slots__ = ()

    def forward(self, a, keepdim=False):
        return np.asarray(a.sum(keepdims=keepdim), dtype=a.dtype)

    def backward(self, grad):
        return formulas.expand_to(grad, self.shapes[0])


class SumBackward1(Op):
    """The sum over ``dims``: put the reduced axes back, then spread along them."""
    __slots__ = ("dims", "keepdim")

    def forward(self, a, dims, keepdim=False):
        self.dims, self.keepdim = dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim), dtype=a.dtype)

    def backward(self, grad):
        if not self.keepdim:
            grad = formulas.unsqueeze(grad, self.dims)
        return formulas.expand_to(grad, self.shapes[0])
