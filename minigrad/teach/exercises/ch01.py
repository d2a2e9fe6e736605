"""Checks for chapter 01 · Derivatives (``notebooks/01a_derivatives_by_hand.ipynb``, exercises
1 and 2, and ``notebooks/01b_exact_derivatives.ipynb``, a prediction, exercise 3 and the
build). 01b's prediction, ``tiny_step_prediction``, is a ``teach.predictions.Prediction``:
the forward difference's error at h = 1e-15, locked in before section 5 measures it.

Each function takes the learner's answer, works out the right one itself (with plain
float64 arithmetic or with minigrad's autograd) and returns a ``CheckResult``.

The build exercise (section 7) is a dual number, ``Dual``: forward mode, exact derivatives
that ride along with the values. ``Dual`` here is the one forward mode computes with
(``forward_mode_derivative``, ``forward_mode_gradient``, chapter 3's section 8): minigrad's
reference, or the learner's inside ``with teach.use(dual=Dual)``.
"""

import math
import re
import sys
from unittest import mock

import numpy as np

from ... import creation, dtypes
from ...autograd.functional import jvp
from ..build import Mismatch, Piece, attempt, register, same_dtype, where
from ..checks import MISSING, CheckResult, check, check_function, keeps_random_state
from ..predictions import Prediction

__all__ = ["check_numerical_derivative", "check_chain_rule", "check_best_step",
           "STEPS", "central_difference", "Dual", "forward_mode_derivative",
           "forward_mode_gradient", "tiny_step_prediction", "TINY_STEP_CHOICES"]

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


# ----------------------------------------------------------------- 01b: predict, then run

TINY_STEP_CHOICES = {
    "a": "tiny, below 1e-10: the smaller the step, the better",
    "b": "about 1e-8, as good as at h = 1e-8 and no better",
    "c": "worse than at h = 0.1 (where the error is about 0.2)",
}


def _tiny_step_answer():
    """The forward difference's error for x**3/3 - x at x = 2 (float64) at h = 1e-15, sorted
    into TINY_STEP_CHOICES against its error at h = 0.1."""
    def f(x):
        return x * x * x / 3 - x

    def error(h):
        return abs((f(2.0 + h) - f(2.0)) / h - 3.0)

    tiny, large = error(1e-15), error(0.1)
    letter = "c" if tiny > large else "a" if tiny < 1e-10 else "b"
    return letter, f"error at h = 1e-15: {tiny:.2f}; at h = 0.1: {large:.2f}"


tiny_step_prediction = Prediction(
    "Prediction, h = 1e-15", _tiny_step_answer, choices=TINY_STEP_CHOICES,
    hint="Hint: a float64 keeps about 16 digits. How many digits do f(2 + h) and f(2) share "
         "when h = 1e-15, and what is left of their difference?")
"""01b, section 5: the forward difference's error at h = 1e-15 in float64, a letter of
``TINY_STEP_CHOICES`` locked in before the cells that measure and draw it."""


# ----------------------------------------------------------------- exercise 3

SQRT_AT = 4.0  # exercise 3: sqrt at x = 4, forward difference, Python floats (float64)


def _sqrt_errors():
    """Error of the forward difference of sqrt at x = 4, in float64 (Python floats), for
    every h in STEPS. (Its best step is none of those 01b prints for f.)"""
    exact = 1 / (2 * math.sqrt(SQRT_AT))
    return [abs((math.sqrt(SQRT_AT + h) - math.sqrt(SQRT_AT)) / h - exact) for h in STEPS]


def best_step_answer():
    errors = _sqrt_errors()
    return STEPS[errors.index(min(errors))]


def check_best_step(best_h):
    """Exercise 3: the h in STEPS with the smallest float64 forward-difference error for
    sqrt at 4."""
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


# ---------------------------------------------------------------- build: dual numbers

class Dual:
    """A dual number: a value and its tangent (the derivative riding along with it).

    Every operation computes the new value and, by the rules of calculus, the new tangent:
    ``Dual(2.0, 1.0) * Dual(2.0, 1.0)`` is ``Dual(4.0, 4.0)``. Numbers mix in as constants
    (tangent 0). This is the reference of section 7's build exercise; forward mode looks up
    ``ch01.Dual`` when it runs, so ``teach.use(dual=...)`` swaps the learner's in.
    """

    def __init__(self, value, tangent=0.0):
        self.value = value
        self.tangent = tangent

    def __repr__(self):
        return f"Dual({self.value!r}, {self.tangent!r})"

    @staticmethod
    def _of(other):
        return other if isinstance(other, Dual) else Dual(other)

    def __add__(self, other):
        other = Dual._of(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    __radd__ = __add__

    def __sub__(self, other):
        other = Dual._of(other)
        return Dual(self.value - other.value, self.tangent - other.tangent)

    def __rsub__(self, other):
        return Dual._of(other) - self

    def __neg__(self):
        return Dual(-self.value, -self.tangent)

    def __mul__(self, other):
        other = Dual._of(other)
        return Dual(self.value * other.value,
                    self.tangent * other.value + self.value * other.tangent)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = Dual._of(other)
        return Dual(self.value / other.value,
                    (self.tangent * other.value - self.value * other.tangent)
                    / (other.value * other.value))

    def __rtruediv__(self, other):
        return Dual._of(other) / self

    def __pow__(self, p):
        return Dual(self.value ** p, p * self.value ** (p - 1) * self.tangent)

    def sin(self):
        return Dual(math.sin(self.value), math.cos(self.value) * self.tangent)

    def exp(self):
        e = math.exp(self.value)
        return Dual(e, e * self.tangent)

    def tanh(self):
        t = math.tanh(self.value)
        return Dual(t, (1 - t * t) * self.tangent)


_OWN = Dual  # minigrad's own, for the float32 comparison (forward mode may have yours in)


def forward_mode_derivative(f, x):
    """f'(x) by forward mode: one pass of ``f`` on ``Dual(x, 1.0)`` (the plugged-in Dual)."""
    return f(Dual(x, 1.0)).tangent


def forward_mode_gradient(f, values):
    """The gradient of ``f`` (a function of a list of n numbers, returning one number) by
    forward mode: n passes, pass i gives input i the tangent 1 and the others 0."""
    return [f([Dual(v, 1.0 if j == i else 0.0) for j, v in enumerate(values)]).tangent
            for i in range(len(values))]


def _plug_dual(dual):
    """Forward mode (``forward_mode_*`` here, chapter 3's section 8) computes with ``dual``."""
    return mock.patch.object(sys.modules[__name__], "Dual", dual)


# The battery: the constructor, then every operation on its own (its building blocks first:
# the power rule before the quotient that may use it), each also on an input whose tangent is
# not 1 (y), so that a rule that drops the incoming tangent is caught where it is written;
# then the chapter's functions and random compositions. A point is {name: (value, tangent)};
# every tangent is compared with what backward() gives.
_RULES = {
    "sum": "the sum rule: the tangent of u + v is the tangent of u plus the tangent of v.",
    "difference": "the tangent of u - v is the tangent of u minus the tangent of v.",
    "negation": "-u negates both the value and the tangent.",
    "product": "the product rule: when both factors move, each factor's move counts, scaled "
               "by the other factor's value.",
    "power": "the power rule, then the chain rule: p times the base to the power p - 1, "
             "times the tangent of the base.",
    "quotient": "the quotient rule (the tangent of u / v is (u'v - uv') / v**2), or u * v ** -1 "
                "with the product and power rules.",
    "sin": "the chain rule: the derivative of sin is cos, taken at the value, times the "
           "tangent that came in.",
    "exp": "the chain rule: the derivative of exp is exp, taken at the value, times the "
           "tangent that came in.",
    "tanh": "the chain rule: the derivative of tanh is 1 - tanh**2, taken at the value, times "
            "the tangent that came in.",
    "chain": "the chain rule: the derivative of the outer function, taken at the value, times "
             "the tangent that came in.",
}
# The method Python calls for an operator: the Dual on the left, and the reflected one for a
# number on the left of a Dual (3.0 - x calls x.__rsub__(3.0)).
_METHODS = {"+": ("__add__", "__radd__"), "-": ("__sub__", "__rsub__"),
            "*": ("__mul__", "__rmul__"), "/": ("__truediv__", "__rtruediv__"),
            "** or pow()": ("__pow__", "__rpow__")}
_XY = {"x": (2.0, 1.0), "y": (3.0, 0.5)}
_OPERATOR_CASES = [
    ("x + y", _XY, "sum"), ("x + 3.0", _XY, "sum"), ("3.0 + x", _XY, "sum"),
    ("-x", _XY, "negation"), ("-y", _XY, "negation"),
    ("x - y", _XY, "difference"), ("x - 3.0", _XY, "difference"),
    ("3.0 - x", _XY, "difference"),
    ("x * y", _XY, "product"), ("x * 3.0", _XY, "product"), ("3.0 * x", _XY, "product"),
    ("y * x", _XY, "product"),
    ("x ** 3", _XY, "power"), ("y ** 3", _XY, "power"), ("x ** 0.5", _XY, "power"),
    ("y ** -1", _XY, "power"), ("x ** -2", _XY, "power"),
    ("x / y", _XY, "quotient"), ("y / x", _XY, "quotient"), ("x / 4.0", _XY, "quotient"),
    ("4.0 / x", _XY, "quotient"), ("4.0 / y", _XY, "quotient"),
    ("x.sin()", _XY, "sin"), ("y.sin()", _XY, "sin"), ("x.exp()", _XY, "exp"),
    ("y.exp()", _XY, "exp"), ("x.tanh()", _XY, "tanh"), ("y.tanh()", _XY, "tanh"),
    ("(x * y).sin()", _XY, "chain"),
]
_CHAPTER_CASES = [
    ("x * x * x / 3 - x", {"x": (2.0, 1.0)}, "chain"),       # f, sections 1 to 3
    ("(x ** 2).sin()", {"x": (1.5, 1.0)}, "chain"),           # g, section 4
    ("((w * 2.0).tanh() - 1.0) ** 2", {"w": (0.5, 1.0)}, "chain"),  # exercise 2's loss
    ("1 / x", {"x": (0.25, 1.0)}, "quotient"),                # exercise 1's fourth function
]
# float32 numbers in, float32 numbers out: the arithmetic keeps the inputs' dtype (minigrad's
# own Dual does), so forward mode on float32 stays float32, as backward() does.
_FLOAT32_CASES = ["x + y", "3.0 - x", "-x", "x * y", "2.0 * x", "x ** 3", "x / y", "4.0 / x"]


def _backward_says(text, point):
    """The value of ``text`` at ``point`` and its derivative along the point's tangents,
    from minigrad's autograd (float64): sum over inputs of d text / d input * tangent."""
    scope = {name: creation.tensor(value, dtype=dtypes.float64, requires_grad=True)
             for name, (value, _) in point.items()}
    result = eval(text, {}, dict(scope))  # noqa: S307 - the battery's own expressions
    result.backward()
    tangent = sum(0.0 if t.grad is None else t.grad.item() * point[name][1]
                  for name, t in scope.items())
    return result.item(), tangent


def _show_point(point, text):
    """'x = 2.0, y = 3.0 (tangents 1.0 and 0.5)': the inputs that ``text`` uses."""
    point = {name: pair for name, pair in point.items() if re.search(rf"\b{name}\b", text)}
    values = ", ".join(f"{name} = {value!r}" for name, (value, _) in point.items())
    tangents = " and ".join(repr(tangent) for _, tangent in point.values())
    word = "tangent" if len(point) == 1 else "tangents"
    return f"{values} ({word} {tangents})"


def _as_float(number):
    try:
        return float(number)
    except (TypeError, ValueError):
        return None


def _reflected(text):
    """For '3.0 - x' (a number on the left of a Dual): ('-', '__rsub__'), else None."""
    found = re.fullmatch(r"(-?[0-9.]+) (\+|-|\*|/) (\w+)", text)
    if not found:
        return None
    symbol = found.group(2)
    return symbol, _METHODS[symbol][1], found.group(1), found.group(3)


def _reflected_hint(text):
    """' 3.0 - x calls x.__rsub__(3.0): there self is x and other is 3.0, so it computes
    3.0 - x, the number first.' for a number on the left, else ''."""
    reflected = _reflected(text)
    if reflected is None:
        return ""
    symbol, method, number, name = reflected
    order = (f" (there self is {name} and other is {number}, so it computes {number} {symbol} "
             f"{name}, the number first{'' if symbol in '+*' else ': the order matters'})")
    return f" Python runs {text} as {name}.{method}({number}){order}."


def _constant_hint(text):
    """' A number is a constant: ...' when ``text`` is an operator between a Dual and a
    number (x + 3.0, 4.0 / x), else ''."""
    if re.fullmatch(r"(\w+ [-+*/] -?[0-9.]+|-?[0-9.]+ [-+*/] \w+)", text):
        return " A number is a constant: its tangent is 0, on either side of the operator."
    return ""


def _why_it_raised(text, error, dual_name):
    """What to do about an error raised by one operation of the battery."""
    message = str(error)
    missing = re.search(r"unsupported operand type\(s\) for (.+?): '(\w+)' and '(\w+)'", message)
    if isinstance(error, TypeError) and missing:
        symbol, left, right = missing.groups()
        forward, reflected = _METHODS.get(symbol, ("the operator's method", "its reflected method"))
        strange = [kind for kind in (left, right) if kind not in ("float", "int", dual_name)]
        if strange:
            return (f" One of your operations returned a {strange[0]}, not a Dual: every "
                    "operation returns a new Dual(value, tangent).")
        if left in ("float", "int"):
            return (f" A number on the left of {symbol.split()[0]} makes Python call the Dual's "
                    f"reflected method: define {reflected}.{_reflected_hint(text)}")
        return (f" Python calls {left}.{forward} for {text}: define {forward}, and let it take "
                "a Dual or a number.")
    unary = re.search(r"bad operand type for unary (.)", message)
    if isinstance(error, TypeError) and unary:
        return " -x calls x.__neg__(): define __neg__."
    attribute = re.search(r"'(\w+)' object has no attribute '(\w+)'", message)
    if isinstance(error, AttributeError) and attribute:
        owner, name = attribute.groups()
        if owner in ("float", "int"):
            return (f" A number has no .{name}: turn a number into Dual(number) first (a "
                    "constant, tangent 0); then one formula serves Duals and numbers.")
        if name in ("sin", "exp", "tanh"):
            return f" Define the method {name}(self), as minigrad's tensors have it."
        if name in ("value", "tangent"):
            return " A Dual keeps its two numbers in the attributes .value and .tangent."
    return ""


def _name_of(dual):
    """The name Python's messages give the learner's Dual objects ('Dual')."""
    return getattr(dual, "__name__", "Dual") if isinstance(dual, type) else "Dual"


def _compare_dual(dual, text, point, rule):
    """Evaluate ``text`` on the learner's Duals and compare value and tangent with
    minigrad's backward(); raise Mismatch naming the function, the point and both numbers."""
    inputs = {name: dual(value, tangent) for name, (value, tangent) in point.items()}
    context = f"{text} at {_show_point(point, text)}"
    try:
        result = eval(_compiled(text), {}, dict(inputs))  # noqa: S307 - the battery's own
    except Exception as error:  # the learner's code: say which operation failed, and where
        raise Mismatch(f"{context} raised {type(error).__name__}: {error}"
                       f"{where(error)}.{_why_it_raised(text, error, _name_of(dual))}") from None
    if not (hasattr(result, "value") and hasattr(result, "tangent")):
        raise Mismatch(f"{context} returned {type(result).__name__} {result!r}, not a Dual: "
                       "every operation returns a new Dual(value, tangent).")
    for name, (value, tangent) in point.items():
        now = (inputs[name].value, inputs[name].tangent)
        if now != (value, tangent):
            raise Mismatch(f"{context} changed its input {name}: it is now "
                           f"Dual({now[0]!r}, {now[1]!r}). Leave the operands as they are "
                           "and return a new Dual.")
    want_value, want_tangent = _backward_says(text, point)
    got_value, got_tangent = _as_float(result.value), _as_float(result.tangent)
    if got_value is None or not math.isclose(got_value, want_value, rel_tol=1e-9,
                                             abs_tol=1e-12):
        raise Mismatch(f"the value of {context} is {result.value!r}; expected "
                       f"{round(want_value, 8)!r}. The value is computed as with plain numbers."
                       f"{_reflected_hint(text)}")
    if got_tangent is None or not math.isclose(got_tangent, want_tangent, rel_tol=1e-8,
                                               abs_tol=1e-10):
        raise Mismatch(f"the tangent of {context} is {result.tangent!r}; expected "
                       f"{round(want_tangent, 8)!r} (what backward() gives). Hint: {_RULES[rule]}"
                       f"{_constant_hint(text)}{_reflected_hint(text)}")


def _compiled(text):
    """The battery's expression, compiled under a name that ``where`` does not take for the
    learner's cell."""
    return compile(text, "the check's expression", "eval")


def _constructor(dual):
    """Dual(2.0, 0.5) keeps its two numbers as .value and .tangent; Dual(2.0) is a
    constant (tangent 0, the default)."""
    pair = attempt("Dual(2.0, 0.5)", lambda: dual(2.0, 0.5),
                   lambda error: ". Dual takes a value and a tangent: Dual(value, tangent=0.0).")
    for name, want in (("value", 2.0), ("tangent", 0.5)):
        got = getattr(pair, name, MISSING)
        if got is MISSING:
            raise Mismatch(f"Dual(2.0, 0.5) has no attribute .{name}: a Dual keeps its two "
                           "numbers in the attributes .value and .tangent.")
        if _as_float(got) != want:
            raise Mismatch(f"Dual(2.0, 0.5).{name} is {got!r}; expected {want!r}: the first "
                           "argument is the value, the second the tangent.")
    constant = attempt("Dual(2.0)", lambda: dual(2.0),
                       lambda error: ". A Dual made from a number alone is a constant: give "
                                     "the tangent the default 0.0.")
    if _as_float(constant.tangent) != 0.0:
        raise Mismatch(f"Dual(2.0) has tangent {constant.tangent!r}; a Dual made from a number "
                       "alone is a constant: its tangent defaults to 0.")


def _keeps_float32(dual):
    """On float32 numbers, value and tangent stay float32 as with minigrad's own Dual."""
    x32, t32 = np.float32(2.0), np.float32(1.0)
    y32, u32 = np.float32(3.0), np.float32(0.5)
    for text in _FLOAT32_CASES:
        mine = eval(_compiled(text), {}, {"x": dual(x32, t32), "y": dual(y32, u32)})  # noqa: S307
        own = eval(_compiled(text), {}, {"x": _OWN(x32, t32), "y": _OWN(y32, u32)})  # noqa: S307
        for name in ("value", "tangent"):
            try:
                same_dtype(f"the {name} of {text} on float32 numbers (x = np.float32(2.0), "
                           "tangent np.float32(1.0); y likewise)",
                           getattr(mine, name), getattr(own, name))
            except Mismatch as difference:
                raise Mismatch(f"{difference} Here: keep the numbers a Dual is given as they "
                               "are (no float(...), no np.float64(...), no np.asarray(..., "
                               "dtype=float)).") from None


def _random_function(rng, depth=3):
    """A random expression in x and y (text) that both Duals and minigrad tensors evaluate:
    every operation of the contract, numbers on either side, no division by ~0, no root of
    a negative number, no overflow."""
    if depth == 0 or (depth < 3 and rng.random() < 0.2):
        return str(rng.choice(["x", "y"]))
    a = _random_function(rng, depth - 1)
    b = _random_function(rng, depth - 1)
    c = repr(float(rng.choice([0.5, 1.5, 2.0, 3.0]) * rng.choice([1, -1])))
    shapes = [f"({a} + {b})", f"({a} - {b})", f"({a} * {b})", f"({a} / ({b} * {b} + 1.0))",
              f"({a} ** 2)", f"(({a} * {a} + 1.0) ** 0.5)", f"{a}.sin()", f"{a}.tanh()",
              f"{a}.tanh().exp()", f"(-{a})", f"({c} + {a})", f"({c} - {a})", f"({c} * {a})",
              f"({a} * {c})", f"({a} - {c})", f"({c} / ({a} * {a} + 1.0))", f"({a} / {c})"]
    return shapes[int(rng.integers(len(shapes)))]


@keeps_random_state
def _dual_battery(dual, n_random=200):
    """The operations one at a time, the chapter's functions, then random compositions of
    them in two inputs, each compared with minigrad's backward()."""
    _constructor(dual)
    for text, point, rule in _OPERATOR_CASES + _CHAPTER_CASES:
        _compare_dual(dual, text, point, rule)
    rng = np.random.default_rng(1)
    for _ in range(n_random):
        text = _random_function(rng)
        values = rng.uniform(-1.5, 1.5, size=2).round(2)
        tangents = rng.uniform(-1.0, 1.0, size=2).round(2)
        point = {"x": (float(values[0]), float(tangents[0])),
                 "y": (float(values[1]), float(tangents[1]))}
        _compare_dual(dual, text, point, "chain")
    _keeps_float32(dual)
    return (f"the {len(_OPERATOR_CASES)} operations, the chapter's {len(_CHAPTER_CASES)} "
            f"functions, {n_random} random compositions and float32 inputs")


register(Piece(name="dual", chapter="01", defines="Dual",
               summary="dual numbers: forward mode, exact derivatives riding along",
               plug=_plug_dual, battery=_dual_battery,
               own={"teach.exercises.ch01.Dual": Dual,
                    "teach.exercises.ch01.forward_mode_derivative": forward_mode_derivative,
                    "teach.exercises.ch01.forward_mode_gradient": forward_mode_gradient,
                    "autograd.functional.jvp": jvp}))
