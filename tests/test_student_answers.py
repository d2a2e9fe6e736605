"""No answer in sight in the student copy (``make student``): no line of an exercise's
solution, of a build piece's reference solution or of minigrad's own piece survives in the
copy of its chapter (cell sources and stored outputs alike), and no chapter before it shows
the piece either.

A line counts when it is long enough to be an answer rather than a common phrase (the
signature a build cell asks for, comments, docstrings and short lines like ``return out``
are public by design: the statement names them)."""

import html
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

from minigrad.teach import build

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)

SHORTEST_ANSWER_LINE = 24  # characters, once stripped


def answer_lines(code):
    """The lines of ``code`` that would give an answer away if a student could read them."""
    found, in_docstring = set(), False
    for raw in code.splitlines():
        line = raw.strip()
        quotes = line.count('"""') + line.count("'''")
        if in_docstring or line.startswith(('"""', "'''", 'r"""')):
            in_docstring = (in_docstring + quotes) % 2 == 1 if line else in_docstring
            continue
        code_part = line.split("  #")[0].strip()
        if (len(code_part) >= SHORTEST_ANSWER_LINE and not code_part.startswith(("#", "def ", "class ", "@"))
                and not code_part.startswith(("print(", "return None"))):
            found.add(code_part)
    return found


def split_lines(texts):
    return {line.split("  #")[0].strip() for text in texts for line in text.splitlines()}


def source_lines(cell):
    return split_lines(["".join(cell["source"])])


def output_lines(cell):
    """Every line of a cell's stored outputs: plain text, streams, and HTML with the tags
    taken out (a highlighted listing)."""
    texts = []
    for output in cell.get("outputs", []):
        texts.append("".join(output.get("text", "")))
        data = output.get("data", {})
        texts.append("".join(data.get("text/plain", "")))
        texts.append(html.unescape(re.sub(r"<[^>]+>", "", "".join(data.get("text/html", "")))))
    return split_lines(texts)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "notebooks"
    make_student.make_student_copy(ROOT / "notebooks", out)
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))["cells"] for p in sorted(out.glob("*.ipynb"))}


def seen_in(student, lectures, lines_of):
    """{line: the lecture and cell where a student sees it} for these lectures."""
    seen = {}
    for lecture in lectures:
        for index, cell in enumerate(student[lecture]):
            for line in lines_of(cell):
                seen.setdefault(line, f"{lecture}, cell {index}")
    return seen


def own_source(piece):
    """The source of minigrad's own piece (what ``show_source`` would list): its own
    objects, less the delegates that only route to another of them (``Tensor.__mul__``
    calling ``MulBackward0``, ``F.softplus`` calling its op)."""
    code = []
    names = {getattr(obj, "__name__", "") for obj in piece.own.values()}
    for obj in piece.own.values():
        obj = inspect.unwrap(getattr(obj, "__func__", obj))
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            continue
        body = code_without_docstring(text) if inspect.isfunction(obj) else ""
        if any(re.search(rf"\b{re.escape(name)}\b", body) for name in names - {obj.__name__, ""}):
            continue
        code.append(text)
    return "\n".join(code)


def code_without_docstring(source):
    """A function's code less its signature and docstring (what it calls, not what it says)."""
    import ast
    import textwrap
    function = ast.parse(textwrap.dedent(source)).body[0]
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return "\n".join(ast.unparse(statement) for statement in body)


def public_lines(piece):
    """Lines of the minigrad classes a learner's piece builds on (``optim.Optimizer``,
    ``nn.Module``, ``Op``): the API the build cell names, public by design."""
    from build_cells import solution
    written = solution(piece.chapter, piece.defines)
    bases = [b for b in getattr(written, "__mro__", ())[1:] if b.__module__.startswith("minigrad")]
    return set().union(*(answer_lines(inspect.getsource(b)) for b in bases)) if bases else set()


# The lecture may write part of a piece as it teaches it (chapter 3's walk in order, before
# the engine's buffers); when it writes most of it, the build asks for a copy.
MOST = 0.5
# A cell that prints this many lines of a piece is a listing of it (one line alone, such as
# `self.save_for_backward(a)` in another op's listing, is how every op is written).
LISTING = 2


@pytest.mark.parametrize("piece", build.pieces(), ids=lambda piece: piece.name)
def test_no_build_answer_in_the_student_copy(student, piece):
    """No cell up to the piece's chapter prints a listing of its reference solution or of
    minigrad's own piece; no cell's code writes most of either."""
    from build_cells import build_cells
    lectures = [name for name in student if name[:2] <= piece.chapter]
    written = seen_in(student, lectures, source_lines)
    public = public_lines(piece)
    reference = answer_lines("\n".join(build_cells(piece.chapter))) - public
    own = answer_lines(own_source(piece)) - public
    assert own, f"{piece.name}: no own object to compare with (Piece.own)"
    for lecture in lectures:
        for index, cell in enumerate(student[lecture]):
            printed = (reference | own) & output_lines(cell)
            assert len(printed) < LISTING, \
                f"{piece.defines}: {lecture}, cell {index} prints its answer: {printed}"
    for what, lines in (("the reference solution", reference), ("minigrad's own piece", own)):
        copied = {line: written[line] for line in lines if line in written}
        assert len(copied) <= MOST * len(lines), \
            f"{piece.defines}: most of {what} is written in the lecture: {copied}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_no_exercise_answer_in_the_student_copy(student, notebook):
    """No stored output of the student copy of its chapter shows a line of an exercise's
    solution (a later cell that prints it, or a listing of it)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    chapter = notebook.stem[:2]
    shown = seen_in(student, [name for name in student if name[:2] == chapter], output_lines)
    for cell in cells:
        if "solution" in cell["metadata"].get("tags", []):
            leaks = {line: shown[line] for line in answer_lines("".join(cell["source"]))
                     if line in shown}
            assert not leaks, f"{notebook.stem}: an answer is printed: {leaks}"


def test_the_scan_finds_an_answer_left_in_sight():
    """The scan itself: a listing's output or a copied line is found, a signature is not."""
    code = 'def f(x):\n    """Doc."""\n    total = buffers[node] + gradient_arrived\n    return x\n'
    assert answer_lines(code) == {"total = buffers[node] + gradient_arrived"}
    cell = {"source": ["f = None"], "outputs": [{"output_type": "execute_result", "data": {
        "text/html": "<span>total = buffers[node] +</span> gradient_arrived"}}]}
    assert "total = buffers[node] + gradient_arrived" in output_lines(cell)
