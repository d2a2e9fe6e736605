"""The build track (chapters 1 to 11): the pieces of minigrad that learners write themselves.

Each chapter has one build exercise (its cells tagged ``build``): the learner writes the
real piece the chapter is about, with the same shape as minigrad's own (the engine's walk,
``AccumulateGrad``'s ``+=``, unbroadcasting, ``SGD.step``, a ``DataLoader``, ...). Then

    with teach.use(engine=push_gradients):    # the learner's piece runs inside minigrad
        loss.backward()

swaps it in for minigrad's own, and ``teach.check_piece("engine", push_gradients)`` runs the
chapter's examples and a battery of random cases with it, compares with minigrad's own
piece (and so with PyTorch, which minigrad's tests compare with), and says precisely what
differs: which node, which gradient, expected and got.

A piece not written yet (``None``, what the student copy's stub leaves) is never plugged
in: minigrad's own runs, so the course works for a learner who skips an exercise.

Chapter 10's payoff, ``teach.my_pieces()``, collects every piece the learner wrote in the
saved notebooks, checks each, and plugs in those that pass for a whole training run.

Each chapter's exercise module (``teach.exercises.chNN``) registers its pieces here with
``register(Piece(...))``; ``pieces()`` lists them all, in chapter order.
"""

import contextlib
import dataclasses
import importlib
import json
import traceback
from pathlib import Path

import numpy as np

from .checks import CheckResult, no_answer

__all__ = ["Piece", "register", "pieces", "use", "check_piece", "my_pieces", "Mismatch",
           "attempt", "where", "show"]

CHAPTERS = [f"ch{n:02d}" for n in range(1, 12)]


class Mismatch(Exception):
    """What a piece's check raises when the learner's piece differs from minigrad's own:
    the message says where (which case, which node or tensor) and what (expected vs got)."""


@dataclasses.dataclass
class Piece:
    """One piece of minigrad a learner writes.

    ``name``: what ``use`` and ``check_piece`` call it (``"engine"``); ``chapter``: ``"03"``;
    ``defines``: the name the build cell gives it (``"push_gradients"``); ``summary``: one line
    on what it is; ``plug(obj)``: a context manager with ``obj`` swapped in for minigrad's
    own; ``battery(obj)``: runs the checks, raising ``Mismatch`` at the first difference,
    and returns a line on what passed (``"the 3 examples and 200 random graphs"``).
    """
    name: str
    chapter: str
    defines: str
    summary: str
    plug: object
    battery: object


_PIECES = {}


def register(piece):
    """Add ``piece`` to the build track (each chapter's exercise module calls this)."""
    _PIECES[piece.name] = piece
    return piece


def pieces():
    """Every piece of the build track, in chapter order."""
    for chapter in CHAPTERS:
        importlib.import_module(f"{__package__}.exercises.{chapter}")
    return sorted(_PIECES.values(), key=lambda piece: piece.chapter)


def _piece(name):
    if name not in _PIECES:
        pieces()
    if name not in _PIECES:
        known = ", ".join(p.name for p in pieces())
        raise ValueError(f"no piece named {name!r} in the build track; the pieces are: {known}")
    return _PIECES[name]


@contextlib.contextmanager
def use(**written):
    """Run the block with the learner's pieces plugged into minigrad, each by its name:
    ``with teach.use(engine=push_gradients, accumulate=accumulate): ...``. A piece that is
    ``None`` (not written yet) is left out: minigrad's own runs, and a line says so, since
    the cell's own prints would otherwise say "yours". Everything is put back when the block
    ends, also after an error."""
    chosen = [(_piece(name), obj) for name, obj in written.items()]
    with contextlib.ExitStack() as stack:
        for piece, obj in chosen:
            if no_answer(obj):
                print(f"({piece.defines} is not written yet: minigrad's own runs in its place)")
            else:
                stack.enter_context(piece.plug(obj))
        yield


def check_piece(name, obj):
    """Plug ``obj`` in as the piece ``name`` and run its checks: ✓ with what was checked, or
    ✗ with the first difference (a ``CheckResult``, so a notebook never stops here)."""
    piece = _piece(name)
    if no_answer(obj):
        return CheckResult(False, f"{piece.summary}: not written yet. Until you write "
                                  f"{piece.defines}, minigrad's own runs in its place.")
    try:
        passed = piece.battery(obj)
    except Mismatch as difference:
        return CheckResult(False, f"{piece.defines}: {difference}")
    except Exception as error:  # the learner's code: report where it failed, never crash
        return CheckResult(False, f"{piece.defines} raised {type(error).__name__}: {error}"
                                  f"{where(error)}")
    elsewhere = _defined_elsewhere(obj)
    note = ("" if not elsewhere else
            f" One thing: it uses {', '.join(elsewhere)}, defined in another cell; chapter 10 "
            "runs this cell on its own, so define what it needs inside this cell too.")
    return CheckResult(True, f"{piece.defines} plugged into minigrad gives the same results "
                             f"as minigrad's own on {passed}.{note}")


def _defined_elsewhere(obj):
    """The functions and classes of the notebook (``__main__``) that ``obj`` (a function, or
    a class's own methods) reads as globals: chapter 10's payoff will not have them."""
    import inspect
    if inspect.isclass(obj):
        functions = [getattr(f, "__func__", f) for f in vars(obj).values()]
    else:
        functions = [obj]
    found = []
    for function in functions:
        if not inspect.isfunction(function):
            continue
        for name, value in inspect.getclosurevars(function).globals.items():
            if (value is not obj and getattr(value, "__module__", None) == "__main__"
                    and (inspect.isfunction(value) or inspect.isclass(value))
                    and name not in found):
                found.append(name)
    return found


def show(value):
    """A gradient, an array or a tensor as a short list of numbers (4 decimals), or None:
    how a check's message shows expected and got."""
    if value is None:
        return "None"
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return repr(np.round(np.asarray(value, dtype=float), 4).tolist())


def attempt(what, function, hint=None):
    """``function()`` (a call of the learner's code), or a ``Mismatch`` that says which call
    raised what, and where in their cell; ``hint(error)`` may add a line on what to fix."""
    try:
        return function()
    except Mismatch:
        raise
    except Exception as error:  # the learner's code: report it, never crash the check
        extra = hint(error) if hint is not None else ""
        raise Mismatch(f"{what} raised {type(error).__name__}: {error}{where(error)}"
                       f"{extra or ''}") from None


def where(error):
    """' (line 7 of your cell: buffers[node] += g)' for an error raised in notebook code."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.startswith("<") or "ipykernel" in f.filename]
    if not frames:
        return ""
    frame = frames[-1]
    return f" (line {frame.lineno} of your cell: {frame.line})" if frame.line else ""


# ------------------------------------------------------------------ chapter 10's payoff

# What a build cell may use without importing it (the notebooks import these first); the
# cells of a notebook that only import run before its build cells too.
PRELUDE = ("import math\nimport numpy as np\nimport minigrad as mg\n"
           "from minigrad import nn, optim, teach\nfrom minigrad.nn import functional as F\n"
           "from minigrad.ops.op import Op\n")


def _only_imports(source):
    """Is this cell nothing but import statements (a notebook's imports)?"""
    import ast
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body)


def my_pieces(folder=".", verbose=True):
    """The pieces written in the saved notebooks of ``folder``: each build cell runs on its
    own (after ``PRELUDE`` and its notebook's import cells), and each piece it defines is
    checked. Returns ``{name: piece}``
    for those that pass, ready for ``use(**my_pieces())``; prints one line per piece."""
    written = {}
    for notebook in sorted(Path(folder).glob("[0-9][0-9]*_*.ipynb")):  # 05a_, 05b_: parts of a chapter
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        imports = "\n".join(source for source in code if _only_imports(source))
        for cell in cells:
            if "build" in cell.get("metadata", {}).get("tags", []):
                names = {"__name__": "__build__"}
                source = "\n".join([PRELUDE, imports, "".join(cell["source"])])
                try:
                    exec(compile(source, f"<{notebook.name}>", "exec"), names)
                except Exception as error:  # a cell that does not run yet: left out below
                    names = {"__error__": f"{type(error).__name__}: {error}"}
                written[notebook.name[:2]] = written.get(notebook.name[:2], {}) | names
    chosen = {}
    for piece in pieces():
        names = written.get(piece.chapter, {})
        obj = names.get(piece.defines)
        if no_answer(obj):
            reason = names.get("__error__", "not written yet")
            line = f"minigrad's own   ch{piece.chapter} {piece.summary} ({reason})"
        else:
            result = check_piece(piece.name, obj)
            if result:
                chosen[piece.name] = obj
                line = f"yours            ch{piece.chapter} {piece.summary}"
            else:
                line = (f"minigrad's own   ch{piece.chapter} {piece.summary} (yours does "
                        "not pass its check yet)")
        if verbose:
            print(line)
    return chosen
