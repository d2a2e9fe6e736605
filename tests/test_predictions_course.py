"""Predict, then run, in every lecture (``teach.predictions``): scans every notebook for the
cells that call a ``Prediction``'s ``lock`` and ``reveal`` and checks the order that makes a
prediction count, so that a lecture written later keeps it:

- each ``reveal()`` comes after a ``lock(...)`` of the same prediction, with the experiment
  (at least one code cell) between them, and each locked prediction is revealed;
- the learner's answer is written, not computed: the lock's argument is a literal (a letter,
  a number, arithmetic on numbers, a tuple of sizes), or a name that a solution cell sets to
  one; the lock or that solution cell is tagged ``solution`` and its stub locks ``None``;
- in the student copy (``scripts/make_student.py``) nothing shows the answer before the
  lock: the reveal is a ``check`` cell and the experiment's cells are tagged ``experiment``,
  so their stored outputs are left out;
- each name locked is a ``Prediction`` of the lecture's exercise module.
"""

import ast
import importlib
import importlib.util
import json
from pathlib import Path

import pytest

from minigrad.teach.predictions import Prediction

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)

# Lectures that have a prediction exercise now: each must keep one.
WITH_PREDICTIONS = ("00_welcome", "01b_exact_derivatives", "02a_reading_the_graph",
                    "02b_recording_the_graph", "04b_retain_graph_and_hooks", "05a_tensors",
                    "06b_sequential_and_state", "07a_mse_and_cross_entropy",
                    "07b_nll_and_stable_log_softmax", "08c_adam", "11b_engine_and_speed",
                    "12a_signals_through_depth")


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def parse(source):
    try:
        return ast.parse(source)
    except SyntaxError:  # a cell magic or a stub with "..." in it
        return None


def calls(source, method):
    """[(the prediction's dotted name, the call node)] for ``name.method(...)`` in source,
    and for a module's function that locks or reveals several predictions at once,
    ``chNN.method_what(...)``, named ``chNN.what``."""
    tree = parse(source)
    found = []
    for node in ast.walk(tree) if tree else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, (ast.Attribute, ast.Name))):
            continue
        owner = ast.unparse(node.func.value)
        if node.func.attr == method:
            found.append((owner, node))
        elif node.func.attr.startswith(method + "_") and owner.startswith("ch"):
            found.append((f"{owner}.{node.func.attr[len(method) + 1:]}", node))
    return found


def is_function_form(call):
    """``chNN.lock_what(...)``: a function of the exercise module, not a Prediction's method."""
    return call.func.attr not in ("lock", "reveal")


def written_by_hand(node):
    """A literal a learner writes: a letter or word, a number, arithmetic on numbers, or a
    tuple/list of whole numbers. No name, no call, no attribute: nothing that runs code."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return written_by_hand(node.operand)
    if isinstance(node, ast.BinOp):
        return all(isinstance(side, (ast.Constant, ast.BinOp, ast.UnaryOp))
                   and written_by_hand(side) for side in (node.left, node.right))
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
    return False


def assigned(source, name):
    """The value nodes assigned to ``name`` in source."""
    tree = parse(source)
    values = []
    for node in ast.walk(tree) if tree else ():
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                values.append(node.value)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                values += [v for t, v in zip(target.elts, node.value.elts)
                           if isinstance(t, ast.Name) and t.id == name]
    return values


def predictions_of(cells):
    """{name: (lock cell index, reveal cell index or None)}, in notebook order; a reveal
    without a lock before it is recorded with lock None."""
    found = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        for name, _ in calls(source, "lock"):
            entry = found.setdefault(name, [None, None])
            if entry[0] is None:
                entry[0] = i
        for name, _ in calls(source, "reveal"):
            entry = found.setdefault(name, [None, None])
            if entry[1] is None:
                entry[1] = i
    return {name: tuple(entry) for name, entry in found.items()}


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_reveal_comes_after_its_lock_and_an_experiment(path):
    cells = load(path)
    for name, (lock, reveal) in predictions_of(cells).items():
        assert lock is not None, f"{path.name}: {name}.reveal() with no {name}.lock(...) before it"
        assert reveal is not None, f"{path.name}: {name} is locked in cell {lock} and never revealed"
        assert reveal > lock, f"{path.name}: {name} is revealed (cell {reveal}) before its lock"
        between = [c for c in cells[lock + 1:reveal] if c["cell_type"] == "code"]
        # the experiment: code cells between, or code before the reveal in its own cell
        reveal_tree = parse("".join(cells[reveal]["source"]))
        assert between or (reveal_tree and len(reveal_tree.body) > 1), (
            f"{path.name}: no experiment between {name}'s lock and its reveal")
        for cell in between:
            assert set(tags(cell)) & {"experiment", "solution", "check", "compare-with-yours"}, (
                f"{path.name}: a cell of {name}'s experiment is not tagged 'experiment' (its "
                f"stored output would show the answer in the student copy):\n"
                + "".join(cell["source"]))
        assert "check" in tags(cells[reveal]), f"{path.name}: {name}'s reveal is not a check cell"


def assert_written_by_hand(path, cells, lock, name, answer):
    """``answer`` (an argument of the lock) is a literal, or a name that a solution cell
    before the lock sets to one and whose stub sets it to None."""
    if isinstance(answer, ast.Name):
        sources = [(c, assigned("".join(c["source"]), answer.id))
                   for c in cells[:lock + 1] if "solution" in tags(c)]
        sources = [(c, values) for c, values in sources if values]
        assert sources, f"{path.name}: no solution cell sets {answer.id} before {name}'s lock"
        cell, values = sources[-1]
        assert all(written_by_hand(v) for v in values), (
            f"{path.name}: {answer.id} is computed, not written: " + "".join(cell["source"]))
        stub = cell["metadata"].get("minigrad", {}).get("stub", "")
        assert all(isinstance(v, ast.Constant) and v.value is None
                   for v in assigned(stub, answer.id)), f"{path.name}: stub {stub!r}"
        return True
    assert written_by_hand(answer), (
        f"{path.name}: {name}'s lock({ast.unparse(answer)}) computes the answer; a "
        "prediction is a letter, a number or a shape written by hand")
    return False


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_prediction_locked_is_written_not_computed(path):
    cells = load(path)
    for name, (lock, _) in predictions_of(cells).items():
        if lock is None:
            continue
        cell = cells[lock]
        (_, call), = [(n, c) for n, c in calls("".join(cell["source"]), "lock") if n == name]
        if not is_function_form(call):
            assert len(call.args) == 1 and not call.keywords, (
                f"{path.name}: {name}.lock takes one answer")
        assert call.args, f"{path.name}: {name}'s lock has no answer"
        by_name = [assert_written_by_hand(path, cells, lock, name, a) for a in call.args]
        if not all(by_name):  # a literal in the lock itself: the lock is the solution cell
            assert "solution" in tags(cell), f"{path.name}: {name}'s lock is not a solution cell"
            stub = cell["metadata"].get("minigrad", {}).get("stub", "")
            stub_calls = [c for n, c in calls(stub, "lock") if n == name]
            assert stub_calls and all(isinstance(a, ast.Constant) and a.value is None
                                      for c in stub_calls for a in c.args), (
                f"{path.name}: the stub of {name}'s lock must lock None, not {stub!r}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_student_copy_shows_nothing_of_the_answer_before_the_reveal(path):
    cells = load(path)
    for name, (lock, reveal) in predictions_of(cells).items():
        if lock is None or reveal is None:
            continue
        copied = [make_student.student_cell(c) for c in cells[lock:reveal + 1]]
        for cell in copied:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [], (
                    f"{path.name}: the student copy keeps an output between {name}'s lock and "
                    "reveal:\n" + "".join(cell["source"]))
        (_, call), = [(n, c) for n, c in calls("".join(cells[lock]["source"]), "lock")
                      if n == name]
        # the learner's answer: None in the lock's stub, or names a solution cell's stub sets
        # to None (test_the_prediction_locked_is_written_not_computed checks those)
        assert "None" in "".join(copied[0]["source"]) or any(
            "None" in "".join(c["source"]) for c in copied if "exercise" in tags(c)) or all(
            isinstance(a, ast.Name) for a in call.args)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_name_locked_is_a_prediction_of_the_lectures_exercises(path):
    chapter = path.stem[:2]
    for name in predictions_of(load(path)):
        module_name, _, attribute = name.rpartition(".")
        assert module_name == f"ch{chapter}", f"{path.name}: {name} is not ch{chapter}'s"
        module = importlib.import_module(f"minigrad.teach.exercises.ch{chapter}")
        if callable(getattr(module, f"lock_{attribute}", None)):  # the function form
            assert callable(getattr(module, f"reveal_{attribute}", None)), f"{path.name}: {name}"
            assert any(isinstance(v, Prediction) for v in vars(module).values()), path.name
            continue
        assert isinstance(getattr(module, attribute, None), Prediction), f"{path.name}: {name}"


def test_the_lectures_with_a_prediction_keep_it():
    stems = {p.stem: p for p in NOTEBOOKS}
    for stem in WITH_PREDICTIONS:
        assert stem in stems, f"{stem} is gone"
        assert predictions_of(load(stems[stem])), f"{stem} has no prediction exercise any more"


def test_the_scan_finds_what_it_must_refuse():
    """The rules above can fail: a computed answer, a reveal first, a missing experiment."""
    assert not written_by_hand(ast.parse("tuple(x.shape)", mode="eval").body)
    assert not written_by_hand(ast.parse("x.grad.item()", mode="eval").body)
    assert not written_by_hand(ast.parse("True", mode="eval").body)
    assert written_by_hand(ast.parse("(8 * 3 + 8) + 9", mode="eval").body)
    assert written_by_hand(ast.parse("(2, 4, 3)", mode="eval").body)
    assert written_by_hand(ast.parse("'b'", mode="eval").body)
    cell = lambda source, *t: {"cell_type": "code", "source": source,
                               "metadata": {"tags": list(t)}, "outputs": []}
    backwards = [cell("ch00.p.reveal()", "check"), cell("ch00.p.lock('a')", "solution")]
    assert predictions_of(backwards)["ch00.p"] == (1, 0)
    assert predictions_of([cell("ch00.p.reveal()", "check")])["ch00.p"] == (None, 0)


def test_the_scan_sees_the_function_form():
    """``chNN.lock_what(a, b)`` locks ``chNN.what``; its answers are held to the same rules."""
    (name, call), = calls("ch02.lock_dynamic_graph(nodes, 3)", "lock")
    assert name == "ch02.dynamic_graph" and is_function_form(call)
    assert [n for n, _ in calls("ch02.reveal_dynamic_graph()", "reveal")] == [name]
    assert assigned("a, b = 9, 9", "b")[0].value == 9
    assert not calls("np.lock_step(1)", "lock")  # only an exercise module's functions
