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
    """The source of minigrad's own objects for ``piece`` (what ``show_source`` would list)."""
    code = []
    for obj in piece.own.values():
        obj = inspect.unwrap(getattr(obj, "__func__", obj))
        try:
            code.append(inspect.getsource(obj))
        except (OSError, TypeError):
            continue
    return "\n".join(code)


# The lecture may write part of a piece as it teaches it (chapter 3's walk in order, before
# the engine's buffers); when it writes most of it, the build asks for a copy.
MOST = 0.5


@pytest.mark.parametrize("piece", build.pieces(), ids=lambda piece: piece.name)
def test_no_build_answer_in_the_student_copy(student, piece):
    """No output up to the piece's chapter shows a line of its reference solution or of
    minigrad's own piece; no cell's code shows minigrad's own piece, nor most of the answer."""
    from build_cells import build_cells
    lectures = [name for name in student if name[:2] <= piece.chapter]
    shown, written = seen_in(student, lectures, output_lines), seen_in(student, lectures, source_lines)
    reference = answer_lines("\n".join(build_cells(piece.chapter)))
    own = answer_lines(own_source(piece))
    assert own, f"{piece.name}: no own object to compare with (Piece.own)"
    leaks = {line: shown[line] for line in reference | own if line in shown}
    assert not leaks, f"{piece.defines}: printed in the student copy: {leaks}"
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
