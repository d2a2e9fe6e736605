"""Exercise checks (every chapter): compare a learner's answer with the right one.

A check never raises and never shows the solution: it returns a ``CheckResult`` that
prints "✓ ..." or "✗ ..." with a hint, so a notebook keeps running top to bottom while
the learner works. Chapter-specific exercises live in ``minigrad.teach.exercises``.
"""

import functools

import numpy as np

from ..random import default_generator
from .. import Tensor

__all__ = ["check", "check_function", "CheckResult", "MISSING", "no_answer", "one_number",
           "all_parts", "keeps_random_state", "graded", "describe", "as_floats", "not_a_function"]


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()  # what a student notebook's empty solution leaves behind


class CheckResult:
    def __init__(self, passed, message):
        self.passed = bool(passed)
        self.message = message

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return ("✓ " if self.passed else "✗ ") + self.message

    def _repr_html_(self):
        colour = "#00704A" if self.passed else "#B03A00"
        mark = "✓" if self.passed else "✗"
        text = self.message.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>")
        return f'<div style="color: {colour}; font-weight: 600">{mark} {text}</div>'


def _as_array(value):
    if isinstance(value, Tensor):
        return value.detach().numpy().astype(float) if value.is_floating_point() \
            else value.detach().numpy()
    return np.asarray(value, dtype=float)


def describe(value):
    """How a message shows a learner's value: a tensor as its repr without the graph
    (``tensor([1., 2.])``), anything else as its repr."""
    if isinstance(value, Tensor):
        return repr(value.detach())
    return repr(value)


def check(name, answer, expected, tol=1e-6, hint=None):
    """Is ``answer`` (a number, list, array or tensor) equal to ``expected`` within ``tol``?"""
    if answer is MISSING or answer is None or answer is Ellipsis:
        return CheckResult(False, f"{name}: no answer yet. Write your code in the cell above "
                                  "and run it, then run this check again.")
    if isinstance(answer, (str, bytes)):
        return CheckResult(False, f"{name}: your answer is the text {answer!r}; give the number "
                                  "itself (no quotes).")
    try:
        got, want = _as_array(answer), _as_array(expected)
    except (TypeError, ValueError):
        return CheckResult(False, f"{name}: expected a number or a tensor, got "
                                  f"{type(answer).__name__}.")
    if got.shape != want.shape:
        return CheckResult(False, f"{name}: your answer has shape {tuple(got.shape)}, the "
                                  f"answer has shape {tuple(want.shape)}."
                                  + (f" Hint: {hint}" if hint else ""))
    if not np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True):
        return CheckResult(False, f"{name}: {describe(answer)} is not right yet."
                                  + (f" Hint: {hint}" if hint else ""))
    return CheckResult(True, f"{name}: correct!")


def graded(result):
    """A check's result in an nbgrader test cell (``make nbgrader``): printed when it passed
    (printed, not returned: nbgrader reads a returned value as a partial score); an
    ``AssertionError`` with the check's message when it did not, which is how nbgrader takes
    a test cell's points away and what its feedback shows the learner."""
    if not result:
        raise AssertionError("✗ " + result.message)
    print(repr(result))


def check_function(name, function, reference, cases, tol=1e-6, hint=None):
    """Call ``function`` and ``reference`` on each case (a tuple of arguments) and compare."""
    if function is MISSING or function is None or not callable(function):
        return CheckResult(False, f"{name}: define the function in the cell above and run it.")
    for args in cases:
        args = args if isinstance(args, tuple) else (args,)
        try:
            got = function(*args)
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{name}{args}: raised {type(error).__name__}: {error}")
        want = reference(*args)
        result = check(f"{name}{args}", got, want, tol=tol, hint=hint)
        if not result:
            return result
    return CheckResult(True, f"{name}: correct on all {len(cases)} test inputs!")


# ------------------------------------------------------------------ helpers for exercise modules

def no_answer(answer):
    """True for what an unsolved exercise leaves behind: None, MISSING or ``...``."""
    return answer is None or answer is MISSING or answer is Ellipsis


def one_number(answer):
    """A one-element answer (number, list, array, tensor) as a float; anything else as is,
    so that ``check`` reports it (no answer yet, wrong shape, not a number)."""
    if no_answer(answer) or isinstance(answer, bool):
        return answer
    if isinstance(answer, Tensor):
        return answer.detach().item() if answer.numel() == 1 else answer
    try:
        array = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return answer
    return float(array.reshape(-1)[0]) if array.size == 1 else answer


def not_a_function(title, answer):
    """The failing result for an exercise that asks for a function and got none (no answer
    yet, or something not callable); None when ``answer`` is a function to check. A failed
    result is falsy, so test it with ``is not None``."""
    if no_answer(answer):
        return CheckResult(False, f"{title}: no answer yet. Define the function in the cell "
                                  "above and run it, then run this check again.")
    if not callable(answer):
        return CheckResult(False, f"{title}: expected a function (def {title}(...): ...), "
                                  f"got {type(answer).__name__}.")
    return None


def as_floats(answer):
    """Numbers given as a list, array or tensor, as a flat list of floats; None for no
    answer, text, a bool or anything that is not numbers."""
    if no_answer(answer) or isinstance(answer, (str, bytes, bool)):
        return None
    try:
        if hasattr(answer, "detach"):
            answer = answer.detach()
        if hasattr(answer, "numpy"):
            answer = answer.numpy()
        return [float(v) for v in np.asarray(answer, dtype=float).reshape(-1)]
    except (TypeError, ValueError):
        return None


def all_parts(title, results):
    """One result for an exercise with several answers: passed when every part passed."""
    passed = all(results)
    lines = [("  ✓ " if r else "  ✗ ") + r.message for r in results]
    summary = ("all parts right!" if passed
               else f"{sum(map(bool, results))} of {len(results)} parts right so far.")
    return CheckResult(passed, f"{title}: {summary}\n" + "\n".join(lines))


def keeps_random_state(function):
    """For checks that build models (which draws random numbers): put the default generator
    back afterwards, so running a check does not change what later cells draw."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        state = default_generator.get_state()
        try:
            return function(*args, **kwargs)
        finally:
            default_generator.set_state(state)
    return wrapper
