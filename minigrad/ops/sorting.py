"""Ops that pick elements by position (chapter 5): sort, topk, median and max/min along a
dim. The caller works out which elements (their ``indices`` along ``axis``, a constant of
the graph); forward takes them, and backward sends each gradient back to the element it
came from, the other elements getting 0. The median of all elements shares its gradient
among its ties instead, as max() of all elements does (``reductions.evenly_distribute``).
"""

import numpy as np

from . import formulas
from .op import Op
from .reductions import evenly_distribute

__all__ = ["SortBackward0", "SortBackward1", "TopkBackward0", "MedianBackward0",
           "MedianBackward1", "MaxBackward0", "MinBackward0", "scatter_along"]


def scatter_along(grad, indices, axis, shape):
    """Zeros of ``shape`` with ``grad`` put at ``indices`` along ``axis`` (the backward of
    taking elements there; ``indices`` has the axes of ``shape``, a reduction's grad may not)."""
    if formulas.is_array(grad):
        grad = np.asarray(grad)  # a 0-dim gradient may come as a numpy scalar
    if grad.ndim != indices.ndim:  # a reduction without keepdim
        grad = np.expand_dims(grad, axis) if type(grad) is np.ndarray else grad.unsqueeze(axis)
    if type(grad) is np.ndarray:
        result = np.zeros(shape, grad.dtype)
        np.put_along_axis(result, indices, grad, axis=axis)
        return result
    return grad.new_zeros(shape).scatter(axis, indices, grad)


class _PickBackward(Op):
    """The output took the elements of the input at ``indices`` along ``axis`` (and drops
    that axis without ``keepdim``): each gradient goes back to the element it came from."""
    __slots__ = ("axis",)

    def forward(self, a, indices, axis, keepdim=True):
        if a.ndim == 0:  # one element: it is the result
            return a.copy()
        self.axis = axis
        self.save_for_backward(indices)
        values = np.take_along_axis(a, indices, axis=axis)
        return values if keepdim else values.squeeze(axis)

    def backward(self, grad, indices=None):
        if indices is None:
            return grad
        return scatter_along(grad, indices, self.axis, self.input_shape(0))


class SortBackward0(_PickBackward):
    """sort: the values in order; each goes back to where it was."""
    __slots__ = ()


class SortBackward1(_PickBackward):
    """sort called with ``stable=`` (PyTorch's other overload)."""
    __slots__ = ()


class TopkBackward0(_PickBackward):
    """topk: the k largest (or smallest) along a dim."""
    __slots__ = ()


class MedianBackward1(_PickBackward):
    """median(dim): the lower middle element of each slice (the one its index names)."""
    __slots__ = ()


class MaxBackward0(_PickBackward):
    """max(dim): all the gradient to the element its index names (the first of ties)."""
    __slots__ = ()


class MinBackward0(_PickBackward):
    """min(dim)."""
    __slots__ = ()


class MedianBackward0(Op):
    """The median of all elements (``value``, found by the caller): as PyTorch, the gradient
    is shared evenly by every element equal to it (every nan when it is nan)."""
    __slots__ = ()

    def forward(self, a, value):
        self.save_for_backward(a, value)
        return value

    def backward(self, grad, a, value):
        return evenly_distribute(grad, a, value)
