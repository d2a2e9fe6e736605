"""Chapter 1's exercise checks accept the right answers and reject wrong ones, never raising."""

import math

import numpy as np

import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch01


# ---------------------------------------------------------------- exercise 1: central difference

def central(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def central_written_differently(f, x, h=1e-5):
    return (f(x + h) / h - f(x - h) / h) / 2


def test_numerical_derivative_accepts_the_central_difference():
    for answer in (central, central_written_differently):
        result = ch01.check_numerical_derivative(answer)
        assert result, result
        assert repr(result).startswith("✓")


@pytest.mark.parametrize("answer", [
    lambda f, x, h=1e-5: (f(x + h) - f(x)) / h,           # forward difference
    lambda f, x, h=1e-5: (f(x) - f(x - h)) / h,           # backward difference
    lambda f, x, h=1e-5: (f(x + h) - f(x - h)) / h,       # forgot the 2
    lambda f, x, h=1e-5: (f(x + h) - f(x - h)) / 2 * h,   # precedence slip
])
def test_numerical_derivative_rejects_other_formulas(answer):
    result = ch01.check_numerical_derivative(answer)
    assert not result
    text = repr(result)
    assert text.startswith("✗") and "Hint:" in text
    assert "0x" not in text  # the test function is named, not shown as <function ... at 0x...>


def test_numerical_derivative_reports_errors_and_missing_answers():
    def broken(f, x, h=1e-5):
        raise ValueError("oops")
    assert "raised ValueError: oops" in repr(ch01.check_numerical_derivative(broken))
    for answer in (None, MISSING, 3.0):
        result = ch01.check_numerical_derivative(answer)
        assert not result and "define the function" in repr(result)


def test_reference_is_the_central_difference():
    assert ch01.central_difference(math.sin, 1.0, 1e-5) == pytest.approx(math.cos(1.0), abs=1e-9)
    assert ch01.central_difference(lambda x: x * x, 3.0, 0.5) == 6.0


# ---------------------------------------------------------------- exercise 2: chain rule

def by_hand():
    w, x, y = 0.5, 2.0, 1.0
    prediction = math.tanh(w * x)
    return 2 * (prediction - y) * (1 - prediction ** 2) * x


def test_chain_rule_answer_matches_hand_and_numerical_derivatives():
    expected = ch01.chain_rule_answer()
    assert expected == pytest.approx(by_hand(), rel=1e-12)

    def loss(w):
        return (math.tanh(w * 2.0) - 1.0) ** 2
    assert expected == pytest.approx(ch01.central_difference(loss, 0.5, 1e-5), rel=1e-8)


def test_chain_rule_accepts_floats_and_tensors():
    assert ch01.check_chain_rule(by_hand())
    w = mg.tensor(0.5, requires_grad=True)  # float32 autograd is close enough
    ((w * 2.0).tanh() - 1.0).pow(2).backward()
    assert ch01.check_chain_rule(w.grad)


def test_chain_rule_recognises_a_wrong_sign():
    result = ch01.check_chain_rule(-by_hand())
    assert not result and "sign" in repr(result)


@pytest.mark.parametrize("drop", [0, 1, 2])
def test_chain_rule_recognises_a_missing_link(drop):
    prediction = math.tanh(1.0)
    links = [2 * (prediction - 1.0), 1 - prediction ** 2, 2.0]
    answer = math.prod(v for i, v in enumerate(links) if i != drop)
    result = ch01.check_chain_rule(answer)
    assert not result and "missing" in repr(result)


@pytest.mark.parametrize("answer", [
    2 * (math.tanh(0.5) - 1.0) * (1 - math.tanh(0.5) ** 2) * 2.0,  # tanh taken at w, not w·x
    0.0, "0.4", [1.0, 2.0],
])
def test_chain_rule_rejects_other_answers(answer):
    result = ch01.check_chain_rule(answer)
    assert not result and repr(result).startswith("✗")
    assert f"{ch01.chain_rule_answer():.4f}" not in repr(result)  # never shows the answer


def test_chain_rule_missing_answer():
    for answer in (None, MISSING):
        result = ch01.check_chain_rule(answer)
        assert not result and "no answer yet" in repr(result)


# ---------------------------------------------------------------- exercise 3: best step

def test_best_step_is_the_argmin_of_the_errors():
    exact = 1 / (2 * math.sqrt(4.0))
    errors = {k: abs((math.sqrt(4.0 + 10.0 ** -k) - 2.0) / 10.0 ** -k - exact)
              for k in range(1, 16)}
    best = min(errors, key=errors.get)
    assert ch01.best_step_answer() == 10.0 ** -best
    # a clear winner: the next best step is at least twice as bad
    assert sorted(errors.values())[1] > 2 * errors[best]
    # none of the best steps 01b prints for f (forward and central, float64 and float32:
    # 1e-8, 1e-5, 1e-3, 1e-2), nor sqrt(eps) = 1e-8: copying one of them fails
    for shown in (8, 5, 3, 2):
        assert best != shown and not ch01.check_best_step(10.0 ** -shown)


def test_best_step_differs_from_the_steps_the_notebook_prints():
    """01b prints each curve's best step for f(x) = x³/3 - x at 2 (section 5)."""
    def f(x):
        return x * x * x / 3 - x
    steps = [10.0 ** -k for k in range(1, 16)]
    forward = [abs((f(2.0 + h) - f(2.0)) / h - 3.0) for h in steps]
    central = [abs((f(2.0 + h) - f(2.0 - h)) / (2 * h) - 3.0) for h in steps]
    x32 = np.float32(2.0)
    forward32 = [abs(float((f(x32 + np.float32(h)) - f(x32)) / np.float32(h)) - 3.0)
                 for h in steps]
    shown = {steps[errors.index(min(errors))] for errors in (forward, central, forward32)}
    assert ch01.best_step_answer() not in shown


def test_best_step_accepts_the_answer_however_written():
    k = round(-math.log10(ch01.best_step_answer()))
    for answer in (10.0 ** -k, 10 ** -k, float(f"1e-{k}"), mg.tensor(10.0 ** -k, dtype=mg.float64)):
        result = ch01.check_best_step(answer)
        assert result, result


def test_best_step_rejects_other_steps_with_a_direction():
    k = round(-math.log10(ch01.best_step_answer()))
    smaller = ch01.check_best_step(10.0 ** -(k + 3))
    larger = ch01.check_best_step(10.0 ** -max(k - 3, 1))
    assert not smaller and "rounding" in repr(smaller)
    assert not larger and "truncation" in repr(larger)
    assert f"1e-{k}" not in repr(smaller) + repr(larger)  # the hint does not name the answer


@pytest.mark.parametrize("answer", [3e-5, 1.0, 1e-16, 0.0, -1e-5, "1e-5", [1e-5]])
def test_best_step_rejects_non_steps(answer):
    result = ch01.check_best_step(answer)
    assert not result and repr(result).startswith("✗")


def test_best_step_missing_answer():
    for answer in (None, MISSING):
        result = ch01.check_best_step(answer)
        assert not result and "no answer yet" in repr(result)


# ----------------------------------------------------------------- 01b's prediction: h = 1e-15

@pytest.fixture
def tiny_step():
    ch01.tiny_step_prediction.reset()
    yield ch01.tiny_step_prediction
    ch01.tiny_step_prediction.reset()


def measured_tiny_step_letter():
    """The error at h = 1e-15 against h = 0.1, computed with numpy float64 here."""
    def error(h):
        x = np.float64(2.0)
        f = lambda v: v ** 3 / 3 - v  # noqa: E731
        return abs((f(x + h) - f(x)) / h - 3)
    return "c" if error(1e-15) > error(0.1) else "a" if error(1e-15) < 1e-10 else "b"


def test_tiny_step_prediction_measures_the_error(tiny_step):
    assert tiny_step.measure()[0] == measured_tiny_step_letter()
    assert tiny_step.lock(measured_tiny_step_letter())
    assert tiny_step.reveal()


def test_tiny_step_prediction_wrong_letters_get_the_hint_not_the_answer(tiny_step):
    answer = measured_tiny_step_letter()
    for wrong in set(ch01.TINY_STEP_CHOICES) - {answer}:
        tiny_step.reset()
        assert tiny_step.lock(wrong)
        result = tiny_step.reveal()
        assert not result and "16 digits" in result.message
        assert f"({answer})" not in result.message


def test_tiny_step_prediction_refuses_a_number(tiny_step):
    assert not tiny_step.lock(0.34)
    assert tiny_step.locked is None
