"""The build track (chapters 1 to 13): the pieces of minigrad that learners write themselves.

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

Each chapter's exercise module (``teach.exercises.chNN``, or ``teach.exercises.chNN_build``
where a chapter's build has a module of its own) registers its pieces here with
``register(Piece(...))``; ``pieces()`` lists them all, in chapter order.
"""

import ast
import builtins
import contextlib
import dataclasses
import dis
import functools
import importlib
import importlib.util
import inspect
import json
import sys
import traceback
from pathlib import Path
from unittest import mock

import numpy as np

from .checks import CheckResult, no_answer

__all__ = ["Piece", "register", "pieces", "use", "check_piece", "my_pieces", "Mismatch",
           "attempt", "where", "show", "borrowed", "same_dtype", "passed", "piece_named",
           "own_out_of_reach", "not_defined_here"]

CHAPTERS = [f"ch{n:02d}" for n in range(1, 14)]


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
    and returns a line on what passed (``"the 3 examples and 200 random graphs"``);
    ``own``: minigrad's own objects for this piece, by the name a learner knows them
    (``{"optim.SGD": optim.SGD}``): a piece that is one of them, subclasses one, or calls one
    is refused (see ``borrowed``), since the check would compare minigrad with itself.
    """
    name: str
    chapter: str
    defines: str
    summary: str
    plug: object
    battery: object
    own: dict = dataclasses.field(default_factory=dict)


_PIECES = {}
_PASSED = set()  # the names of the pieces whose check passed in this session


def register(piece):
    """Add ``piece`` to the build track (each chapter's exercise module calls this)."""
    _PIECES[piece.name] = piece
    return piece


def pieces():
    """Every piece of the build track, in chapter order."""
    for chapter in CHAPTERS:
        for module in (chapter, f"{chapter}_build"):
            name = f"{__package__}.exercises.{module}"
            if name in sys.modules or importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
    return sorted(_PIECES.values(), key=lambda piece: piece.chapter)


def piece_named(name):
    """The registered piece called ``name`` (``"engine"``)."""
    return _piece(name)


def passed(name):
    """Has a learner's piece ``name`` passed its check in this session (``check_piece``)?"""
    return name in _PASSED


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
    refused = borrowed(piece, obj)
    if refused:
        return CheckResult(False, f"{piece.defines}: {refused}")
    try:
        passed = piece.battery(obj)
    except Mismatch as difference:
        return CheckResult(False, f"{piece.defines}: {difference}")
    except Exception as error:  # the learner's code: report where it failed, never crash
        return CheckResult(False, f"{piece.defines} raised {type(error).__name__}: {error}"
                                  f"{where(error)}")
    _PASSED.add(name)
    elsewhere = _defined_elsewhere(obj)
    note = ("" if not elsewhere else
            f" One thing: it uses {', '.join(elsewhere)}, defined in another cell; chapter 10 "
            "runs this cell on its own, so define what it needs inside this cell too.")
    return CheckResult(True, f"{piece.defines} plugged into minigrad gives the same results "
                             f"as minigrad's own on {passed}.{note}")


# ------------------------------------------------------------------ refusing minigrad's own

def borrowed(piece, obj):
    """Why ``obj`` is not the learner's own piece, or ``""``: it is one of minigrad's own
    objects for the piece (``piece.own``), a subclass of one, or code that calls one (read
    from its bytecode, and through the learner's own functions and classes it uses: see
    ``_values_read``). The methods of an own class count as its own too (``forward =
    MulBackward0.forward``)."""
    own = {id(value): label for label, value in piece.own.items()}
    for label, value in piece.own.items():
        if inspect.isclass(value):
            for name, method in vars(value).items():
                if inspect.isfunction(_unwrap(method)) and id(_unwrap(method)) not in own:
                    own[id(_unwrap(method))] = f"{label}.{name}"
    if not own:
        return ""
    if id(_unwrap(obj)) in own:
        return (f"this is minigrad's own {own[id(_unwrap(obj))]}, not a piece you wrote: the "
                "check compares your piece with minigrad's, so it would only compare "
                f"minigrad with itself. Write {piece.defines} yourself in the build cell.")
    if inspect.isclass(obj):
        for base in obj.__mro__[1:]:
            if id(base) in own:
                return (f"it is a subclass of minigrad's own {own[id(base)]}, so it runs "
                        "minigrad's code, not yours. Write the class from scratch (from the "
                        "base the build cell names, if it names one).")
        for name, value in vars(obj).items():
            if id(_unwrap(value)) in own:
                return (f"its {name} is minigrad's own {own[id(_unwrap(value))]}, copied into "
                        "your class, so it runs minigrad's code, not yours. Write that method "
                        "yourself.")
    for label in _calls(obj, own):
        return (f"it uses minigrad's own {label}, the very piece you are asked to write, so "
                "the check would compare minigrad with itself. Write that part yourself.")
    return ""


def _unwrap(obj):
    while isinstance(obj, functools.partial):
        obj = obj.func
    return getattr(obj, "__func__", obj)


def _functions_of(obj):
    """The plain functions whose code makes up ``obj``: itself, or a class's own methods,
    properties, static and class methods."""
    obj = _unwrap(obj)
    if inspect.isfunction(obj):
        return [inspect.unwrap(obj)]  # a decorated function (@mg.no_grad()): its own code
    if inspect.isclass(obj):
        found = []
        for value in vars(obj).values():
            if isinstance(value, property):
                found += [f for f in (value.fget, value.fset, value.fdel) if f is not None]
            else:
                value = _unwrap(value)
                if inspect.isfunction(value):
                    found.append(inspect.unwrap(value))
        return found
    # an instance whose class defines __call__ (the function itself, not callable())
    call = getattr(type(obj), "__call__", None)  # noqa: B004
    return _functions_of(type(obj)) if inspect.isfunction(call) else []


def _names_read(code):
    """Every global and attribute name a code object (and the code nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names_read(const)
    return names


def _calls(obj, own, depth=4):
    """The labels of ``own`` objects that ``obj``'s code reads, directly or through the
    learner's own functions and classes (same module) up to ``depth`` levels down."""
    seen, found = set(), []
    home = getattr(_unwrap(obj), "__module__", None)
    todo = [(_unwrap(obj), 0)]
    while todo:
        current, level = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for function in _functions_of(current):
            values = _values_read(function)
            for value in values:
                value = _unwrap(value)
                if id(value) in own and own[id(value)] not in found:
                    found.append(own[id(value)])
                elif (level < depth and (inspect.isfunction(value) or inspect.isclass(value))
                      and getattr(value, "__module__", None) == home):
                    todo.append((value, level + 1))
    return found


def _values_read(function):
    """The objects a function's code reads: its globals and closure cells, its defaults, the
    modules it imports, and the attributes it reads of a module or a class (``nn.Linear``,
    ``mg.nn.functional.softplus``, ``mg.Tensor.accumulate_grad``), followed along each
    chain of attribute reads in the bytecode (not every name against every module:
    ``super(Linear, self)`` next to ``nn.Parameter`` is not ``nn.Linear``)."""
    closure = {name: cell.cell_contents for name, cell in
               zip(function.__code__.co_freevars, function.__closure__ or ()) if _filled(cell)}
    values = list(closure.values())
    values += list(function.__defaults__ or ()) + list((function.__kwdefaults__ or {}).values())
    missing = object()

    def walk(code):
        current = imported = missing
        for instruction in dis.get_instructions(code):
            name, kind = instruction.argval, instruction.opname
            if kind in ("LOAD_GLOBAL", "LOAD_NAME"):
                current = function.__globals__.get(name, getattr(builtins, str(name), missing))
            elif kind == "LOAD_DEREF":
                current = closure.get(name, missing)
            elif kind in ("LOAD_ATTR", "LOAD_METHOD") and inspect.ismodule(current):
                current = getattr(current, name, missing)
            elif kind in ("LOAD_ATTR", "LOAD_METHOD") and inspect.isclass(current):
                current = inspect.getattr_static(current, name, missing)  # no descriptor runs
            elif kind == "IMPORT_NAME":  # import a.b / from a.b import c, inside the function
                current = imported = sys.modules.get(name, missing)
            elif kind == "IMPORT_FROM" and inspect.ismodule(imported):
                current = getattr(imported, name, missing)
            else:
                current = missing
                continue
            if current is not missing:
                values.append(current)
        for const in code.co_consts:
            if inspect.iscode(const):
                walk(const)
    walk(function.__code__)
    return values


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018  (reading it is the test)
    except ValueError:  # an empty closure cell
        return False
    return True


def same_dtype(what, got, want):
    """Raise ``Mismatch`` when ``got`` (an array or tensor the learner's piece made) has
    another dtype than ``want`` (minigrad's own result for the same float32 inputs)."""
    got_dtype, want_dtype = _dtype_name(got), _dtype_name(want)
    if got_dtype != want_dtype:
        raise Mismatch(f"{what} is {got_dtype}, where minigrad's own gives {want_dtype} for "
                       f"the same {want_dtype} inputs. A float64 constant (np.ones(shape) "
                       "without dtype, np.float64, an array made from Python floats) turns "
                       "float32 into float64: make new arrays with the input's dtype.")


def _dtype_name(value):
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return type(value).__name__
    return str(dtype).replace("minigrad.", "").replace("torch.", "")


def _defined_elsewhere(obj):
    """The functions and classes of the notebook (``__main__``) that ``obj`` (a function, or
    a class's own methods) reads as globals, also inside comprehensions and through a
    decorator such as ``@mg.no_grad()``, and that another cell defined (Jupyter compiles
    each cell under a file name of its own): chapter 10's payoff will not have them."""
    functions = [inspect.unwrap(f) for f in _functions_of(obj)]
    functions = [f for f in functions if inspect.isfunction(f)]
    cells = {f.__code__.co_filename for f in functions}
    found = []
    for function in functions:
        for name in sorted(_names_read(function.__code__)):
            value = function.__globals__.get(name)
            if (value is not obj and getattr(value, "__module__", None) == "__main__"
                    and (inspect.isfunction(value) or inspect.isclass(value))
                    and name not in found and not _code_files(value) & cells):
                found.append(name)
    return found


def _code_files(obj):
    """The file names (in Jupyter: the cells) of the code that makes up ``obj``."""
    return {inspect.unwrap(f).__code__.co_filename for f in _functions_of(obj)
            if inspect.isfunction(inspect.unwrap(f))}


def show(value):
    """A gradient, an array or a tensor as a short list of numbers (4 decimals), or None:
    how a check's message shows expected and got."""
    if value is None:
        return "None"
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return repr(np.round(np.asarray(value, dtype=float), 4).tolist())


def attempt(what, function, hint=None, *, brief=False):
    """``function()`` (a call of the learner's code), or a ``Mismatch`` that says which call
    raised what, and where in their cell; ``hint(error)`` may add a line on what to fix.
    ``brief``: the error's first sentence is enough when a hint says what to do, and the
    message ends each sentence with a full stop (how chapters 8 and 10 report)."""
    try:
        return function()
    except Mismatch:
        raise
    except NameError as error:
        raise Mismatch(not_defined_here(what, error)) from None
    except Exception as error:  # the learner's code: report it, never crash the check
        extra = (hint(error) if hint is not None else "") or ""
        text = str(error)
        if brief:
            text = (text.split(". ")[0] if extra else text).rstrip(".")
        raise Mismatch(f"{what} raised {type(error).__name__}: {text}{where(error)}"
                       f"{'.' if brief else ''}{extra}") from None


_CALLS_OWN = ("it calls minigrad's own {label} (through {path}), the very piece you are asked "
              "to write, so the check would compare minigrad with itself. Write that part "
              "yourself.")


@contextlib.contextmanager
def own_out_of_reach(module_names):
    """While the learner's code runs, each of minigrad's own objects named in
    ``module_names`` ({module: [(attribute, label), ...]}) is replaced by a stand-in that
    raises ``Mismatch`` when called: a piece that reaches minigrad's own by a path the
    check's look at its code misses (``mg.optim.sgd.SGD``, ``mg.utils.data.DataLoader``)
    is refused too, instead of being compared with itself."""
    with contextlib.ExitStack() as stack:
        for module, names in module_names.items():
            for attribute, label in names:
                path = f"{module.__name__.replace('minigrad', 'mg', 1)}.{attribute}"
                message = _CALLS_OWN.format(label=label, path=path)

                def refuse(*args, _message=message, **kwargs):
                    raise Mismatch(_message)
                original = getattr(module, attribute)
                stand_in = (type(original.__name__, (), {"__new__": refuse})
                            if inspect.isclass(original) else refuse)
                stack.enter_context(mock.patch.object(module, attribute, stand_in))
        yield


def not_defined_here(what, error):
    """What ``attempt`` says of a NameError: the piece uses a name its build cell does not
    define, most often a helper of another cell (chapter 10 runs the build cell alone)."""
    name = getattr(error, "name", None) or str(error)
    return (f"{what} raised NameError: {name!r} is not defined in your build cell (is it "
            "defined in another cell? chapter 10 runs the build cell on its own, so define "
            f"everything your piece needs inside it){where(error)}")


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
    # 05a_, 05b_: parts of a chapter
    for notebook in sorted(Path(folder).glob("[0-9][0-9]*_*.ipynb")):
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
                reason = result.message.split(". ")[0].split("\n")[0]
                line = (f"minigrad's own   ch{piece.chapter} {piece.summary} (yours does "
                        f"not pass its check yet: {reason})")
        if verbose:
            print(line)
    return chosen
