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
Arguments arrive already checked by the functions in ``minigrad/shape_ops.py`` and
``Tensor.__getitem__``.
"""

import numpy as np

from . import formulas
from .op import Op

__all__ = ["SliceBackward0", "SelectBackward0", "AliasBackward0", "IndexUnsqueezeBackward0",
           "UnbindBackward0", "SliceBackwardBackward0", "IndexBackward0",
           "IndexBackwardBackward0", "AsStridedBackward0", "GatherBackward0", "PickBackward",
           "PutBackward0", "FlipBackward0", "RepeatBackward0", "IndexSelectBackward0",
           "MaskedSelectBackward0", "RollBackward0", "TakeBackward0", "DiagonalBackward0_copy",
           "TrilBackward0", "TriuBackward0", "DiagonalBackward0", "DiagonalBackwardBackward0",
           "TraceBackward0", "DiagEmbedBackward0", "ScatterBackward0", "ScatterBackward1",
           "ScatterAddBackward0", "IndexAddBackward0", "IndexFillBackward0",
           "IndexFillBackward1", "view_node_class"]

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


def _index_arrays(key):
    """The index arrays in an advanced ``key``: saved, so changing an index tensor in place
    afterwards makes backward refuse (PyTorch saves the indices too)."""
    return tuple([k for k in key if type(k) is _ndarray]) if type(key) is tuple else ()


def _one_d(shape):
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


SelectBackward0 = type("SelectBackward0", (SliceBackward0,), {"__slots__": ()})
AliasBackward0 = type("AliasBackward0", (SliceBackward0,), {"__slots__": ()})
# x[None, ...]: PyTorch's name, with the index's backward (x.unsqueeze(0) has its own node).
IndexUnsqueezeBackward0 = type("UnsqueezeBackward0", (SliceBackward0,), {"__slots__": ()})
# unbind's pieces are views made by indexing: select's node under unbind's name
UnbindBackward0 = type("UnbindBackward0", (SelectBackward0,), {"__slots__": ()})


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


def _view_at(array, path):
    """``array[path[0]][path[1]]...``: the part of a tensor that a chain of basic indices
    viewed (a view, so writing into it writes into ``array``)."""
    for key in path:
        array = _element_view(array, key)
    return array


class AsStridedBackward0(Op):
    """A view ``root[path]`` made again after an in-place change of it (PyTorch's name):
    the gradient goes back into the viewed part of zeros of the root's shape. Made by
    ``Tensor``'s in-place machinery as ``AsStridedBackward0((node,), shape, path, root)``,
    not by ``run``: the op was done by an in-place change, not by a forward pass. ``root``,
    the tensor it views (None: nothing to check), must not change in place afterwards."""
    __slots__ = ("path",)
    is_view = True

    def __init__(self, inputs, shape, path, root=None):
        super().__init__(inputs, (shape,))
        self.path = path
        if root is not None:
            self.viewed = (root._counter(), root._version, root)

    def backward(self, grad):
        shape = self.input_shape(0)
        if _is_array(grad):
            out = np.zeros(shape, dtype=grad.dtype)
            _view_at(out, self.path)[...] = grad
            return out
        shapes, part = [], np.broadcast_to(np.zeros((), np.float64), shape)
        for key in self.path:
            shapes.append(part.shape)
            part = _element_view(part, key)
        for shape, key in zip(reversed(shapes), reversed(self.path)):
            grad = placed(grad, shape, key)
        return grad


# ------------------------------------------------------------------ advanced indexing

class IndexBackward0(Op):
    """Advanced indexing, ``a[first][key]`` (``first``, the ints, slices and None PyTorch
    applies before the index arrays, may be None): a copy. An index may repeat, so the
    gradients add up where they are put back."""
    __slots__ = ("first", "key")

    def forward(self, a, first, key):
        self.first, self.key = first, key
        self.saved = _index_arrays(key)
        value = (a if first is None else a[first])[key]
        if value.base is not None:  # numpy's own temporary, not a view of ``a``:
            value = value.copy()    # the result owns its memory, as in PyTorch
        return value

    def backward(self, grad, *index_arrays):
        return put(grad, self.input_shape(0), self.first, self.key)


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
        return a.reshape(_one_d(a.shape))[key].reshape(shape)

    def backward(self, grad, index):
        shape = self.input_shape(0)
        picked = grad.reshape(_array(index).shape)
        return put(picked, _one_d(shape), None, self.key).reshape(shape)


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


class PutBackward0(Op):
    """Zeros of ``size`` (1-D) with ``g`` added at ``positions``: the backward of picking
    elements by their flat positions, whose own backward picks them again."""
    __slots__ = ("positions",)

    def forward(self, g, positions, size):
        self.positions = positions
        return put_flat(g, positions, size)

    def backward(self, grad):
        return indexed(grad, None, (self.positions,))


def put_flat(grad, positions, size):
    """Zeros of ``size`` with ``grad`` (1-D) added at ``positions``."""
    if _is_array(grad):
        summed = np.bincount(positions, weights=grad, minlength=size)
        return summed.astype(grad.dtype, copy=False)
    return PutBackward0.run((grad,), grad._data, positions=positions, size=size)


def _pick_node(name):
    return type(name, (PickBackward,), {"__slots__": ()})


FlipBackward0 = _pick_node("FlipBackward0")
RepeatBackward0 = _pick_node("RepeatBackward0")
IndexSelectBackward0 = _pick_node("IndexSelectBackward0")
MaskedSelectBackward0 = _pick_node("MaskedSelectBackward0")
RollBackward0 = _pick_node("RollBackward0")
TakeBackward0 = _pick_node("TakeBackward0")
DiagonalBackward0_copy = _pick_node("DiagonalBackward0_copy")  # diag of a matrix


# ------------------------------------------------------------------ triangles, diagonals

class TrilBackward0(Op):
    """tril/triu keep the elements where ``keep`` holds; only they get a gradient: the
    gradient goes through the same op."""
    __slots__ = ("keep",)

    def forward(self, a, keep):
        self.keep = keep
        return np.where(keep, a, np.zeros((), a.dtype))

    def backward(self, grad):
        if _is_array(grad):
            return np.where(self.keep, grad, np.zeros((), grad.dtype))
        return type(self).run((grad,), grad._data, keep=self.keep)


TriuBackward0 = type("TriuBackward0", (TrilBackward0,), {"__slots__": ()})


def _diagonal_view(array, offset, dim1, dim2):
    """numpy's diagonal, made writable as PyTorch's is (it views the same memory)."""
    view = np.diagonal(array, offset, dim1, dim2)
    if array.flags.writeable:
        view.flags.writeable = True
    return view


class DiagonalBackward0(Op):
    """A diagonal (a view): its gradient goes onto that diagonal of zeros."""
    __slots__ = ("offset", "dims")
    is_view = True

    def forward(self, a, offset, dim1, dim2):
        self.offset, self.dims = offset, (dim1, dim2)
        return _diagonal_view(a, offset, dim1, dim2)

    def backward(self, grad):
        return diagonal_placed(grad, self.input_shape(0), self.offset, self.dims)


class DiagonalBackwardBackward0(Op):
    """Zeros of ``shape`` with ``g`` on a diagonal: the backward of ``diagonal``, whose
    backward is ``diagonal`` again."""
    __slots__ = ("offset", "dims")

    def forward(self, g, shape, offset, dims):
        self.offset, self.dims = offset, dims
        out = np.zeros(shape, dtype=g.dtype)
        _diagonal_view(out, offset, *dims)[...] = g
        return out

    def backward(self, grad):
        return diagonal(grad, self.offset, self.dims)


def diagonal(x, offset, dims):
    if _is_array(x):
        return np.diagonal(x, offset, *dims)
    return DiagonalBackward0.run((x,), x._data, offset=offset, dim1=dims[0], dim2=dims[1])


def diagonal_placed(grad, shape, offset, dims):
    if _is_array(grad):
        out = np.zeros(shape, dtype=grad.dtype)
        _diagonal_view(out, offset, *dims)[...] = grad
        return out
    return DiagonalBackwardBackward0.run((grad,), grad._data, shape=shape, offset=offset,
                                         dims=dims)


class TraceBackward0(Op):
    """The sum of a matrix's diagonal: each diagonal element gets the whole gradient."""
    __slots__ = ()

    def forward(self, a, dtype):
        return np.asarray(np.trace(a, dtype=dtype))

    def backward(self, grad):
        shape = self.input_shape(0)
        return diagonal_placed(formulas.expand_to(grad, (min(shape),)), shape, 0, (0, 1))


class DiagEmbedBackward0(Op):
    """diag of a vector: each element's gradient is read back from the diagonal it went to."""
    __slots__ = ("offset",)

    def forward(self, a, offset):
        self.offset = offset
        return np.diag(a, offset)

    def backward(self, grad):
        part = diagonal(grad, self.offset, (0, 1))
        return part.copy() if _is_array(part) else part


# ------------------------------------------------------------------ writing into a copy

class ScatterBackward0(Op):
    """``scatter(dim, index, src)``: a copy of ``a`` with ``src``'s leading corner (``lead``)
    written at ``key``. The overwritten elements of ``a`` get no gradient; ``src`` gets the
    gradient of the places it was written to, as gather reads them."""
    __slots__ = ("key", "lead")

    def forward(self, a, s, key, lead, index):
        self.key, self.lead = key, lead
        self.save_for_backward(index)
        out = a.copy().reshape(_one_d(a.shape))
        self._write(out, key, s.reshape(_one_d(s.shape))[lead])
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
            picked = indexed(grad.reshape(_one_d(shape)), None, self.key)
            grad_s = placed(picked, _one_d(s_shape), self.lead).reshape(s_shape)
        return grad_a, grad_s

    def _grad_self(self, grad):
        return zero_at(grad, self.key)


class ScatterAddBackward0(ScatterBackward0):
    """``scatter_add``: as scatter, but the values add up (repeats too), so ``a`` keeps its
    whole gradient."""
    __slots__ = ()

    @staticmethod
    def _write(out, key, values):
        np.add.at(out, key, values)

    def _grad_self(self, grad):
        return grad


class ScatterBackward1(Op):
    """``scatter(dim, index, value=number)``: a copy with the number at ``key``; the
    overwritten places get no gradient (the gradient goes through the same op with 0)."""
    __slots__ = ("key",)

    def forward(self, a, key, value, index=None):
        self.key = key
        if index is not None:
            self.save_for_backward(index)
        out = a.copy().reshape(_one_d(a.shape))
        out[key] = value
        return out.reshape(a.shape)

    def backward(self, grad, *index):
        return zero_at(grad, self.key)


def zero_at(grad, key):
    """A copy of ``grad`` (seen at least 1-D) with zeros at ``key``."""
    if _is_array(grad):
        out = grad.copy()
        out.reshape(_one_d(grad.shape))[key] = 0
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
        if _is_array(grad):
            out = grad.copy()
            out[self.key] = 0
            return out
        return IndexFillBackward0.run((grad,), grad._data, key=self.key, value=0)


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
            grad_v = np.asarray(part.sum(), dtype=grad.dtype) if _is_array(part) \
                else part.sum()
        return grad_a, grad_v
