"""`make student`: no solution survives in the copy, the checks still run there and say
"no answer yet", and the original notebooks are left untouched."""

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)

pytestmark = pytest.mark.skipif(not NOTEBOOKS, reason="no notebooks yet")


def tagged(nb, tag):
    return [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in NOTEBOOKS}
    out = tmp_path_factory.mktemp("student") / "notebooks"
    written = make_student.make_student_copy(ROOT / "notebooks", out)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in NOTEBOOKS}
    assert before == after, "make student changed the original notebooks"
    # what the notebooks read from outside notebooks/: figures, and 11b's stored speed run
    assert (out.parent / "benchmarks" / "results" / "latest.json").exists()
    assert (out.parent / "figures" / "benchmark.svg").exists()
    return {p.name: json.loads(p.read_text()) for p in written}


def test_every_chapter_has_exercises_with_solutions():
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        solutions, checks = tagged(nb, "solution"), tagged(nb, "check")
        assert solutions and checks, f"{path.name} has no checked exercise"
        for cell in solutions:
            assert cell["metadata"].get("jupyter", {}).get("source_hidden"), \
                f"{path.name}: a solution cell is not collapsed"


def test_slides_reveal_a_solution_only_after_its_question():
    """In a deck (and in JupyterLab's slide mode) a solution is a fragment or a slide of its
    own, never shown together with the question it answers."""
    for path in NOTEBOOKS:
        for cell in tagged(json.loads(path.read_text()), "solution"):
            kind = cell["metadata"].get("slideshow", {}).get("slide_type")
            assert kind in ("fragment", "subslide", "slide"), f"{path.name}: {kind!r}"


def test_stubs_stay_on_their_question_slide(student):
    for copy in student.values():
        for cell in tagged(copy, "exercise"):
            assert cell["metadata"]["slideshow"]["slide_type"] != "fragment"


def test_no_solution_survives(student):
    runs_yours = set()
    for path in NOTEBOOKS:
        original = json.loads(path.read_text())
        copy = student[path.name]
        assert not tagged(copy, "solution")
        sources = ["".join(c["source"]) for c in copy["cells"]]
        stubs = ["".join(c["source"]) for c in tagged(copy, "exercise")]
        assert len(stubs) == len(tagged(original, "solution"))
        for cell in tagged(original, "solution"):
            solution = "".join(cell["source"]).strip()
            assert solution not in sources, f"{path.name}: a solution is still there"
        for stub in stubs:
            assert "None" in stub or "your code here" in stub, stub
        for cell in tagged(copy, "check") + tagged(copy, "exercise"):
            assert cell["outputs"] == [], "a stored ✓ would give the answer away"
        for cell in copy["cells"]:   # the calls the build track declares (make_student)
            calls = {call for call in make_student.RUNS_YOUR_PIECES
                     if call in "".join(cell["source"])}
            if cell["cell_type"] == "code" and calls:
                assert cell["outputs"] == [], "a stored 'yours' would be the reference's"
                runs_yours |= calls
    assert runs_yours == set(make_student.RUNS_YOUR_PIECES), (
        "a call that runs the learner's pieces is declared but found in no notebook: "
        f"{set(make_student.RUNS_YOUR_PIECES) - runs_yours}")


def test_no_speaker_note_survives(student):
    """The speaker notes discuss the exercises' answers ("the weight lands at ..."): the copy
    for students keeps every other cell, in order, and none of the notes' text."""
    for path in NOTEBOOKS:
        original = json.loads(path.read_text())["cells"]
        notes = ["".join(c["source"]) for c in original
                 if c["metadata"].get("slideshow", {}).get("slide_type") == "notes"]
        assert notes, f"{path.name} has no speaker notes to leave out"
        copy = student[path.name]["cells"]
        assert len(copy) == len(original) - len(notes)
        texts = ["".join(c["source"]) for c in copy]
        for note in notes:
            assert note not in texts, f"{path.name}: a speaker note survives"
        others = [c["cell_type"] for c in original
                  if c["metadata"].get("slideshow", {}).get("slide_type") != "notes"]
        assert [c["cell_type"] for c in copy] == others


def test_build_cells_become_stubs_that_leave_minigrads_own_piece(student):
    """Each build cell of the copy defines its piece as None (not written yet), so every
    later cell runs with minigrad's own piece; the repository's cell defines the real one."""
    from minigrad.teach import build
    for piece in build.pieces():
        parts = [n for n in sorted(student) if n.startswith(piece.chapter)]
        name = " + ".join(parts)
        cells = [cell for part in parts for cell in tagged(student[part], "build")]
        assert cells, f"{name} has no build cell for {piece.name}"
        names = {}
        for cell in cells:
            exec(build.PRELUDE + "".join(cell["source"]), names)
        assert names[piece.defines] is None, f"{name}: the stub of {piece.defines}"
        assert "not written yet" in build.check_piece(piece.name, None).message


def output_text(cell):
    return "".join(o.get("data", {}).get("text/plain", "") + "".join(o.get("text", ""))
                   for o in cell.get("outputs", []))


@pytest.mark.parametrize("lecture", [p.stem for p in NOTEBOOKS])
def test_the_student_copy_runs_and_asks_for_every_answer(student, tmp_path, lecture):
    """Run every lecture's student copy top to bottom, as a learner who has written nothing
    yet: no cell stops it, every check prints ✗, and no listing of minigrad's own piece shows
    (those cells wait until the learner's piece passes)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    name = f"{lecture}.ipynb"
    nb = nbformat.reads(json.dumps(student[name]), as_version=4)
    folder = tmp_path / "student"
    make_student.make_student_copy(ROOT / "notebooks", folder / "notebooks")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder / "notebooks")}})
    client.execute()
    assert tagged(nb, "check"), f"{name} has no check"
    for cell in tagged(nb, "check"):
        text = output_text(cell)
        assert "✗" in text and "✓" not in text, text
    for cell in tagged(nb, "compare-with-yours"):
        if "show_source(" in "".join(cell["source"]):
            assert "is shown here once your" in output_text(cell), output_text(cell)
