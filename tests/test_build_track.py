"""The build track as a whole (``minigrad.teach.build``): every chapter's build cells,
collected from the saved notebooks as chapter 10's payoff collects them, pass their checks;
a student copy's stubs give none, and the course still runs on minigrad's own pieces."""

import importlib.util
from pathlib import Path

import pytest

from minigrad.teach import build

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)


def chapter_part_with_build_cell(chapter):
    """The notebook of chapter ``chapter`` ("03", or a part of it: 03a_, 03b_) that holds its
    build cell."""
    import json
    for path in sorted((ROOT / "notebooks").glob(f"{chapter}*_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        if any("build" in c["metadata"].get("tags", []) for c in cells):
            return path
    raise AssertionError(f"chapter {chapter} has no build cell")


def test_every_piece_written_in_the_notebooks_passes_and_is_chosen(capsys):
    chosen = build.my_pieces(ROOT / "notebooks")
    printed = capsys.readouterr().out.splitlines()
    names = [piece.name for piece in build.pieces()]
    assert sorted(chosen) == sorted(names)
    assert len(printed) == len(names)
    assert all(line.startswith("yours") for line in printed), printed


def test_a_student_copy_gives_no_piece_and_says_so(tmp_path, capsys):
    make_student.make_student_copy(ROOT / "notebooks", tmp_path / "notebooks")
    chosen = build.my_pieces(tmp_path / "notebooks")
    printed = capsys.readouterr().out.splitlines()
    assert chosen == {}
    assert printed and all(line.startswith("minigrad's own") and "not written yet" in line
                           for line in printed), printed


def test_a_build_cell_that_raises_is_reported_and_left_out(tmp_path, capsys):
    import json
    source = chapter_part_with_build_cell("03")
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if "build" in cell["metadata"].get("tags", []):
            cell["source"] = ["def push_gradients(root, grad):\n", "    return {}\n", "1 / 0\n"]
    (tmp_path / source.name).write_text(json.dumps(nb), encoding="utf-8")
    chosen = build.my_pieces(tmp_path)
    printed = capsys.readouterr().out
    assert "engine" not in chosen
    assert "ZeroDivisionError" in printed



@pytest.mark.parametrize("chapter", [f"{n:02d}" for n in range(1, 14)])
def test_every_chapter_has_a_build_piece(chapter):
    assert any(piece.chapter == chapter for piece in build.pieces()), \
        f"chapter {chapter} has no build exercise yet"


def test_a_piece_that_needs_another_cell_passes_with_a_note_for_chapter_10():
    """Jupyter compiles each cell under its own file name: a helper from another cell gets
    the note (chapter 10 runs the build cell alone), a helper in the same cell does not."""
    from build_cells import solution
    names = {"__name__": "__main__", "reference": solution("03", "push_gradients")}
    exec(compile("def helper(root, grad):\n    return reference(root, grad)\n",
                 "<cell 1>", "exec"), names)
    exec(compile("def push_gradients(root, grad):\n    return helper(root, grad)\n",
                 "<cell 2>", "exec"), names)
    result = build.check_piece("engine", names["push_gradients"])
    assert result and "it uses helper, defined in another cell" in result.message
    assert "One thing" not in build.check_piece("engine", names["reference"]).message
    exec(compile("def helper(root, grad):\n    return reference(root, grad)\n\n"
                 "def push_gradients(root, grad):\n    return helper(root, grad)\n",
                 "<cell 3>", "exec"), names)
    result = build.check_piece("engine", names["push_gradients"])
    assert result and "One thing" not in result.message, result.message


def test_the_notebooks_import_cells_run_before_its_build_cells(tmp_path, capsys):
    import json
    source = chapter_part_with_build_cell("03")
    nb = json.loads(source.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    cells[0]["source"] = ["from collections import deque\n", "import numpy as np\n"]
    for cell in nb["cells"]:
        if "build" in cell["metadata"].get("tags", []):
            body = "".join(cell["source"])
            cell["source"] = [body.replace("    ready = [root]", "    ready = deque([root])")]
            assert "deque([root])" in cell["source"][0]
    (tmp_path / source.name).write_text(json.dumps(nb), encoding="utf-8")
    assert "engine" in build.my_pieces(tmp_path)
    assert build._only_imports("import a\nfrom b import c") and not build._only_imports("x = 1")


def test_use_says_when_a_piece_is_not_written_yet(capsys):
    """A cell that prints "with your walk" after ``teach.use(engine=None)`` ran minigrad's
    own walk: ``use`` says so, and says nothing when the piece is there."""
    import minigrad as mg
    with build.use(engine=None):
        x = mg.tensor([2.0], requires_grad=True)
        (x * x).backward()
    assert "push_gradients is not written yet: minigrad's own runs" in capsys.readouterr().out
    from build_cells import solution
    with build.use(engine=solution("03", "push_gradients")):
        pass
    assert capsys.readouterr().out == ""
    assert x.grad.tolist() == [4.0]


def test_methods_copied_from_minigrads_own_class_are_refused():
    """A class whose methods are minigrad's own (copied by assignment or built with type())
    is minigrad's piece under another name."""
    from minigrad.ops import arithmetic
    from minigrad.ops.op import Op
    own = arithmetic.MulBackward0
    copied = type("MulBackward0", (Op,), {"__slots__": (), "forward": own.forward,
                                          "backward": own.backward})
    result = build.check_piece("mul", copied)
    assert not result and "minigrad's own" in result.message and "copied" in result.message

    class Calls(Op):
        __slots__ = ()

        def forward(self, a, b):
            return own.forward(self, a, b)

        def backward(self, grad, a, b):
            return arithmetic.MulBackward0.backward(self, grad, a, b)
    result = build.check_piece("mul", Calls)
    assert not result and "it uses minigrad's own" in result.message


def test_chapter_8_has_two_pieces_sgd_and_adam():
    assert {piece.name for piece in build.pieces() if piece.chapter == "08"} == {"sgd", "adam"}
