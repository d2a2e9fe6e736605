"""Rounding and the other ops whose gradient is zero or a step (chapter 5): ``floor``,
``ceil``, ``round``, ``trunc``, ``frac``, ``nan_to_num``, ``isinf``, the logical ops and
``bernoulli``. Each op's class (named like PyTorch's node) comes first, then the public
functions that check arguments and run them.

A rounded value does not move when its input moves a little, so these ops send back a
gradient of zeros (PyTorch's rule, not "no gradient"): the graph stays connected.
"""

import numpy as np

from .op import Op
from .tangents import auto_element_wise
from .pointwise import ZeroGradient
from .._tensor import wrap
from ..random import numpy_rng
from ..tensor_rules import takes_out
from ..tensor_rules import check_tensor, refuse_integers

__all__ = ["FloorBackward0", "CeilBackward0", "RoundBackward0", "RoundBackward1",
           "TruncBackward0", "FracBackward0", "NanToNumBackward0", "BernoulliBackward0"]


class FloorBackward0(ZeroGradient):
    """The largest whole number <= a."""
    __slots__ = ()

    def forward(self, a):
        return np.floor(a)


class CeilBackward0(ZeroGradient):
    """The smallest whole number >= a."""
    __slots__ = ()

    def forward(self, a):
        return np.ceil(a)


class RoundBackward0(ZeroGradient):
    """Halves to even (2.5 -> 2, 3.5 -> 4)."""
    __slots__ = ()

    def forward(self, a):
        return np.round(a)


class RoundBackward1(ZeroGradient):
    """round with ``decimals`` (PyTorch's other overload)."""
    __slots__ = ()

    def forward(self, a, decimals):
        return np.round(a, decimals)


class TruncBackward0(ZeroGradient):
    """a with its fraction dropped (rounded toward zero)."""
    __slots__ = ()

    def forward(self, a):
        return np.trunc(a)


class BernoulliBackward0(ZeroGradient):
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

    jvp = auto_element_wise


class NanToNumBackward0(Op):
    """nan, inf and -inf replaced by numbers: the gradient passes where the element was
    finite. As PyTorch, ``grad * isfinite(a)``."""
    __slots__ = ()

    def forward(self, a, nan=0.0, posinf=None, neginf=None):
        self.save_for_backward(np.isfinite(a))
        return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, grad, finite):
        return grad * finite

    jvp = auto_element_wise


# ------------------------------------------------------------------ functions

def _rounding(name, input, op, kernel):
    check_tensor(name, input)
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if a.dtype.kind != "f":
        return wrap(a.copy())  # an integer is already whole
    return op.run((input,), a)


@takes_out(dtype="same")
def floor(input):
    """The largest whole number <= each element (integers are returned as they are)."""
    return _rounding("floor", input, FloorBackward0, "floor_vml_cpu")


@takes_out(dtype="same")
def ceil(input):
    """The smallest whole number >= each element."""
    return _rounding("ceil", input, CeilBackward0, "ceil_vml_cpu")


@takes_out(dtype="same")
def trunc(input):
    """Each element with its fraction dropped (rounded toward zero)."""
    return _rounding("trunc", input, TruncBackward0, "trunc_vml_cpu")


@takes_out(dtype="same")
def round(input, *, decimals=0):
    """Each element rounded to ``decimals`` places, halves to even (2.5 -> 2, 3.5 -> 4)."""
    if decimals == 0:
        return _rounding("round", input, RoundBackward0, "round_vml_cpu")
    check_tensor("round", input)
    refuse_integers("round", input._data, "round_cpu")
    return RoundBackward1.run((input,), input._data, decimals)


@takes_out(dtype="same")
def frac(input):
    """The fractional part ``x - trunc(x)``, with x's sign."""
    check_tensor("frac", input)
    refuse_integers("frac", input._data, "frac_cpu")
    return FracBackward0.run((input,), input._data)


def isinf(input):
    """True where an element is +inf or -inf."""
    check_tensor("isinf", input)
    return wrap(np.isinf(input._data))


@takes_out(dtype="same")
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
FUNCTIONS = ("floor", "ceil", "round", "trunc", "frac", "isinf", "nan_to_num", "logical_and",
             "logical_or", "logical_xor", "bernoulli",)
METHODS = FUNCTIONS
