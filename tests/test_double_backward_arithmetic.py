"""Second derivatives through the arithmetic and selection ops (minigrad/ops/arithmetic.py and
selection.py) match PyTorch's: division, powers, remainders, atan2, lerp, addcmul/addcdiv,
maximum/minimum, clamp, masked_fill and where, at ordinary points and where the formulas
branch (ties, bounds, zeros), inf and nan included."""

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
C = rng.standard_normal((3, 4))
ROW = rng.standard_normal((1, 4))
COL = rng.standard_normal((3, 1))
POS = rng.uniform(0.5, 2.0, (3, 4))
POS_ROW = rng.uniform(0.5, 2.0, (1, 4))
SCALAR = np.array(0.7)
MASK = rng.random((3, 4)) < 0.5
MASK_ROW = np.array([[True, False, True, False]])

# ties, bounds and zeros: where the formulas branch
TIED_A = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, -1.0, 2.0]])
TIED_B = np.array([[1.0, -1.0, 0.5, 2.0], [0.0, 1.0, -1.0, 4.0]])
AT_BOUNDS = np.array([-0.5, -0.7, 0.0, 0.5, 0.9, -0.5000001, 0.25])
WITH_ZEROS = np.array([[0.0, 1.5, -2.0, 0.0], [0.7, 0.0, 3.0, -0.3]])
EXPONENTS = np.array([[0.0, 2.0, 3.0, -1.0], [1.0, 0.0, -2.0, 0.5]])
INT_EXPONENTS = np.array([[0.0, 2.0, 3.0, -1.0], [1.0, 0.0, -2.0, 4.0], [2.0, 1.0, 3.0, 5.0]])


# inf * 0 and inf - inf in the harness's products and sums: numpy warns, PyTorch is silent
quiet_about_nan = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def check(torch, fn, *values, **kwargs):
    assert_second_derivatives_match(torch, fn, *values, **kwargs)


def _reciprocal_is_op():
    """2 / x is reciprocal(x) * 2 in PyTorch and minigrad: twice differentiable once
    ReciprocalBackward0 is an Op."""
    x = mg.tensor([1.0], requires_grad=True)
    return (2 / x).grad_fn.next_functions[0][0].twice_differentiable


# ------------------------------------------------------------------ division

@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: a / b, (A, POS)),
    (lambda lib, a, b: a / b * a, (A, B)),
    (lambda lib, a, r: a / r * r, (A, ROW)),  # b broadcast along rows
    (lambda lib, r, a: r / a * a, (ROW, B)),  # a broadcast
    (lambda lib, c, r: (c / r) * (r / c), (COL, ROW)),  # both broadcast
    (lambda lib, a, s: a / s * s, (A, SCALAR)),
    (lambda lib, a: a / 2.5 * a, (A,)),
    (lambda lib, a: (a * a) / -3, (A,)),
    (lambda lib, s, a: s / a * a, (SCALAR, POS)),  # a 0-dim numerator
])
def test_div(torch, fn, values):
    check(torch, fn, *values)


def test_div_with_one_operand_requiring_grad(torch):
    check(torch, lambda lib, a, b: a / b * a, A, B, wanted=[0])
    check(torch, lambda lib, a, b: a / b * a, A, B, wanted=[1])
    check(torch, lambda lib, s, a: s / a, SCALAR, POS, wanted=[1])  # a number-like numerator


@quiet_about_nan
def test_div_by_zero_gives_the_same_infs_and_nans(torch):
    check(torch, lambda lib, a, b: a / b * a, A[:2], WITH_ZEROS)


@pytest.mark.skipif(not _reciprocal_is_op(), reason="2 / x goes through ReciprocalBackward0, "
                    "not yet an Op: create_graph refuses it")
def test_number_divided_by_tensor(torch):
    check(torch, lambda lib, a: 2.5 / a * a, POS)
    check(torch, lambda lib, a: -1 / a, A)


def test_rsub(torch):
    check(torch, lambda lib, a: (2.0 - a) * a, A)
    check(torch, lambda lib, a, b: (1 - a * b) * (3 - b), A, B)


# ------------------------------------------------------------------ powers

@pytest.mark.parametrize("exponent", [2, 3, -1, 0.5, -0.5, 1.5, 0, 1, 2.0, -2])
def test_tensor_to_a_number(torch, exponent):
    values = POS if exponent not in (2, 3, -1, 0, 1, 2.0, -2) else A
    check(torch, lambda lib, a: a ** exponent * a, values)
    check(torch, lambda lib, a: (a ** exponent).sum(), values)


@quiet_about_nan
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, 0, 1, 1.5])
def test_zero_to_a_number(torch, exponent):
    # 0 ** 0.5 has slope inf, 0 ** -1 is inf: the infs and nans must be PyTorch's
    check(torch, lambda lib, a: a ** exponent * a, np.abs(WITH_ZEROS))
    check(torch, lambda lib, a: (a ** exponent).sum(), np.abs(WITH_ZEROS))


def test_square_of_negative_numbers(torch):
    check(torch, lambda lib, a, b: (a * b) ** 2, A, B)
    check(torch, lambda lib, a: lib.square(a) * a, A)


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: a ** b, (POS, A)),
    (lambda lib, a, b: a ** b * a * b, (POS, B)),
    (lambda lib, a, r: a ** r, (POS, ROW)),  # the exponent broadcast
    (lambda lib, r, b: r ** b, (POS_ROW, B)),  # the base broadcast
    (lambda lib, a, b: a ** b, (A, INT_EXPONENTS)),  # negative bases
])
def test_tensor_to_a_tensor(torch, fn, values):
    check(torch, fn, *values)


def test_tensor_to_a_tensor_with_one_requiring_grad(torch):
    check(torch, lambda lib, a, b: a ** b * a, POS, B, wanted=[0])
    check(torch, lambda lib, a, b: a ** b * b, POS, B, wanted=[1])


def test_zero_base_and_zero_exponent(torch):
    # 0 ** 0 = 1; the derivatives PyTorch defines there (0 where b == 0; in b, 0 where
    # a == 0 and b >= 0) and the nans of the second derivatives it does not
    check(torch, lambda lib, a, b: a ** b, np.abs(WITH_ZEROS), EXPONENTS)
    check(torch, lambda lib, a, b: a ** b * b, np.abs(WITH_ZEROS), EXPONENTS)
    check(torch, lambda lib, a, b: a ** b, np.abs(WITH_ZEROS), EXPONENTS, wanted=[1])


@quiet_about_nan
@pytest.mark.parametrize("base", [2, 2.5, 0.5, 0, 0.0, 1, -2.0])
def test_number_to_a_tensor(torch, base):
    check(torch, lambda lib, b: base ** b * b, A)
    check(torch, lambda lib, b: (base ** b).sum(), EXPONENTS)


# ------------------------------------------------------------------ remainders

@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: (a % b) * b, (A * 3, POS)),
    (lambda lib, a, b: (a % b) * a * b, (A * 3, B)),  # negative divisors
    (lambda lib, a, r: (a % r) * r, (A * 3, POS_ROW)),
    (lambda lib, a: (a % 1.5) * a, (A * 3,)),
    (lambda lib, a: (a % -0.7) * a, (A * 3,)),
    (lambda lib, a, b: lib.fmod(a, b) * b, (A * 3, POS)),
    (lambda lib, a, b: lib.fmod(a, b) * a * b, (A * 3, B)),
    (lambda lib, a, r: lib.fmod(a, r) * r, (A * 3, POS_ROW)),
    (lambda lib, a: lib.fmod(a, 1.5) * a, (A * 3,)),
])
def test_remainder_and_fmod(torch, fn, values):
    check(torch, fn, *values)


def test_remainder_gradient_of_the_divisor_has_a_graph_with_zero_slope(torch):
    # -grad * floor(a / b): PyTorch records the rounded division, of derivative 0
    check(torch, lambda lib, a, b: a % b, A * 3, POS)
    check(torch, lambda lib, a, b: lib.fmod(a, b), A * 3, POS)
    x = mg.tensor(A * 3, requires_grad=True)
    y = mg.tensor(POS, requires_grad=True)
    (gy,) = mg.autograd.grad((x % y).sum(), y, create_graph=True)
    assert gy.requires_grad and gy.grad_fn.name() == "MulBackward0"
    assert [g.tolist() for g in mg.autograd.grad(gy.sum(), (x, y))] == [
        np.zeros_like(A).tolist(), np.zeros_like(A).tolist()]


@pytest.mark.parametrize("fn", [lambda a, b: a // b, lambda a, b: a // 2,
                                lambda a, b: 2 // a, lambda a, b: 2 % a])
def test_ops_without_derivative_refuse_create_graph_as_pytorch(torch, fn):
    for lib in (torch, mg):
        x = lib.tensor(POS, requires_grad=True)
        y = lib.tensor(B, requires_grad=True)
        out = fn(x, y).sum()
        with pytest.raises(RuntimeError, match="derivative for aten::"):
            lib.autograd.grad(out, x, create_graph=True)


# ------------------------------------------------------------------ two-argument functions

@pytest.mark.parametrize("fn, values", [
    (lambda lib, y, x: lib.atan2(y, x), (A, B)),
    (lambda lib, y, x: lib.atan2(y, x) * y * x, (A, B)),
    (lambda lib, y, r: lib.atan2(y, r) * r, (A, ROW)),
    (lambda lib, c, x: lib.atan2(c, x) * c, (COL, B)),
    (lambda lib, y, x: lib.atan2(y, x) * (y + x), (TIED_A - TIED_B, TIED_B * 0)),  # origin
])
def test_atan2(torch, fn, values):
    check(torch, fn, *values)


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: lib.lerp(a, b, 0.3) * a, (A, B)),
    (lambda lib, a, b: lib.lerp(a, b, 0.7) * b * a, (A, B)),  # computed from the end
    (lambda lib, a, b: lib.lerp(a, b, 1.0) * b, (A, B)),
    (lambda lib, a, r: lib.lerp(a, r, -0.5) * r, (A, ROW)),
    (lambda lib, a, b, w: lib.lerp(a, b, w) * w, (A, B, C)),
    (lambda lib, a, b, w: lib.lerp(a, b, w) * a * w, (A, B, ROW)),  # the weight broadcast
    (lambda lib, a, b, w: lib.lerp(a, b, w) * b, (A, COL, SCALAR)),
])
def test_lerp(torch, fn, values):
    check(torch, fn, *values)


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b, c: a.addcmul(b, c) * b, (A, B, C)),
    (lambda lib, a, b, c: a.addcmul(b, c, value=0.5) * a * c, (A, B, C)),
    (lambda lib, a, r, c: a.addcmul(r, c, value=-2) * r * c, (A, ROW, COL)),
    (lambda lib, a, b, c: a.addcdiv(b, c) * b, (A, B, POS)),
    (lambda lib, a, b, c: a.addcdiv(b, c, value=0.5) * a * c, (A, B, C)),
    (lambda lib, r, b, c: r.addcdiv(b, c, value=-2) * b * c, (ROW, B, COL)),
])
def test_addcmul_and_addcdiv(torch, fn, values):
    check(torch, fn, *values)


def test_addcdiv_with_one_operand_requiring_grad(torch):
    check(torch, lambda lib, a, b, c: a.addcdiv(b, c) * c, A, B, POS, wanted=[2])
    check(torch, lambda lib, a, b, c: a.addcmul(b, c) * b, A, B, C, wanted=[1])


# ------------------------------------------------------------------ maximum and minimum

@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("fn, values", [
    (lambda lib, f, a, b: f(a, b) * a * b, (A, B)),
    (lambda lib, f, a, b: f(a, b) * a * b, (TIED_A, TIED_B)),  # ties share the gradient
    (lambda lib, f, a, b: f(a * a, b) ** 2, (TIED_A, TIED_B)),
    (lambda lib, f, a, r: f(a, r) * r, (A, ROW)),
    (lambda lib, f, c, r: f(c, r) * c * r, (COL, ROW)),
])
def test_maximum_and_minimum(torch, name, fn, values):
    check(torch, lambda lib, *ts: fn(lib, getattr(lib, name), *ts), *values)


def test_maximum_with_nan(torch):
    a = TIED_A.copy()
    a[0, 1] = np.nan
    check(torch, lambda lib, x, y: lib.maximum(x, y) * x * y, a, TIED_B)


# ------------------------------------------------------------------ clamp

@pytest.mark.parametrize("fn", [
    lambda lib, a: a.clamp(-0.5, 0.5) * a,
    lambda lib, a: a.clamp(min=-0.5) ** 2,
    lambda lib, a: a.clamp(max=0.5) * a,
    lambda lib, a: a.clamp_min(0.25) * a,
    lambda lib, a: a.clamp_max(0.25) * a,
    lambda lib, a: lib.clamp(a * a, 0.0, 0.25) * a,
    lambda lib, a: a.clamp(0.5, -0.5) * a,  # crossed bounds: everything is max
])
def test_clamp_by_numbers(torch, fn):
    check(torch, fn, AT_BOUNDS)  # values at both bounds, inside and outside


LOW = np.array([-0.5, -1.0, 0.0, 0.6, 1.0, -0.5, 0.3])
HIGH = np.array([0.5, -0.7, 0.5, 0.5, 0.9, 0.0, 0.2])  # crossed where LOW > HIGH


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, lo, hi: a.clamp(lo, hi) * a * lo * hi, (AT_BOUNDS, LOW, HIGH)),
    (lambda lib, a, lo: a.clamp(min=lo) * a * lo, (AT_BOUNDS, LOW)),
    (lambda lib, a, hi: a.clamp(max=hi) * a * hi, (AT_BOUNDS, HIGH)),
    (lambda lib, a, lo, hi: a.clamp(lo, hi) ** 2, (np.tile(AT_BOUNDS, (3, 1)), LOW, HIGH)),
    (lambda lib, a, lo, hi: a.clamp(lo, hi) * lo, (A, COL * 0.2 - 0.3, ROW * 0.2 + 0.3)),
])
def test_clamp_by_tensors(torch, fn, values):
    check(torch, fn, *values)


def test_clamp_by_tensors_with_one_requiring_grad(torch):
    check(torch, lambda lib, a, lo, hi: a.clamp(lo, hi) * lo, AT_BOUNDS, LOW, HIGH, wanted=[1])
    check(torch, lambda lib, a, lo, hi: a.clamp(lo, hi) * hi, AT_BOUNDS, LOW, HIGH, wanted=[2])


# ------------------------------------------------------------------ masked_fill and where

@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: (a * b).masked_fill(lib.tensor(MASK), 0.5) * a, (A, B)),
    (lambda lib, a: (a * a).masked_fill(lib.tensor(MASK_ROW), -1.0), (A,)),  # mask broadcast
    (lambda lib, r: (r * r).masked_fill(lib.tensor(MASK), 2.0) * r, (ROW,)),  # input broadcast
    (lambda lib, a, v: a.masked_fill(lib.tensor(MASK), v) * a * v, (A, SCALAR)),
    (lambda lib, a, v: (a * v).masked_fill(lib.tensor(MASK_ROW), v * v), (A, SCALAR)),
])
def test_masked_fill(torch, fn, values):
    check(torch, fn, *values)


def test_masked_fill_with_only_the_value_requiring_grad(torch):
    check(torch, lambda lib, a, v: a.masked_fill(lib.tensor(MASK), v * v) * v, A, SCALAR,
          wanted=[1])


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: lib.where(lib.tensor(MASK), a, b) * a * b, (A, B)),
    (lambda lib, a, r: lib.where(lib.tensor(MASK), a * r, r) * r, (A, ROW)),
    (lambda lib, c, r: lib.where(lib.tensor(MASK), c, r) * c * r, (COL, ROW)),
    (lambda lib, a, b: lib.where(lib.tensor(MASK_ROW), a, b * b), (A, B)),
    (lambda lib, a: lib.where(lib.tensor(MASK), a * a, 0.0), (A,)),
    (lambda lib, a: lib.where(lib.tensor(MASK), 1.5, a * a) * a, (A,)),
    (lambda lib, a, b: lib.where(a > b, a, b) ** 2, (TIED_A, TIED_B)),
])
def test_where(torch, fn, values):
    check(torch, fn, *values)
