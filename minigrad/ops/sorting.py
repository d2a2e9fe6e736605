"""Ops that pick elements by position (chapter 5): sort, topk, median and max/min along a
dim. The caller works out which elements (their ``indices`` along ``axis``, a constant of
the graph); forward takes them, and backward sends each gradient back to the element it
came from, the other elements getting 0. The median of all elements shares its gradient
among its ties instead, as max() of all elements does (``reductions.evenly_distribute``).
"""

import numpy as np

from . import formulas
from .op import Op
from .tangents import transposed_backward
from .reductions import evenly_distribute
from ..tensor_rules import check_tensor
from collections import namedtuple
from .._tensor import wrap
from .._tensor import Tensor
from . import reductions
from ..tensor_rules import refuse_empty_reduction

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

    jvp = transposed_backward


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

    jvp = transposed_backward


# ------------------------------------------------------------------ functions

def _values_indices(name):
    """A ``(values, indices)`` namedtuple printed as PyTorch's ``torch.return_types``."""
    def __repr__(self):
        return f"minigrad.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return type(name, (namedtuple(name, ["values", "indices"]),),
                {"__slots__": (), "__repr__": __repr__})


ValuesIndices = _values_indices("sort")


_Topk = _values_indices("topk")


_Median = _values_indices("median")


def _sort_order(a, axis, descending):
    """Stable order along ``axis`` (equal elements keep their order), nan last as PyTorch
    puts it (first when descending)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # flip, stable-sort ascending, flip back: equal elements then keep their first-come order
    flipped = np.flip(a, axis=axis)
    order = np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - order


def sort(input, dim=-1, descending=False, *, stable=None):
    """``(values, indices)``: the elements sorted along ``dim`` and where each came from.
    Always stable here (PyTorch's ``stable=False`` may order equal elements either way)."""
    check_tensor("sort", input)
    a = input._data
    op = SortBackward0 if stable is None else SortBackward1
    axis = input._dim(dim)
    order = _sort_order(a, axis, descending) if a.ndim else np.zeros((), np.int64)
    out = op.run((input,), a, indices=order, axis=axis)
    return ValuesIndices(out, wrap(order.astype(np.int64)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable=stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim``, largest first."""
    check_tensor("topk", input)
    a = input._data
    axis = input._dim(dim)
    size = a.shape[axis] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range: k={k} but the dimension has "
                           f"{size} elements")
    if a.ndim == 0:
        order = np.zeros((), np.int64)
    else:
        order = np.take(_sort_order(a, axis, largest), np.arange(k), axis=axis)
    out = TopkBackward0.run((input,), a, indices=order, axis=axis)
    return _Topk(out, wrap(order.astype(np.int64)))


def median(input, dim=None, keepdim=False):
    """The lower median (of an even count, the smaller of the two middle elements, as
    PyTorch; numpy's median averages them). With ``dim``: ``(values, indices)``."""
    check_tensor("median", input)
    a = input._data
    if dim is None:
        if a.size == 0 and a.dtype.kind == "f":
            return wrap(np.array(np.nan, a.dtype))  # as PyTorch: the median of nothing
        if a.size == 0:
            raise IndexError("median() input tensor cannot be empty")
        flat = np.sort(a.reshape(-1))  # nan sorts last: a nan makes the median nan
        value = flat[-1] if a.dtype.kind == "f" and np.isnan(flat[-1]) else \
            flat[(flat.size - 1) // 2]
        return MedianBackward0.run((input,), a, value=np.array(value))
    axis = input._dim(dim)
    if a.ndim == 0:
        order = np.zeros((), np.int64)
        return _Median(MedianBackward1.run((input,), a, indices=order, axis=0),
                       wrap(order))
    order = np.argsort(a, axis=axis, kind="stable")
    middle = np.take(order, [(a.shape[axis] - 1) // 2], axis=axis)
    if a.dtype.kind == "f":  # a slice with a nan: its first nan, as PyTorch
        nan = np.isnan(a)
        middle = np.where(nan.any(axis, keepdims=True), nan.argmax(axis, keepdims=True), middle)
    out = MedianBackward1.run((input,), a, indices=middle, axis=axis, keepdim=keepdim)
    out_index = middle if keepdim else np.squeeze(middle, axis)
    return _Median(out, wrap(out_index.astype(np.int64)))


# -------------------------------------------------- Tensor methods (``x.<name>()``)

MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])



def max(input, dim=None, keepdim=False, other=None):
    """max() of all elements, max(dim) -> (values, indices), or max(other) elementwise."""
    return _extreme(input, dim, keepdim, other, np.argmax, reductions.MaxBackward1,
                         MaxBackward0, MaxResult)


def min(input, dim=None, keepdim=False, other=None):
    return _extreme(input, dim, keepdim, other, np.argmin, reductions.MinBackward1,
                         MinBackward0, MinResult)


def amax(input, dim=(), keepdim=False):
    """The largest value over ``dim`` (one or several; none: all). Ties share the
    gradient evenly."""
    return _extreme_over(input, dim, keepdim, reductions.AmaxBackward0, "amax")


def amin(input, dim=(), keepdim=False):
    """The smallest value over ``dim`` (one or several; none: all)."""
    return _extreme_over(input, dim, keepdim, reductions.AminBackward0, "amin")


def _extreme(input, dim, keepdim, other, arg, full_op, dim_op, result_type):
    if isinstance(other, Tensor) or (dim is not None and not isinstance(dim, int)):
        if isinstance(dim, Tensor):
            other = dim
        return input.maximum(other) if arg is np.argmax else input.minimum(other)
    a = input._data
    name = arg.__name__[3:]
    if dim is None:
        refuse_empty_reduction(name, a, None)
        return full_op.run((input,), a)
    dim = input._dim(dim)
    refuse_empty_reduction(name, a, dim if a.ndim else None)
    indices = np.expand_dims(arg(a, axis=dim), dim) if a.ndim else np.zeros((), np.int64)
    out = dim_op.run((input,), a, indices=indices, axis=dim, keepdim=keepdim)
    return result_type(out, wrap((indices if keepdim else indices.squeeze(dim))
                                  .astype(np.int64)))


def _extreme_over(input, dim, keepdim, op, name):
    a = input._data
    every_dim = dim is None or (not isinstance(dim, int) and len(dim) == 0)
    if a.size == 0 and not every_dim:  # PyTorch checks this before repeated dims
        for x in (dim,) if isinstance(dim, int) else dim:
            if a.ndim and a.shape[input._dim(x)] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {x} to have "
                                 "non-zero size.")
    dims = input._dims(() if every_dim else dim)
    if a.size == 0:  # the max of nothing does not exist
        if every_dim:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the "
                               "'dim' argument.")
        empty = [axis for axis in dims if a.shape[axis] == 0]
        if empty:
            raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have "
                             "non-zero size.")
    return op.run((input,), a, dims=dims, keepdim=keepdim)


def argmax(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, np.argmax)


def argmin(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, np.argmin)


def _arg_extreme(input, dim, keepdim, arg):
    a = input._data
    if a.dtype.kind == "b":
        raise RuntimeError(f"{arg.__name__}(): does not support bool input: convert it "
                           "first (t.long())")
    if dim is None:
        refuse_empty_reduction(arg.__name__, a, None, IndexError)
        return wrap(np.asarray(arg(a), dtype=np.int64))
    dim = input._dim(dim)
    if a.ndim:
        refuse_empty_reduction(arg.__name__, a, dim)
    return wrap(np.asarray(arg(a, axis=dim if a.ndim else None, keepdims=keepdim),
                            dtype=np.int64))


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("sort", "argsort", "topk", "median",)
METHODS = ("max", "min", "amax", "amin", "argmax", "argmin", "sort", "argsort", "topk",
           "median",)
