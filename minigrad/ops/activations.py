"""Activation functions (chapters 3, 6 and 11): ``relu``, ``leaky_relu``, ``gelu`` and the
other nonlinearities of ``nn.functional``, each op's forward, what it saves and its backward
in one class named like PyTorch's node.

ReLU's backward runs on every training step: ``formulas.zero_where`` keeps it at about the
cost of one product. The checks of arguments stay with the functions that call ``run``
(``Tensor.relu``, ``nn.functional``, ``nn/activations_more.py``); forward gets float arrays.
"""

import math

import numpy as np

from . import formulas
from .formulas import is_array
from .op import Op
from .tangents import auto_element_wise, transposed_backward
from ..tensor_rules import check_tensor, refuse_integers, run_in_place
from .formulas import erf, sigmoid, tanh, zeros_like

_ndarray = np.ndarray

__all__ = ["HardswishBackward0", "HardswishBackwardBackward0", "ReluBackward0",
           "LeakyReluBackward0", "LeakyReluBackward1", "GeluBackward0", "SiluBackward0",
           "EluBackward0", "EluBackward1", "SoftplusBackward0", "HardtanhBackward0",
           "MishBackward0", "LogSigmoidBackward0", "ThresholdBackwardBackward0",
           "LeakyReluBackwardBackward0", "HardtanhBackwardBackward0"]


def _softplus(x):
    """log(1 + e^x), of an array or (recorded) of a Tensor."""
    if is_array(x):
        return np.logaddexp(0, x)
    return SoftplusBackward0.run((x,), x._data, 1.0, 20.0)


# ------------------------------------------------------------------ ReLU and leaky ReLU

class ReluBackward0(Op):
    """max(a, 0): the gradient passes where the output is positive, and is +0 elsewhere, as
    PyTorch's threshold_backward (a nan gradient passes where out > 0)."""
    __slots__ = ()

    def forward(self, a):
        out = np.maximum(a, 0).astype(a.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        if type(grad) is _ndarray:  # (every training step: one call less)
            return formulas.zero_where(out <= 0, grad)
        return _threshold_backward(grad, out)

    jvp = auto_element_wise


class LeakyReluBackward0(Op):
    """leaky_relu(a): the gradient passes where a > 0 and is scaled by the slope elsewhere."""
    __slots__ = ("slope",)

    def forward(self, a, slope):
        self.slope = slope
        self.save_for_backward(a)
        return np.where(a > 0, a, a * slope)

    def backward(self, grad, a):
        return _leaky_relu_backward(grad, a, self.slope)

    jvp = auto_element_wise


class LeakyReluBackward1(LeakyReluBackward0):
    """leaky_relu in place: as LeakyReluBackward0, but read from the result (slope >= 0 only)."""
    __slots__ = ()

    def forward(self, a, slope):
        self.slope = slope
        out = np.where(a > 0, a, a * slope)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        # PyTorch keeps only the result, whose sign a negative slope flips: it refuses then.
        if self.slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead "
                "(F.leaky_relu(x, slope) or nn.LeakyReLU(slope) without inplace=True).")
        return super().backward(grad, out)

    jvp = auto_element_wise


# ------------------------------------------------------------------ smooth ReLUs

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715  # the tanh form's coefficient of x³
_ERF64 = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf: the C library's, element by element


class GeluBackward0(Op):
    """gelu(a) = a Φ(a), Φ the standard normal CDF: d/da = Φ(a) + a φ(a). The tanh form
    stands (1 + tanh(k (a + 0.044715 a³))) / 2 for Φ(a) and is differentiated as written."""
    __slots__ = ("approximate",)

    def forward(self, a, approximate):
        self.approximate = approximate
        self.save_for_backward(a)
        if approximate == "tanh":
            return 0.5 * a * (1 + np.tanh(_SQRT_2_OVER_PI * (a + _GELU_CUBIC * (a * a * a))))
        # math.erf in float64, for float32 too: rounded once, at the end
        phi = 0.5 * (1 + np.asarray(_ERF64(a * _SQRT_HALF), dtype=np.float64))
        return (a * phi).astype(a.dtype, copy=False)

    def backward(self, grad, a):
        if self.approximate == "tanh":
            t = tanh(_SQRT_2_OVER_PI * (a + _GELU_CUBIC * (a * a * a)))
            slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_OVER_PI * (
                1 + 3 * _GELU_CUBIC * (a * a))
        else:
            slope = 0.5 * (1 + erf(a * _SQRT_HALF)) + a * _INV_SQRT_2PI * formulas.exp(
                -0.5 * a * a)
        return grad * slope

    jvp = auto_element_wise


class SiluBackward0(Op):
    """a s(a), s = sigmoid: d = s (1 + a (1 - s))."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return a * formulas.sigmoid_of_array(a)

    def backward(self, grad, a):
        s = sigmoid(a)
        return grad * s * (1 + a * (1 - s))

    jvp = auto_element_wise


class EluBackward0(Op):
    """scale * (a for a > 0, alpha (e^a - 1) otherwise): slope scale, or scale alpha e^a."""
    __slots__ = ("alpha", "scale")

    def forward(self, a, alpha, scale):
        self.alpha, self.scale = alpha, scale
        self.save_for_backward(a)
        with np.errstate(over="ignore"):
            value = scale * np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0)))
        return value.astype(a.dtype, copy=False)

    def backward(self, grad, a):
        # alpha e^a below 0 and alpha at 0 (a constant there: PyTorch's second derivative
        # is 0 at 0, as for a > 0), scale above and at nan
        slope = self.scale * self.alpha
        return formulas.where(a < 0, grad * (slope * formulas.exp(a)),
                              formulas.where(a <= 0, grad * slope, grad * self.scale))

    jvp = auto_element_wise


class EluBackward1(EluBackward0):
    """The in-place ELU's node (PyTorch's name; it saves the old values here)."""
    __slots__ = ()


class SoftplusBackward0(Op):
    """log(1 + e^(beta a)) / beta, and a itself past the threshold: d = sigmoid(beta a),
    1 past the threshold."""
    __slots__ = ("beta", "threshold")

    def forward(self, a, beta, threshold):
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(a)
        z = a * beta
        return np.where(z > threshold, a, np.logaddexp(0, z) / beta).astype(a.dtype,
                                                                              copy=False)

    def backward(self, grad, a):
        z = a * self.beta
        return grad * formulas.where(z > self.threshold, 1.0, sigmoid(z))

    jvp = auto_element_wise


class HardtanhBackward0(Op):
    """a clipped to [low, high]: slope 1 strictly between the bounds, 0 at and beyond them
    and at nan (as PyTorch's vectorised kernel: its loop over a short tail lets nan pass)."""
    __slots__ = ("low", "high")

    def forward(self, a, low, high):
        self.low, self.high = low, high
        self.save_for_backward(a)
        return np.clip(a, low, high).astype(a.dtype, copy=False)

    def backward(self, grad, a):
        return _hardtanh_backward(grad, a, self.low, self.high)

    jvp = auto_element_wise


class MishBackward0(Op):
    """a tanh(softplus(a)): d = tanh(sp) + a sigmoid(a) (1 - tanh(sp)^2)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return (a * np.tanh(np.logaddexp(0, a))).astype(a.dtype, copy=False)

    def backward(self, grad, a):
        t = tanh(_softplus(a))
        return grad * (t + a * sigmoid(a) * (1 - t * t))

    jvp = auto_element_wise


class LogSigmoidBackward0(Op):
    """log sigmoid(a) = -log(1 + e^-a): d = 1 - sigmoid(a) = sigmoid(-a)."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return (-np.logaddexp(0, -a)).astype(a.dtype, copy=False)

    def backward(self, grad, a):
        return grad * sigmoid(-a)

    jvp = auto_element_wise


class HardswishBackward0(Op):
    """hardswish(a) = a relu6(a + 3) / 6: d = 0 up to -3, a/3 + 1/2 between, 1 from 3."""
    __slots__ = ()

    def forward(self, a):
        self.save_for_backward(a)
        return a * np.minimum(np.maximum(a + 3, 0), 6) / 6

    def backward(self, grad, a):
        return _hardswish_backward(grad, a)

    jvp = auto_element_wise


# ------------------------------------------------------------------ the backward of ReLUs, recorded

# The slope of relu, leaky_relu and hardtanh is a step function of the input: their backward
# is linear in the gradient and flat in the input. Under create_graph it is recorded as one
# op of (grad, input), PyTorch's XBackwardBackward0, whose gradient for the input is a
# constant 0: the first derivative has a graph (as in PyTorch) even when nothing else does.

def _threshold_backward(grad, out):
    if is_array(grad):
        return formulas.zero_where(out <= 0, grad)
    return ThresholdBackwardBackward0.run((grad, out), grad._data, out._data)


def _leaky_relu_backward(grad, a, slope):
    if is_array(grad):
        return np.where(a > 0, grad, grad * slope)
    return LeakyReluBackwardBackward0.run((grad, a), grad._data, a._data, slope)


def _hardswish_backward(grad, a):
    """PyTorch's hardswish_backward: 0 where a <= -3, grad (a/3 + 1/2) where a < 3, else grad."""
    if is_array(grad):
        out = np.where(a <= -3, 0, np.where(a < 3, grad * (a / 3 + 0.5), grad))
        return out.astype(grad.dtype, copy=False)
    return HardswishBackwardBackward0.run((grad, a), grad._data, a._data)


def _hardtanh_backward(grad, a, low, high):
    if is_array(grad):
        return formulas.keep_where((a > low) & (a < high), grad)
    return HardtanhBackwardBackward0.run((grad, a), grad._data, a._data, low, high)


class ThresholdBackwardBackward0(Op):
    """relu's backward as an op: grad where out > 0, +0 elsewhere (a nan grad passes)."""
    __slots__ = ()

    def forward(self, grad, out):
        self.save_for_backward(out)
        return _threshold_backward(grad, out)

    def backward(self, grad, out):
        return _threshold_backward(grad, out), zeros_like(grad)

    jvp = transposed_backward


class LeakyReluBackwardBackward0(Op):
    """leaky_relu's backward as an op: grad where a > 0, grad * slope elsewhere."""
    __slots__ = ("slope",)

    def forward(self, grad, a, slope):
        self.slope = slope
        self.save_for_backward(a)
        return _leaky_relu_backward(grad, a, slope)

    def backward(self, grad, a):
        return _leaky_relu_backward(grad, a, self.slope), zeros_like(grad)

    jvp = transposed_backward


class HardswishBackwardBackward0(Op):
    """hardswish's backward as an op (PyTorch's node): linear in the gradient (the same
    backward again), and ``grad / 3`` for ``a`` strictly between -3 and 3, 0 elsewhere."""
    __slots__ = ()

    def forward(self, grad, a):
        self.save_for_backward(grad, a)
        return _hardswish_backward(grad, a)

    def backward(self, gg, grad, a):
        return (_hardswish_backward(gg, a),
                formulas.keep_where((a > -3) & (a < 3), gg * grad / 3))

    jvp = transposed_backward


class HardtanhBackwardBackward0(Op):
    """hardtanh's backward as an op: grad strictly between the bounds, +0 elsewhere."""
    __slots__ = ("low", "high")

    def forward(self, grad, a, low, high):
        self.low, self.high = low, high
        self.save_for_backward(a)
        return _hardtanh_backward(grad, a, low, high)

    def backward(self, grad, a):
        return _hardtanh_backward(grad, a, self.low, self.high), zeros_like(grad)

    jvp = transposed_backward


# ------------------------------------------------------------------ functions

def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (MobileNetV3's cheap swish): ``F.hardswish``."""
    check_tensor("hardswish", input)
    refuse_integers("hardswish", input._data, "hardswish_cpu")
    if inplace:
        return run_in_place(input, None, hardswish)
    return HardswishBackward0.run((input,), input._data)


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def relu(input):
    a = input._data
    if a.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return ReluBackward0.run((input,), a)


# Functions of this module that are also Tensor methods with the tensor first
# (``x.<name>(...)`` is ``<name>(x, ...)``): installed by ``minigrad.methods``.
FUNCTIONS = ()
METHODS = ("relu",)
