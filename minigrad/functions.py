"""Module-level versions of the tensor methods: ``mg.exp(x)`` is ``x.exp()`` (chapter 5)."""

import functools

import numpy as np

from ._tensor import Tensor, tensor_from
from .tensor_rules import takes_out, write_out
from .ops.linalg import matmul as _matmul
from .ops.shape import cat as _cat, stack as _stack

__all__ = [
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "clip", "reciprocal", "square", "maximum", "minimum",
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
    "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "softmax", "log_softmax", "allclose", "isclose", "equal", "numel", "clone",
    "detach", "sign", "isnan", "isfinite", "all", "any", "mm", "nonzero", "unique", "bincount",
    "outer", "split", "chunk", "prod", "cumsum", "gather", "norm", "remainder", "addcmul",
    "addcdiv", "mv",
]


def method_as_function(name):
    """``minigrad.<name>(x, ...)``: the Tensor method ``x.<name>(...)``, as a function."""
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = tensor_from(input)
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = f"``minigrad.{name}(x, ...)`` is ``x.{name}(...)``."
    return function


def max(input, dim=None, keepdim=False):
    """``max(x)``, ``max(x, dim)`` -> (values, indices), or ``max(x, y)`` elementwise."""
    if isinstance(dim, Tensor):
        return input.maximum(dim)
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return input.minimum(dim)
    return input.min(dim, keepdim)


def outer(input, vec2):
    """The outer product of two vectors: ``outer(a, b)[i, j] = a[i] * b[j]``."""
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def numel(input):
    return input.numel()


# The functions that are their Tensor method with the tensor first.
pow = takes_out(method_as_function("pow"))
neg = takes_out(method_as_function("neg"), dtype="same")
exp = takes_out(method_as_function("exp"))
log = takes_out(method_as_function("log"))
sqrt = takes_out(method_as_function("sqrt"))
abs = takes_out(method_as_function("abs"), dtype="same")
sin = takes_out(method_as_function("sin"))
cos = takes_out(method_as_function("cos"))
tanh = takes_out(method_as_function("tanh"))
sigmoid = takes_out(method_as_function("sigmoid"))
relu = method_as_function("relu")
clamp = takes_out(method_as_function("clamp"), dtype="same")
clip = takes_out(method_as_function("clip"), dtype="same")
reciprocal = takes_out(method_as_function("reciprocal"))
square = takes_out(method_as_function("square"))
maximum = takes_out(method_as_function("maximum"))
minimum = takes_out(method_as_function("minimum"))
amax = takes_out(method_as_function("amax"), dtype="same")
amin = takes_out(method_as_function("amin"), dtype="same")
argmax = method_as_function("argmax")
argmin = method_as_function("argmin")
var = method_as_function("var")
std = method_as_function("std")
flatten = method_as_function("flatten")
squeeze = method_as_function("squeeze")
unsqueeze = method_as_function("unsqueeze")
transpose = method_as_function("transpose")
t = method_as_function("t")
softmax = method_as_function("softmax")
log_softmax = method_as_function("log_softmax")
allclose = method_as_function("allclose")
isclose = method_as_function("isclose")
equal = method_as_function("equal")
clone = method_as_function("clone")
detach = method_as_function("detach")
sign = takes_out(method_as_function("sign"), dtype="same")
isnan = method_as_function("isnan")
isfinite = method_as_function("isfinite")
all = method_as_function("all")
any = method_as_function("any")
nonzero = method_as_function("nonzero")
unique = method_as_function("unique")
bincount = method_as_function("bincount")
chunk = method_as_function("chunk")
prod = takes_out(method_as_function("prod"), dtype="any")
cumsum = takes_out(method_as_function("cumsum"), dtype="any")
gather = method_as_function("gather")
norm = method_as_function("norm")


# ----------------------------------------------------------------- PyTorch's keyword names, out=


def _numpy_names(function):
    """``function`` that also takes numpy's ``axis=`` and ``keepdims=``, as PyTorch's do."""
    @functools.wraps(function)
    def with_numpy_names(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return function(*args, **kwargs)
    return with_numpy_names


def _tensor(value):
    return value if isinstance(value, Tensor) else tensor_from(value)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``."""
    return write_out(out, _tensor(input).add(other, alpha=alpha), "add", (input, other))


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    return write_out(out, _tensor(input).sub(other, alpha=alpha), "sub", (input, other))


def mul(input, other, *, out=None):
    return write_out(out, _tensor(input) * other, "mul", (input, other))


def div(input, other, *, out=None):
    return write_out(out, _tensor(input) / other, "div", (input, other))


def matmul(input, other, *, out=None):
    """The matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    return write_out(out, _matmul(input, other), "matmul", (input, other), "same")


remainder = takes_out(method_as_function("remainder"))
addcmul = takes_out(method_as_function("addcmul"))
addcdiv = takes_out(method_as_function("addcdiv"))


def mv(input, vec, *, out=None):
    """The product of a matrix and a vector (2-D and 1-D only, unlike matmul)."""
    if np.ndim(input) != 2 or np.ndim(vec) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {np.ndim(input)}, "
                           f"{np.ndim(vec)} (mv takes a matrix, then a vector)")
    return write_out(out, _matmul(input, vec), "mv", (input, vec), "same")


def mm(input, mat2, *, out=None):
    """The product of two matrices (2-D only, unlike matmul)."""
    for t in (input, mat2):
        if not isinstance(t, Tensor) or t.ndim != 2:
            raise RuntimeError(f"mm(): expected 2-D tensors, got shapes "
                               f"{list(np.shape(input))} and {list(np.shape(mat2))} "
                               "(matmul takes other shapes)")
    return write_out(out, _matmul(input, mat2), "mm", (input, mat2), "same")


@_numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype  # (computed in out's dtype, as PyTorch does)
    return write_out(out, _tensor(input).sum(dim, keepdim, dtype=dtype), "sum", (input,), "any")


@_numpy_names
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    return write_out(out, _tensor(input).mean(dim, keepdim, dtype=dtype), "mean", (input,))


@_numpy_names
def cat(tensors, dim=0, *, out=None):
    """Join tensors end to end along an existing dimension."""
    return write_out(out, _cat(tensors, dim), "cat", tuple(tensors))


@_numpy_names
def stack(tensors, dim=0, *, out=None):
    """Join same-shaped tensors along a new dimension."""
    return write_out(out, _stack(tensors, dim), "stack", tuple(tensors))


def reshape(input, shape):
    return _tensor(input).reshape(shape)


def permute(input, dims):
    return _tensor(input).permute(dims)


def split(tensor, split_size_or_sections, dim=0):
    return _tensor(tensor).split(split_size_or_sections, dim)


__all__ += ["matmul", "cat", "stack"]
