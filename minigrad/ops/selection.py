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
from .. import dtypes
from .._tensor import Tensor, tensor_from, wrap
from ..tensor_rules import broadcast_error
from .op import saving_versions_of

__all__ = ["MaximumBackward0", "MinimumBackward0", "ClampBackward0", "ClampBackward1",
           "ClampMinBackward0", "ClampMaxBackward0", "MaskedFillBackward0",
           "MaskedFillBackward1", "WhereBackward0"]


def _winner_grads(grad, a_wins, b_wins, tie):
    """The gradients of maximum/minimum, as PyTorch computes them: an operand gets the whole
    gradient unless the other one wins, half of it where they tie; where neither wins nor
    ties (a nan on either side) both get it. A losing side gets 0, even for an inf grad."""
    half = formulas.where(tie, grad / 2, grad)
    return formulas.zero_where(b_wins, half), formulas.zero_where(a_wins, half)


class MaximumBackward0(Op):
    """``maximum(a, b)``: the larger one gets the gradient, each half of it where they tie."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.maximum(a, b)

    def backward(self, grad, a, b):
        return _winner_grads(grad, a > b, a < b, a == b)


class MinimumBackward0(Op):
    """``minimum(a, b)``: the smaller one gets the gradient, each half of it where they tie."""
    __slots__ = ()

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.minimum(a, b)

    def backward(self, grad, a, b):
        return _winner_grads(grad, a < b, a > b, a == b)


class ClampBackward1(Op):
    """``clamp(a, min, max)`` with number bounds (None: no bound): the gradient passes where
    min <= a <= max, and is 0 where a was clamped (or is nan)."""
    __slots__ = ("low", "high")

    def forward(self, a, low, high):
        self.low, self.high = low, high
        self.save_for_backward(a)
        return np.clip(a, low, high).astype(a.dtype, copy=False)

    def backward(self, grad, a):
        low, high = self.low, self.high
        if high is None:
            inside = a >= low
        elif low is None:
            inside = a <= high
        else:
            inside = (a >= low) & (a <= high)
        return formulas.keep_where(inside, grad)


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
        out = a if low is None else np.maximum(a, low)
        return np.asarray(out if high is None else np.minimum(out, high))

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


class MaskedFillBackward0(Op):
    """``a.masked_fill(mask, number)``: the gradient goes to a where the mask is False."""
    __slots__ = ()

    def forward(self, a, mask, value):
        self.save_for_backward(mask)
        return np.where(mask, value, a)

    def backward(self, grad, mask):
        return formulas.zero_where(mask, grad)


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
