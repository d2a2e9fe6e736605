"""The nodes of in-place changes recorded in the graph: ``fill_``, ``copy_``, ``x[...] = v``
and a change made through a view (chapters 4 and 5).

A change through a view (``x[0].mul_(2)``, ``x.T.add_(1)``, ``x.view(-1).zero_()``, any
view op) is recorded as PyTorch records it: the tensor that owns the memory gets a
``CopySlices`` node (``ViewCopySlices``), and each view of it a new ``AsStridedBackward0``.
Both find the viewed elements by their memory (``element_positions``), so one pair of
nodes serves every view op, whatever its shape or strides.

They are ``Op`` classes like every other op, but ``run`` does not make them: the change was
made in the tensor's memory by ``Tensor``'s in-place methods, which then make the node with
``NodeClass(inputs, shapes, ...)``. Their ``backward`` works on arrays and on Tensors, so
``create_graph=True`` passes through an in-place change too. A node that saved index
arrays checks the versions of the index tensors they came from, as the other ops do.
"""

import numpy as np

from .. import dtypes
from ..graph import saved_version
from . import formulas
from .indexing import index_arrays, indexed
# made by Tensor's in-place changes of views, with ViewCopySlices below
from .indexing import AsStridedBackward0  # noqa: F401
from .op import Op

_ndarray = np.ndarray


def _zeros_like(grad, wrap):
    """Zeros of ``grad``'s shape and dtype: a constant, an array or a Tensor like ``grad``."""
    if type(grad) is _ndarray or isinstance(grad, np.generic):
        return np.zeros_like(grad)
    return wrap(np.zeros_like(grad._data))


def _cast(grad, dtype):
    """``grad`` in the numpy ``dtype`` (an array, or a Tensor whose cast is recorded)."""
    if type(grad) is _ndarray or isinstance(grad, np.generic):
        return np.asarray(grad, dtype=dtype)
    return grad if grad._data.dtype == dtype else grad.to(dtypes.from_numpy(dtype))


class FillBackward0(Op):
    """After fill_/zero_ the value no longer depends on what was there: gradient 0."""
    __slots__ = ()

    def backward(self, grad):
        return _zeros_like(grad, self.wrap)


class ZeroBackward0(FillBackward0):
    """PyTorch's name for this node: FillBackward0's backward."""
    __slots__ = ()


# PyTorch's name for t.fill_(number); FillBackward0 is the out-of-place torch.fill's.
class FillBackward2(FillBackward0):
    """PyTorch's name for this node: FillBackward0's backward."""
    __slots__ = ()


class FillBackward3(Op):
    """t.fill_(value) with a 0-dim tensor ``value``: t's old values get gradient 0 and
    ``value``, which is now in every element, the sum of the gradient."""
    __slots__ = ("dtype",)

    def __init__(self, inputs, shapes, dtype):
        super().__init__(inputs, shapes)
        self.dtype = dtype

    def backward(self, grad):
        grad_value = None
        if self.inputs[1] is not None:
            grad_value = _cast(grad.sum(), self.dtype)
        return _zeros_like(grad, self.wrap), grad_value


class CopyBackwards(Op):
    """t.copy_(src): t's old values get gradient 0; ``src`` gets the gradient, summed over
    the dims it was broadcast along, in its own dtype."""
    __slots__ = ("src_dtype",)

    def __init__(self, inputs, shapes, src_dtype):
        super().__init__(inputs, shapes)
        self.src_dtype = src_dtype

    def backward(self, grad):
        grad_src = None
        if self.inputs[1] is not None:
            grad_src = _cast(formulas.sum_to(grad, self.input_shape(1)), self.src_dtype)
        return _zeros_like(grad, self.wrap), grad_src


# ------------------------------------------------------------------ shapes

def _mask_outside(shape, first, key):
    """A bool array of ``shape``: True everywhere but at ``[first][key]``."""
    mask = np.ones(shape, dtype=bool)
    (mask if first is None else mask[first])[key] = False
    return mask


def _offsets(array, first=0):
    """The byte offset of each element of ``array`` from ``first``, in ``array``'s shape."""
    offsets = np.full(array.shape, first, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(array.shape, array.strides)):
        step = np.arange(n, dtype=np.int64) * stride
        offsets += step.reshape((n,) + (1,) * (array.ndim - axis - 1))
    return offsets


def _address(array):
    return array.__array_interface__["data"][0]


def element_positions(root, view):
    """For each element of ``view`` (an array viewing ``root``'s memory), its flat position
    in ``root`` (in C order): what ``AsStridedBackward0`` and ``ViewCopySlices`` use, for a
    view made by any view op (a slice, ``.T``, ``view``, ``diagonal``, ``expand``, ...).
    Raises when ``view`` is not inside ``root``'s memory (``root.data`` was replaced)."""
    wanted = _offsets(view, _address(view) - _address(root))
    if root.dtype != view.dtype:
        raise RuntimeError(f"an in-place change of a view of dtype {view.dtype} of a tensor "
                           f"of dtype {root.dtype} cannot be recorded: change a copy")
    if not root.size:
        return wanted
    if root.flags.c_contiguous:
        positions = wanted // root.itemsize
        found = (wanted % root.itemsize == 0) & (positions >= 0) & (positions < root.size)
    else:
        flat = _offsets(root).reshape(-1)
        order = np.argsort(flat, kind="stable")
        at = np.minimum(np.searchsorted(flat[order], wanted), flat.size - 1)
        positions = order[at]
        found = flat[positions] == wanted
    if not found.all():
        raise RuntimeError("an in-place change of a view could not be recorded: the view no "
                           "longer looks into the memory of the tensor it was made from (was "
                           "that tensor's .data replaced?). Change a copy (v = v.clone()).")
    return positions


class ViewCopySlices(Op):
    """The node of the tensor that owns the memory after an in-place op on a view of it:
    the gradient of the viewed elements (at ``positions``, see ``element_positions``) goes
    to the op's result, the rest to the tensor as it was before. PyTorch's CopySlices."""
    __slots__ = ("positions",)

    def __init__(self, inputs, shapes, positions):
        super().__init__(inputs, shapes)
        self.positions = positions

    def name(self):
        return "CopySlices"

    def __repr__(self):
        return "<CopySlices>"

    def backward(self, grad):
        positions = self.positions
        if np.unique(positions).size != positions.size:  # an expanded view was written
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        if type(grad) is _ndarray or isinstance(grad, np.generic):
            rest = np.array(grad)  # a copy (C order), an array for a 0-dim one too
            part = rest.reshape(-1)[positions]
            rest.reshape(-1)[positions] = 0
            return rest, part
        mask = np.ones(grad._data.size, dtype=bool)
        mask[positions] = False
        part = indexed(grad.reshape(-1), None, (positions,))
        return formulas.keep_where(mask.reshape(grad._data.shape), grad), part


class IndexPutBackward0(Op):
    """``t[key] = value`` on a tensor in the graph (``t[first][key]`` for an advanced index,
    as ``IndexBackward0``): the overwritten part of ``t`` gets no gradient, ``value`` gets the
    gradient of the part it filled. The index arrays are saved, with the versions of the
    ``index_tensors`` they came from (PyTorch saves the indices too)."""
    __slots__ = ("key", "first")

    def __init__(self, inputs, shapes, key, first=None, index_tensors=()):
        super().__init__(inputs, shapes)
        self.key, self.first = key, first
        self.saved = index_arrays(key)
        if self.saved:
            self.sources = [None] * len(self.saved)
            self.kept = [saved_version(t) for t in index_tensors]

    def backward(self, grad, *index_arrays):
        grad_self = grad_value = None
        first, key = self.first, self.key
        if self.inputs[0] is not None:
            if type(grad) is _ndarray or isinstance(grad, np.generic):
                grad_self = np.array(grad)  # a copy, and an array when grad is 0-dim
                (grad_self if first is None else grad_self[first])[key] = 0
            else:
                grad_self = formulas.keep_where(_mask_outside(grad.shape, first, key), grad)
        if self.inputs[1] is not None:
            value_shape = self.input_shape(1)
            part = indexed(grad, first, key)
            if part.ndim < len(value_shape):  # a value with extra leading dims of size 1
                part = part.reshape((1,) * (len(value_shape) - part.ndim) + tuple(part.shape))
            grad_value = formulas.sum_to(part, value_shape)
        return grad_self, grad_value


# PyTorch's name when the key is basic (ints and slices): the value is copied into a slice.
class CopySlices(IndexPutBackward0):
    """PyTorch's name for this node: IndexPutBackward0's backward."""
    __slots__ = ()

