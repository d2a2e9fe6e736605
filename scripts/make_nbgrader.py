"""``make nbgrader``: the course as an nbgrader course folder, for grading a class.

    build/nbgrader/
      nbgrader_config.py             course id, stubs, timeouts
      source/<lecture>/<lecture>.ipynb   every lecture, with nbgrader's cell metadata

The course's own tags say what each cell is, so nothing is marked by hand twice:

- a cell tagged ``solution`` becomes a *solution* cell: its stub (what ``make student``
  shows) above the solution, which sits between ``### BEGIN SOLUTION`` and ``### END
  SOLUTION`` for ``nbgrader generate_assignment`` to remove;
- the ``check`` cell after it becomes an *autograded test* cell worth EXERCISE_POINTS, or
  BUILD_POINTS when it checks a build piece (``teach.check_piece``): it runs the same check
  through ``teach.checks.graded``, which raises (and so loses the points) when the check fails,
  with the check's message as the feedback; a prediction's ``reveal()`` (``teach.predictions``)
  is graded as the exercise whose solution cell ``lock``ed it, wherever its reveal stands;
- every other cell is *locked* (read-only); speaker notes are left out, and stored outputs
  that would give an answer away are cleared, exactly as ``make student`` does.

From there nbgrader's own commands release, collect, autograde, give feedback and export the
gradebook (see the README, "For instructors"). The notebooks in ``notebooks/`` are only read.

    python scripts/make_nbgrader.py [output folder, default build/nbgrader]
"""

import ast
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_student import clears_output, is_speaker_note  # noqa: E402  (one rule for both copies)

ROOT = Path(__file__).resolve().parent.parent
EXERCISE_POINTS = 2
BUILD_POINTS = 5
COURSE_ID = "minigrad"
# Files a lecture reads from outside notebooks/ (11b's stored speed run): nbgrader moves an
# assignment's folder from stage to stage (source, release, submitted, autograded), so each
# goes into the lecture's own folder and the cell reads it from there.
READS = {"../figures/benchmark.svg": ROOT / "figures" / "benchmark.svg",
         "../benchmarks/results/latest.json": ROOT / "benchmarks" / "results" / "latest.json"}

CONFIG = f'''# nbgrader's configuration for the minigrad course (written by `make nbgrader`).
c = get_config()  # noqa: F821  (nbgrader provides it)
c.CourseDirectory.course_id = "{COURSE_ID}"
# A solution is replaced by nothing: the cell keeps the course's own stub above it
# ("push_gradients = None  # your code here"), so a blank notebook still runs top to bottom.
c.ClearSolutions.code_stub = {{"python": "# your code here"}}
c.ClearSolutions.text_stub = "Your answer here."
# The lectures' pictures and printed results stay in the release (the answers were cleared).
c.ClearOutput.enabled = False
# Training cells (chapter 10) take longer than nbgrader's default 30 s per cell.
c.Execute.timeout = 600
c.Execute.kernel_name = "python3"
'''


def metadata(cell, **fields):
    cell["metadata"]["nbgrader"] = {"schema_version": 3, "solution": False, "grade": False,
                                    "locked": False, **fields}


def check_expression(source):
    """The one expression a check cell evaluates (every course check is one call)."""
    body = ast.parse(source).body
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        raise ValueError(f"a check cell is one expression, got:\n{source}")
    return source.strip()


def piece_checked(expression):
    """'engine' for ``teach.check_piece("engine", push_gradients)``, else None."""
    call = ast.parse(expression).body[0].value
    if (isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "check_piece"
            and call.args and isinstance(call.args[0], ast.Constant)):
        return call.args[0].value
    return None


def method_calls(source, method):
    """The dotted names ``name`` of every ``name.method(...)`` call in source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [ast.unparse(node.func.value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == method]


def grader_cells(cells, lecture):
    """The lecture's cells with nbgrader's roles: (cells, {grade_id: points})."""
    out, points, exercise, locked_in = [], {}, 0, {}
    for index, original in enumerate(cells):
        if is_speaker_note(original):
            continue
        cell = json.loads(json.dumps(original))
        tags = cell["metadata"].get("tags", [])
        if clears_output(cell):
            cell["outputs"], cell["execution_count"] = [], None
        if "solution" in tags:
            exercise += 1
            stub = cell["metadata"].get("minigrad", {}).get("stub") or "# your code here"
            solution = "".join(cell["source"]).rstrip("\n")
            locked_in.update((name, exercise) for name in method_calls(solution, "lock"))
            cell["source"] = f"{stub}\n### BEGIN SOLUTION\n{solution}\n### END SOLUTION\n"
            cell["metadata"].get("jupyter", {}).pop("source_hidden", None)
            metadata(cell, solution=True, grade_id=f"{lecture}-answer-{exercise}")
        elif "check" in tags:
            expression = check_expression("".join(cell["source"]))
            piece = piece_checked(expression)
            revealed = [locked_in[n] for n in method_calls(expression, "reveal") if n in locked_in]
            number = revealed[0] if revealed else exercise
            grade_id = f"{lecture}-build-{piece}" if piece else f"{lecture}-exercise-{number}"
            points[grade_id] = BUILD_POINTS if piece else EXERCISE_POINTS
            cell["source"] = ("from minigrad.teach.checks import graded\n"
                              f"graded({expression})\n")
            metadata(cell, grade=True, locked=True, grade_id=grade_id, points=points[grade_id])
        else:
            metadata(cell, locked=True, grade_id=f"{lecture}-cell-{index}")
        out.append(cell)
    return out, points


def make_course(source, destination):
    """Write the nbgrader course folder; returns {lecture: {grade_id: points}}."""
    if destination.exists():
        shutil.rmtree(destination)
    (destination / "source").mkdir(parents=True)
    (destination / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    marking = {}
    for notebook in sorted(source.glob("[0-9][0-9]*_*.ipynb")):
        lecture = notebook.stem
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        nb["cells"], marking[lecture] = grader_cells(nb["cells"], lecture)
        folder = destination / "source" / lecture
        folder.mkdir()
        for cell in nb["cells"]:
            for outside, path in READS.items():
                source = "".join(cell["source"])
                if cell["cell_type"] == "code" and outside in source:
                    cell["source"] = source.replace(outside, path.name)
                    shutil.copy2(path, folder / path.name)
        (folder / notebook.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    return marking


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.exit("usage: python scripts/make_nbgrader.py [OUTPUT_FOLDER]  (default build/nbgrader)")
    destination = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "nbgrader"
    marking = make_course(ROOT / "notebooks", destination)
    total = sum(sum(p.values()) for p in marking.values())
    print(f"{len(marking)} lectures, {sum(map(len, marking.values()))} graded cells, "
          f"{total} points, in {destination}")


if __name__ == "__main__":
    main()
