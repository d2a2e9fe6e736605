"""Shape ops (chapters 2 and 5): the ops that rearrange a tensor's elements without
computing anything: reshape/view, unsqueeze, squeeze, expand, permute, transpose, ``t``,
stack and cat. Each is one class named like PyTorch's node.

Most of them are views: the output shares the input's memory (``is_view = True``): it
shares the input's version counter, and backward through the view refuses once that
memory was changed in place (``Op.check_saved``). Their backward is the inverse
rearrangement, itself a view op, so a second derivative passes through them for free.

Validation (and PyTorch's error messages) stay in ``Tensor``'s methods; the ops get
arguments that are already checked.
"""

import numpy as np

from . import formulas
from .op import Op, forward_mode
from .tangents import auto_linear
from .. import dtypes
from .._tensor import tensor_from, wrap
from ..tensor_rules import needs_grad
import numbers

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

    jvp = auto_linear


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

    def jvp(self, tangents, out, a, *options):
        return tangents[0]  # (Op.run broadcasts a tangent to the output's shape)


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

    jvp = auto_linear


class TransposeBackward0(Op):
    """``transpose(dim0, dim1)``: swapping the two axes again undoes it."""
    __slots__ = ("dims",)
    is_view = True

    def forward(self, a, dim0, dim1):
        self.dims = (dim0, dim1)
        return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()

    def backward(self, grad):
        return grad.swapaxes(*self.dims) if grad.ndim else grad

    jvp = auto_linear


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

    jvp = auto_linear


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

    jvp = auto_linear


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

    def jvp(self, tangents, out, *inputs):
        parts = [t if t is not None else _zeros_of(a) for t, a in zip(tangents, inputs)]
        joined = [p for p, n in zip(parts, self.sizes) if n is not None]
        if formulas.is_array(joined[0]):
            return np.concatenate(joined, axis=self.dim)
        return cat(joined, self.dim)


def _zeros_of(a):
    """The tangent of an input that carries none: zeros (an array, or a Tensor)."""
    if formulas.is_array(a):
        return np.zeros_like(a)
    return Op.wrap(np.zeros_like(a._data))


def _empty_like(grad):
    if formulas.is_array(grad):
        return np.zeros(0, grad.dtype)
    return Op.wrap(np.zeros(0, grad._data.dtype))


def _common(tensors):
    tensors = [tensor_from(t) for t in tensors]
    if not tensors:
        raise RuntimeError("expected a non-empty list of Tensors")
    common = tensors[0]._data.dtype
    for t in tensors[1:]:
        # stack and cat promote a 0-dim tensor like any other (no "wrapped number" rule)
        common = dtypes.promote(np.empty(1, common), np.empty(1, t._data.dtype))
    return tensors, [t._data.astype(common, copy=False) for t in tensors]


def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dimension."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    tensors, arrays = _common(tensors)
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got shapes "
                           f"{[list(a.shape) for a in arrays]}")
    n = arrays[0].ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    dim %= n
    if not needs_grad(*tensors) and not forward_mode():
        return wrap(np.stack(arrays, axis=dim))
    return StackBackward0.run(tensors, *arrays, dim=dim)


def cat(tensors, dim=0):
    """Join tensors end to end along an existing dimension. As in PyTorch, a 1-D empty tensor
    (shape [0], a common "nothing yet" start) is skipped whatever the others' shapes."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    tensors, arrays = _common(tensors)
    for i, a in enumerate(arrays):
        if not a.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated: stack them, or unsqueeze(0) each first")
    joined = [a for a in arrays if a.shape != (0,)]
    # only [0]-shaped tensors: PyTorch gives one, whatever the dim
    dim = wrap(joined[0])._dim(dim) if joined else 0
    joined = joined or arrays
    try:
        if not needs_grad(*tensors) and not forward_mode():
            return wrap(np.concatenate(joined, axis=dim))
        sizes = [a.shape[dim] if a.shape != (0,) or len(joined) == len(arrays) else None
                 for a in arrays]
        return CatBackward0.run(tensors, *arrays, joined=joined, dim=dim,
                                          sizes=sizes)
    except ValueError:
        raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}: got shapes "
                           f"{[list(a.shape) for a in arrays]}") from None


# ------------------------------------------------------------------ functions

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


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("movedim", "moveaxis", "meshgrid", "cartesian_prod",)
METHODS = ("movedim", "moveaxis",)
