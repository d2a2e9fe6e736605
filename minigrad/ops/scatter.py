"""Writing into a copy (chapter 5): ``scatter``, ``scatter_add``, ``index_add``,
``index_fill`` and their in-place forms. Each op's forward, what it saves and its backward
in one class named like PyTorch's node, followed by the public functions that check
arguments and run them.
"""


import numpy as np

from .formulas import is_array
from .indexing import check_bounds, index_array, indexed, one_d, placed
from .op import Op, saving_versions_of
from .tangents import transposed_backward
from .._tensor import Tensor
from ..tensor_rules import run_in_place

__all__ = ["ScatterBackward0", "ScatterBackward1", "ScatterAddBackward0", "IndexAddBackward0",
           "IndexFillBackward0", "IndexFillBackward1"]


class ScatterBackward0(Op):
    """``scatter(dim, index, src)``: a copy of ``a`` with ``src``'s leading corner (``lead``)
    written at ``key``. The overwritten elements of ``a`` get no gradient; ``src`` gets the
    gradient of the places it was written to, as gather reads them."""
    __slots__ = ("key", "lead")

    def forward(self, a, s, key, lead, index):
        self.key, self.lead = key, lead
        self.save_for_backward(index)
        out = a.copy().reshape(one_d(a.shape))
        self._write(out, key, s.reshape(one_d(s.shape))[lead])
        return out.reshape(a.shape)

    @staticmethod
    def _write(out, key, values):
        out[key] = values

    def backward(self, grad, index):
        needs_a, needs_s = self.needs_input_grad
        shape, s_shape = self.shapes
        grad_a = grad_s = None
        if needs_a:
            grad_a = self._grad_self(grad)
        if needs_s:
            picked = indexed(grad.reshape(one_d(shape)), None, self.key)
            grad_s = placed(picked, one_d(s_shape), self.lead).reshape(s_shape)
        return grad_a, grad_s

    def _grad_self(self, grad):
        return zero_at(grad, self.key)

    jvp = transposed_backward


class ScatterAddBackward0(ScatterBackward0):
    """``scatter_add``: as scatter, but the values add up (repeats too), so ``a`` keeps its
    whole gradient."""
    __slots__ = ()

    @staticmethod
    def _write(out, key, values):
        np.add.at(out, key, values)

    def _grad_self(self, grad):
        return grad

    jvp = transposed_backward


class ScatterBackward1(Op):
    """``scatter(dim, index, value=number)``: a copy with the number at ``key``; the
    overwritten places get no gradient (the gradient goes through the same op with 0)."""
    __slots__ = ("key",)

    def forward(self, a, key, value, index=None):
        self.key = key
        if index is not None:
            self.save_for_backward(index)
        out = a.copy().reshape(one_d(a.shape))
        out[key] = value
        return out.reshape(a.shape)

    def backward(self, grad, *index):
        return zero_at(grad, self.key)

    jvp = transposed_backward


def zero_at(grad, key):
    """A copy of ``grad`` (seen at least 1-D) with zeros at ``key``."""
    if is_array(grad):
        out = grad.copy()
        out.reshape(one_d(grad.shape))[key] = 0
        return out
    return ScatterBackward1.run((grad,), grad._data, key=key, value=0)


class IndexAddBackward0(Op):
    """``index_add(dim, index, source, alpha)``: ``a``'s gradient passes unchanged;
    ``source`` gets ``alpha`` times the gradient of the slices (``key``) it was added to."""
    __slots__ = ("key", "alpha")

    def forward(self, a, s, key, alpha):
        self.key, self.alpha = key, alpha
        self.save_for_backward(key[-1])
        out = a.copy()
        np.add.at(out, key, s * alpha if alpha != 1 else s)
        return out

    def backward(self, grad, index):
        grad_s = None
        if self.needs_input_grad[1]:
            grad_s = (indexed(grad, None, self.key) * self.alpha).reshape(self.input_shape(1))
        return grad, grad_s

    jvp = transposed_backward


class IndexFillBackward0(Op):
    """``index_fill(dim, index, number)``: the filled slices (``key``) get no gradient (the
    gradient goes through the same op with 0)."""
    __slots__ = ("key",)

    def forward(self, a, key, value):
        self.key = key
        self.save_for_backward(key[-1])
        out = a.copy()
        out[key] = value
        return out

    def backward(self, grad, index):
        if is_array(grad):
            out = grad.copy()
            out[self.key] = 0
            return out
        return IndexFillBackward0.run((grad,), grad._data, key=self.key, value=0)

    jvp = transposed_backward


class IndexFillBackward1(IndexFillBackward0):
    """``index_fill`` with a 0-dim ``value`` tensor: it gets the sum of the gradient of the
    filled slices."""
    __slots__ = ()

    def forward(self, a, v, key):
        return IndexFillBackward0.forward(self, a, key, v)

    def backward(self, grad, index):
        needs_a, needs_v = self.needs_input_grad
        grad_a = IndexFillBackward0.backward(self, grad, index) if needs_a else None
        grad_v = None
        if needs_v:
            part = indexed(grad, None, self.key)
            grad_v = np.asarray(part.sum(), dtype=grad.dtype) if is_array(part) \
                else part.sum()
        return grad_a, grad_v

    jvp = transposed_backward


# ------------------------------------------------------------------ functions

def _scatter_key(input, dim, index, src_shape, op):
    """The numpy index of the places ``index`` names along ``dim`` (gather's key)."""
    dim = input._dim(dim)
    idx = index_array(index, op)
    a = input._data
    if idx.ndim != max(a.ndim, 1) and idx.size:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as self "
                           f"tensor ({idx.ndim} and {a.ndim})")
    for i, m in enumerate(idx.shape):
        if m > (a.shape[i] if a.ndim else 1) and i != dim or src_shape is not None and (
                m > (src_shape[i] if src_shape else 1)):
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                               f"{list(a.shape)} apart from dimension {dim}"
                               + ("" if src_shape is None else
                                  f" and to be no larger size than src {list(src_shape)}"))
    check_bounds(idx, a.shape[dim] if a.ndim else 1, dim)
    idx = idx.reshape(idx.shape or (1,))  # a 0-dim tensor is seen as 1-D, as in gather
    key = list(np.indices(idx.shape, sparse=True))
    key[dim] = idx
    return tuple(key), idx


def _lead(idx):
    """The part of ``src`` that scatter uses: its leading corner of the index's shape."""
    return tuple(slice(n) for n in idx.shape)


def _source(input, src, op):
    if src._data.dtype != input._data.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    return src._data


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """A copy with ``src`` (a tensor) or ``value`` (a number) written along ``dim`` at the
    positions ``index`` names: ``out[i][index[i][j]] = src[i][j]`` for dim=1."""
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported by minigrad; use "
                                  "scatter_add or scatter_reduce in PyTorch")
    if src is None:
        src = value
    is_tensor = isinstance(src, Tensor)
    key, idx = _scatter_key(input, dim, index, src.shape if is_tensor else None, "scatter")
    if is_tensor:
        s = _source(input, src, "scatter")
        out = ScatterBackward0.run((input, src), input._data, s, key=key,
                                       lead=_lead(idx), index=idx)
    else:
        out = ScatterBackward1.run((input,), input._data, key=key, value=src, index=idx)
    return saving_versions_of(out, index)


def scatter_add(input, dim, index, src):
    """A copy with ``src``'s values added along ``dim`` at the positions ``index`` names
    (repeated positions add up)."""
    key, idx = _scatter_key(input, dim, index, src.shape, "scatter_add")
    s = _source(input, src, "scatter_add")
    return saving_versions_of(ScatterAddBackward0.run(
        (input, src), input._data, s, key=key, lead=_lead(idx), index=idx), index)


def _slices_key(input, dim, index, op, negative_ok):
    """``(:, :, index)``: the slices along ``dim`` that ``index`` (a vector) names."""
    dim = input._dim(dim)
    idx = index_array(index, op)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    if not negative_ok and (idx < 0).any():
        raise IndexError("index out of range in self")
    check_bounds(idx, input.shape[dim] if input.ndim else 1, dim,
                  IndexError if negative_ok else RuntimeError, negative_ok)
    return dim, (slice(None),) * dim + (idx.reshape(-1),)


def index_add(input, dim, index, source, *, alpha=1):
    """A copy with ``alpha * source``'s slices added to the slices along ``dim`` that
    ``index`` names (repeated indices add up)."""
    dim, key = _slices_key(input, dim, index, "index_add", negative_ok=False)
    a, s = input._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype}) and source ({source.dtype}) "
                           "must have the same scalar type")
    n = key[-1].size
    if (s.shape[dim] if s.ndim else 1) != n:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({s.shape[dim] if s.ndim else 1}), for dim: {dim}")
    return saving_versions_of(
        IndexAddBackward0.run((input, source), a, s, key=key, alpha=alpha), index)


def index_fill(input, dim, index, value):
    """A copy with ``value`` (a number or a 0-dim tensor) in the slices along ``dim`` that
    ``index`` names."""
    dim, key = _slices_key(input, dim, index, "index_fill", negative_ok=True)
    value_tensor = value if isinstance(value, Tensor) else None
    if value_tensor is not None and value_tensor.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value_tensor.ndim} dimension(s).")
    if value_tensor is not None:
        out = IndexFillBackward1.run((input, value_tensor), input._data,
                                         value_tensor._data, key=key)
    else:
        out = IndexFillBackward0.run((input,), input._data, key=key, value=value)
    return saving_versions_of(out, index)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    other = src if isinstance(src, Tensor) else None
    return run_in_place(self, other, lambda before: scatter(before, dim, index, src, value,
                                                         reduce=reduce))


def scatter_add_(self, dim, index, src):
    return run_in_place(self, src, lambda before: scatter_add(before, dim, index, src))


def index_add_(self, dim, index, source, *, alpha=1):
    return run_in_place(self, source, lambda before: index_add(before, dim, index, source,
                                                            alpha=alpha))


def index_fill_(self, dim, index, value):
    return run_in_place(self, value, lambda before: index_fill(before, dim, index, value))


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("scatter", "scatter_add", "index_add", "index_fill",)
METHODS = ("scatter", "scatter_add", "index_add", "index_fill", "scatter_", "scatter_add_",
           "index_add_", "index_fill_",)
