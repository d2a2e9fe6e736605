"""Triangles and diagonals (chapter 5): ``tril``/``triu``, ``diagonal``, ``diag``, ``trace``.
Each op's forward, what it saves and its backward in one class named like PyTorch's node,
followed by the public functions that check arguments and run them.

``diagonal_of`` and ``diagonal_placed`` take an array (computed directly) or a Tensor (the
matching op, recorded): the backward of taking a diagonal is placing one into zeros, and
the backward of placing is taking again.
"""

import numpy as np

from . import formulas
from .formulas import is_array
from .indexing import DiagonalBackward0_copy, picked
from .op import Op
from .tangents import transposed_backward
from ..tensor_rules import takes_out
from ..tensor_rules import run_in_place

__all__ = ["TrilBackward0", "TriuBackward0", "DiagonalBackward0", "DiagonalBackwardBackward0",
           "TraceBackward0", "DiagEmbedBackward0"]


class TrilBackward0(Op):
    """tril/triu keep the elements where ``keep`` holds; only they get a gradient: the
    gradient goes through the same op."""
    __slots__ = ("keep",)

    def forward(self, a, keep):
        self.keep = keep
        return np.where(keep, a, np.zeros((), a.dtype))

    def backward(self, grad):
        if is_array(grad):
            return np.where(self.keep, grad, np.zeros((), grad.dtype))
        return type(self).run((grad,), grad._data, keep=self.keep)

    jvp = transposed_backward


class TriuBackward0(TrilBackward0):
    """PyTorch's name for this node: TrilBackward0's backward."""
    __slots__ = ()

    jvp = transposed_backward


def _diagonal_view(array, offset, dim1, dim2):
    """numpy's diagonal_of, made writable as PyTorch's is (it views the same memory)."""
    view = np.diagonal(array, offset, dim1, dim2)
    if array.flags.writeable:
        view.flags.writeable = True
    return view


class DiagonalBackward0(Op):
    """A diagonal_of (a view): its gradient goes onto that diagonal_of of zeros."""
    __slots__ = ("offset", "dims")
    is_view = True

    def forward(self, a, offset, dim1, dim2):
        self.offset, self.dims = offset, (dim1, dim2)
        return _diagonal_view(a, offset, dim1, dim2)

    def backward(self, grad):
        return diagonal_placed(grad, self.input_shape(0), self.offset, self.dims)

    jvp = transposed_backward


class DiagonalBackwardBackward0(Op):
    """Zeros of ``shape`` with ``g`` on a diagonal_of: the backward of ``diagonal_of``, whose
    backward is ``diagonal_of`` again."""
    __slots__ = ("offset", "dims")

    def forward(self, g, shape, offset, dims):
        self.offset, self.dims = offset, dims
        out = np.zeros(shape, dtype=g.dtype)
        _diagonal_view(out, offset, *dims)[...] = g
        return out

    def backward(self, grad):
        return diagonal_of(grad, self.offset, self.dims)

    jvp = transposed_backward


def diagonal_of(x, offset, dims):
    if is_array(x):
        return np.diagonal(x, offset, *dims)
    return DiagonalBackward0.run((x,), x._data, offset=offset, dim1=dims[0], dim2=dims[1])


def diagonal_placed(grad, shape, offset, dims):
    if is_array(grad):
        out = np.zeros(shape, dtype=grad.dtype)
        _diagonal_view(out, offset, *dims)[...] = grad
        return out
    return DiagonalBackwardBackward0.run((grad,), grad._data, shape=shape, offset=offset,
                                         dims=dims)


class TraceBackward0(Op):
    """The sum of a matrix's diagonal_of: each diagonal_of element gets the whole gradient."""
    __slots__ = ()

    def forward(self, a, dtype):
        return np.asarray(np.trace(a, dtype=dtype))

    def backward(self, grad):
        shape = self.input_shape(0)
        return diagonal_placed(formulas.expand_to(grad, (min(shape),)), shape, 0, (0, 1))

    jvp = transposed_backward


class DiagEmbedBackward0(Op):
    """diag of a vector: each element's gradient is read back from the diagonal_of it went to."""
    __slots__ = ("offset",)

    def forward(self, a, offset):
        self.offset = offset
        return np.diag(a, offset)

    def backward(self, grad):
        part = diagonal_of(grad, self.offset, (0, 1))
        return part.copy() if is_array(part) else part

    jvp = transposed_backward


# ------------------------------------------------------------------ functions

def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` above (below if negative) the main one of the matrices in
    dims ``dim1``, ``dim2``: a view, as in PyTorch."""
    dim1, dim2 = input._dim(dim1), input._dim(dim2)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DiagonalBackward0.run((input,), input._data, offset=offset, dim1=dim1,
                                     dim2=dim2)


def diag(input, diagonal=0):
    """A vector -> the matrix with it on a diagonal; a matrix -> that diagonal (a copy)."""
    a = input._data
    if a.ndim == 1:
        return DiagEmbedBackward0.run((input,), a, offset=diagonal)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    return picked(input, lambda m: np.diag(m, diagonal), DiagonalBackward0_copy)


def trace(input):
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    dtype = a.dtype if a.dtype.kind in "fc" else np.int64  # integers sum as int64
    return TraceBackward0.run((input,), a, dtype=dtype)


def _triangle(input, diagonal, lower):
    a = input._data
    name = "tril" if lower else "triu"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = a.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    if not lower:
        keep = ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    node_cls = TrilBackward0 if lower else TriuBackward0
    return node_cls.run((input,), a, keep=keep)


@takes_out(dtype="same")
def tril(input, diagonal=0):
    """The lower triangle (on and below ``diagonal``) of the last two dims; zeros above."""
    return _triangle(input, diagonal, True)


@takes_out(dtype="same")
def triu(input, diagonal=0):
    """The upper triangle (on and above ``diagonal``) of the last two dims; zeros below."""
    return _triangle(input, diagonal, False)


def tril_(self, diagonal=0):
    return run_in_place(self, None, lambda before: tril(before, diagonal))


def triu_(self, diagonal=0):
    return run_in_place(self, None, lambda before: triu(before, diagonal))


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("diagonal", "diag", "trace", "tril", "triu",)
METHODS = ("diagonal", "diag", "trace", "tril", "triu", "tril_", "triu_",)
