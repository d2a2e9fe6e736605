"""scripts/lint_notebooks.py: the lecture-length rule (a notebook is one lecture) counts what
it says it counts, and flags what it says it flags."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("lint_notebooks", ROOT / "scripts" / "lint_notebooks.py")
lint_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lint_notebooks)


def cell(kind="markdown", slide="slide", text="", tags=()):
    return {"cell_type": kind, "source": [text],
            "metadata": {"slideshow": {"slide_type": slide}, "tags": list(tags)}}


def lecture(slides, exercises=0, title="# 99 · A lecture\n*About 30 minutes.*"):
    cells = [cell(text=title)] + [cell(text=f"## {i}") for i in range(slides - 1)]
    cells += [cell("code", "-", "answer = 1", ["solution"]) for _ in range(exercises)]
    return cells


def test_slides_exercises_and_minutes_are_counted():
    cells = lecture(20, exercises=2) + [cell(slide="fragment"), cell(slide="notes"), cell(slide="-")]
    assert lint_notebooks.lecture_length(cells) == (20, 2, 30)  # 24 + 6 = 30
    build = cell("code", "-", "Piece = None", ["solution", "build"])
    assert lint_notebooks.lecture_length(cells + [build]) == (20, 3, 40)  # 24 + 9 + 5 = 38


def test_a_deep_dive_is_left_out_of_the_lecture_but_must_say_so():
    deep = [cell(text="## Deep dive (optional): the recorder", tags=["deep-dive"]),
            cell(text="more", tags=["deep-dive"])]
    cells = lecture(20) + deep
    assert lint_notebooks.lecture_length(cells)[0] == 20
    assert lint_notebooks.lint_length(cells) == []
    unmarked = lecture(20) + [cell(text="## The recorder", tags=["deep-dive"])]
    assert any("Deep dive" in f for f in lint_notebooks.lint_length(unmarked))


def test_too_long_or_an_understated_time_is_flagged():
    assert any("31 slides" in f for f in lint_notebooks.lint_length(lecture(31)))
    assert any("need about 35" in f for f in lint_notebooks.lint_length(lecture(25, 1)))
    assert any("states no time" in f for f in lint_notebooks.lint_length(lecture(5, title="# 99")))
    assert lint_notebooks.lint_length(lecture(25, title="# 99\n*about 30 minutes*")) == []


def test_the_lengths_table_has_a_row_per_lecture(tmp_path, capsys):
    import json
    (tmp_path / "99_one.ipynb").write_text(json.dumps({"cells": lecture(20, 2)}))
    (tmp_path / "99_two.ipynb").write_text(json.dumps({"cells": lecture(10, title="# 99")}))
    lint_notebooks.print_lengths(sorted(tmp_path.glob("*.ipynb")))
    rows = capsys.readouterr().out.splitlines()[2:]
    assert rows == ["| 99_one | 20 | 2 | 30 | 30 |  |  |  |", "| 99_two | 10 | 0 | 15 | - |  |  |  |"]


def build_cell(minutes=None, homework=False):
    piece = cell("code", "-", "Piece = None", ["solution", "build"])
    if minutes is not None:
        piece["metadata"]["minigrad"] = {"build_minutes": minutes, "homework": homework}
    return piece


def test_a_build_counts_the_minutes_it_states_and_must_state_them():
    cells = lecture(20, exercises=1)  # 24 + 3 = 27
    assert lint_notebooks.lecture_length(cells + [build_cell(12)]) == (20, 2, 40)  # 27 + 12
    assert any("states no build_minutes" in f for f in lint_notebooks.lint_length(cells + [build_cell()]))


def test_a_homework_build_is_stated_apart_on_the_title_slide():
    title = "# 99\n*Time:* about 30 minutes; *homework:* the build, about 25 minutes"
    cells = lecture(20, exercises=1, title=title) + [build_cell(25, homework=True)]
    assert lint_notebooks.lecture_length(cells)[2] == 30
    assert lint_notebooks.lint_length(cells) == []
    unstated = lecture(20, exercises=1, title="# 99\n*about 30 minutes*") + [build_cell(25, True)]
    assert any("homework" in f for f in lint_notebooks.lint_length(unstated))
    short = lecture(20, 1, title=title.replace("25 minutes", "10 minutes")) + [build_cell(25, True)]
    assert any("about 25 minutes" in f for f in lint_notebooks.lint_length(short))


def test_a_listing_of_minigrads_own_piece_must_wait_for_the_learners():
    listing = cell("code", "-", "teach.show_source(optim.SGD.step)", ["compare-with-yours"])
    assert any('after="<piece>"' in f for f in lint_notebooks.lint_length(lecture(20) + [listing]))
    listing["source"] = ['teach.show_source(optim.SGD.step, after="sgd")']
    assert lint_notebooks.lint_length(lecture(20) + [listing]) == []
