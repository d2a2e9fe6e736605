"""Module-level versions of the tensor methods: ``mg.exp(x)`` is ``x.exp()`` (chapter 5)."""

from .tensor import Tensor, tensor_from

__all__ = [
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "clip", "reciprocal", "square", "maximum", "minimum",
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
    "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "softmax", "log_softmax", "allclose", "isclose", "equal", "numel", "clone",
    "detach", "sign", "isnan", "isfinite", "all", "any", "mm", "nonzero", "unique", "bincount",
    "outer", "split", "chunk", "prod", "cumsum", "gather", "norm",
]


def _method(name):
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


for _name in __all__:
    if _name not in globals():
        globals()[_name] = _method(_name)
del _name
