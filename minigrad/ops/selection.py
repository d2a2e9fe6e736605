"""Ops that pick, for each element, one of their inputs or a constant (chapters 2 and 5):
``maximum``, ``minimum``, ``clamp``, ``masked_fill`` and ``where``. The gradient goes to
whichever input was picked; ties, bounds and masks decide which, as PyTorch decides.

Each op's forward, what it saves and its backward are in one class named like PyTorch's
node. The masks are constants of the graph: the second derivative of a pick is 0 (what the
picked input does afterwards is differentiated by the ops that follow it).
"""

import numpy as np

from . import formulas
from .op import Op
from .tangents import auto_element_wise, auto_linear, constant, spread, tangent_sum
from .. import dtypes
from .._tensor import Tensor, tensor_from, wrap
from ..tensor_rules import takes_out
from ..tensor_rules import broadcast_error
from .op import saving_versions_of
from ..graph import GradMode
from ..tensor_rules import bound_as_number
from ..tensor_rules import int_bounds
from ..tensor_rules import number_as
import numbers
from ..tensor_rules import with_numbers

__all__ = ["MaximumBackward0", "MinimumBackward0", "ClampBackward0", "ClampBackward1",
           "ClampMinBackward0", "ClampMaxBackward0", "MaskedFillBackward0",
           "MaskedFillBackward1", "WhereBackward0", "clamped"]


def _winner_grads(grad, a_wins, b_wins, tie):
    """The gradients of maximum/minimum, as PyTorch computes them: an operand gets the whole
    gradient unless the other one wins, half of it where they tie; where neither wins nor
    ties (a nan on either side) both get it. A losing side gets 0, even for an inf grad."""
    half = formulas.where(tie, grad / 2, grad)
    return formulas.zero_where(b_wins, half), formulas.zero_where(a_wins, half)


def _winner_tangent(tangents, a, b, wins):
    """The tangent of maximum/minimum, as PyTorch's: the winner's, the mean of both where
    they tie (``wins``: np.greater for maximum)."""
    ta, tb = (0 if t is None else t for t in tangents)
    share = np.where(a == b, 0.5, wins(a, b)).astype(np.result_type(a, b), copy=False)
    return tb + (ta - tb) * share


class MaximumBackward0(Op):
    """``maximum(a, b)``: the larger one gets the gradient, each half of it where they tie."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.maximum(a, b)

    def backward(self, grad, a, b):
        return _winner_grads(grad, a > b, a < b, a == b)

    def jvp(self, tangents, out, a, b):
        return _winner_tangent(tangents, constant(a), constant(b), np.greater)


class MinimumBackward0(Op):
    """``minimum(a, b)``: the smaller one gets the gradient, each half of it where they tie."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.minimum(a, b)

    def backward(self, grad, a, b):
        return _winner_grads(grad, a < b, a > b, a == b)

    def jvp(self, tangents, out, a, b):
        return _winner_tangent(tangents, constant(a), constant(b), np.less)


def clamped(a, low, high):
    """``a`` clamped to [low, high] (numbers, arrays or None) as PyTorch's clamp kernel
    computes it: std::min(std::max(a, low), high), so that ``a`` is kept where it ties with
    a bound (clamp(-0.0, min=0.0) is -0.0, where numpy's clip gives the bound's 0.0), crossed
    bounds give ``high``, and a nan bound gives nan. (PyTorch's vectorized loop for long
    tensors with tensor bounds breaks ties the other way: its own inconsistency.)"""
    numbers = not isinstance(low, np.ndarray) and not isinstance(high, np.ndarray)
    if numbers and not (low == 0 or high == 0) or a.dtype.kind != "f":
        out = np.clip(a, low, high)  # no tie of -0.0 and 0.0 possible: numpy's one pass
        return out.astype(a.dtype, copy=False) if numbers else np.asarray(out)
    out = a
    with np.errstate(invalid="ignore"):
        if low is not None:
            out = np.where(out < low, low, out)
        if high is not None:
            out = np.where(high < out, high, out)
    for bound in (low, high):
        if bound is not None and np.isnan(bound).any():
            out = np.where(np.isnan(bound), bound, out)
    return np.asarray(out, dtype=a.dtype)


class ClampBackward1(Op):
    """``clamp(a, min, max)`` with number bounds (None: no bound): the gradient passes where
    min <= a <= max, and is 0 where a was clamped (or is nan)."""
    __slots__ = ("low", "high")

    def forward(self, a, low, high):
        self.low, self.high = low, high
        self.save_for_backward(a)
        return clamped(a, low, high)

    def backward(self, grad, a):
        low, high = self.low, self.high
        if high is None:
            inside = a >= low
        elif low is None:
            inside = a <= high
        else:
            inside = (a >= low) & (a <= high)
        return formulas.keep_where(inside, grad)

    jvp = auto_element_wise


class ClampMinBackward0(ClampBackward1):
    """``clamp_min(a, min)``."""
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    """``clamp_max(a, max)``."""
    __slots__ = ()


class ClampBackward0(Op):
    """``clamp(a, min, max)`` with tensor bounds (a missing bound is None; all broadcast): a
    gets the gradient where min <= a <= max, min where a < min (unless min >= max), max
    where a > max or max < min (then max wins everywhere), as PyTorch decides ties and
    crossed bounds."""
    __slots__ = ()

    def forward(self, a, low, high):
        self.save_for_backward(a, low, high)
        return clamped(a, low, high)

    def backward(self, grad, a, low, high):
        needs_a, needs_low, needs_high = self.needs_input_grad
        gets = [None, None, None]  # where a, min and max get the gradient
        if low is not None and high is not None:
            if needs_a:
                gets[0] = (a >= low) & (a <= high)
            if needs_low:
                gets[1] = (a < low) & (low < high)
            if needs_high:
                gets[2] = (a > high) | (high < low)
        elif low is not None:
            gets[0], gets[1] = a >= low, a < low
        else:
            gets[0], gets[2] = a <= high, a > high
        return tuple([formulas.keep_where(mask, grad) if needs else None
                      for mask, needs in zip(gets, self.needs_input_grad)])

    def jvp(self, tangents, out, a, low, high):
        # PyTorch's clamp_jvp: crossed bounds give max's tangent; a tie with a lone bound
        # gives the bound's (with both bounds: a's)
        ta, tl, th = (0 if t is None else spread(t, out.shape) for t in tangents)
        a, low, high = constant(a), constant(low), constant(high)
        if low is not None and high is not None:
            return formulas.where(low > high, th, formulas.where(
                a < low, tl, formulas.where(a > high, th, ta)))
        if low is not None:
            return formulas.where(a > low, ta, tl)
        return formulas.where(a < high, ta, th)


class MaskedFillBackward0(Op):
    """``a.masked_fill(mask, number)``: the gradient goes to a where the mask is False."""
    __slots__ = ()

    def forward(self, a, mask, value):
        self.save_for_backward(mask)
        return np.where(mask, value, a)

    def backward(self, grad, mask):
        return formulas.zero_where(mask, grad)

    jvp = auto_element_wise


class MaskedFillBackward1(Op):
    """``a.masked_fill(mask, value)`` with a 0-dim tensor ``value``: as MaskedFillBackward0
    for a; ``value``, which is in every element where the mask is True, gets the sum of the
    gradient there."""
    __slots__ = ()

    def forward(self, a, value, mask):
        self.save_for_backward(mask)
        return np.where(mask, value, a)

    def backward(self, grad, mask):
        needs_a, needs_value = self.needs_input_grad
        return (formulas.zero_where(mask, grad) if needs_a else None,
                formulas.keep_where(mask, grad).sum() if needs_value else None)

    def jvp(self, tangents, out, a, value):
        ta, tv = tangents
        mask = self.dual[0]["mask"]  # (a keyword of forward)
        return tangent_sum(
            None if ta is None else formulas.zero_where(mask, spread(ta, out.shape)),
            None if tv is None else formulas.keep_where(mask, spread(tv, out.shape)))


class WhereBackward0(Op):
    """``where(condition, a, b)``: the gradient goes to a where the condition holds, to b
    elsewhere."""
    __slots__ = ()

    def forward(self, a, b, condition):
        self.save_for_backward(condition)
        return np.where(condition, a, b)

    def backward(self, grad, condition):
        needs_a, needs_b = self.needs_input_grad
        return (formulas.keep_where(condition, grad) if needs_a else None,
                formulas.zero_where(condition, grad) if needs_b else None)

    jvp = auto_linear


def pairwise(a, b, node_cls):
    """maximum and minimum: ``b`` may be a number (then made a tensor of ``a``'s dtype)."""
    if not isinstance(a, Tensor):
        a = tensor_from(a)
    x, y, t = a._operands(b)
    if t is None:
        y = np.asarray(y, dtype=x.dtype)
    try:
        return node_cls.run((a, t), x, y)
    except ValueError:
        raise broadcast_error(x, y, node_cls.__name__[:7].lower()) from None


@takes_out(dtype="same")
def where(condition, input=None, other=None):
    """Elementwise choice: ``input`` where ``condition`` holds, ``other`` elsewhere.
    ``where(condition)`` alone is ``condition.nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return tensor_from(condition).nonzero(as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {dtypes.from_numpy(cond.dtype)}")
    if not isinstance(input, Tensor):
        if isinstance(other, Tensor):  # a number and a tensor: promoted as in ``other + 1.5``
            promoted, number, _ = other._operands(input)
            input = wrap(np.asarray(number).astype(promoted.dtype))
        else:
            input = tensor_from(input)
    x, y, t = input._operands(other)
    if t is None:
        y = np.asarray(y).astype(x.dtype)
    try:
        return saving_versions_of(WhereBackward0.run((input, t), x, y, condition=cond),
                                  condition if isinstance(condition, Tensor) else None)
    except ValueError:
        raise broadcast_error(x, y, "where") from None


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def clamp(input, min=None, max=None):
    """Values below ``min`` become ``min``, above ``max`` become ``max``. The bounds are
    numbers, or tensors (they broadcast, and get a gradient where they win)."""
    return _clamp(input, min, max, ClampBackward1)


clip = clamp


@takes_out(dtype="same")
def clamp_min(input, min):
    """``clamp(input, min=min)``, PyTorch's ``torch.clamp_min``."""
    return _clamp(input, min, None, ClampMinBackward0)


@takes_out(dtype="same")
def clamp_max(input, max):
    """``clamp(input, max=max)``, PyTorch's ``torch.clamp_max``."""
    return _clamp(input, None, max, ClampMaxBackward0)


def _clamp(input, low, high, node_cls):
    if low is None and high is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    low_is_tensor, high_is_tensor = isinstance(low, Tensor), isinstance(high, Tensor)
    if low_is_tensor or high_is_tensor:
        if low is None or high is None or (low_is_tensor and high_is_tensor):
            return _clamp_by_tensors(input, low, high)
        low, high = bound_as_number(low), bound_as_number(high)
    a = with_numbers(input._data, low, high)
    if a.dtype.kind == "b":
        raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\': convert the '
                                  "tensor first (t.long())")
    if a.dtype.kind in "iu":
        low, high = int_bounds(low, high, a.dtype)
    return node_cls.run((input,), a, low=low, high=high)


def _clamp_by_tensors(input, low, high):
    """clamp with tensor bounds: promoted and broadcast with ``input`` like an add."""
    arrays = [None if t is None else t._data for t in (input, low, high)]
    common = arrays[0]
    for b in arrays[1:]:
        if b is not None:
            common = np.empty((1,) * max(common.ndim, b.ndim), dtypes.promote(common, b))
    if common.dtype.kind == "b" and low is not None and high is not None:
        raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\': convert the '
                                  "tensors first (t.long())")
    a, lo, hi = (None if b is None else b.astype(common.dtype, copy=False) for b in arrays)
    try:
        return ClampBackward0.run((input, low, high), a, lo, hi)
    except ValueError:
        raise broadcast_error(a, lo if hi is None else hi, "clamp") from None


def masked_fill(input, mask, value):
    """A copy with ``value`` where the boolean ``mask`` is True (the mask broadcasts);
    ``value`` is a number or a 0-dim tensor, which then gets a gradient too."""
    if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"masked_fill() takes a boolean mask Tensor and a number or a 0-dim "
                        f"Tensor, got ({type(mask).__name__}, {type(value).__name__})")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {dtypes.from_numpy(m.dtype)}: compare first "
                           "(mask == 1) or convert it (mask.bool())")
    value_tensor = value if isinstance(value, Tensor) else None
    if value_tensor is not None and value_tensor.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                           f"got tensor with {value_tensor.ndim} dimension(s).")
    a = input._data
    fill = number_as(value.item() if value_tensor is not None else value, a.dtype)
    if value_tensor is not None and value_tensor._requires_grad and a.dtype.kind != "f" \
            and GradMode.enabled:
        raise RuntimeError(f"Autograd not support dtype: {input.dtype}: only a float tensor "
                           "can be filled with a value that requires grad")
    try:
        if value_tensor is None:
            out = MaskedFillBackward0.run((input,), a, mask=m, value=fill)
        else:
            out = MaskedFillBackward1.run((input, value_tensor), a, fill, mask=m)
        return saving_versions_of(out, mask)
    except ValueError:
        raise broadcast_error(a, m, "masked_fill") from None


def maximum(input, other):
    return pairwise(input, other, MaximumBackward0)


def minimum(input, other):
    return pairwise(input, other, MinimumBackward0)


# Functions of this module that are also Tensor methods with the tensor first
# (``x.<name>(...)`` is ``<name>(x, ...)``): installed by ``minigrad.methods``.
FUNCTIONS = ("clamp_min", "clamp_max")
METHODS = ("clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "maximum", "minimum",)
