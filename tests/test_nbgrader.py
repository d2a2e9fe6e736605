"""Grading with nbgrader (``make nbgrader``, ``scripts/make_nbgrader.py``): the course folder
has nbgrader's cell roles and points, and nbgrader itself releases two lectures, autogrades
three submissions of each and exports a gradebook: the blank release gets 0 points, the
reference all of them, and a submission with one wrong build piece loses exactly that
piece's points."""

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("make_nbgrader", ROOT / "scripts" / "make_nbgrader.py")
make_nbgrader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_nbgrader)

# Two lectures, each with a wrong build piece of the kind students write: gradients that
# overwrite instead of adding (chapter 4's whole point, and the engine's buffers).
WRONG_PIECES = {
    "04a_gradients_accumulate": (
        "def accumulate(tensor, grad):\n"
        "    tensor.grad = mg.tensor(grad)   # overwrites what was there\n"),
    "03b_backward_engine": (
        "def push_gradients(root, grad):\n"
        "    buffers, arrived = {root: grad}, {}\n"
        "    for node in mg.graph.execution_order([root]):\n"
        "        if node not in buffers:\n"
        "            continue\n"
        "        arrived[node] = total = buffers.pop(node)\n"
        "        if hasattr(node, 'variable'):\n"
        "            continue\n"
        "        for (nxt, _), g in zip(node.next_functions, node.apply(total)):\n"
        "            if nxt is not None and g is not None:\n"
        "                buffers[nxt] = g   # overwrites: gradients that meet are lost\n"
        "    return arrived\n"),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nbgrader") / "course"
    marking = make_nbgrader.make_course(ROOT / "notebooks", folder)
    return folder, marking


def cells_of(folder, lecture, stage="source"):
    path = folder / stage / lecture / f"{lecture}.ipynb"
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_lecture_is_in_the_course_with_its_points(course):
    folder, marking = course
    lectures = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    assert sorted(marking) == lectures
    assert "course_id" in (folder / "nbgrader_config.py").read_text()
    for lecture in lectures:
        original = json.loads((ROOT / "notebooks" / f"{lecture}.ipynb").read_text())["cells"]
        cells = cells_of(folder, lecture)["cells"]
        roles = [c["metadata"]["nbgrader"] for c in cells]
        solutions = [r for r in roles if r["solution"]]
        tests = [r for r in roles if r["grade"]]
        wanted = [c for c in original if "solution" in c["metadata"].get("tags", [])]
        assert len(solutions) == len(tests) == len(wanted) >= 1, lecture
        assert all(r["locked"] for r in roles if not r["solution"])
        assert len({r["grade_id"] for r in roles}) == len(roles), "grade ids are unique"
        builds = [r for r in tests if "-build-" in r["grade_id"]]
        assert all(r["points"] == make_nbgrader.BUILD_POINTS for r in builds)
        assert all(r["points"] == make_nbgrader.EXERCISE_POINTS for r in tests if r not in builds)
        assert make_nbgrader.BUILD_POINTS > make_nbgrader.EXERCISE_POINTS
        assert not any(c["metadata"].get("slideshow", {}).get("slide_type") == "notes"
                       for c in cells), "speaker notes discuss the answers"
        for cell in cells:
            if cell["metadata"]["nbgrader"]["solution"]:
                assert "### BEGIN SOLUTION" in "".join(cell["source"])


def nbgrader(folder, *args):
    """Run nbgrader's own command in the course folder (its database steps call alembic,
    which must be on PATH next to the interpreter)."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def submit(folder, student, lecture, nb):
    target = folder / "submitted" / student / lecture
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{lecture}.ipynb").write_text(json.dumps(nb), encoding="utf-8")


def with_build_piece(nb, source):
    nb = json.loads(json.dumps(nb))
    (cell,) = [c for c in nb["cells"] if c["metadata"]["nbgrader"]["solution"]
               and "build" in c["metadata"].get("tags", [])]
    cell["source"] = source
    return nb


def test_nbgrader_grades_blank_reference_and_one_wrong_piece(course):
    pytest.importorskip("nbgrader", reason="nbgrader is in the [grade] extra")
    folder, marking = course
    for lecture in WRONG_PIECES:
        nbgrader(folder, "db", "assignment", "add", lecture)
        nbgrader(folder, "generate_assignment", lecture, "--force")
        release = cells_of(folder, lecture, "release")
        reference = cells_of(folder, lecture)
        wrong = WRONG_PIECES[lecture]
        assert not any("### BEGIN SOLUTION" in "".join(c["source"]) for c in release["cells"])
        submit(folder, "blank", lecture, release)
        submit(folder, "reference", lecture, reference)
        submit(folder, "one_wrong_piece", lecture, with_build_piece(reference, wrong))
    for student in ("blank", "reference", "one_wrong_piece"):
        nbgrader(folder, "db", "student", "add", student)
    for lecture in WRONG_PIECES:
        nbgrader(folder, "autograde", lecture, "--force")
        nbgrader(folder, "generate_feedback", lecture, "--force")
    nbgrader(folder, "export", "--to", str(folder / "grades.csv"))
    with open(folder / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for lecture in WRONG_PIECES:
        score = {r["student_id"]: float(r["score"]) for r in rows if r["assignment"] == lecture}
        total = sum(marking[lecture].values())
        build_points = [p for g, p in marking[lecture].items() if "-build-" in g]
        assert {float(r["max_score"]) for r in rows if r["assignment"] == lecture} == {total}
        assert score["blank"] == 0, (lecture, score)
        assert score["reference"] == total, (lecture, score)
        assert score["one_wrong_piece"] == total - build_points[0], (lecture, score)
        feedback = folder / "feedback" / "one_wrong_piece" / lecture / f"{lecture}.html"
        assert "✗" in feedback.read_text(encoding="utf-8"), "the feedback shows the check's message"
