"""Variance and standard deviation (chapters 2 and 5): ``var``, ``std``, ``var_mean`` and
``std_mean``, reductions whose backward needs the mean of what they reduce. Each op's
forward, what it saves and its backward are in one class named like PyTorch's node.

The dims are checked in PyTorch's order for these ops (one after the other: for (1, 1, 5)
the repeated 1 is the complaint, where ``sum`` complains of the 5 first).
"""

import math
import warnings

import numpy as np

from . import formulas
from .op import Op, node_named
from .reductions import mean_of_array
from .tangents import reduction_jvp
from ..tensor_rules import check_tensor, dims_in_order

__all__ = ["VarBackward0", "StdBackward0"]


def _plain(x):
    """The array of ``x`` (a Tensor's values, without history), for masks and counts."""
    return x if type(x) is np.ndarray or not hasattr(x, "_data") else x._data


def _restore(grad, dims, keepdim):
    """The gradient of a reduction over ``dims`` with the reduced axes back (length 1)."""
    return grad if keepdim else formulas.unsqueeze(grad, dims)


def _mean_kept(x, dims):
    """The mean over ``dims`` (None: all), keeping them, of an array or a Tensor."""
    if type(x) is np.ndarray:
        return mean_of_array(x, dims, True)
    return x.mean(dim=tuple(range(x.ndim)) if dims is None else dims, keepdim=True)


class VarBackward0(Op):
    """var over ``dims`` (``whole``: of every element): sum((x - mean)^2) / (N - correction),
    so d/dx = 2 (x - mean) / (N - correction), with PyTorch's results when N <= correction."""
    __slots__ = ("dims", "keepdim", "dof", "whole")

    def forward(self, a, dims, correction, keepdim=False, whole=False):
        self.save_for_backward(a)
        return self._spread(a, dims, correction, keepdim, whole, root=False)

    def _spread(self, a, dims, correction, keepdim, whole, root):
        self.dims, self.keepdim, self.whole = dims, keepdim or whole, whole
        self.dof = int(np.prod([a.shape[x] for x in dims])) - correction
        # In float64, as PyTorch adds float32 up: the square of 1e20 would overflow float32.
        wide = a.astype(np.float64) if a.itemsize < 8 else a
        centered = wide - mean_of_array(wide, dims, True)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = (centered * centered).sum(axis=dims, keepdims=keepdim) / max(self.dof, 0)
            if root:
                value = np.sqrt(value)
            return np.asarray(value, dtype=a.dtype)  # inf where float32 cannot hold it

    def backward(self, grad, a):
        grad = _restore(grad, self.dims, self.keepdim)
        centered = a - _mean_kept(a, None if self.whole else self.dims)
        if (self.whole or a.ndim == 0) and self.dof <= 0:  # (PyTorch: a 0-dim input too)
            # 2 / 0 times each deviation: inf, or nan where the deviation is 0, or is nan
            # while the mean is not (an inf element: inf - inf). PyTorch's values, measured:
            # a nan mean (a nan element) gives inf everywhere, without a sign
            deviation = _plain(centered)
            mean_is_nan = np.isnan(_plain(_mean_kept(_plain(a), None if self.whole else self.dims)))
            undefined = (deviation == 0) | (np.isnan(deviation) & ~mean_is_nan)
            scale = np.where(undefined, np.nan, np.inf)
            scale = scale.astype(_plain(grad).dtype)
            return grad * formulas.as_mask(scale, grad)
        return (2.0 / self.dof if self.dof else math.inf) * grad * centered

    def jvp(self, tangents, out, a, *options):
        return reduction_jvp(self, tangents[0], out, None if self.whole else self.dims)


class StdBackward0(VarBackward0):
    """std = sqrt(var): the var gradient of grad / (2 std), 0 where std is 0."""
    __slots__ = ()

    def forward(self, a, dims, correction, keepdim=False, whole=False):
        out = self._spread(a, dims, correction, keepdim, whole, root=True)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        grad = formulas.zero_where(_plain(out) == 0, grad / (out * 2))
        return VarBackward0.backward(self, grad, a)


# ------------------------------------------------------------------ functions

def _moments(name, input, dim, correction, keepdim, std):
    check_tensor(name, input)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    spread = input.std if std else input.var
    kwargs = {"keepdim": keepdim, "correction": 1 if correction is None else correction}
    if dim is None:
        results = spread(**kwargs), input.mean()
    else:
        results = spread(dim, **kwargs), input.mean(dim, keepdim=keepdim)
    for t in results:  # PyTorch records both under one node, StdMeanBackward0 / VarMeanBackward0
        if t._grad_fn is not None:
            t._grad_fn.__class__ = node_named(type(t._grad_fn), "StdMeanBackward0" if std
                                            else "VarMeanBackward0")
    return results


def std_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    """``(std, mean)`` in one call (``correction=1`` by default: divides by N-1)."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _moments("std_mean", input, dim, correction, keepdim, std=True)


def var_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    """``(var, mean)`` in one call."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _moments("var_mean", input, dim, correction, keepdim, std=False)


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def var(input, dim=None, unbiased=True, keepdim=False, correction=None):
    """Variance; ``correction=1`` (the default, like ``unbiased=True``) divides by N-1."""
    return _spread(input, dim, unbiased, keepdim, correction, std=False)


def std(input, dim=None, unbiased=True, keepdim=False, correction=None):
    return _spread(input, dim, unbiased, keepdim, correction, std=True)


def _spread(input, dim, unbiased, keepdim, correction, std):
    if correction is None:
        correction = 1 if unbiased else 0
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"std and var only support floating point and complex dtypes, "
                           f"not {input.dtype}: convert the tensor first (x.float())")
    dims = tuple(range(a.ndim)) if dim is None else dims_in_order(input, dim)
    count = int(np.prod([a.shape[x] for x in dims]))
    divisor = max(count - correction, 0)
    if divisor == 0:
        warnings.warn(f"{'std' if std else 'var'}(): degrees of freedom is <= 0. Correction "
                      "should be strictly less than the reduction factor (input numel "
                      "divided by output numel): the result is nan.", UserWarning,
                      stacklevel=3)
    op = StdBackward0 if std else VarBackward0
    return op.run((input,), a, dims=dims, correction=correction, keepdim=keepdim,
                  whole=dim is None)


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("std_mean", "var_mean",)
METHODS = ("var", "std",)
