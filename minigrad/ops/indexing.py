"""Indexing ops (chapters 2 and 5): ``x[key]``, gather, and the ops that pick, place or
overwrite elements (flip, repeat, index_select, take, masked_select, diagonal, tril/triu,
scatter, index_add, index_fill, ...). Each is one class named like PyTorch's node.

Two ideas cover most backward formulas here:

* an op that *picks* elements (``x[[0, 0, 2]]``, gather, flip, ...) sends each output's
  gradient back to where it came from, adding up where an element was picked twice: the
  gradient is *put* into zeros (``put``);
* putting into zeros is linear, and its own backward is picking the same places again
  (``indexed``). So the backward of a backward is the forward op once more, and second
  derivatives come from the same few ops.

``indexed``, ``put``, ``put_flat``, ``sliced``, ``placed``, ``diagonal`` and
``diagonal_placed`` take an array (computed directly, nothing recorded) or a Tensor (the
matching op, recorded).
The public functions at the end (``flip``, ``index_select``, ``take``, ...) and
``Tensor.__getitem__`` check the arguments.
"""

import numpy as np

from .op import Op
from .tangents import auto_linear, transposed_backward
from .shape import ClonedViewBackward0
from .._tensor import Tensor
import numbers
from .op import multi_output_views, saving_versions_of
from .._tensor import wrap
from ..tensor_rules import check_tensor, dims_in_order, takes_out

__all__ = ["SliceBackward0", "SelectBackward0", "AliasBackward0", "IndexUnsqueezeBackward0",
           "UnbindBackward0", "SliceBackwardBackward0", "IndexBackward0",
           "IndexBackwardBackward0", "AsStridedBackward0", "GatherBackward0", "PickBackward",
           "PutBackward0", "FlipBackward0", "RepeatBackward0", "IndexSelectBackward0",
           "MaskedSelectBackward0", "RollBackward0", "TakeBackward0", "DiagonalBackward0_copy",
           "view_node_class"]

_ndarray = np.ndarray


def _is_array(x):
    return type(x) is _ndarray or isinstance(x, np.generic)


def _array(x):
    """A saved index as an array (under create_graph a saved array comes as a Tensor)."""
    return x if _is_array(x) else x._data


def _element_view(array, key):
    """``array[key]`` for a basic key: a 0-dim view where numpy would give a copied scalar
    (``t[0].fill_(7)`` must change ``t``, as in PyTorch)."""
    value = array[key]
    if type(value) is _ndarray:
        return value
    return array[(*key, ...) if type(key) is tuple else (key, ...)]


def index_arrays(key):
    """The index arrays in an advanced ``key``: saved, so changing an index tensor in place
    afterwards makes backward refuse (PyTorch saves the indices too)."""
    return tuple([k for k in key if type(k) is _ndarray]) if type(key) is tuple else ()


def one_d(shape):
    return shape or (1,)  # gather and scatter see a 0-dim tensor as 1-D of size 1


# ------------------------------------------------------------------ basic indexing: views

def view_node_class(index, shape):
    """The node of a basic index, named as PyTorch names it: PyTorch applies the items one
    by one (select for an int, slice, unsqueeze for None), skips a slice that keeps a whole
    dim inside a tuple, and the last step that did something names the grad_fn (an index
    that does nothing gives an alias)."""
    if type(index) is not tuple:
        if index is None:
            return IndexUnsqueezeBackward0
        if index is Ellipsis:
            return AliasBackward0
        return SliceBackward0 if type(index) is slice else SelectBackward0
    node_class = AliasBackward0
    dim = 0
    for k in index:
        if k is None:
            node_class = IndexUnsqueezeBackward0
        elif k is Ellipsis:
            dim += len(shape) - sum(1 for j in index if j is not None and j is not Ellipsis)
        elif type(k) is int:
            node_class = SelectBackward0
            dim += 1
        else:
            if dim >= len(shape):  # too many indices: the forward pass says so
                return SliceBackward0
            if (k.start or 0) != 0 or k.stop is not None and k.stop < shape[dim] or (
                    k.step or 1) != 1:
                node_class = SliceBackward0
            dim += 1
    return node_class


class SliceBackward0(Op):
    """Basic indexing, ``x[key]`` with ints, slices, None and Ellipsis: a view, where every
    element is picked at most once. The gradient is placed into zeros at ``key``."""
    __slots__ = ("key",)
    is_view = True

    def forward(self, a, key):
        self.key = key
        return _element_view(a, key)

    def backward(self, grad):
        return placed(grad, self.input_shape(0), self.key)

    jvp = auto_linear


class SelectBackward0(SliceBackward0):
    """PyTorch's name for this node: SliceBackward0's backward."""
    __slots__ = ()


class AliasBackward0(SliceBackward0):
    """PyTorch's name for this node: SliceBackward0's backward."""
    __slots__ = ()


# x[None, ...]: PyTorch's name, with the index's backward (x.unsqueeze(0) has its own node).
IndexUnsqueezeBackward0 = type("UnsqueezeBackward0", (SliceBackward0,), {"__slots__": ()})


# unbind's pieces are views made by indexing: select's node under unbind's name
class UnbindBackward0(SelectBackward0):
    """PyTorch's name for this node: SelectBackward0's backward."""
    __slots__ = ()


class SliceBackwardBackward0(Op):
    """Zeros of ``shape`` with ``g`` at ``key`` (a basic key): the backward of a slice, and
    so its backward is the slice again."""
    __slots__ = ("key",)

    def forward(self, g, shape, key):
        self.key = key
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out

    def backward(self, grad):
        return sliced(grad, self.key)

    jvp = transposed_backward


def sliced(x, key):
    """``x[key]`` for a basic key."""
    if _is_array(x):
        return _element_view(x, key)
    return SliceBackward0.run((x,), x._data, key=key)


def placed(grad, shape, key):
    """Zeros of ``shape`` with ``grad`` at ``key`` (a basic key)."""
    if _is_array(grad):
        out = np.zeros(shape, dtype=grad.dtype)
        out[key] = grad
        return out
    return SliceBackwardBackward0.run((grad,), grad._data, shape=shape, key=key)


def _memory_of(a):
    """The array whose memory ``a`` views (``a`` itself if it owns it): PyTorch's storage.
    The chain of bases is followed through what is no array (numpy's as_strided puts one
    in it), so that an expanded or overlapping ``a`` never stands for more memory than
    there is."""
    owner, base = a, a.base
    while base is not None:
        if isinstance(base, _ndarray) and base.dtype == a.dtype:
            owner = base
        base = getattr(base, "base", None)
    return owner


def _storage_positions(a, memory, size, stride, offset=None):
    """For each element of a view of ``size``/``stride`` (in elements) from ``offset`` in
    ``memory``'s storage, its position there; with ``offset`` None, those of ``a``'s own
    elements (``a`` viewing ``memory``)."""
    if offset is None:
        offset = (_address(a) - _address(memory)) // a.itemsize
        size, stride = a.shape, [s // a.itemsize for s in a.strides]
    positions = np.full(tuple(size), offset, dtype=np.int64)
    for axis, (n, step) in enumerate(zip(size, stride)):
        along = (n,) + (1,) * (len(size) - axis - 1)
        positions += (np.arange(n, dtype=np.int64) * step).reshape(along)
    return positions


def _address(a):
    return a.__array_interface__["data"][0]


class AsStridedBackward0(Op):
    """A view of the memory a tensor views, with any shape and strides: ``as_strided``,
    and a view made again after an in-place change of the memory it views (PyTorch's name).
    ``positions`` holds, for each element of the view, its flat position in the input (of
    ``shape``), -1 for one outside it; the gradient is added into zeros of that shape at
    those positions (twice for an element seen twice), nothing for one outside. The
    in-place machinery makes the node as ``AsStridedBackward0((node,), shape, positions)``,
    with the positions in the tensor that owns the memory (no forward pass made the view
    again)."""
    __slots__ = ("positions",)
    is_view = True

    def __init__(self, inputs, shape, positions):
        super().__init__(inputs, (shape,))
        self.positions = positions

    def forward(self, a, size, stride, offset):
        memory = _memory_of(a)
        flat = np.lib.stride_tricks.as_strided(memory, (memory.nbytes // a.itemsize,),
                                               (a.itemsize,))
        out = np.lib.stride_tricks.as_strided(flat[offset:], size,
                                              [n * a.itemsize for n in stride])
        wanted = _storage_positions(a, memory, size, stride, offset)
        if np.unique(wanted).size != wanted.size:  # elements that share memory: no writes
            out.flags.writeable = False
        lookup = np.full(flat.size, -1, dtype=np.int64)
        lookup[_storage_positions(a, memory, None, None).reshape(-1)] = np.arange(a.size)
        self.positions = lookup[wanted]
        return out

    def backward(self, grad):
        shape = self.input_shape(0)
        size = int(np.prod(shape, dtype=np.int64))
        positions = self.positions
        if positions.size and positions.min() < 0:  # elements outside the input: dropped
            positions = np.where(positions < 0, size, positions)
            return put(grad, (size + 1,), None, (positions,))[:size].reshape(shape)
        return put(grad, (size,), None, (positions,)).reshape(shape)

    jvp = transposed_backward


# ------------------------------------------------------------------ advanced indexing

class IndexBackward0(Op):
    """Advanced indexing, ``a[first][key]`` (``first``, the ints, slices and None PyTorch
    applies before the index arrays, may be None): a copy. An index may repeat, so the
    gradients add up where they are put back."""
    __slots__ = ("first", "key")

    def forward(self, a, first, key):
        self.first, self.key = first, key
        self.saved = index_arrays(key)
        value = (a if first is None else a[first])[key]
        if value.base is not None:  # numpy's own temporary, not a view of ``a``:
            value = value.copy()    # the result owns its memory, as in PyTorch
        return value

    def backward(self, grad, *index_arrays):
        return put(grad, self.input_shape(0), self.first, self.key)

    jvp = auto_linear


class IndexBackwardBackward0(Op):
    """Zeros of ``shape`` with ``g`` added at ``[first][key]`` (repeated places add up):
    the backward of advanced indexing, whose backward is that indexing again."""
    __slots__ = ("first", "key")

    def forward(self, g, shape, first, key):
        self.first, self.key = first, key
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out if first is None else out[first], key, g)
        return out

    def backward(self, grad):
        return indexed(grad, self.first, self.key)

    jvp = transposed_backward


def indexed(x, first, key):
    """``x[first][key]`` (``first`` may be None), a copy."""
    if _is_array(x):
        return (x if first is None else x[first])[key]
    return IndexBackward0.run((x,), x._data, first=first, key=key)


def put(grad, shape, first, key):
    """Zeros of ``shape`` with ``grad`` added at ``[first][key]``."""
    if _is_array(grad):
        out = np.zeros(shape, dtype=grad.dtype)
        np.add.at(out if first is None else out[first], key, grad)
        return out
    return IndexBackwardBackward0.run((grad,), grad._data, shape=shape, first=first, key=key)


class GatherBackward0(Op):
    """``gather``: ``a[key]`` of ``a`` seen at least 1-D, in the index's shape. The index is
    saved, so changing it in place afterwards makes backward refuse."""
    __slots__ = ("key",)

    def forward(self, a, key, index, shape):
        self.key = key
        self.save_for_backward(index)
        return a.reshape(one_d(a.shape))[key].reshape(shape)

    def backward(self, grad, index):
        shape = self.input_shape(0)
        picked = grad.reshape(_array(index).shape)
        return put(picked, one_d(shape), None, self.key).reshape(shape)

    jvp = auto_linear


# ------------------------------------------------------------------ ops that pick elements

class PickBackward(Op):
    """Ops whose output elements are input elements: ``pick`` (a numpy function) applied to
    the input's positions (0, 1, 2, ...) says which input element each output element is;
    repeats add up. ``index`` (an index or mask array, or None) is saved too, so that
    changing it in place afterwards makes backward refuse, as in PyTorch."""
    __slots__ = ()

    def forward(self, a, pick, index=None):
        out = pick(a)
        if out.base is not None:
            out = out.copy()
        if self.inputs[0] is not None:  # recording: where each element came from
            positions = pick(np.arange(a.size).reshape(a.shape))
            if index is None:
                self.save_for_backward(positions)
            else:
                self.save_for_backward(positions, index)
        return out

    def backward(self, grad, positions, *index):
        shape = self.input_shape(0)
        return put_flat(grad.reshape(-1), _array(positions).reshape(-1),
                        int(np.prod(shape))).reshape(shape)

    jvp = auto_linear


class PutBackward0(Op):
    """Zeros of ``size`` (1-D) with ``g`` added at ``positions``: the backward of picking
    elements by their flat positions, whose own backward picks them again."""
    __slots__ = ("positions",)

    def forward(self, g, positions, size):
        self.positions = positions
        return put_flat(g, positions, size)

    def backward(self, grad):
        return indexed(grad, None, (self.positions,))

    jvp = transposed_backward


def put_flat(grad, positions, size):
    """Zeros of ``size`` with ``grad`` (1-D) added at ``positions``."""
    if _is_array(grad):
        summed = np.bincount(positions, weights=grad, minlength=size)
        return summed.astype(grad.dtype, copy=False)
    return PutBackward0.run((grad,), grad._data, positions=positions, size=size)


# The ops that only pick elements, each under PyTorch's name for its node.

class FlipBackward0(PickBackward):
    """flip"""
    __slots__ = ()


class RepeatBackward0(PickBackward):
    """repeat and tile"""
    __slots__ = ()


class IndexSelectBackward0(PickBackward):
    """index_select"""
    __slots__ = ()


class MaskedSelectBackward0(PickBackward):
    """masked_select"""
    __slots__ = ()


class RollBackward0(PickBackward):
    """roll"""
    __slots__ = ()


class TakeBackward0(PickBackward):
    """take"""
    __slots__ = ()


class DiagonalBackward0_copy(PickBackward):
    """diag of a matrix"""
    __slots__ = ()


# ------------------------------------------------------------------ triangles, diagonals


# ------------------------------------------------------------------ writing into a copy


# ------------------------------------------------------------------ functions

def picked(input, pick, node_cls, index=None, index_tensor=None):
    """``pick(array)`` as a new tensor (a copy, as PyTorch's result), with a ``node_cls``
    node that knows where each element came from: ``pick`` applied to the positions.
    ``index_tensor``: where ``index`` came from (its version is checked with it)."""
    return saving_versions_of(node_cls.run((input,), input._data, pick=pick, index=index),
                              index_tensor)


def index_array(index, op, allowed=(np.int64, np.int32)):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype not in allowed:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, got {index.dtype} "
                           "(make it an integer tensor: index.long())")
    return index._data.astype(np.int64, copy=False)


def check_bounds(idx, size, dim, error=RuntimeError, negative_ok=False):
    """PyTorch's error for an index outside ``[0, size)`` (``[-size, size)`` if
    ``negative_ok``); its exception type differs between ops, so ``error`` says which."""
    bad = idx[(idx < (-size if negative_ok else 0)) | (idx >= size)]
    if bad.size:
        raise error(f"index {bad.flat[0]} is out of bounds for dimension {dim} with size {size}")


def flip(input, dims):
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    axes = dims_in_order(input, dims) if dims else ()
    return picked(input, lambda a: np.flip(a, axes), FlipBackward0)


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
    return picked(input, lambda a: np.tile(a, sizes), RepeatBackward0)


def tile(input, dims):
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


@takes_out(dtype="same")
def index_select(input, dim, index):
    dim = input._dim(dim)
    idx = index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input._data.shape[dim] if input.ndim else 1
    if ((idx < 0) | (idx >= n)).any():
        raise IndexError("index out of range in self")
    if not input.ndim:
        if idx.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.size} value(s)")
        return picked(input, lambda a: a.reshape(1)[idx].reshape(()),
                       IndexSelectBackward0, idx, index)
    return picked(input, lambda a: np.take(a, idx.reshape(-1), axis=dim),
                   IndexSelectBackward0, idx, index)


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    m = mask._data
    shape = np.broadcast_shapes(input._data.shape, m.shape)
    return picked(input, lambda a: np.broadcast_to(a, shape)[np.broadcast_to(m, shape)],
                   MaskedSelectBackward0, m, mask)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return picked(input, lambda a: np.roll(a, shifts[0]), RollBackward0)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    axes = tuple(input._dim(d) for d in dims)
    return picked(input, lambda a: np.roll(a, shifts, axes), RollBackward0)


def take(input, index):
    idx = index_array(index, "take", allowed=(np.int64,))
    n = input._data.size
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {bad.flat[0]} on a tensor of "
                         f"{n} elements.")
    return picked(input, lambda a: a.reshape(-1)[idx], TakeBackward0, idx, index)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) ``repeats`` times in a row. Alone,
    ``repeat_interleave(counts)`` gives ``i`` counts[i] times."""
    if repeats is None:  # torch.repeat_interleave(counts)
        return wrap(np.repeat(np.arange(input._data.size), input._data))
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
        return index_select(input, dim, wrap(positions))
    n = int(repeats)
    if n < 0:
        raise RuntimeError("repeats can not be negative")
    shape = list(input.shape)
    expanded = input.unsqueeze(dim + 1).expand(*shape[:dim + 1], n, *shape[dim + 1:])
    shape[dim] *= n
    return ClonedViewBackward0.run((expanded,), expanded._data, shape=tuple(shape))


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
            part._grad_fn.__class__ = UnbindBackward0
    return multi_output_views(parts, "Unbind")  # (PyTorch refuses in-place changes of them)


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
        out._grad_fn.__class__ = SliceBackward0
    return out


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s memory (its storage: the tensor that owns the memory) with the
    shape ``size`` and the ``stride`` (in elements) given, from ``storage_offset`` (by
    default ``input``'s own). Elements may repeat (stride 0); writing into such a view is
    refused, as PyTorch does."""
    check_tensor("as_strided", input)
    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    a = input._data
    memory = _memory_of(a)
    if storage_offset is None:
        storage_offset = (_address(a) - _address(memory)) // a.itemsize
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    available = memory.nbytes // a.itemsize
    needed = 0 if 0 in size else storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {a.itemsize} requiring a storage size of "
            f"{needed * a.itemsize} are out of bounds for storage of size "
            f"{available * a.itemsize}")
    return AsStridedBackward0.run((input,), a, size=size, stride=stride, offset=storage_offset)


FUNCTIONS = ("index_select", "masked_select", "roll", "take", "repeat_interleave", "select",
             "unbind", "narrow", "flip", "tile", "as_strided",)
METHODS = ("repeat", "index_select", "masked_select", "roll", "take", "repeat_interleave",
           "select", "unbind", "narrow", "as_strided",)
