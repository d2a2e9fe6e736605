"""``make student``: a copy of the course with every solution removed, for handing out.

Each cell tagged ``solution`` gets its stub instead (``metadata.minigrad.stub``, or
``# your code here``), shown open rather than collapsed; solution and check cells lose
their stored outputs, and so do the cells tagged ``compare-with-yours`` (a listing of
minigrad's own piece, placed after the build's check: the learner runs it once theirs
passes), the cells tagged ``experiment`` (the experiment between a prediction's lock and its
reveal: its stored output is the answer to predict) and the cells that run the learner's pieces (``teach.use``, ``teach.my_pieces``),
whose stored output is what the reference pieces printed. The speaker notes (cells of slide type ``notes``) are left out: they
are written for the instructor and discuss the exercises' answers. The checks still run in
the copy and say "no answer yet" until the learner writes one. The original notebooks are
only read.

    python scripts/make_student.py [output folder, default build/student]
"""

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STUB = "# your code here"


def is_speaker_note(cell):
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"


# Cells whose stored output would give an answer away: solutions, checks (a stored ✓),
# listings of minigrad's own piece shown after a build's check ("compare with yours"), and
# the experiment that a prediction is locked in before (teach.predictions).
CLEARED = {"solution", "check", "compare-with-yours", "experiment"}
# Calls that run the learner's pieces: their stored output is what the reference pieces did
# ("ran your op: True", "yours" for every piece), not what the learner's copy will print.
RUNS_YOUR_PIECES = ("teach.use(", "my_pieces(", "engine_or_stand_in(", "sgd_or_stand_in(",
                    "draw_engine_graph(", "engine_name(", "three_ways(")


def clears_output(cell):
    """Is this cell's stored output left out of a copy for learners (``make student`` and
    ``make nbgrader`` alike)?"""
    source = "".join(cell["source"])
    return cell["cell_type"] == "code" and bool(
        CLEARED & set(cell.get("metadata", {}).get("tags", []))
        or any(call in source for call in RUNS_YOUR_PIECES))


def student_cell(cell):
    tags = cell.get("metadata", {}).get("tags", [])
    if not clears_output(cell):
        return cell
    cell = json.loads(json.dumps(cell))
    cell["outputs"], cell["execution_count"] = [], None
    if "solution" in tags:
        stub = cell["metadata"].get("minigrad", {}).get("stub") or DEFAULT_STUB
        cell["source"] = stub
        cell["metadata"].pop("minigrad", None)
        cell["metadata"].get("jupyter", {}).pop("source_hidden", None)
        cell["metadata"]["tags"] = [t for t in tags if t != "solution"] + ["exercise"]
        if cell["metadata"].get("slideshow", {}).get("slide_type") in ("fragment", "subslide"):
            # The course's decks reveal a solution on a click or on a slide of its own (a
            # long one); a one-line stub stays with its question.
            cell["metadata"]["slideshow"]["slide_type"] = "-"
    return cell


def make_student_copy(source, destination):
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for notebook in sorted(source.glob("*.ipynb")):
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        nb["cells"] = [student_cell(c) for c in nb["cells"] if not is_speaker_note(c)]
        target = destination / notebook.name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    figures = ROOT / "figures"
    if figures.exists():  # the notebooks write ../figures/
        shutil.copytree(figures, destination.parent / "figures", dirs_exist_ok=True)
    bench = ROOT / "benchmarks" / "results" / "latest.json"
    if bench.exists():  # chapter 11b's speed table reads the stored run
        (destination.parent / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
        shutil.copy2(bench, destination.parent / "benchmarks" / "results" / "latest.json")
    return written


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.exit("usage: python scripts/make_student.py [OUTPUT_FOLDER]  "
                 "(default build/student/notebooks; figures/ goes next to it)")
    destination = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "student" / "notebooks"
    written = make_student_copy(ROOT / "notebooks", destination)
    print(f"{len(written)} notebooks without solutions in {destination}")


if __name__ == "__main__":
    main()
