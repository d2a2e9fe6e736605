"""Indexing: ``t[key]``, ``t[key] = value`` and ``gather`` (chapters 5 and 7).

The helpers read a key as PyTorch does (not numpy's rule, see below) and record an
assignment into a tensor, or into a view of one, for backward.
"""

import numbers
import warnings

import numpy as np

from . import dtypes
from .ops import inplace as d
from .ops import indexing
from .ops.op import forward_mode, saving_versions_of
from .graph import GradMode
from .tensor_rules import (NUMBER_TYPES, number_as, one_dim,
                           overlaps_itself, writable)

from ._tensor import Tensor
from .graph import gradient_node


def edges_of(a, b):
    """The input nodes of a binary op whose second operand may be a Python number (None)."""
    return (gradient_node(a), gradient_node(b) if b is not None else None)


# How PyTorch reads an index (python_variable_indexing.cpp), which is not numpy's rule:
# integers select first, one dimension at a time, so an integer never counts as an advanced
# index; the arrays (int positions, bool masks) are then applied to what is left, with
# numpy's placement rule (their dims stay in place when they are adjacent, go first when a
# slice or None separates them). minigrad does the same in two numpy steps: ``first`` (ints,
# slices, None: a view) and then ``advanced`` (full slices and arrays only).

_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated (PyTorch still "
    "reads x[[0, [1]]] as x[0, [1]], and so does minigrad): use x[tuple(seq)] instead of "
    "x[seq], or x[torch.tensor(seq)] for an index tensor.")

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")


def _check_step(step):
    """PyTorch refuses a slice that walks backwards (numpy would return a reversed view)."""
    if step <= 0:
        raise ValueError("step must be greater than zero" if step else
                         "slice step cannot be zero")


def _check_ints_before(items, shape, key_items=()):
    """PyTorch applies an index one dimension at a time: an integer out of range before a
    backward slice (``x[5, ::-1]``) is the error it reports first. After an Ellipsis the
    dims are counted from the end (the items of the whole key, ``key_items``, say how
    many the Ellipsis covers)."""
    dim = shown = 0  # the dim of the tensor; the one PyTorch names (its place in the key)
    for i, k in enumerate(items):
        if k is Ellipsis:
            after = sum(_dims_taken(item) for item in key_items[i + 1:])
            dim, shown = dim + max(len(shape) - dim - after, 0), shown + 1  # (its place)
            continue
        if k is None:
            shown += 1
            continue
        if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            k = int(k._data)  # a 0-dim integer tensor selects as an integer does
        if type(k) is int and dim < len(shape) and not -shape[dim] <= k < shape[dim]:
            raise IndexError(f"index {k} is out of bounds for dimension {shown} with size "
                             f"{shape[dim]}")
        dim += 1
        shown += 1


def _dims_taken(item):
    """How many dims of the tensor an index item consumes (a bool mask: its own)."""
    if item is None or item is Ellipsis:
        return 0
    array = item._data if isinstance(item, Tensor) else item
    if isinstance(array, np.ndarray) and array.dtype == np.bool_:
        return max(array.ndim, 1)
    return 1


def _sequence_as_tuple(seq):
    """PyTorch's (and old numpy's) heuristic: a short list holding a sequence, a tensor, a
    slice, None or Ellipsis is a tuple of indices, not one index."""
    if len(seq) >= 32:
        return False
    for item in seq:
        if item is None or item is Ellipsis or isinstance(item, (Tensor, np.ndarray, list, tuple,
                                                                  slice, str, range)):
            return True
    return False


def _sequence_index(seq):
    """A (nested) list used as one index -> an index array, as PyTorch converts it: bools
    make a mask, other numbers int64 positions (floats are truncated, [] is an empty
    int64 index)."""
    array = np.array([x._data if isinstance(x, Tensor) else x for x in seq])
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind not in "iuf":
        raise TypeError(f"an index list must hold numbers or bools, not {array.dtype}")
    return array.astype(np.int64)


def _index_part(k):
    """One item of an index: an int (select), a slice, None, Ellipsis or an array (int
    positions, or a bool mask; a 0-dim bool array stands for a Python True/False)."""
    if k is None or k is Ellipsis:
        return k
    kind = type(k)
    if kind is int:
        return k
    if kind is slice:
        if k.step is not None:
            _check_step(k.step)
        return k
    if kind is bool or kind is np.bool_:
        return np.asarray(k)
    if isinstance(k, numbers.Integral):
        return int(k)
    if isinstance(k, Tensor):
        k = k._data
    elif isinstance(k, (list, tuple, range)):
        k = _sequence_index(k)
    elif isinstance(k, str):
        raise TypeError(f"a string cannot be an index ({k!r})")
    elif not isinstance(k, np.ndarray):
        raise IndexError(_BAD_INDEX.format(type(k).__name__))
    kind = k.dtype.kind
    if kind == "b":
        return k
    if kind == "u" and k.dtype.itemsize == 1:
        warnings.warn("indexing with dtype uint8 is now deprecated, please use a dtype bool "
                      "instead.", UserWarning, stacklevel=5)
        return k.astype(bool)
    if kind in "iu":
        return int(k) if k.ndim == 0 else k
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors, "
                     f"not {dtypes.from_numpy(k.dtype)}")


def _check_masks(advanced, shape):
    """A bool mask must have the shape of the dims it covers (numpy lets an empty mask
    through); PyTorch's IndexError otherwise. ``advanced`` holds no Ellipsis."""
    dim = 0
    for p in advanced:
        if not isinstance(p, np.ndarray) or p.dtype.kind != "b":
            dim += 1
            continue
        for j, n in enumerate(p.shape):
            if dim + j < len(shape) and shape[dim + j] != n:
                raise IndexError(f"The shape of the mask {list(p.shape)} at index {j} does not "
                                 f"match the shape of the indexed tensor {list(shape)} at "
                                 f"index {dim + j}")
        dim += p.ndim


def _split_advanced(parts, array):
    """``parts`` holding arrays -> ``(first, advanced)``: ``array[first]`` does the ints,
    slices and None (``first`` is None when there is nothing to do), ``[advanced]`` then
    the arrays, which is PyTorch's order of the result's dims."""
    first, advanced = [], []
    trivial = True
    ndim = array.ndim  # of array[first]
    for p in parts:
        if isinstance(p, np.ndarray):
            if p.ndim == 0:  # True / False: a new dim, indexed by [0] (size 1) or [] (size 0)
                first.append(None)
                advanced.append(np.zeros(1 if p else 0, np.int64))
                trivial = False
                ndim += 1
            else:
                first.extend([_ALL] * (p.ndim if p.dtype.kind == "b" else 1))
                advanced.append(p)
        elif p is Ellipsis:
            first.append(p)
            advanced.append(p)
        elif type(p) is int:
            first.append(p)
            trivial = False
            ndim -= 1
        else:  # slice or None
            first.append(p)
            advanced.append(_ALL)
            trivial = trivial and p == _ALL
            ndim += p is None
    at = [i for i, p in enumerate(advanced) if p is Ellipsis]
    if at:
        # Spelled out: numpy would see an Ellipsis (even of no dims) between two arrays as
        # separating them, PyTorch sees the dims.
        if len(at) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        rest = advanced[:at[0]] + advanced[at[0] + 1:]
        taken = sum(p.ndim if isinstance(p, np.ndarray) and p.dtype.kind == "b" else 1
                    for p in rest)
        advanced = advanced[:at[0]] + [_ALL] * (ndim - taken) + rest[at[0]:]
    first = None if trivial else tuple(first)
    advanced = tuple(advanced)
    if any(isinstance(p, np.ndarray) and p.dtype.kind == "b" for p in advanced):
        _check_masks(advanced, (array if first is None else array[first]).shape)
    return first, advanced


_ALL = slice(None)


def _to_index(key, array):
    """A Python/Tensor index into ``array`` -> ``(index, advanced)``. Basic indexing (ints,
    slices, None, Ellipsis) gives ``advanced = None`` and ``array[index]`` is a view. Otherwise
    the result is ``array[index][advanced]`` (``index`` None: ``array[advanced]``)."""
    kind = type(key)
    if kind is int:
        return key, None
    if kind is Tensor and key._data.ndim and key._data.dtype.kind == "i":
        return None, (key._data,)  # a batch of positions, as a training loop indexes
    if kind is slice:
        if key.step is not None:
            _check_step(key.step)
        return key, None
    if kind is tuple:
        for i, k in enumerate(key):
            kind = type(k)
            if kind is slice:
                if k.step is not None and k.step <= 0:
                    _check_ints_before(key[:i], array.shape, key)
                    _check_step(k.step)
            elif kind is not int and k is not None and k is not Ellipsis:
                break
        else:
            return key, None
        items = key
    elif kind is list and _sequence_as_tuple(key):
        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
        items = tuple(key)
    else:
        items = (key,)
    for i, k in enumerate(items):  # (an integer before a backward slice reports first)
        if type(k) is slice and k.step is not None and k.step <= 0:
            _check_ints_before(items[:i], array.shape, items)
            break
    parts = tuple(_index_part(k) for k in items)
    if not any(isinstance(p, np.ndarray) for p in parts):
        return parts, None
    return _split_advanced(parts, array)


def _one_mask(advanced):
    """Is the advanced part of an index one bool mask (beside full slices)? PyTorch then
    assigns a one-element value of any dtype as masked_fill_ does."""
    arrays = [k for k in advanced if isinstance(k, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype.kind == "b"


def _is_view_at(value, array, index):
    """Is ``value`` (an array) exactly the memory of ``array[index]``?"""
    if value.base is not (array if array.base is None else array.base):
        return False
    target = array[index]
    if type(target) is not np.ndarray:
        target = _element_view(array, index)
    return (value.shape == target.shape and value.strides == target.strides
            and value.__array_interface__["data"][0] == target.__array_interface__["data"][0])


def _index_tensors(key):
    """The tensors in an index (``x[idx]``, ``x[i, mask]``): backward checks their versions
    when their arrays were saved."""
    items = key if type(key) in (tuple, list) else (key,)
    return [k for k in items if isinstance(k, Tensor)]


EXPANDED_WRITE = ("a write into an expanded tensor cannot be recorded by minigrad when the "
                  "value requires grad: write into a copy (x = x.clone(); x[...] = value)")


def _assigned(tensor, key, value):
    """A copy of ``tensor`` with ``copy[key] = value`` done (and recorded)."""
    out = tensor.clone()
    out[key] = value
    return out


def _element_view(array, index):
    """``array[index]`` for a basic index that picks one element, as a 0-dim view: numpy
    gives a copied scalar, but ``t[0].fill_(7)`` must change ``t`` as in PyTorch."""
    return array[(*index, ...) if type(index) is tuple else (index, ...)]


def _indexed(array, index, advanced):
    """``array`` indexed as ``_to_index`` said."""
    if advanced is not None:
        return (array if index is None else array[index])[advanced]
    value = array[index]
    return value if type(value) is np.ndarray else _element_view(array, index)


class IndexingMethods:
    """``t[key]``, ``t[key] = value`` and ``gather``."""

    __slots__ = ()

    # ----------------------------------------------------------------- indexing

    def __getitem__(self, key):
        a = self._data
        try:
            index, advanced = _to_index(key, a)
            if advanced is not None:
                return saving_versions_of(
                    indexing.IndexBackward0.run((self,), a, first=index, key=advanced),
                    *_index_tensors(key))
            if GradMode.enabled:
                node_class = indexing.view_node_class(index, a.shape) if self._requires_grad \
                    else indexing.SliceBackward0
                return node_class.run((self,), a, key=index)
            return indexing.SliceBackward0.run((self,), a, key=index)  # a view: one version
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None

    def __setitem__(self, key, value):
        a = self._data
        t = value if isinstance(value, Tensor) else None
        v = value._data if t is not None else value
        if t is None and a.dtype.kind in "iu" and isinstance(v, NUMBER_TYPES):
            v = number_as(v, a.dtype)  # first, as PyTorch: x[::-1] = inf names the value
        try:
            index, advanced = _to_index(key, a)
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None
        if t is not None and advanced is None and v.base is not None and _is_view_at(v, a, index):
            return  # x[i] = x[i], the end of x[i] += 1: the view already holds the values
        if advanced is not None and t is not None and v.dtype != a.dtype:
            if v.size == 1 and _one_mask(advanced):
                # PyTorch's masked_fill_ path: the one value is converted like a number
                v = number_as(v.reshape(()).item(), a.dtype)
            else:
                raise RuntimeError(
                    f"Index put requires the source and destination dtypes match, got "
                    f"{self.dtype} for the destination and {t.dtype} for the source (convert "
                    f"the value first: value.to({self.dtype}))")
        # (an expanded tensor: PyTorch checks the part written for overlap, not the whole)
        part_alone = (not a.flags.writeable and advanced is None
                      and not overlaps_itself(_indexed(a, index, None)))
        try:
            recorded = self._check_inplace(t, overlapping=part_alone)
            if recorded and part_alone:  # (PyTorch records it: AsStridedBackward0)
                raise RuntimeError(EXPANDED_WRITE)
        except RuntimeError:
            if index is not None:  # PyTorch applies ints (and slices) first: their IndexError
                a[index]
            raise
        if recorded and forward_mode():  # a tangent to update (forward mode, chapter 13)
            self._assign_with_tangent(key, value)
            return
        if recorded and getattr(self, "_view", None) is not None:  # a view: through its root
            self._record_in_place(lambda before: _assigned(before, key, value))
            return
        if recorded:
            node_class = d.CopySlices if advanced is None else d.IndexPutBackward0
            node = node_class(edges_of(self, t), (a.shape, t._data.shape if t is not None else ()),
                              advanced if advanced is not None else index,
                              index if advanced is not None else None, _index_tensors(key))
        try:
            if advanced is None:
                (writable(a) if part_alone else a)[index] = v
            else:
                (a if index is None else a[index])[advanced] = v
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None
        except ValueError as error:
            raise RuntimeError(f"cannot assign a value of shape {list(np.shape(v))} to "
                               f"x[{key!r}], which has shape "
                               f"{list(_indexed(a, index, advanced).shape)} ({error})") from None
        self._bump_version()  # a node that saved the old values refuses backward
        if recorded:
            self._set_grad_fn(node)
            self._views_follow()  # its views now view the changed tensor

    def gather(self, dim, index, *, sparse_grad=False):
        """Pick along ``dim`` the positions that ``index`` names; the result has the index's
        shape. For a 2-D tensor and dim=1: ``out[i][j] = self[i][index[i][j]]``
        (each row picks its own columns, e.g. the score of each sample's label)."""
        dim = one_dim("gather", dim)
        if not isinstance(index, Tensor):
            raise TypeError(f"gather(): argument 'index' (position 2) must be Tensor, not "
                            f"{type(index).__name__}")
        dim = self._dim(dim)
        a, idx = self._data, index._data
        if idx.dtype not in (np.int64, np.int32):
            raise RuntimeError(f"gather(): Expected dtype int32/int64 for index, got "
                               f"{index.dtype} (make it an integer tensor: index.long())")
        # As PyTorch does, see a 0-dim tensor (input or index) as 1-D of size 1.
        a1, idx1 = a.reshape(a.shape or (1,)), idx.reshape(idx.shape or (1,))
        if a1.ndim != idx1.ndim:
            raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                               f"tensor: index has {idx.ndim}, input has {a.ndim} "
                               "(unsqueeze the index to add the missing ones)")
        if idx.size:
            for i, (n, m) in enumerate(zip(idx1.shape, a1.shape)):
                if i != dim and n > m:
                    raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                       f"{list(idx.shape)} to be no larger than self "
                                       f"{list(a.shape)} apart from dimension {dim}")
            bad = idx1[(idx1 < 0) | (idx1 >= a1.shape[dim])]
            if bad.size:
                raise RuntimeError(f"index {bad[0]} is out of bounds for dimension {dim} with "
                                   f"size {a1.shape[dim]}")
        key = list(np.indices(idx1.shape, sparse=True))
        key[dim] = idx1
        return saving_versions_of(indexing.GatherBackward0.run(
            (self,), a, key=tuple(key), index=idx1, shape=idx.shape), index)
