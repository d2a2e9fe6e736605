"""Math functions of one tensor, element by element (chapters 1, 2 and 5): ``exp``, ``log``,
``sqrt``, ``sin``, ``tanh``, ``sigmoid``, the rounding functions, dtype casts and ``clone``.
Each op's forward, what it saves and its backward, in one class named like PyTorch's node.

An element's derivative depends on that element alone, so every backward is the gradient
times a slope of the same shape. Forward gets the input already as floats where the op
needs them (``Tensor._float_data``); the callers in ``tensor_math.py``, ``math_ops.py`` and
``extra_ops.py`` check arguments and call ``run``.
"""

import math

import numpy as np

from . import formulas
from .formulas import is_array
from .op import Op

__all__ = ["ExpBackward0", "LogBackward0", "SqrtBackward0", "ReciprocalBackward0",
           "AbsBackward0", "SignBackward0", "SinBackward0", "CosBackward0", "TanhBackward0",
           "SigmoidBackward0", "ToCopyBackward0", "CloneBackward0", "Log10Backward0",
           "Log2Backward0", "Log1PBackward0", "Expm1Backward0", "FloorBackward0",
           "CeilBackward0", "RoundBackward0", "RoundBackward1", "TruncBackward0",
           "FracBackward0", "RsqrtBackward0", "ErfBackward0", "SinhBackward0",
           "CoshBackward0", "AsinBackward0", "AcosBackward0", "AtanBackward0",
           "NanToNumBackward0", "BernoulliBackward0"]


# ------------------------------------------------------------------ helpers for formulas

def _dual(array_fn, method):
    """A function of an array or a Tensor: ``array_fn(x)`` or ``x.method()``."""
    def fn(x):
        return array_fn(x) if is_array(x) else getattr(x, method)()
    fn.__name__ = method
    return fn


def _sigmoid(a):
    """1 / (1 + e^-a) for an array, computed as PyTorch does. Where e^-a overflows to inf the
    result is exactly 0 (float32 below -88.7), which is also what PyTorch prints."""
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False)


_erf_of_element = np.frompyfunc(math.erf, 1, 1)


def _erf(a):
    """erf of an array, in its dtype (numpy has none: the C library's, element by element)."""
    return np.asarray(_erf_of_element(a)).astype(a.dtype, copy=False)


sin, cos, tanh, sinh, cosh = (_dual(np.sin, "sin"), _dual(np.cos, "cos"), _dual(np.tanh, "tanh"),
                              _dual(np.sinh, "sinh"), _dual(np.cosh, "cosh"))
sigmoid = _dual(_sigmoid, "sigmoid")
erf = _dual(_erf, "erf")


def zeros_like(grad):
    """A gradient of zeros: a constant (no history, as PyTorch's ``zeros_like(grad)``)."""
    if is_array(grad):
        return np.zeros_like(grad)
    return Op.wrap(np.zeros_like(grad._data))


def cast(x, dtype):
    """``x`` in the numpy ``dtype`` (itself if it has it)."""
    return x.astype(dtype, copy=False) if is_array(x) else x._cast(dtype)


# ------------------------------------------------------------------ exponentials and logarithms

class ExpBackward0(Op):
    """d e^a = e^a da: the output is the slope."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(over="ignore"):  # inf, silently, as in PyTorch
            out = np.exp(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * out


class LogBackward0(Op):
    """d log a = da / a."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a)

    def backward(self, grad, a):
        return grad / a


class Log10Backward0(Op):
    """d log10(a) = da / (a ln 10)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(a)

    def backward(self, grad, a):
        return grad / (a * math.log(10))


class Log2Backward0(Op):
    """d log2(a) = da / (a ln 2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log2(a)

    def backward(self, grad, a):
        return grad / (a * math.log(2))


class Log1PBackward0(Op):
    """``log(1 + a)``, exact for tiny a: d = da / (1 + a)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(a)

    def backward(self, grad, a):
        return grad / (a + 1)


class Expm1Backward0(Op):
    """``e^a - 1``, exact for tiny a: d = e^a da = (out + 1) da."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(over="ignore"):
            out = np.expm1(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * (out + 1)


# ------------------------------------------------------------------ powers

class SqrtBackward0(Op):
    """d sqrt(a) = da / (2 sqrt(a)): from the output."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(invalid="ignore"):
            out = np.sqrt(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad / (2 * out)


class RsqrtBackward0(Op):
    """d a^(-1/2) = -a^(-3/2) / 2 = -out^3 / 2."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.asarray(1 / np.sqrt(a)).astype(a.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * (-0.5 * (out * out * out))


class ReciprocalBackward0(Op):
    """d (1 / a) = -da / a^2 = -out^2 da."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(divide="ignore"):
            out = 1 / a
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return -grad * (out * out)  # as PyTorch groups it: inf * (tiny² = 0) is nan


# ------------------------------------------------------------------ sign and size

class AbsBackward0(Op):
    """d |a| = sign(a) da (0 at 0 and at nan, as PyTorch's sgn)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.abs(a)

    def backward(self, grad, a):
        return grad * formulas.sign(a)


class _ZeroGrad(Op):
    """Flat wherever it has a slope at all (rounding, sign, a random draw): gradient 0, a
    constant, as in PyTorch."""
    __slots__ = ()

    def backward(self, grad):
        return zeros_like(grad)


class SignBackward0(_ZeroGrad):
    """-1, 0 or 1; 0 for nan, as in PyTorch (numpy's sign says nan)."""
    __slots__ = ()

    def forward(self, a):
        return a.copy() if a.dtype == np.bool_ else formulas.sign(a)


class FloorBackward0(_ZeroGrad):
    """The largest whole number <= a."""
    __slots__ = ()

    def forward(self, a):
        return np.floor(a)


class CeilBackward0(_ZeroGrad):
    """The smallest whole number >= a."""
    __slots__ = ()

    def forward(self, a):
        return np.ceil(a)


class RoundBackward0(_ZeroGrad):
    """Halves to even (2.5 -> 2, 3.5 -> 4)."""
    __slots__ = ()

    def forward(self, a):
        return np.round(a)


class RoundBackward1(_ZeroGrad):
    """round with ``decimals`` (PyTorch's other overload)."""
    __slots__ = ()

    def forward(self, a, decimals):
        return np.round(a, decimals)


class TruncBackward0(_ZeroGrad):
    """a with its fraction dropped (rounded toward zero)."""
    __slots__ = ()

    def forward(self, a):
        return np.trunc(a)


class BernoulliBackward0(_ZeroGrad):
    """1 with probability p (each element of ``probs``), else 0: a draw does not change
    smoothly with its probability."""
    __slots__ = ()

    def forward(self, probs, rng):
        return (rng.random(probs.shape) < probs).astype(probs.dtype)


class FracBackward0(Op):
    """frac(a) = a - trunc(a): slope 1."""
    __slots__ = ()

    def forward(self, a):
        with np.errstate(invalid="ignore"):  # inf - inf: nan, as PyTorch
            return a - np.trunc(a)

    def backward(self, grad):
        return grad


class NanToNumBackward0(Op):
    """nan, inf and -inf replaced by numbers: the gradient passes where the element was
    finite. As PyTorch, ``grad * isfinite(a)``."""
    __slots__ = ()

    def forward(self, a, nan=0.0, posinf=None, neginf=None):
        self.save_for_backward(np.isfinite(a))
        return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, grad, finite):
        return grad * finite


# ------------------------------------------------------------------ trigonometric and hyperbolic

class SinBackward0(Op):
    """d sin(a) = cos(a) da: the input's gradient is the output's gradient times cos(a)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.sin(a)

    def backward(self, grad, a):
        return grad * cos(a)


class CosBackward0(Op):
    """d cos(a) = -sin(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.cos(a)

    def backward(self, grad, a):
        return -grad * sin(a)


class TanhBackward0(Op):
    """d tanh(a) = (1 - tanh(a)^2) da: from the output."""
    __slots__ = ()

    def forward(self, a):
        out = np.tanh(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * (1 - out * out)


class SigmoidBackward0(Op):
    """d s(a) = s (1 - s) da: from the output."""
    __slots__ = ()

    def forward(self, a):
        out = _sigmoid(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * out * (1 - out)


class SinhBackward0(Op):
    """d sinh(a) = cosh(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            return np.sinh(a)

    def backward(self, grad, a):
        return grad * cosh(a)


class CoshBackward0(Op):
    """d cosh(a) = sinh(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            return np.cosh(a)

    def backward(self, grad, a):
        return grad * sinh(a)


class AsinBackward0(Op):
    """d asin(a) = da / sqrt(1 - a^2) (nan outside [-1, 1])."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(invalid="ignore"):
            return np.arcsin(a)

    def backward(self, grad, a):
        return grad / formulas.sqrt(1 - a * a)


class AcosBackward0(Op):
    """d acos(a) = -da / sqrt(1 - a^2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(invalid="ignore"):
            return np.arccos(a)

    def backward(self, grad, a):
        return -grad / formulas.sqrt(1 - a * a)


class AtanBackward0(Op):
    """d atan(a) = da / (1 + a^2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.arctan(a)

    def backward(self, grad, a):
        return grad / (1 + a * a)


class ErfBackward0(Op):
    """d erf(a) = 2/sqrt(pi) e^(-a^2) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return _erf(a)

    def backward(self, grad, a):
        return grad * (2 / math.sqrt(math.pi)) * formulas.exp(-a * a)


# ------------------------------------------------------------------ copies

class ToCopyBackward0(Op):
    """A dtype conversion (``x.double()``, ``x.to(float32)``): the gradient goes back in
    the input's dtype."""
    __slots__ = ("dtype",)

    def forward(self, a, dtype):
        self.dtype = a.dtype
        return a.astype(dtype)

    def backward(self, grad):
        return cast(grad, self.dtype)


class CloneBackward0(Op):
    """A copy: the gradient passes as it is."""
    __slots__ = ()

    def forward(self, a):
        return a.copy()

    def backward(self, grad):
        return grad
