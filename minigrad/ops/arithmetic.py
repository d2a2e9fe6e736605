"""The arithmetic operators (chapters 2 and 5): ``+ - * /``, powers, ``//`` and ``%``,
and their relatives ``fmod``, ``atan2``, ``lerp``, ``addcmul`` and ``addcdiv``. Each op's
forward, what it saves and its backward are in one class named like PyTorch's node.

Operands arrive already promoted to one dtype (``Tensor._operands``), as numpy arrays or
Python numbers; gradients are summed back to each operand's shape by ``Op``. An op with a
number on one side takes the number as a keyword (``RsubBackward1.run((x,), a, other=2)``)
and has one input, as in PyTorch. The formulas are PyTorch's (``derivatives.yaml``), term
for term, so that second derivatives agree too, nan for nan.
"""

import math

import numpy as np

from . import formulas
from .op import Op
from .tangents import (auto_element_wise, auto_linear, constant, scaled, tangent_sum,
                       zero_tangent)
from ..tensor_rules import takes_out
from ..tensor_rules import broadcast_error
from .._tensor import Tensor
from ..tensor_rules import check_tensor
from .. import dtypes
from ..tensor_rules import refuse_integers

__all__ = ["AddBackward0", "SubBackward0", "RsubBackward1", "MulBackward0", "NegBackward0",
           "DivBackward0", "DivBackward2", "PowBackward0", "PowBackward1", "PowBackward2",
           "RemainderBackward0", "RemainderBackward1", "FmodBackward0", "FmodBackward1",
           "NoDerivative", "Atan2Backward0", "LerpBackward0", "LerpBackward1",
           "AddcmulBackward0", "AddcdivBackward0", "divide_rounded", "power"]


def _zeros_like(x):
    """Zeros of ``x``'s shape and dtype, of its kind: a constant, with no history."""
    if formulas.is_array(x):
        return np.zeros(np.shape(x), x.dtype)
    return Op.wrap(np.zeros(x.shape, x._data.dtype))


# ------------------------------------------------------------------ + - * and negation

class AddBackward0(Op):
    """``a + b``: each operand gets the gradient as it is."""
    __slots__ = ()

    def forward(self, a, b):
        return a + b

    def backward(self, grad):
        return grad, grad

    def jvp(self, tangents, out, a, b):
        return tangent_sum(*tangents)


class SubBackward0(Op):
    """``a - b``: ``a`` gets the gradient, ``b`` its negative."""
    __slots__ = ()

    def forward(self, a, b):
        return a - b

    def backward(self, grad):
        return grad, -grad

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(ta, None if tb is None else -tb)


class RsubBackward1(Op):
    """``number - a``."""
    __slots__ = ()

    def forward(self, a, other):
        return other - a

    def backward(self, grad):
        return -grad

    def jvp(self, tangents, out, a, *options):
        return -tangents[0]


class MulBackward0(Op):
    """``a * b``: d(a b) = b da + a db. Each operand is saved only if the other one needs a
    gradient."""
    __slots__ = ()

    def forward(self, a, b):
        needs_a, needs_b = self.needs_input_grad
        self.save_for_backward(a if needs_b else None, b if needs_a else None)
        return a * b

    def backward(self, grad, a, b):
        return (grad * b if b is not None else None,
                grad * a if a is not None else None)

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(None if ta is None else ta * b, None if tb is None else a * tb)


class NegBackward0(Op):
    """``-a``."""
    __slots__ = ()

    def forward(self, a):
        return -a

    def backward(self, grad):
        return -grad

    jvp = auto_linear


# ------------------------------------------------------------------ division

class DivBackward0(Op):
    """``a / b``: d(a/b) = da / b - (a / b) / b db. ``b`` is always needed, ``a`` only for
    db. (a / b) / b, not a / (b * b): b * b underflows to 0 for |b| < 1e-19 (float32)."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(a if self.needs_input_grad[1] else None, b)
        with np.errstate(divide="ignore", invalid="ignore"):  # inf and nan, as PyTorch
            return a / b

    def backward(self, grad, a, b):
        needs_a, needs_b = self.needs_input_grad
        return (grad / b if needs_a else None,
                -grad * (a / b / b) if needs_b else None)

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(None if ta is None else ta / b,
                           None if tb is None else -tb * (a / b / b))


class DivBackward2(Op):
    """``div(a, b, rounding_mode="floor" or "trunc")``: a step function, whose derivative
    PyTorch takes as 0 everywhere. The backward of ``%`` and ``fmod`` uses it on Tensors,
    so that their gradient's own gradient is 0, as in PyTorch (``//`` refuses instead)."""
    __slots__ = ()

    def forward(self, a, b, rounding_mode):
        return _divided(a, b, rounding_mode)

    def backward(self, grad):
        zeros = _zeros_like(grad)
        return zeros, zeros

    def jvp(self, tangents, out, *inputs):
        return zero_tangent(out)


def _divided(a, b, rounding_mode):
    with np.errstate(divide="ignore", invalid="ignore"):
        # floor_divide, not floor(a / b): as PyTorch's floor division, 1 // -inf is -1
        return np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)


def _rounded_quotient(a, b, rounding_mode):
    """``div(a, b, rounding_mode)`` on arrays, or recorded (as DivBackward2) on Tensors."""
    if formulas.is_array(a):
        return _divided(a, b, rounding_mode)
    return DivBackward2.run((a, b), a._data, b._data, rounding_mode=rounding_mode)


def divide_rounded(op, a, b):
    """``a // b`` (``op="floor_divide"``) or ``a % b`` (``"remainder"``) on arrays, with
    PyTorch's rules: bools are refused, an integer divided by 0 raises (numpy would say 0,
    with a warning), a float gives inf or nan. (Shapes that do not broadcast: ValueError.)"""
    kind = np.result_type(a, b).kind
    if kind == "b":
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\': convert the '
                                  "tensors to integers first (t.long())")
    if kind in "iu":
        if np.size(a) and not np.all(b):  # b, the divisor, may be a number or an array
            raise RuntimeError("ZeroDivisionError: integer division by zero (in // or %); "
                               "check the divisor, or divide floats (t.float()) to get inf")
        return np.floor_divide(a, b) if op == "floor_divide" else np.remainder(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(a, b) if op == "floor_divide" else _float_remainder(a, b)


def _float_remainder(a, b):
    """``a % b`` for floats as PyTorch computes it, from fmod: a zero result keeps the sign of
    ``a`` (numpy's remainder gives it the sign of ``b``: 0 % -2 would be -0.0, and
    1 / (0 % -2) -inf instead of inf)."""
    r = np.fmod(a, b)
    return np.where((r != 0) & ((r < 0) != (np.asarray(b) < 0)), r + b, r)


class NoDerivative(Op):
    """The node of an op that has no derivative (``x // 2``, ``2 % x``): the result requires
    grad like any other, but backward through it refuses, as in PyTorch, where this node is
    called ``NotImplemented`` (a Python builtin's name, so only its printed name here).
    ``reverse``: the number ``b`` is on the left (``2 // x``)."""
    __slots__ = ("op",)

    def forward(self, a, b, op, reverse=False):
        self.op = op
        return divide_rounded(op, b, a) if reverse else divide_rounded(op, a, b)

    def backward(self, grad):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented: {self.op} "
                           "has no useful gradient (it is flat almost everywhere). Compute it "
                           "on .detach()ed values, or under minigrad.no_grad().")

    def jvp(self, tangents, out, *inputs):  # no derivative: the output carries no tangent
        return None


NoDerivative.__name__ = NoDerivative.__qualname__ = "NotImplemented"


class RemainderBackward0(Op):
    """``a % number`` = a - floor(a / number) * number: the gradient passes unchanged."""
    __slots__ = ()

    def forward(self, a, other):
        return divide_rounded("remainder", a, other)

    def backward(self, grad):
        return grad

    def jvp(self, tangents, out, a, *options):
        return tangents[0]


class RemainderBackward1(Op):
    """``a % b`` for tensors, a - floor(a / b) b: da = grad, db = -grad floor(a / b)."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(*((a, b) if self.needs_input_grad[1] else (None, None)))
        return divide_rounded("remainder", a, b)

    def backward(self, grad, a, b):
        return grad, (-grad * _rounded_quotient(a, b, "floor") if b is not None else None)

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(ta, None if tb is None else -tb * _rounded_quotient(a, b, "floor"))


class FmodBackward0(Op):
    """``fmod(a, number)``: slope 1 in a."""
    __slots__ = ()

    def forward(self, a, other):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, other)

    def backward(self, grad):
        return grad

    def jvp(self, tangents, out, a, *options):
        return tangents[0]


class FmodBackward1(Op):
    """``fmod(a, b)`` = a - trunc(a / b) b: da = grad, db = -grad trunc(a / b)."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(*((a, b) if self.needs_input_grad[1] else (None, None)))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b)

    def backward(self, grad, a, b):
        return grad, (-grad * _rounded_quotient(a, b, "trunc") if b is not None else None)

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(ta, None if tb is None else -tb * _rounded_quotient(a, b, "trunc"))


# ------------------------------------------------------------------ powers

def power(a, e):
    """``a ** e`` for a number ``e``, as PyTorch's pow kernel computes it: e == 2 is a * a,
    and ±0.5 are sqrt and 1 / sqrt for floats (sqrt(-inf) is nan where numpy's power says
    inf, and 1 / sqrt(-0.0) is -inf). Bool ** bool stays bool (numpy says int8)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if e == 2:
            out = a * a
        elif (e == 0.5 or e == -0.5) and a.dtype.kind == "f":
            root = np.sqrt(a)
            out = root if e == 0.5 else 1 / root
        else:
            out = a ** e
    if a.dtype == np.bool_:
        return np.asarray(out).astype(np.bool_)
    return out


def _integer_power(a, b):
    """``a ** b`` for integer arrays as PyTorch computes it: a negative exponent gives
    1 / a ** -b cut toward 0, that is 0 unless a is 1 or -1 (numpy refuses it)."""
    if not (b < 0).any():
        return a ** b
    power_ = a ** np.maximum(b, 0)
    reciprocal = np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b % 2), 0)).astype(power_.dtype)
    return np.where(b < 0, reciprocal, power_)


class PowBackward0(Op):
    """``a ** exponent`` for a number exponent: grad (e a^(e-1)), and 0 for e == 0."""
    __slots__ = ("exponent",)

    def forward(self, a, exponent):
        self.exponent = exponent
        self.save_for_backward(a)
        return power(a, exponent)

    def backward(self, grad, a):
        e = self.exponent
        if e == 0 and e is not False:  # (PyTorch: x ** False goes the general way, 0 * x^-1,
            return _zeros_like(a)      # nan at x = 0)
        if e == 2:
            return grad * (2 * a)  # the same numbers as a ** 1, without the call
        # power, not **, on arrays: the special cases of the forward (a ** 0.5 needs -0.5)
        return grad * (e * (power(a, e - 1) if formulas.is_array(a) else a ** (e - 1)))

    jvp = auto_element_wise


def _tensor_power(a, b):
    """``a ** b`` for a tensor exponent ``b``, as PyTorch's pow(Tensor, Tensor) computes it:
    the C library's pow, whatever the exponent's shape. numpy's power takes an exponent of
    0.5 that is one number (0-dim, or broadcast) as sqrt: sqrt(-inf) is nan and sqrt(-0.0)
    is -0.0, where pow gives +inf and +0.0 (|a| at those two points)."""
    if not formulas.is_array(a):
        return a ** b
    out = np.power(a, b)
    half = b == 0.5
    if half is True or np.any(half):
        out = np.where(half & ((a == 0) | (a == -np.inf)), np.abs(a), out)
    return out


class PowBackward1(Op):
    """``a ** b`` with both tensors: da = grad b a^(b-1), 0 where b == 0; db = grad a^b
    log(a), 0 where a == 0 and b >= 0 (PyTorch's choices, for 0 ** 0 and 0 ** b)."""
    __slots__ = ()

    def forward(self, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _integer_power(a, b) if a.dtype.kind in "iu" else _tensor_power(a, b)
        self.save_for_backward(a, b, out)
        return out

    def backward(self, grad, a, b, out):
        needs_a, needs_b = self.needs_input_grad
        grad_a = grad_b = None
        if needs_a:
            grad_a = formulas.zero_where(b == 0, grad * (b * _tensor_power(a, b - 1)))
        if needs_b:
            grad_b = grad * formulas.zero_where((a == 0) & (b >= 0), out * formulas.log(a))
        return grad_a, grad_b

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        return tangent_sum(
            None if ta is None else formulas.zero_where(b == 0, ta * (b * _tensor_power(a, b - 1))),
            None if tb is None else tb * formulas.zero_where((a == 0) & (b >= 0),
                                                             out * formulas.log(a)))


class PowBackward2(Op):
    """``number ** b``: db = grad number^b log(number); for number 0, 0 where b >= 0."""
    __slots__ = ("base",)

    def forward(self, b, base):
        self.base = base
        base = np.asarray(base, dtype=b.dtype)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = _integer_power(base, b) if b.dtype.kind in "iu" else np.power(base, b)
        self.save_for_backward(b, out)
        return out

    def backward(self, grad, b, out):
        base = self.base
        if base == 0:
            return grad * formulas.zero_where(b >= 0, out * -math.inf)
        log = math.log(base) if base > 0 else math.nan  # computed in double, as PyTorch
        return grad * (out * log)

    def jvp(self, tangents, out, b, *options):
        return self.backward(tangents[0], b, out)


# ------------------------------------------------------------------ two-argument functions

class Atan2Backward0(Op):
    """``atan2(y, x)``: dy = grad x / (x² + y²), dx = -grad y / (x² + y²), where
    1 / (x² + y²) is taken as 0 at the origin (PyTorch's choice)."""
    __slots__ = ()

    def forward(self, y, x):
        self.save_for_backward(y, x)
        return np.arctan2(y, x)

    def backward(self, grad, y, x):
        needs_y, needs_x = self.needs_input_grad
        squared = y * y + x * x
        recip = formulas.zero_where(squared == 0, 1 / squared)
        return (grad * x * recip if needs_y else None,
                grad * -y * recip if needs_x else None)

    def jvp(self, tangents, out, y, x):
        ty, tx = tangents
        squared = y * y + x * x
        recip = formulas.zero_where(constant(squared) == 0, 1 / squared)
        return tangent_sum(scaled(ty, x * recip), scaled(tx, -y * recip))


def _lerp(start, end, weight):
    """``start + weight (end - start)``, computed as PyTorch does: from ``end`` backwards
    when |weight| >= 0.5, so that weight 1 gives ``end`` exactly."""
    diff = end - start
    if isinstance(weight, np.ndarray):
        small = np.abs(weight) < 0.5
        return np.where(small, start + weight * diff, end - diff * (1 - weight))
    return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)


class LerpBackward0(Op):
    """``lerp(start, end, w)`` for a number w: d start = grad (1 - w), d end = grad w."""
    __slots__ = ("weight",)

    def forward(self, start, end, weight):
        self.weight = weight
        return _lerp(start, end, start.dtype.type(weight)).astype(start.dtype, copy=False)

    def backward(self, grad):
        needs_start, needs_end = self.needs_input_grad
        w = self.weight
        return (grad * (1 - w) if needs_start else None, grad * w if needs_end else None)

    def jvp(self, tangents, out, start, end, *options):
        ts, te = tangents[:2]
        w = self.weight
        return tangent_sum(scaled(ts, 1 - w), scaled(te, w))


class LerpBackward1(Op):
    """``lerp(start, end, w)`` for a tensor w: also dw = grad (end - start)."""
    __slots__ = ()

    def forward(self, start, end, weight):
        self.save_for_backward(start, end, weight)
        return _lerp(start, end, weight).astype(start.dtype, copy=False)

    def backward(self, grad, start, end, weight):
        needs_start, needs_end, needs_weight = self.needs_input_grad
        return (grad * (1 - weight) if needs_start else None,
                grad * weight if needs_end else None,
                grad * (end - start) if needs_weight else None)

    def jvp(self, tangents, out, start, end, weight):
        ts, te, tw = tangents
        return tangent_sum(scaled(ts, 1 - weight), scaled(te, weight), scaled(tw, end - start))


class AddcmulBackward0(Op):
    """``t + value * t1 * t2`` (``addcmul``, and ``addcmul_`` in place)."""
    __slots__ = ("value",)

    def forward(self, t, t1, t2, value):
        self.value = value
        _, needs_1, needs_2 = self.needs_input_grad
        self.save_for_backward(t1 if needs_2 else None, t2 if needs_1 else None)
        return t + value * (t1 * t2)

    def backward(self, grad, t1, t2):
        needs_t = self.needs_input_grad[0]
        value = self.value
        return (grad if needs_t else None,
                grad * (t2 * value) if t2 is not None else None,
                grad * (t1 * value) if t1 is not None else None)

    def jvp(self, tangents, out, t, t1, t2, *options):
        tt, t1t, t2t = tangents
        value = self.value
        return tangent_sum(tt, scaled(t1t, t2 * value), scaled(t2t, t1 * value))


class AddcdivBackward0(Op):
    """``t + value * t1 / t2`` (``addcdiv``, and ``addcdiv_`` in place)."""
    __slots__ = ("value",)

    def forward(self, t, t1, t2, value):
        self.value = value
        self.save_for_backward(t1 if self.needs_input_grad[2] else None, t2)
        with np.errstate(divide="ignore", invalid="ignore"):
            return t + value * (t1 / t2)

    def backward(self, grad, t1, t2):
        needs_t, needs_1, needs_2 = self.needs_input_grad
        value = self.value
        return (grad if needs_t else None,
                grad * (value / t2) if needs_1 else None,
                -grad * (value * t1 / (t2 * t2)) if needs_2 else None)

    def jvp(self, tangents, out, t, t1, t2, *options):
        tt, t1t, t2t = tangents
        value = self.value
        return tangent_sum(tt, scaled(t1t, value / t2), scaled(t2t, -(value * t1 / (t2 * t2))))


def run_addc(t, t1, t2, value, node_cls):
    """``t + value * t1 * t2`` or ``t + value * t1 / t2``: addcmul and addcdiv."""
    a, b, c = t._data, t1._data, t2._data
    if node_cls is AddcdivBackward0 and b.dtype.kind in "biu" \
            and c.dtype.kind in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported: make "
                           "tensor1 or tensor2 a float tensor (tensor1.float())")
    try:
        return node_cls.run((t, t1, t2), a, b, c, value=value)
    except ValueError:
        raise broadcast_error(a, np.broadcast(b, c), node_cls.__name__[:7].lower()) from None


# ------------------------------------------------------------------ functions

def _pair(name, input, other):
    """Both operands as arrays of their promoted dtype (integers become float32 for ops
    that only exist for floats) and ``other`` as a Tensor or None."""
    check_tensor(name, input)
    a, b, t = input._operands(other)
    return a, np.asarray(b, dtype=a.dtype), t


@takes_out
def atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi]: ``atan(input / other)`` with the
    quadrant from both signs."""
    check_tensor("atan2", other, "other", 2)
    y, x, _ = _pair("atan2", input, other)
    if y.dtype.kind != "f":
        y, x = y.astype(dtypes.DEFAULT_FLOAT), x.astype(dtypes.DEFAULT_FLOAT)
    return Atan2Backward0.run((input, other), y, x)


@takes_out
def fmod(input, other):
    """The remainder of ``input / other`` with the sign of ``input`` (C's fmod; ``%`` takes
    the sign of ``other``)."""
    a, b, t = _pair("fmod", input, other)
    if a.dtype.kind in "iub" and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")
    if t is None:
        return FmodBackward0.run((input,), a, other=b)
    return FmodBackward1.run((input, t), a, b)


@takes_out
def lerp(input, end, weight):
    """``input + weight * (end - input)``: the point a fraction ``weight`` of the way from
    ``input`` to ``end``."""
    check_tensor("lerp", input)
    check_tensor("lerp", end, "end", 2)
    start, stop = input._data, end._data
    if start.dtype != stop.dtype:
        raise RuntimeError(f"expected dtype {dtypes.from_numpy(start.dtype)} for `end` but got "
                           f"dtype {dtypes.from_numpy(stop.dtype)}")
    refuse_integers("lerp", start, "lerp_kernel_scalar")
    shape = start.shape
    for other in (stop, weight._data) if isinstance(weight, Tensor) else (stop,):
        try:
            shape = np.broadcast_shapes(shape, other.shape)
        except ValueError:  # PyTorch's RuntimeError, not numpy's ValueError from forward
            raise broadcast_error(np.empty(shape, bool), other, "lerp") from None
    if isinstance(weight, Tensor):
        w = weight._data.astype(start.dtype, copy=False)
        return LerpBackward1.run((input, end, weight), start, stop, w)
    return LerpBackward0.run((input, end), start, stop, weight=float(weight))


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def addcmul(input, tensor1, tensor2, value=1):
    """``input + value * tensor1 * tensor2``, broadcast (Adam's update, in place)."""
    return run_addc(input, tensor1, tensor2, value, AddcmulBackward0)


def addcdiv(input, tensor1, tensor2, value=1):
    """``input + value * tensor1 / tensor2``, broadcast (Adam's update, in place)."""
    return run_addc(input, tensor1, tensor2, value, AddcdivBackward0)


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("atan2", "fmod", "lerp",)
METHODS = ("addcmul", "addcdiv", "atan2", "fmod", "lerp",)
