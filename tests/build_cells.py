"""The build exercises' reference solutions, read from the notebooks (tests of the build
track, ``minigrad.teach.build``): each ``build`` cell runs on its own after the prelude, as
chapter 10's ``teach.my_pieces()`` runs it."""

import json
from pathlib import Path

from minigrad.teach import build

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def build_cells(chapter):
    """The sources of the cells tagged ``build`` in chapter ``chapter`` ("03"), in all its
    parts (03a_..., 03b_...) in order."""
    sources = []
    for notebook in sorted(NOTEBOOKS.glob(f"{chapter}*_*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        sources += ["".join(c["source"]) for c in cells if "build" in c["metadata"].get("tags", [])]
    assert sources, f"chapter {chapter} has no build cell"
    return sources


def solution(chapter, name):
    """The object the chapter's build cells define under ``name``: the reference piece."""
    names = {"__name__": "__build__"}
    for source in build_cells(chapter):
        exec(compile(build.PRELUDE + source, f"<build cell of chapter {chapter}>", "exec"), names)
    return names[name]
