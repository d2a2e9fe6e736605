"""Math functions of one tensor, element by element (chapters 1, 2 and 5): ``exp``, ``log``,
``sqrt``, ``sin``, ``tanh``, ``sigmoid``, the rounding functions, dtype casts and ``clone``.
Each op's forward, what it saves and its backward, in one class named like PyTorch's node.

An element's derivative depends on that element alone, so every backward is the gradient
times a slope of the same shape. Forward gets the input already as floats where the op
needs them (``Tensor._float_data``); the public functions below (``floor``, ``log1p``, ...)
and the methods in ``tensor_math.py`` check arguments and call ``run``.
"""

import math

import numpy as np

from . import formulas
from .formulas import cast, cos, sin, zeros_like
from .op import Op
from .._tensor import Tensor
from ..tensor_rules import check_tensor
from ..random import numpy_rng
from ..tensor_rules import refuse_integers
from .._tensor import wrap

__all__ = ["ExpBackward0", "LogBackward0", "SqrtBackward0", "ReciprocalBackward0",
           "AbsBackward0", "SignBackward0", "SinBackward0", "CosBackward0", "TanhBackward0",
           "SigmoidBackward0", "ToCopyBackward0", "CloneBackward0", "Log10Backward0",
           "Log2Backward0", "Log1PBackward0", "Expm1Backward0", "FloorBackward0",
           "CeilBackward0", "RoundBackward0", "RoundBackward1", "TruncBackward0",
           "FracBackward0", "RsqrtBackward0", "ErfBackward0", "SinhBackward0",
           "CoshBackward0", "AsinBackward0", "AcosBackward0", "AtanBackward0",
           "NanToNumBackward0", "BernoulliBackward0"]


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
        out = formulas.sigmoid_of_array(a)
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
        return grad * formulas.cosh(a)


class CoshBackward0(Op):
    """d cosh(a) = sinh(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            return np.cosh(a)

    def backward(self, grad, a):
        return grad * formulas.sinh(a)


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
        return formulas.erf_of_array(a)

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


# ------------------------------------------------------ functions: logarithms and exponentials

def elementwise(name, input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return op.run((input,), input._float_data())


def log10(input):
    """The base-10 logarithm of each element (integers give float32)."""
    return elementwise("log10", input, Log10Backward0)


def log2(input):
    """The base-2 logarithm of each element."""
    return elementwise("log2", input, Log2Backward0)


def log1p(input):
    """``log(1 + x)``, exact for tiny x where ``(1 + x).log()`` loses x to rounding."""
    return elementwise("log1p", input, Log1PBackward0)


def expm1(input):
    """``exp(x) - 1``, exact for tiny x where ``x.exp() - 1`` loses x to rounding."""
    return elementwise("expm1", input, Expm1Backward0)


# ------------------------------------------ functions: rounding, more elementwise, logical ops

def _rounding(name, input, op, kernel):
    check_tensor(name, input)
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if a.dtype.kind != "f":
        return wrap(a.copy())  # an integer is already whole
    return op.run((input,), a)


def floor(input):
    """The largest whole number <= each element (integers are returned as they are)."""
    return _rounding("floor", input, FloorBackward0, "floor_vml_cpu")


def ceil(input):
    """The smallest whole number >= each element."""
    return _rounding("ceil", input, CeilBackward0, "ceil_vml_cpu")


def trunc(input):
    """Each element with its fraction dropped (rounded toward zero)."""
    return _rounding("trunc", input, TruncBackward0, "trunc_vml_cpu")


def round(input, *, decimals=0):
    """Each element rounded to ``decimals`` places, halves to even (2.5 -> 2, 3.5 -> 4)."""
    if decimals == 0:
        return _rounding("round", input, RoundBackward0, "round_vml_cpu")
    check_tensor("round", input)
    refuse_integers("round", input._data, "round_cpu")
    return RoundBackward1.run((input,), input._data, decimals)


def frac(input):
    """The fractional part ``x - trunc(x)``, with x's sign."""
    check_tensor("frac", input)
    refuse_integers("frac", input._data, "frac_cpu")
    return FracBackward0.run((input,), input._data)


def rsqrt(input):
    """``1 / sqrt(x)``."""
    return elementwise("rsqrt", input, RsqrtBackward0)


def erf(input):
    """The error function, ``2/sqrt(pi)`` times the integral of ``e^(-t^2)`` from 0 to x."""
    return elementwise("erf", input, ErfBackward0)


def sinh(input):
    return elementwise("sinh", input, SinhBackward0)


def cosh(input):
    return elementwise("cosh", input, CoshBackward0)


def asin(input):
    """The inverse sine (nan outside [-1, 1])."""
    return elementwise("asin", input, AsinBackward0)


def acos(input):
    """The inverse cosine (nan outside [-1, 1])."""
    return elementwise("acos", input, AcosBackward0)


def atan(input):
    return elementwise("atan", input, AtanBackward0)


def isinf(input):
    """True where an element is +inf or -inf."""
    check_tensor("isinf", input)
    return wrap(np.isinf(input._data))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (default: the dtype's largest
    and smallest finite numbers)."""
    check_tensor("nan_to_num", input)
    a = input._data
    if a.dtype.kind != "f":
        return wrap(a.copy())
    return NanToNumBackward0.run((input,), a, nan=nan, posinf=posinf, neginf=neginf)


def _logical(name, fn, input, other):
    check_tensor(name, input)
    check_tensor(name, other, "other", 2)
    try:
        return wrap(fn(input._data.astype(bool), other._data.astype(bool)))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(input.shape)}) must match the size of "
                           f"tensor b ({list(other.shape)}) to broadcast") from None


def logical_and(input, other):
    """True where both elements are nonzero."""
    return _logical("logical_and", np.logical_and, input, other)


def logical_or(input, other):
    return _logical("logical_or", np.logical_or, input, other)


def logical_xor(input, other):
    return _logical("logical_xor", np.logical_xor, input, other)


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (each element a probability in [0, 1]), else 0; the
    result has the input's dtype."""
    check_tensor("bernoulli", input)
    probs = input._data
    refuse_integers("bernoulli", probs, "bernoulli_tensor_cpu_p_")
    if p is not None:
        probs = np.full(probs.shape, p, probs.dtype)
    if np.any((probs < 0) | (probs > 1)) or np.isnan(probs).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. "
                           "(bernoulli needs probabilities between 0 and 1)")
    return BernoulliBackward0.run((input,), probs, numpy_rng(generator))


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("log10", "log2", "log1p", "expm1", "floor", "ceil", "round", "trunc", "frac",
             "rsqrt", "erf", "sinh", "cosh", "asin", "acos", "atan", "isinf", "nan_to_num",
             "logical_and", "logical_or", "logical_xor", "bernoulli",)
METHODS = ("log10", "log2", "log1p", "expm1", "floor", "ceil", "round", "trunc", "frac",
           "rsqrt", "erf", "sinh", "cosh", "asin", "acos", "atan", "isinf", "nan_to_num",
           "logical_and", "logical_or", "logical_xor", "bernoulli",)
