"""Predict, then run: the one mechanism of every prediction exercise of the course (chapter
0 introduces it with the accumulation widget; the later chapters use it).

A prediction teaches only if it is made before the answer is seen. A ``Prediction`` is
an exercise in two cells, with the experiment between them:

1. ``lock(answer)``: the learner writes what they expect (one letter of a multiple choice,
   a plain number, or a shape written as a tuple of sizes) and runs the cell. It is kept.
   Anything computed (a Tensor, a numpy value, a ``Size``, a function) is refused: the
   point is to think, not to run the code. A number written as a string (``"36"``) or a
   list (``[-16, -16]``) is refused for its type: write the number itself.
2. ``reveal()``: in the cell after the experiment. It measures the true answer (with its
   ``measure`` function, never from the learner's variables) and compares it with the
   locked prediction. From then on the answer counts as shown: a new ``lock`` is refused,
   the first prediction stays what was graded.

Each lecture's exercise module creates its ``Prediction`` objects next to the exercise they
belong to; ``reset_all()`` forgets every lock
(a fresh kernel does the same), for tests. In a notebook the lock is a cell tagged
``solution`` whose stub is ``...lock(None)``, the experiment follows, and the reveal is a
cell tagged ``check``; ``tests/test_predictions_course.py`` keeps that order in every
lecture.
"""

import math
import numbers

from .checks import CheckResult, keeps_random_state, no_answer

__all__ = ["Prediction", "locked_together", "reset_all"]

_ALL = []


class Prediction:
    """One predict-then-run exercise.

    ``title``: how messages name it ("Exercise 1").
    ``measure()``: returns ``(answer, shown)``: the right answer (a letter of ``choices``,
    or a number) and a short text of what was measured, for the reveal's message.
    ``choices``: ``{letter: statement}`` for a multiple choice; None for a number.
    ``tol``: relative tolerance for a number (default 1e-6).
    ``hint``: for a wrong prediction, one sentence that points where to look, without the
    answer; or a function ``hint(predicted, answer)`` that returns it (or None), to name
    the mistake that a particular wrong prediction shows.
    ``shape``: True when the prediction is a shape, a tuple of sizes written by hand.
    ``measure`` may draw random numbers: the default generator is put back afterwards.
    """

    def __init__(self, title, measure, choices=None, tol=1e-6, hint=None, shape=False):
        if choices and shape:
            raise ValueError("a Prediction is a multiple choice or a shape, not both")
        self.title, self.measure, self.choices = title, measure, choices
        self.tol, self.hint, self.shape = tol, hint, shape
        self.locked = None
        self.revealed = False
        _ALL.append(self)

    def reset(self):
        """Forget the lock and the reveal (what a restarted kernel does)."""
        self.locked = None
        self.revealed = False

    # ------------------------------------------------------------------ step 1: lock in

    def lock(self, prediction):
        """Keep ``prediction`` (a letter or a number the learner wrote) as the answer to be
        graded by ``reveal``. Refused once the answer has been shown."""
        if no_answer(prediction):
            return CheckResult(False, f"{self.title}: no prediction yet. {self._how()} in place "
                                      "of None and run the cell again.")
        value, problem = self._read(prediction)
        if problem:
            return CheckResult(False, f"{self.title}: {problem}")
        if self.revealed and self.locked != value:
            kept = (f"your locked prediction stays {self._quoted(self.locked)}"
                    if self.locked is not None else "no prediction counts now")
            return CheckResult(False, f"{self.title}: the answer has been shown already, so a "
                                      f"new prediction cannot count: {kept}. Predict first, "
                                      "then run; the next exercise is a fresh chance.")
        self.locked = value
        said = (f"({value}) {self.choices[value]}" if self.choices else self._show(value))
        return CheckResult(True, f"{self.title}: prediction locked in: {said}. Now run the "
                                 "next cells to see.")

    def _how(self):
        if self.choices:
            letters = ", ".join(f'"{c}"' for c in self.choices)
            return f"Write one letter ({letters}, as a string)"
        if self.shape:
            return "Write the shape you expect as a tuple of sizes, like (5, 6, 7)"
        return "Write the number you expect (a plain number, not code that computes it)"

    def _read(self, prediction):
        """(value, None) for a well-formed prediction, (None, why not) otherwise."""
        if self.choices:
            if not isinstance(prediction, str):
                return None, (f"{prediction!r} is not one of the choices. {self._how()}.")
            letter = prediction.strip().strip("()").lower()
            if letter not in self.choices:
                return None, f"{prediction!r} is not one of the choices. {self._how()}."
            return letter, None
        if self.shape:
            return self._read_shape(prediction)
        if type(prediction) in (str, list, tuple):
            return None, self._not_a_number(prediction)
        if isinstance(prediction, bool) or not isinstance(prediction, (int, float)) \
                or type(prediction).__module__ != "builtins":
            kind = type(prediction).__name__
            return None, (f"a prediction is a number you write down, not a {kind}: "
                          "computing it with the code would answer by running, not by "
                          f"predicting. {self._how()}.")
        if not math.isfinite(prediction):
            return None, f"{prediction!r} is not a finite number. {self._how()}."
        return float(prediction), None

    def _not_a_number(self, prediction):
        """Why a string, a list or a tuple is not a number prediction: its type, not a
        computed value (``"36"`` in quotes, ``[-16, -16]`` for a value repeated)."""
        kind = "string" if isinstance(prediction, str) else type(prediction).__name__
        if isinstance(prediction, str):
            try:
                written = float(prediction)
            except ValueError:
                written = None
            if written is not None and math.isfinite(written):
                return (f"{prediction!r} is a string: write the number itself, not a string "
                        f"({prediction.strip()} without the quotes). {self._how()}.")
        return (f"{prediction!r} is a {kind}: write the number itself, not a {kind}; this "
                f"prediction is one number. {self._how()}.")

    def _read_shape(self, prediction):
        """A shape written by hand: a plain tuple (or list) of plain ints."""
        if type(prediction) not in (tuple, list):
            kind = type(prediction).__name__
            computed = (" (a shape read from a tensor answers by running the code, not by "
                        "predicting)" if isinstance(prediction, tuple) else "")
            return None, f"a {kind} is not a shape written by hand{computed}. {self._how()}."
        if not all(type(n) is int and n >= 0 for n in prediction):
            return None, (f"{prediction!r}: each size is a whole number of 0 or more. "
                          f"{self._how()}.")
        return tuple(prediction), None

    def _quoted(self, value):
        """The prediction in a sentence: "(b)", "(36)", or a shape as it is written."""
        return self._show(value) if self.shape else f"({self._show(value)})"

    def _show(self, value):
        if self.choices:
            return str(value)
        if self.shape:
            return str(tuple(value))
        return f"{value:g}"

    # ------------------------------------------------------------------ step 2: reveal

    def reveal(self):
        """Measure the answer, compare it with the locked prediction; the answer counts as
        shown from now on."""
        answer, shown = keeps_random_state(self.measure)()
        self.revealed = True
        if self.locked is None:
            return CheckResult(False, f"{self.title}: no prediction was locked in before this "
                                      "experiment. Write yours in the cell above and run it "
                                      "first: a prediction made after seeing the answer "
                                      "teaches nothing.")
        if self._agrees(self.locked, answer):
            return CheckResult(True, f"{self.title}: your prediction "
                                     f"{self._quoted(self.locked)} was right ({shown}).")
        said = (f"({self.locked}) {self.choices[self.locked]}" if self.choices
                else self._show(self.locked))
        hint = self.hint(self.locked, answer) if callable(self.hint) else self.hint
        hint = f" {hint}" if hint else ""
        return CheckResult(False, f"{self.title}: you predicted {said}; the experiment says "
                                  f"otherwise ({shown}).{hint}")

    def _agrees(self, locked, answer):
        if self.choices:
            return locked == answer
        if self.shape:
            return locked == tuple(answer)
        if not isinstance(answer, numbers.Real):
            answer = float(answer)
        return math.isclose(locked, answer, rel_tol=self.tol, abs_tol=self.tol)


def reset_all():
    """Forget every prediction's lock and reveal (for tests)."""
    for prediction in _ALL:
        prediction.reset()


def locked_together(title, results):
    """The message of one cell that locks several predictions (``results``: each lock's
    CheckResult): "locked in" when all are, never "right" (nothing is compared before the
    reveal); otherwise what each refused lock said."""
    if all(results):
        return CheckResult(True, f"{title}: your {len(results)} predictions are locked in. Now "
                                 "run the next cells to see.")
    return CheckResult(False, "\n".join(r.message for r in results if not r))
