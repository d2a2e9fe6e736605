"""Checks for chapter 01 · Derivatives (``notebooks/01_derivatives.ipynb``).

Each function takes the learner's answer, works out the right one itself (with plain
float64 arithmetic or with minigrad's autograd) and returns a ``CheckResult``.
"""

import math

from ... import creation, dtypes
from ..checks import MISSING, CheckResult, check, check_function

__all__ = ["check_numerical_derivative", "check_chain_rule", "check_best_step",
           "STEPS", "central_difference"]

# The step sizes of the chapter and of exercise 3: h = 1e-1, 1e-2, ..., 1e-15.
STEPS = [10.0 ** -k for k in range(1, 16)]


class _Named:
    """A function of one float with a readable repr (``x**3/3 - x``), so that a failed
    check names the test function instead of printing ``<function <lambda> at 0x...>``."""

    def __init__(self, text, function):
        self.text, self.function = text, function

    def __call__(self, x):
        return self.function(x)

    def __repr__(self):
        return self.text


def central_difference(f, x, h):
    """(f(x + h) - f(x - h)) / 2h: the reference for exercise 1."""
    return (f(x + h) - f(x - h)) / (2 * h)


# ----------------------------------------------------------------- exercise 1

_CASES = [
    (_Named("x**3/3 - x", lambda x: x * x * x / 3 - x), 2.0, 1e-3),
    (_Named("sin(x)", math.sin), 1.0, 1e-2),
    (_Named("exp(x)", math.exp), 0.5, 1e-3),
    (_Named("1/x", lambda x: 1 / x), 0.25, 1e-3),
]


def check_numerical_derivative(numerical_derivative):
    """Exercise 1: ``numerical_derivative(f, x, h)`` must be the central difference."""
    return check_function(
        "numerical_derivative", numerical_derivative, central_difference, _CASES, tol=1e-6,
        hint="look at f on both sides of x, not only to the right of it, and divide by "
             "the distance between the two points you used.")


# ----------------------------------------------------------------- exercise 2

# loss(w) = (tanh(w * x) - y) ** 2 with these numbers.
W, X, Y = 0.5, 2.0, 1.0


def _chain_rule_parts():
    """The three local derivatives of the exercise (for recognising common slips)."""
    z = W * X
    prediction = math.tanh(z)
    return 2 * (prediction - Y), 1 - prediction ** 2, X


def chain_rule_answer():
    """d loss / d w at w = W, computed by minigrad's autograd in float64."""
    w = creation.tensor(W, dtype=dtypes.float64, requires_grad=True)
    loss = ((w * X).tanh() - Y) ** 2
    loss.backward()
    return w.grad.item()


def check_chain_rule(dloss_dw):
    """Exercise 2: the derivative of (tanh(w·x) − y)² with respect to w."""
    name = "dloss_dw"
    expected = chain_rule_answer()
    result = check(name, dloss_dw, expected, tol=1e-6,
                   hint="write the three links (loss of prediction, prediction of z, z of w), "
                        "take the derivative of each at this point, and multiply them.")
    if result or dloss_dw is None or dloss_dw is MISSING:
        return result
    try:
        got = float(dloss_dw)
    except (TypeError, ValueError):
        return result
    outer, middle, inner = _chain_rule_parts()
    if math.isclose(got, -expected, rel_tol=1e-6):
        hint = "the size is right but the sign is not: is the prediction above or below y?"
    elif any(math.isclose(got, value, rel_tol=1e-6)
             for value in (outer * middle, outer * inner, middle * inner)):
        hint = "close: one of the three links is missing from your product."
    else:
        return result
    return CheckResult(False, f"{name}: {got!r} is not right yet. Hint: {hint}")


# ----------------------------------------------------------------- exercise 3

def _sqrt_errors():
    """Error of the central difference of sqrt at x = 2 for every h in STEPS."""
    exact = 1 / (2 * math.sqrt(2.0))
    return [abs(central_difference(math.sqrt, 2.0, h) - exact) for h in STEPS]


def best_step_answer():
    errors = _sqrt_errors()
    return STEPS[errors.index(min(errors))]


def check_best_step(best_h):
    """Exercise 3: the h in STEPS with the smallest central-difference error for sqrt at 2."""
    name = "best_h"
    if best_h is None or best_h is MISSING or best_h is Ellipsis:
        return check(name, best_h, 0.0)  # the standard "no answer yet" message
    try:
        if isinstance(best_h, (str, bytes)):
            raise TypeError
        h = float(best_h)
    except (TypeError, ValueError):
        return CheckResult(False, f"{name}: expected a number such as 1e-3, got "
                                  f"{type(best_h).__name__}.")
    if not h > 0:
        return CheckResult(False, f"{name}: a step size is a positive number, got {best_h!r}.")
    k = -math.log10(h)
    if abs(k - round(k)) > 1e-6 or not 1 <= round(k) <= len(STEPS):
        return CheckResult(False, f"{name}: {best_h!r} is not one of the steps 1e-1, 1e-2, ..., "
                                  "1e-15. Pick one of those.")
    errors = _sqrt_errors()
    best = errors.index(min(errors)) + 1
    if round(k) == best:
        return CheckResult(True, f"{name}: correct! With h = 1e-{best} the error is "
                                 f"{min(errors):.1e}.")
    mine = errors[round(k) - 1]
    direction = ("at this h the rounding error already dominates" if round(k) > best else
                 "at this h the truncation error still dominates")
    return CheckResult(False, f"{name}: with h = 1e-{round(k)} the error is {mine:.1e}, which "
                              f"is not the smallest. Hint: {direction}. Compute the error for "
                              "every h in the list and compare.")
