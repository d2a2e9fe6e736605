"""Reductions (chapters 2 and 5): ops that combine many elements into fewer (sum, mean, max,
amax, prod, norm) and the running ones (cumsum, cumprod), each with its forward, what it
saves and its backward in one class named like PyTorch's node (var and std: ``moments.py``).

Options (``dims``, ``keepdim``, ...) arrive already checked by the Tensor method; a backward
first puts back the axes a reduction without ``keepdim`` removed (``formulas.unsqueeze``).
Masks that pick elements (the maxima, the zeros of a product) are constants of the graph:
they are computed from the values, as arrays, and turned into the gradient's kind.
"""

import builtins  # (this module defines sum, any and all: the functions of tensors)
import warnings

import numpy as np

from . import formulas
from .op import Op
from .tangents import reduction_jvp, transposed_backward
from .tangents import auto_linear
from .shape import cat
from ..tensor_rules import takes_out
from ..tensor_rules import check_tensor, dims_in_order
from .. import dtypes
from .._tensor import wrap
from ..tensor_rules import one_dim

__all__ = ["SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "MaxBackward1",
           "MinBackward1", "AmaxBackward0", "AminBackward0", "ProdBackward0", "ProdBackward1",
           "CumsumBackward0", "CumprodBackward0", "LinalgVectorNormBackward0", "mean",
           "mean_of_array", "running_sum", "evenly_distribute"]


def _plain(x):
    """The array of ``x`` (a Tensor's values, without history), for masks and counts."""
    return x if type(x) is np.ndarray or not hasattr(x, "_data") else x._data


def _constant(array, like):
    """``array`` as a constant of ``like``'s kind (an array, or a Tensor without history)."""
    return formulas.as_mask(array, like)


def _restore(grad, dims, keepdim):
    """The gradient of a reduction over ``dims`` with the reduced axes back (length 1)."""
    return grad if keepdim else formulas.unsqueeze(grad, dims)


def mean_of_array(a, axis, keepdims):
    """``a.mean(...)``; the mean of nothing is nan, silently, as in PyTorch (numpy warns)."""
    if a.size:
        return a.mean(axis=axis, keepdims=keepdims)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return a.mean(axis=axis, keepdims=keepdims)


def _spread_to(grad, shape):
    """``grad`` broadcast to ``shape`` (nothing to do for a 0-dim input)."""
    return grad if grad.shape == shape else formulas.expand_to(grad, shape)


def evenly_distribute(grad, a, value):
    """The gradient of a value chosen from all of ``a`` (max, min, median): shared evenly by
    the elements equal to it (the nan elements when it is nan), PyTorch's rule for ties."""
    values = _plain(a)
    chosen = np.isnan(values) if np.isnan(_plain(value)) else values == _plain(value)
    share = grad / np.count_nonzero(chosen)
    return formulas.keep_where(chosen, _spread_to(share, values.shape))


# ------------------------------------------------------------------ sums and means

class SumBackward0(Op):
    """The sum of every element: each element gets the whole gradient."""
    __slots__ = ()

    def forward(self, a, keepdim=False):
        return np.asarray(a.sum(keepdims=keepdim), dtype=a.dtype)

    def backward(self, grad):
        return _spread_to(grad, self.input_shape(0))

    jvp = auto_linear


class SumBackward1(Op):
    """The sum over ``dims``: put the reduced axes back, then spread along them."""
    __slots__ = ("dims", "keepdim")

    def forward(self, a, dims, keepdim=False):
        self.dims, self.keepdim = dims, keepdim
        return np.asarray(a.sum(axis=dims, keepdims=keepdim), dtype=a.dtype)

    def backward(self, grad):
        return _spread_to(_restore(grad, self.dims, self.keepdim), self.input_shape(0))

    jvp = auto_linear


class MeanBackward0(Op):
    """The mean of every element: each gets 1/N of the gradient."""
    __slots__ = ()

    def forward(self, a, keepdim=False):
        return np.asarray(mean_of_array(a, None, keepdim), dtype=a.dtype)

    def backward(self, grad):
        shape = self.input_shape(0)
        return _spread_to(grad / max(int(np.prod(shape)), 1), shape)

    jvp = auto_linear


class MeanBackward1(Op):
    """The mean over ``dims``: spread back as the sum does, each element 1/N of it."""
    __slots__ = ("dims", "keepdim")

    def forward(self, a, dims, keepdim=False):
        self.dims, self.keepdim = dims, keepdim
        return np.asarray(mean_of_array(a, dims, keepdim), dtype=a.dtype)

    def backward(self, grad):
        shape = self.input_shape(0)
        count = max(int(np.prod([shape[d] for d in self.dims])), 1)
        return _spread_to(_restore(grad, self.dims, self.keepdim) / count, shape)

    jvp = auto_linear


# ------------------------------------------------------------------ largest and smallest

class MaxBackward1(Op):
    """max() of all elements: ties share the gradient evenly (PyTorch's rule); a nan result
    came from the nan elements, which share it. The others get 0, whatever the gradient.
    (max(dim), which gives it all to the element its index names, is in ``sorting``.)"""
    __slots__ = ()
    pick = staticmethod(np.max)

    def forward(self, a):
        out = np.asarray(self.pick(a))
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        return evenly_distribute(grad, a, out)

    def jvp(self, tangents, out, a):
        return reduction_jvp(self, tangents[0], out)


class MinBackward1(MaxBackward1):
    """min() of all elements."""
    __slots__ = ()
    pick = staticmethod(np.min)


class AmaxBackward0(Op):
    """amax over ``dims``: the gradient is shared evenly by the elements equal to the result
    (PyTorch's rule for ties; max(dim) instead gives it all to the one its index names)."""
    __slots__ = ("dims", "keepdim")
    pick = staticmethod(np.max)

    def forward(self, a, dims, keepdim=False):
        self.dims, self.keepdim = dims, keepdim
        out = np.asarray(self.pick(a, axis=dims, keepdims=keepdim))
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        grad = _restore(grad, self.dims, self.keepdim)
        hits = _plain(a) == _plain(_restore(out, self.dims, self.keepdim))
        count = hits.sum(axis=self.dims, keepdims=True).astype(_plain(grad).dtype)
        return grad / _constant(count, grad) * _constant(hits, grad)

    def jvp(self, tangents, out, a, *options):
        return reduction_jvp(self, tangents[0], out, self.dims)


class AminBackward0(AmaxBackward0):
    """amin over ``dims``."""
    __slots__ = ()
    pick = staticmethod(np.min)


# ------------------------------------------------------------------ products

def product_of_others(a, axis):
    """For each element of ``a``, the product of the other elements along ``axis``: the
    running product of those before it times that of those after it. No division, so it is
    right where ``a`` holds zeros (PyTorch's way, too)."""
    if type(a) is not np.ndarray:
        n = a.shape[axis]
        ones = a.new_ones(a.shape[:axis] + (1,) + a.shape[axis + 1:])
        before = cat([ones, a.narrow(axis, 0, n - 1)], axis).cumprod(axis)
        after = cat([ones, a.narrow(axis, 1, n - 1).flip(axis)], axis).cumprod(axis).flip(axis)
        return before * after
    a = np.moveaxis(a, axis, -1)
    before, after = np.ones_like(a), np.ones_like(a)
    before[..., 1:] = np.cumprod(a[..., :-1], axis=-1)
    after[..., -2::-1] = np.cumprod(a[..., :0:-1], axis=-1)
    return np.moveaxis(before * after, -1, axis)


class ProdBackward0(Op):
    """prod of every element: each element gets the product of all the others."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf is nan, silently
            out = np.asarray(a.prod(), dtype=a.dtype)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if a.ndim == 0:  # the product is the element: gradient 1, also for inf (not inf / inf)
            return grad
        zeros = np.count_nonzero(_plain(a) == 0)
        if not zeros:
            return grad * (out / a)
        if zeros > 1 and type(a) is np.ndarray:
            # every product of the others holds a 0: PyTorch says 0, even next to inf
            # (it computes them, as below, only when the gradient is to be differentiated)
            return np.zeros_like(a)
        return grad * product_of_others(a.reshape(-1), 0).reshape(a.shape)

    def jvp(self, tangents, out, a):
        return reduction_jvp(self, tangents[0], out)


class ProdBackward1(Op):
    """prod along ``dim``: each element gets the product of the others in its slice."""
    __slots__ = ("dim", "keepdim")

    def forward(self, a, dim, keepdim=False):
        self.dim, self.keepdim = dim, keepdim
        with np.errstate(invalid="ignore", over="ignore"):
            value = a.copy() if a.ndim == 0 else a.prod(axis=dim, keepdims=keepdim)
        out = np.asarray(value, dtype=a.dtype)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if a.ndim == 0:
            return grad
        grad = _restore(grad, (self.dim,), self.keepdim)
        if (_plain(a) != 0).all():
            return grad * (_restore(out, (self.dim,), self.keepdim) / a)
        return grad * product_of_others(a, self.dim)

    def jvp(self, tangents, out, a, *options):
        if len(tangents[0].shape) == 0:
            return tangents[0]
        return reduction_jvp(self, tangents[0], out, (self.dim,))


# ------------------------------------------------------------------ running sums and products

_ACCUMULATOR = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


def running_sum(a, axis):
    """``np.cumsum`` as PyTorch computes it: float32 adds up in float64 (float16 in float32),
    each sum then rounded, so a million 0.1s end at 100000.0 rather than drifting to 100958."""
    wider = _ACCUMULATOR.get(a.dtype)
    if wider is not None:
        return np.cumsum(a, axis=axis, dtype=wider).astype(a.dtype)
    return np.cumsum(a, axis=axis)


def _reversed_cumsum(x, axis):
    """out[i] = x[i] + x[i+1] + ...: the backward of a running sum."""
    if type(x) is np.ndarray:
        return np.flip(running_sum(np.flip(x, axis), axis), axis)
    return x.flip(axis).cumsum(axis).flip(axis)


class CumsumBackward0(Op):
    """cumsum along ``dim``: element i gets the sum of the gradients of outputs i, i+1, ..."""
    __slots__ = ("dim",)

    def forward(self, a, dim):
        self.dim = dim
        return a.copy() if a.ndim == 0 else running_sum(a, dim)

    def backward(self, grad):
        if grad.ndim == 0:
            return grad
        return _reversed_cumsum(grad, self.dim)

    jvp = auto_linear


class CumprodBackward0(Op):
    """cumprod along ``axis``: d out_j / d x_i = prod of x_0..x_j except x_i (j >= i), so
    grad_i = sum_{j >= i} grad_j * prod_{k <= j, k != i} x_k. Without zeros that is
    reversed_cumsum(grad * out) / x; with zeros each product is computed as it stands."""
    __slots__ = ("axis",)

    def forward(self, a, axis):
        self.axis = axis
        out = np.cumprod(a, axis=axis) if a.ndim else a.copy()
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if a.ndim == 0 or a.shape[self.axis] <= 1:
            return grad
        if type(a) is np.ndarray:
            return self._products_with_arrays(grad, a)
        if not (_plain(a) == 0).any():
            return _reversed_cumsum(grad * out, self.axis) / a
        axis, n = self.axis, a.shape[self.axis]
        slices = []
        for i in range(n):
            one = np.zeros(a.shape[axis], bool)
            one[i] = True
            one = one.reshape((-1,) + (1,) * (a.ndim - axis - 1))
            others = formulas.where(one, a.new_ones(()), a).cumprod(axis).narrow(axis, i, n - i)
            slices.append((grad.narrow(axis, i, n - i) * others).sum(axis, keepdim=True))
        return cat(slices, axis)

    def _products_with_arrays(self, grad, a):
        x = np.moveaxis(a, self.axis, -1)
        g = np.moveaxis(grad, self.axis, -1)
        result = np.empty_like(g)
        for i in range(x.shape[-1]):
            others = x.copy()
            others[..., i] = 1
            products = np.cumprod(others, axis=-1)[..., i:]
            # past another zero the product is 0, even if an inf or nan follows (PyTorch)
            products[np.cumsum(others == 0, axis=-1)[..., i:] > 0] = 0
            result[..., i] = np.sum(g[..., i:] * products, axis=-1)
        return np.moveaxis(result, -1, self.axis)

    jvp = transposed_backward


# ------------------------------------------------------------------ norms

def _abs(x):
    return np.abs(x) if formulas.is_array(x) else x.abs()


class LinalgVectorNormBackward0(Op):
    """‖a‖_p = (sum |a|^p)^(1/p) over ``dims``: d/da = sign(a) |a|^(p-1) / ‖a‖^(p-1);
    p=1: sign(a); p=2: a / ‖a‖; inf: the elements of largest |a| share it; 0 at ‖a‖ = 0."""
    __slots__ = ("p", "dims", "keepdim")

    def forward(self, a, p, dims, keepdim=False):
        self.p, self.dims, self.keepdim = p, dims, keepdim
        magnitude = np.abs(a)
        if p == np.inf:
            value = magnitude.max(axis=dims, keepdims=keepdim)
        elif p == 1:
            value = magnitude.sum(axis=dims, keepdims=keepdim)
        elif p == 2:
            value = np.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            value = (magnitude ** p).sum(axis=dims, keepdims=keepdim) ** (1 / p)
        out = np.asarray(value, dtype=a.dtype)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, norm):
        p = self.p
        grad = _restore(grad, self.dims, self.keepdim)
        norm = _restore(norm, self.dims, self.keepdim)
        if p == 1:
            return formulas.sign(a) * grad
        at_zero = _plain(norm) == 0
        if p == 2:
            return grad * formulas.zero_where(at_zero, a / norm)
        if p == np.inf:
            values = _plain(a)
            winners = (np.abs(values) == _plain(norm)) | np.isnan(values)
            count = winners.sum(axis=self.dims, keepdims=True).astype(_plain(grad).dtype)
            return formulas.sign(a) * (grad / _constant(count, grad) * _constant(winners, grad))
        if p < 1:  # |a|^(p-1) is infinite at 0: PyTorch takes 0 there
            scaled = formulas.sign(a) * formulas.zero_where(_plain(a) == 0, _abs(a) ** (p - 1))
            return scaled * grad * norm ** (1 - p)
        if p < 2:
            scaled = formulas.sign(a) * _abs(a) ** (p - 1)
        else:
            scaled = a * _abs(a) ** (p - 2)
        return scaled * formulas.zero_where(at_zero, grad / norm ** (p - 1))

    def jvp(self, tangents, out, a, *options):
        return reduction_jvp(self, tangents[0], out, self.dims)


# ------------------------------------------------------------------ functions

def count_nonzero(input, dim=None):
    """How many elements are not zero (along ``dim``: one count per slice), as int64."""
    check_tensor("count_nonzero", input)
    axes = None if dim is None else tuple(input._dims(dim))
    return wrap(np.asarray(np.count_nonzero(input._data, axis=axes), dtype=np.int64))


@takes_out(dtype="any")
def cumprod(input, dim, *, dtype=None):
    """The running product along ``dim``: ``out[i] = x[0] * x[1] * ... * x[i]``. Integers
    and bools give int64, as the running sum does."""
    check_tensor("cumprod", input)
    a = input._data
    axis = input._dim(dim)
    target = dtypes.to_numpy(dtype) if dtype is not None else (np.int64 if a.dtype.kind in "iub"
                                                     else a.dtype)
    return CumprodBackward0.run((input,), a.astype(target, copy=False), axis=axis)


# ------------------------------------------------------------------ functions: histograms


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def all(input, dim=None, keepdim=False):
    return _test(input, np.all, dim, keepdim)


def any(input, dim=None, keepdim=False):
    return _test(input, np.any, dim, keepdim)


def _test(input, fn, dim, keepdim):
    """all/any over every dim, one or several (no dims, ``dim=()``: none, as in PyTorch):
    bool, except that PyTorch answers a uint8 tensor in uint8."""
    a = input._data
    axis = dim if dim is None else input._dim(dim) if isinstance(dim, int) else \
        input._dims(dim) if len(dim) else ()
    out = np.asarray(fn(a, axis=axis, keepdims=keepdim))
    return wrap(out.astype(np.uint8) if a.dtype == np.uint8 else out)


def sum(input, dim=None, keepdim=False, dtype=None):
    """The sum of all elements, or over ``dim`` (one or several). Integers and bools add
    up in int64, as in PyTorch (unless ``dtype`` says otherwise)."""
    a = input._data if dtype is None else input._data.astype(dtypes.to_numpy(dtype))
    if a.dtype.kind in "biu" and dtype is None:
        a = a.astype(dtypes.DEFAULT_INT, copy=False)
    if dim is None:
        return SumBackward0.run((input,), a, keepdim=keepdim)
    return SumBackward1.run((input,), a, dims=input._dims(dim), keepdim=keepdim)


def mean(input, dim=None, keepdim=False, dtype=None):
    a = input._data if dtype is None else input._data.astype(dtypes.to_numpy(dtype))
    if a.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dtypes.scalar_type_name(a.dtype)}. "
            "Convert first: t.float().mean()")
    if dim is None:
        return MeanBackward0.run((input,), a, keepdim=keepdim)
    return MeanBackward1.run((input,), a, dims=input._dims(dim), keepdim=keepdim)


def prod(input, dim=None, keepdim=False, dtype=None):
    """The product of all elements, or along one ``dim``. Integers (and bools) multiply
    in int64, as in PyTorch."""
    if dtype is not None:
        return input.to(dtype).prod(dim, keepdim)
    a = input._data
    if a.dtype.kind in "biu":
        a = a.astype(np.int64)
    if dim is None:
        if keepdim:
            raise TypeError("prod(): keepdim=True needs a dim: prod(dim, keepdim=True)")
        return ProdBackward0.run((input,), a)
    dim = input._dim(one_dim("prod", dim, " (one dim at a time: x.prod(0).prod(0) for two)"))
    return ProdBackward1.run((input,), a, dim=dim, keepdim=keepdim)


def cumsum(input, dim, dtype=None):
    """Running sums along ``dim``: ``out[i] = input[0] + ... + input[i]``."""
    if dtype is not None:
        return input.to(dtype).cumsum(dim)
    dim = input._dim(one_dim("cumsum", dim))
    a = input._data
    if a.dtype.kind in "biu":
        a = a.astype(np.int64)
    return CumsumBackward0.run((input,), a, dim=dim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm ``(sum |x|^p)^(1/p)`` of all elements or over ``dim``: p=2 (or
    'fro', the default) is the length, p=1 the sum of |x|, p=inf the largest |x|. As
    PyTorch, this is ``linalg.vector_norm``; matrix norms ('nuc') are not in minigrad."""
    if isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("minigrad has no matrix norms: p='nuc' needs PyTorch")
        if p != "fro":
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dim)}")
        p = 2
    p = 2.0 if p is None else float(p)
    if not p > 0:
        raise NotImplementedError(f"norm: minigrad has the p-norms for p > 0 (1, 2, inf, "
                                  f"...), not p={p}")
    if dtype is not None:
        if dtypes.to_numpy(dtype).kind != "f":
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point, "
                               f"but got {dtype}")
        return input.to(dtype).norm(p, dim, keepdim)
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point tensor as input. "
                           f"Got {input.dtype}: convert it first (t.float())")
    dims = tuple(range(a.ndim)) if dim is None else dims_in_order(input, dim)
    if p == np.inf and builtins.any(a.shape[i] == 0 for i in dims):
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty "
                           "tensor because the operation does not have an identity")
    return LinalgVectorNormBackward0.run((input,), a, p=p, dims=dims,
                                                    keepdim=keepdim)


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("count_nonzero", "cumprod",)
METHODS = ("all", "any", "sum", "mean", "prod", "cumsum", "norm", "count_nonzero",
           "cumprod",)
