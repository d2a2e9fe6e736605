"""The nodes of in-place changes recorded in the graph: ``fill_``, ``copy_``, ``x[...] = v``
and a change made through a view (chapters 4 and 5).

Every other op is an ``Op`` class in ``minigrad/ops/`` (forward and backward together).
These five are still hand-written ``Node`` subclasses: they take and return numpy arrays,
so ``create_graph=True`` refuses to pass through an in-place change (a clear error, not a
silently wrong second derivative).
"""

import numpy as np

from .graph import Node
from .ops.formulas import sum_to
# made by Tensor's in-place changes of views, with ViewCopySlices below
from .ops.indexing import AsStridedBackward0, _view_at  # noqa: F401


class FillBackward0(Node):
    """After fill_/zero_ the value no longer depends on what was there: gradient 0."""
    __slots__ = ()

    def apply(self, grad):
        return (np.zeros_like(grad),)


ZeroBackward0 = type("ZeroBackward0", (FillBackward0,), {"__slots__": ()})
# PyTorch's name for t.fill_(number); FillBackward0 is the out-of-place torch.fill's.
FillBackward2 = type("FillBackward2", (FillBackward0,), {"__slots__": ()})


class FillBackward3(Node):
    """t.fill_(value) with a 0-dim tensor ``value``: t's old values get gradient 0 and
    ``value``, which is now in every element, the sum of the gradient."""
    __slots__ = ("dtype",)

    def __init__(self, inputs, dtype):
        super().__init__(inputs)
        self.dtype = dtype

    def apply(self, grad):
        grad_value = None
        if self.inputs[1] is not None:
            grad_value = np.asarray(grad.sum(), dtype=self.dtype)
        return np.zeros_like(grad), grad_value


class CopyBackwards(Node):
    """t.copy_(src): t's old values get gradient 0; ``src`` gets the gradient, summed over
    the dims it was broadcast along, in its own dtype."""
    __slots__ = ("src_shape", "src_dtype")

    def __init__(self, inputs, src_shape, src_dtype):
        super().__init__(inputs)
        self.src_shape, self.src_dtype = src_shape, src_dtype

    def apply(self, grad):
        grad_src = None
        if self.inputs[1] is not None:
            grad_src = sum_to(grad, self.src_shape).astype(self.src_dtype, copy=False)
        return np.zeros_like(grad), grad_src


# ------------------------------------------------------------------ shapes

def _index_arrays(key):
    """The index arrays in an advanced ``key``: saved like any array, so changing an index
    tensor in place afterwards makes backward refuse (PyTorch saves the indices too)."""
    return tuple(k for k in key if isinstance(k, np.ndarray)) if type(key) is tuple else ()


class ViewCopySlices(Node):
    """The root's node after an in-place op on its view ``root[path]``: the viewed part's
    gradient goes to the op's result, the rest to the root as it was before."""
    __slots__ = ("path",)

    def __init__(self, inputs, path):
        super().__init__(inputs)
        self.path = path

    def name(self):
        return "CopySlices"

    def apply(self, grad):
        rest = grad.copy()
        _view_at(rest, self.path)[...] = 0
        return rest, _view_at(grad, self.path).copy()


class IndexPutBackward0(Node):
    """``t[key] = value`` on a tensor in the graph (``t[first][key]`` for an advanced index,
    as ``IndexBackward0``): the overwritten part of ``t`` gets no gradient, ``value`` gets the
    gradient of the part it filled."""
    __slots__ = ("key", "value_shape", "first")

    def __init__(self, inputs, key, value_shape, first=None):
        super().__init__(inputs, _index_arrays(key))
        self.key, self.value_shape, self.first = key, value_shape, first

    def apply(self, grad):
        self.saved_arrays()  # refuses once freed, as PyTorch does
        grad_self = grad_value = None
        if self.inputs[0] is not None:
            grad_self = np.array(grad)  # a copy, and an array when grad is 0-dim
            (grad_self if self.first is None else grad_self[self.first])[self.key] = 0
        if self.inputs[1] is not None:
            part = (grad if self.first is None else grad[self.first])[self.key]
            if part.ndim < len(self.value_shape):  # a value with extra leading dims of size 1
                part = part.reshape((1,) * (len(self.value_shape) - part.ndim) + part.shape)
            grad_value = sum_to(part, self.value_shape)
        return grad_self, grad_value


# PyTorch's name when the key is basic (ints and slices): the value is copied into a slice.
CopySlices = type("CopySlices", (IndexPutBackward0,), {"__slots__": ()})


