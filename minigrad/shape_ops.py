"""PyTorch's shape and indexing ops beyond the course's core set, as tutorials use them:
``new_zeros`` and friends, ``type_as``, ``flip``, ``repeat``, ``index_select``, ``unbind``,
``select``, ``narrow``, ``tril``/``triu``, ``masked_select``, ``movedim``, ``roll``, ``tile``,
``repeat_interleave``, ``diag``, ``diagonal``, ``trace``, ``take``, ``scatter``,
``scatter_add``, ``index_add``, ``index_fill``, ``meshgrid`` and ``cartesian_prod``.

Here are the checks, PyTorch's error messages and the public functions; each op's forward
and backward is a class in ``minigrad/ops/indexing.py`` (most of them only pick elements
of the input, ``PickBackward``). ``Tensor`` and ``minigrad`` reach them through thin
delegates (``x.flip(0)``, ``mg.flip(x, [0])``).
"""

import numbers

import numpy as np

from . import creation
from .ops import indexing as ops
from .ops import shape as ops_shape
from .ops.op import saving_versions_of
from .tensor import Tensor, _wrap, stack

__all__ = ["flip", "index_select", "unbind", "select", "narrow", "tril", "triu",
           "masked_select", "movedim", "moveaxis", "roll", "tile", "repeat_interleave", "diag",
           "diagonal", "trace", "take", "scatter", "scatter_add", "index_add", "index_fill",
           "meshgrid", "cartesian_prod"]


# ------------------------------------------------------------------ helpers

def _picked(input, pick, node_cls, index=None, index_tensor=None):
    """``pick(array)`` as a new tensor (a copy, as PyTorch's result), with a ``node_cls``
    node that knows where each element came from: ``pick`` applied to the positions.
    ``index_tensor``: where ``index`` came from (its version is checked with it)."""
    return saving_versions_of(node_cls.run((input,), input._data, pick=pick, index=index),
                              index_tensor)


def _index_array(index, op, allowed=(np.int64, np.int32)):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype not in allowed:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, got {index.dtype} "
                           "(make it an integer tensor: index.long())")
    return index._data.astype(np.int64, copy=False)


def _check_bounds(idx, size, dim, error=RuntimeError, negative_ok=False):
    """PyTorch's error for an index outside ``[0, size)`` (``[-size, size)`` if
    ``negative_ok``); its exception type differs between ops, so ``error`` says which."""
    bad = idx[(idx < (-size if negative_ok else 0)) | (idx >= size)]
    if bad.size:
        raise error(f"index {bad.flat[0]} is out of bounds for dimension {dim} with size {size}")


def _in_place(self, other, out_of_place):
    """An in-place op through ``out_of_place``: recorded in the graph when it needs to be
    (``_record_in_place`` handles leaves, views and saved values), else written directly."""
    if self._check_inplace(other):
        return self._record_in_place(out_of_place)
    result = out_of_place(self)
    np.copyto(self._data, result._data, casting="unsafe")
    self._bump_version()
    return self


# ------------------------------------------------------------------ new tensors like self

def _like(self, dtype):
    return self.dtype if dtype is None else dtype


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return creation.zeros(*size, dtype=_like(self, dtype), requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return creation.ones(*size, dtype=_like(self, dtype), requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return creation.empty(*size, dtype=_like(self, dtype), requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return creation.full(size, fill_value, dtype=_like(self, dtype), requires_grad=requires_grad)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor of ``data`` (copied, never in the graph) with this tensor's dtype."""
    if isinstance(data, Tensor):
        data = data.detach()._data.copy()
    return creation.tensor(data, dtype=_like(self, dtype), requires_grad=requires_grad)


def type_as(self, other):
    return self.to(other.dtype)


# ------------------------------------------------------------------ picking elements

def flip(input, dims):
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    axes = input._dims(dims) if dims else ()
    return _picked(input, lambda a: np.flip(a, axes), ops.FlipBackward0)


def repeat(input, *sizes):
    sizes = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], numbers.Integral) \
        else sizes
    sizes = tuple(int(n) for n in sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor (got {len(sizes)} sizes for a "
                           f"{input.ndim}-D tensor)")
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    return _picked(input, lambda a: np.tile(a, sizes), ops.RepeatBackward0)


def tile(input, dims):
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def index_select(input, dim, index):
    dim = input._dim(dim)
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input._data.shape[dim] if input.ndim else 1
    if ((idx < 0) | (idx >= n)).any():
        raise IndexError("index out of range in self")
    if not input.ndim:
        if idx.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.size} value(s)")
        return _picked(input, lambda a: a.reshape(1)[idx].reshape(()),
                       ops.IndexSelectBackward0, idx, index)
    return _picked(input, lambda a: np.take(a, idx.reshape(-1), axis=dim),
                   ops.IndexSelectBackward0, idx, index)


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    m = mask._data
    shape = np.broadcast_shapes(input._data.shape, m.shape)
    return _picked(input, lambda a: np.broadcast_to(a, shape)[np.broadcast_to(m, shape)],
                   ops.MaskedSelectBackward0, m, mask)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return _picked(input, lambda a: np.roll(a, shifts[0]), ops.RollBackward0)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    axes = tuple(input._dim(d) for d in dims)
    return _picked(input, lambda a: np.roll(a, shifts, axes), ops.RollBackward0)


def take(input, index):
    idx = _index_array(index, "take", allowed=(np.int64,))
    n = input._data.size
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {bad.flat[0]} on a tensor of "
                         f"{n} elements.")
    return _picked(input, lambda a: a.reshape(-1)[idx], ops.TakeBackward0, idx, index)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) ``repeats`` times in a row. Alone,
    ``repeat_interleave(counts)`` gives ``i`` counts[i] times."""
    if repeats is None:  # torch.repeat_interleave(counts)
        return _wrap(np.repeat(np.arange(input._data.size), input._data))
    if dim is None:
        input, dim = input.flatten(), 0
    dim = input._dim(dim)
    if isinstance(repeats, Tensor) and repeats.ndim:
        counts = repeats._data
        if counts.shape[0] not in (1, input.shape[dim]):
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.shape[0]} and input.size({dim}) = "
                               f"{input.shape[dim]}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        positions = np.repeat(np.arange(input.shape[dim]), counts)
        return index_select(input, dim, _wrap(positions))
    n = int(repeats)
    if n < 0:
        raise RuntimeError("repeats can not be negative")
    shape = list(input.shape)
    expanded = input.unsqueeze(dim + 1).expand(*shape[:dim + 1], n, *shape[dim + 1:])
    shape[dim] *= n
    return ops_shape.ClonedViewBackward0.run((expanded,), expanded._data, shape=tuple(shape))


# ------------------------------------------------------------------ views

def select(input, dim, index):
    dim = input._dim(dim)
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * dim + (int(index),)]


def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple of views."""
    dim = input._dim(dim)
    parts = tuple(select(input, dim, i) for i in range(input.shape[dim]))
    for part in parts:
        if part._grad_fn is not None:
            part._grad_fn.__class__ = ops.UnbindBackward0
    return parts


def narrow(input, dim, start, length):
    dim = input._dim(dim)
    n = input.shape[dim]
    start = int(start.item() if isinstance(start, Tensor) else start)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    start %= n if n else 1
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    out = input[(slice(None),) * dim + (slice(start, start + length),)]
    if out._grad_fn is not None:  # a slice that keeps the whole dim is still a slice here
        out._grad_fn.__class__ = ops.SliceBackward0
    return out


def movedim(input, source, destination):
    source = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    destination = (destination,) if isinstance(destination, numbers.Integral) \
        else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)}"
                           f" dims) should contain the same number of dims as destination "
                           f"({list(destination)} dims)")
    src = [input._dim(d) for d in source]
    dst = [input._dim(d) for d in destination]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return input.permute(order)


moveaxis = movedim


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` above (below if negative) the main one of the matrices in
    dims ``dim1``, ``dim2``: a view, as in PyTorch."""
    dim1, dim2 = input._dim(dim1), input._dim(dim2)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return ops.DiagonalBackward0.run((input,), input._data, offset=offset, dim1=dim1,
                                     dim2=dim2)


def diag(input, diagonal=0):
    """A vector -> the matrix with it on a diagonal; a matrix -> that diagonal (a copy)."""
    a = input._data
    if a.ndim == 1:
        return ops.DiagEmbedBackward0.run((input,), a, offset=diagonal)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    return _picked(input, lambda m: np.diag(m, diagonal), ops.DiagonalBackward0_copy)


def trace(input):
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    dtype = a.dtype if a.dtype.kind in "fc" else np.int64  # integers sum as int64
    return ops.TraceBackward0.run((input,), a, dtype=dtype)


# ------------------------------------------------------------------ masks of matrices

def _triangle(input, diagonal, lower):
    a = input._data
    name = "tril" if lower else "triu"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = a.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    if not lower:
        keep = ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    node_cls = ops.TrilBackward0 if lower else ops.TriuBackward0
    return node_cls.run((input,), a, keep=keep)


def tril(input, diagonal=0):
    """The lower triangle (on and below ``diagonal``) of the last two dims; zeros above."""
    return _triangle(input, diagonal, True)


def triu(input, diagonal=0):
    """The upper triangle (on and above ``diagonal``) of the last two dims; zeros below."""
    return _triangle(input, diagonal, False)


def tril_(self, diagonal=0):
    return _in_place(self, None, lambda before: tril(before, diagonal))


def triu_(self, diagonal=0):
    return _in_place(self, None, lambda before: triu(before, diagonal))


# ------------------------------------------------------------------ writing into a copy

def _scatter_key(input, dim, index, src_shape, op):
    """The numpy index of the places ``index`` names along ``dim`` (gather's key)."""
    dim = input._dim(dim)
    idx = _index_array(index, op)
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
    _check_bounds(idx, a.shape[dim] if a.ndim else 1, dim)
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
        out = ops.ScatterBackward0.run((input, src), input._data, s, key=key,
                                       lead=_lead(idx), index=idx)
    else:
        out = ops.ScatterBackward1.run((input,), input._data, key=key, value=src, index=idx)
    return saving_versions_of(out, index)


def scatter_add(input, dim, index, src):
    """A copy with ``src``'s values added along ``dim`` at the positions ``index`` names
    (repeated positions add up)."""
    key, idx = _scatter_key(input, dim, index, src.shape, "scatter_add")
    s = _source(input, src, "scatter_add")
    return saving_versions_of(ops.ScatterAddBackward0.run(
        (input, src), input._data, s, key=key, lead=_lead(idx), index=idx), index)


def _slices_key(input, dim, index, op, negative_ok):
    """``(:, :, index)``: the slices along ``dim`` that ``index`` (a vector) names."""
    dim = input._dim(dim)
    idx = _index_array(index, op)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    if not negative_ok and (idx < 0).any():
        raise IndexError("index out of range in self")
    _check_bounds(idx, input.shape[dim] if input.ndim else 1, dim,
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
        ops.IndexAddBackward0.run((input, source), a, s, key=key, alpha=alpha), index)


def index_fill(input, dim, index, value):
    """A copy with ``value`` (a number or a 0-dim tensor) in the slices along ``dim`` that
    ``index`` names."""
    dim, key = _slices_key(input, dim, index, "index_fill", negative_ok=True)
    value_tensor = value if isinstance(value, Tensor) else None
    if value_tensor is not None and value_tensor.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value_tensor.ndim} dimension(s).")
    if value_tensor is not None:
        out = ops.IndexFillBackward1.run((input, value_tensor), input._data,
                                         value_tensor._data, key=key)
    else:
        out = ops.IndexFillBackward0.run((input,), input._data, key=key, value=value)
    return saving_versions_of(out, index)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    other = src if isinstance(src, Tensor) else None
    return _in_place(self, other, lambda before: scatter(before, dim, index, src, value,
                                                         reduce=reduce))


def scatter_add_(self, dim, index, src):
    return _in_place(self, src, lambda before: scatter_add(before, dim, index, src))


def index_add_(self, dim, index, source, *, alpha=1):
    return _in_place(self, source, lambda before: index_add(before, dim, index, source,
                                                            alpha=alpha))


def index_fill_(self, dim, index, value):
    return _in_place(self, value, lambda before: index_fill(before, dim, index, value))


# ------------------------------------------------------------------ grids

def meshgrid(*tensors, indexing="ij"):
    """Grids of coordinates: the i-th output holds ``tensors[i]``'s values along dim i
    (``indexing='xy'`` swaps the first two dims, as numpy's and matplotlib's grids)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t.ndim}D")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have "
                           "the same dtype")
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    sizes = [tensors[i].numel() for i in order]
    grids = []
    for k, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(k)] = t.numel()
        grids.append(t.reshape(shape).expand(*sizes))
    return tuple(grids)


def cartesian_prod(*tensors):
    """Every combination of one element of each vector, as rows (itertools.product)."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], dim=1)

