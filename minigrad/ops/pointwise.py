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
from .formulas import cast, zeros_like
from .op import Op
from .tangents import auto_element_wise, auto_linear, zero_tangent
from .._tensor import Tensor
from ..dtypes import scalar_name
from ..tensor_rules import takes_out
from ..tensor_rules import check_tensor, run_in_place

__all__ = ["LogitBackward0", "ExpBackward0", "LogBackward0", "SqrtBackward0", "ReciprocalBackward0",
           "AbsBackward0", "SignBackward0", "SinBackward0", "CosBackward0", "TanhBackward0",
           "SigmoidBackward0", "ToCopyBackward0", "CloneBackward0", "Log10Backward0",
           "Log2Backward0", "Log1PBackward0", "Expm1Backward0", "RsqrtBackward0",
           "ErfBackward0", "SinhBackward0", "CoshBackward0", "AsinBackward0", "AcosBackward0",
           "AtanBackward0"]


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

    jvp = auto_element_wise


class LogBackward0(Op):
    """d log a = da / a."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a)

    def backward(self, grad, a):
        return grad / a

    jvp = auto_element_wise


class Log10Backward0(Op):
    """d log10(a) = da / (a ln 10)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(a)

    def backward(self, grad, a):
        return grad / (a * math.log(10))

    jvp = auto_element_wise


class Log2Backward0(Op):
    """d log2(a) = da / (a ln 2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log2(a)

    def backward(self, grad, a):
        return grad / (a * math.log(2))

    jvp = auto_element_wise


class Log1PBackward0(Op):
    """``log(1 + a)``, exact for tiny a: d = da / (1 + a)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(a)

    def backward(self, grad, a):
        return grad / (a + 1)

    jvp = auto_element_wise


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

    jvp = auto_element_wise


class LogitBackward0(Op):
    """``log(a / (1 - a))``, sigmoid's inverse, with ``a`` first clamped to ``[eps, 1 - eps]``
    when ``eps`` is given: d = da / (a (1 - a)); 0 where the clamp holds ``a`` still, nan
    outside [0, 1] without ``eps`` (PyTorch's ``logit_backward``)."""
    __slots__ = ("eps",)

    def forward(self, a, eps):
        self.eps = eps
        self.save_for_backward(a)
        if eps is not None:
            a = np.clip(a, *self.bounds(a.dtype))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a / (1 - a))

    def bounds(self, dtype):
        """Where the formula holds: [0, 1], or [eps, 1 - eps] in the input's dtype."""
        if self.eps is None:
            return 0, 1
        eps = dtype.type(self.eps)
        return eps, dtype.type(1) - eps

    def backward(self, grad, a):
        fill = math.nan if self.eps is None else 0.0
        if formulas.is_array(grad):
            low, high = self.bounds(a.dtype)
            with np.errstate(divide="ignore", invalid="ignore"):
                slope = grad / (a * (1 - a))
            return np.where((a < low) | (a > high), fill, slope).astype(grad.dtype, copy=False)
        # (under create_graph PyTorch's differentiable form: the formula where a is inside)
        low, high = self.bounds(a._data.dtype)
        return formulas.where((a >= low) & (a <= high), grad / (a * (1 - a)), fill)

    jvp = auto_element_wise


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

    jvp = auto_element_wise


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

    jvp = auto_element_wise


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

    jvp = auto_element_wise


# ------------------------------------------------------------------ sign and size

class AbsBackward0(Op):
    """d |a| = sign(a) da (0 at 0 and at nan, as PyTorch's sgn)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.abs(a)

    def backward(self, grad, a):
        return grad * formulas.sign(a)

    jvp = auto_element_wise


class ZeroGradient(Op):
    """Flat wherever it has a slope at all (rounding, sign, a random draw): gradient 0, a
    constant, as in PyTorch."""
    __slots__ = ()

    def backward(self, grad):
        return zeros_like(grad)

    def jvp(self, tangents, out, *inputs):
        return zero_tangent(out)


class SignBackward0(ZeroGradient):
    """-1, 0 or 1; 0 for nan, as in PyTorch (numpy's sign says nan)."""
    __slots__ = ()

    def forward(self, a):
        return a.copy() if a.dtype == np.bool_ else formulas.sign(a)


# ------------------------------------------------------------------ trigonometric and hyperbolic

class SinBackward0(Op):
    """d sin(a) = cos(a) da: the input's gradient is the output's gradient times cos(a)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.sin(a)

    def backward(self, grad, a):
        return grad * formulas.cos(a)

    jvp = auto_element_wise


class CosBackward0(Op):
    """d cos(a) = -sin(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.cos(a)

    def backward(self, grad, a):
        return -grad * formulas.sin(a)

    jvp = auto_element_wise


class TanhBackward0(Op):
    """d tanh(a) = (1 - tanh(a)^2) da: from the output."""
    __slots__ = ()

    def forward(self, a):
        out = np.tanh(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * (1 - out * out)

    jvp = auto_element_wise


class SigmoidBackward0(Op):
    """d s(a) = s (1 - s) da: from the output."""
    __slots__ = ()

    def forward(self, a):
        out = formulas.sigmoid_of_array(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * out * (1 - out)

    jvp = auto_element_wise


class SinhBackward0(Op):
    """d sinh(a) = cosh(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            return np.sinh(a)

    def backward(self, grad, a):
        return grad * formulas.cosh(a)

    jvp = auto_element_wise


class CoshBackward0(Op):
    """d cosh(a) = sinh(a) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            return np.cosh(a)

    def backward(self, grad, a):
        return grad * formulas.sinh(a)

    jvp = auto_element_wise


class AsinBackward0(Op):
    """d asin(a) = da / sqrt(1 - a^2) (nan outside [-1, 1])."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(invalid="ignore"):
            return np.arcsin(a)

    def backward(self, grad, a):
        return grad / formulas.sqrt(1 - a * a)

    jvp = auto_element_wise


class AcosBackward0(Op):
    """d acos(a) = -da / sqrt(1 - a^2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        with np.errstate(invalid="ignore"):
            return np.arccos(a)

    def backward(self, grad, a):
        return -grad / formulas.sqrt(1 - a * a)

    jvp = auto_element_wise


class AtanBackward0(Op):
    """d atan(a) = da / (1 + a^2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return np.arctan(a)

    def backward(self, grad, a):
        return grad / (1 + a * a)

    jvp = auto_element_wise


class ErfBackward0(Op):
    """d erf(a) = 2/sqrt(pi) e^(-a^2) da."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return formulas.erf_of_array(a)

    def backward(self, grad, a):
        return grad * (2 / math.sqrt(math.pi)) * formulas.exp(-a * a)

    jvp = auto_element_wise


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

    jvp = auto_linear


class CloneBackward0(Op):
    """A copy: the gradient passes as it is."""
    __slots__ = ()

    def forward(self, a):
        return a.copy()

    def backward(self, grad):
        return grad

    jvp = auto_linear


# ------------------------------------------------------ functions: logarithms and exponentials

def elementwise(name, input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return op.run((input,), input._float_data())


@takes_out
def log10(input):
    """The base-10 logarithm of each element (integers give float32)."""
    return elementwise("log10", input, Log10Backward0)


@takes_out
def log2(input):
    """The base-2 logarithm of each element."""
    return elementwise("log2", input, Log2Backward0)


@takes_out
def log1p(input):
    """``log(1 + x)``, exact for tiny x where ``(1 + x).log()`` loses x to rounding."""
    return elementwise("log1p", input, Log1PBackward0)


@takes_out
def expm1(input):
    """``exp(x) - 1``, exact for tiny x where ``x.exp() - 1`` loses x to rounding."""
    return elementwise("expm1", input, Expm1Backward0)


@takes_out
def logit(input, eps=None):
    """``log(p / (1 - p))``, the inverse of ``sigmoid``; with ``eps``, ``p`` is first clamped
    to ``[eps, 1 - eps]`` (so 0 and 1 give finite numbers)."""
    check_tensor("logit", input)
    return LogitBackward0.run((input,), input._float_data(), eps)


def logit_(input, eps=None):
    """``logit`` in place (a float tensor only: the result is not an integer)."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_name(input._data.dtype)}: call logit() instead, or "
                           "convert the tensor first (x.float())")
    return run_in_place(input, None, lambda t: logit(t, eps))


# ------------------------------------------------------- functions: more elementwise functions


@takes_out
def rsqrt(input):
    """``1 / sqrt(x)``."""
    return elementwise("rsqrt", input, RsqrtBackward0)


@takes_out
def erf(input):
    """The error function, ``2/sqrt(pi)`` times the integral of ``e^(-t^2)`` from 0 to x."""
    return elementwise("erf", input, ErfBackward0)


@takes_out
def sinh(input):
    return elementwise("sinh", input, SinhBackward0)


@takes_out
def cosh(input):
    return elementwise("cosh", input, CoshBackward0)


@takes_out
def asin(input):
    """The inverse sine (nan outside [-1, 1])."""
    return elementwise("asin", input, AsinBackward0)


@takes_out
def acos(input):
    """The inverse cosine (nan outside [-1, 1])."""
    return elementwise("acos", input, AcosBackward0)


@takes_out
def atan(input):
    return elementwise("atan", input, AtanBackward0)


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def sign(input):
    """-1, 0 or 1; 0 for nan, as in PyTorch (numpy's sign says nan)."""
    return SignBackward0.run((input,), input._data)


def exp(input):
    return ExpBackward0.run((input,), input._float_data())


def log(input):
    return LogBackward0.run((input,), input._float_data())


def sqrt(input):
    return SqrtBackward0.run((input,), input._float_data())


def reciprocal(input):
    return ReciprocalBackward0.run((input,), input._float_data())


def abs(input):
    a = input._data
    if a.dtype.kind == "b":
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\': convert the '
                                  "tensor first (t.long()), or use it as it is")
    return AbsBackward0.run((input,), a)


def sin(input):
    return SinBackward0.run((input,), input._float_data())


def cos(input):
    return CosBackward0.run((input,), input._float_data())


def tanh(input):
    return TanhBackward0.run((input,), input._float_data())


def sigmoid(input):
    return SigmoidBackward0.run((input,), input._float_data())


def square(input):
    return input ** 2


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("logit", "log10", "log2", "log1p", "expm1", "rsqrt", "erf", "sinh", "cosh", "asin",
             "acos", "atan",)
METHODS = ("logit", "logit_", "sign", "exp", "log", "sqrt", "reciprocal", "abs", "sin", "cos",
           "tanh", "sigmoid", "square", "log10", "log2", "log1p", "expm1", "rsqrt", "erf",
           "sinh", "cosh", "asin", "acos", "atan",)
