"""Shape ops (chapters 2 and 5): the ops that rearrange a tensor's elements without
computing anything: reshape/view, unsqueeze, squeeze, expand, permute, transpose, ``t``,
stack and cat. Each is one class named like PyTorch's node.

Most of them are views: the output shares the input's memory (``is_view = True``): it
shares the input's version counter, and backward through the view refuses once that
memory was changed in place (``Op._check_versions``). Their backward is the inverse
rearrangement, itself a view op, so a second derivative passes through them for free.

Validation (and PyTorch's error messages) stay in ``Tensor``'s methods; the ops get
arguments that are already checked.
"""

import numpy as np

from . import formulas
from .op import Op

__all__ = ["ViewBackward0", "UnsafeViewBackward0", "ClonedViewBackward0",
           "reshape_class", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1",
           "ExpandBackward0", "PermuteBackward0", "TransposeBackward0", "TBackward0",
           "StackBackward0", "CatBackward0"]


class ViewBackward0(Op):
    """``reshape``/``view``/``flatten``: the same elements in a new shape (a view where numpy
    can make one). The gradient is reshaped back."""
    __slots__ = ()
    is_view = True

    def forward(self, a, shape):
        out = a.reshape(shape)
        return out

    def backward(self, grad):
        return grad.reshape(self.input_shape(0))


class UnsafeViewBackward0(ViewBackward0):
    """A reshape that had to copy (its input's memory is not laid out for the new shape):
    PyTorch's name for it. Not a view: changing the input in place later changes nothing
    here, so its node neither keeps the input nor shares its version."""
    __slots__ = ()
    is_view = False

    def forward(self, a, shape):
        return a.reshape(shape)


class ClonedViewBackward0(UnsafeViewBackward0):
    """repeat_interleave's reshape of an expanded tensor: PyTorch clones, then views the
    clone, so its grad_fn is a ViewBackward0; here one reshape into new memory does both."""
    __slots__ = ()

    def forward(self, a, shape):
        out = a.reshape(shape)
        if out.base is a or a.base is not None and out.base is a.base:  # a view: copy it
            out = out.copy()
        return out


ClonedViewBackward0.__name__ = ClonedViewBackward0.__qualname__ = "ViewBackward0"


def reshape_class(a, shape):
    """The node of ``a.reshape(shape)``: a view, unless numpy has to copy."""
    if a.flags.c_contiguous:
        return ViewBackward0
    try:
        np.reshape(a, shape, copy=False)
    except ValueError:  # (also for a wrong shape: forward then raises PyTorch's error)
        return UnsafeViewBackward0
    return ViewBackward0


class UnsqueezeBackward0(ViewBackward0):
    """``unsqueeze(dim)``: a new axis of length 1 (``dim`` already in range)."""
    __slots__ = ()

    def forward(self, a, dim):
        return np.expand_dims(a, dim)


class SqueezeBackward0(ViewBackward0):
    """``squeeze()``: every axis of length 1 dropped."""
    __slots__ = ()

    def forward(self, a):
        return a.reshape([n for n in a.shape if n != 1])


class SqueezeBackward1(ViewBackward0):
    """``squeeze(dim)``: the axes ``dims`` (of length 1) dropped."""
    __slots__ = ()

    def forward(self, a, dims):
        out = np.squeeze(a, axis=dims)
        if out is a:  # np.squeeze(a, ()) gives a itself: a view op gives a view
            out = a.view()
        return out


class ExpandBackward0(Op):
    """``expand``: the input seen at a larger shape (``value``, the view the method made:
    writable where nothing repeats). Its gradient is summed back to the input's shape,
    which ``Op.apply`` does for every op."""
    __slots__ = ()
    is_view = True

    def forward(self, a, value):
        return value

    def backward(self, grad):
        return grad


def _permute(x, dims):
    return np.transpose(x, dims) if formulas.is_array(x) else x.permute(dims)


class PermuteBackward0(Op):
    """``permute(dims)``: the gradient is permuted back by the inverse order."""
    __slots__ = ("dims",)
    is_view = True

    def forward(self, a, dims):
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad):
        return _permute(grad, tuple(np.argsort(self.dims).tolist()))


class TransposeBackward0(Op):
    """``transpose(dim0, dim1)``: swapping the two axes again undoes it."""
    __slots__ = ("dims",)
    is_view = True

    def forward(self, a, dim0, dim1):
        self.dims = (dim0, dim1)
        return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()

    def backward(self, grad):
        return grad.swapaxes(*self.dims) if grad.ndim else grad


class TBackward0(Op):
    """``t()`` of a matrix (a vector or a number stays as it is)."""
    __slots__ = ()
    is_view = True

    def forward(self, a):
        return a.T

    def backward(self, grad):
        return grad.T if grad.ndim == 2 else grad

    def apply(self, grad):
        if type(grad) is np.ndarray and grad.ndim == 2:  # (speed: every linear layer's weight)
            return (grad.T,)
        return Op.apply(self, grad)


def _part(grad, dim, key):
    """``grad[:, ..., key]`` with ``key`` at ``dim`` (an int: a copy, as np.take gives;
    a slice: a view), or for a Tensor the same index, recorded."""
    index = (slice(None),) * dim + (key,)
    if type(grad) is np.ndarray:
        return np.take(grad, key, axis=dim) if type(key) is int else grad[index]
    return grad[index]


class StackBackward0(Op):
    """``stack(tensors, dim)`` (arrays already promoted to one dtype): input ``i`` gets
    the slice ``i`` of the gradient along ``dim``."""
    __slots__ = ("dim",)

    def forward(self, *arrays, dim):
        self.dim = dim
        return np.stack(arrays, axis=dim)

    def backward(self, grad):
        return tuple([_part(grad, self.dim, i) if needed else None
                      for i, needed in enumerate(self.needs_input_grad)])


class CatBackward0(Op):
    """``cat(tensors, dim)``: each input gets its stretch of the gradient along ``dim``.
    ``sizes`` holds each input's length along ``dim``, None for a 1-D empty input that cat
    skipped (its gradient is empty too)."""
    __slots__ = ("dim", "sizes")

    def forward(self, *arrays, joined, dim, sizes):
        self.dim, self.sizes = dim, sizes
        return np.concatenate(joined, axis=dim)

    def backward(self, grad):
        grads, start = [], 0
        for n, needed in zip(self.sizes, self.needs_input_grad):
            if n is None:
                grads.append(_empty_like(grad) if needed else None)
                continue
            grads.append(_part(grad, self.dim, slice(start, start + n)) if needed else None)
            start += n
        return tuple(grads)


def _empty_like(grad):
    if formulas.is_array(grad):
        return np.zeros(0, grad.dtype)
    return Op.wrap(np.zeros(0, grad._data.dtype))

