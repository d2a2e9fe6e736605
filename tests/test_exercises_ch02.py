"""Chapter 2's exercise checks accept the right answers and reject wrong ones, never raising."""

import inspect
import json
import re
from pathlib import Path

import pytest

import minigrad as mg
from minigrad import teach
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch02

# the chapter's parts, in order: 02a_reading_the_graph, 02b_recording_the_graph
NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("02*_*.ipynb"))


def chapter_cells():
    """The cells of all parts of chapter 2, in order."""
    return [cell for path in NOTEBOOKS
            for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]


# ---------------------------------------------------------------- exercise 1: leaves

LEAVES = {"w", "features", "scaled", "b"}


def test_leaves_right_answer_in_any_container():
    for answer in (LEAVES, ["b", "scaled", "features", "w"], ("w", "features", "scaled", "b")):
        result = ch02.check_leaves(answer)
        assert result, result
        assert repr(result).startswith("✓")


def test_leaves_expected_set_comes_from_the_graph():
    tensors = ch02.leaf_quiz_tensors()
    assert {k for k, t in tensors.items() if t.is_leaf} == LEAVES


@pytest.mark.parametrize("answer, wrong", [
    ({"w"}, 3),                                       # forgets tensors that do not require grad
    ({"w", "features"}, 2),                           # computed from data: still a leaf
    ({"w", "features", "scaled"}, 1),                 # requires_grad_() makes no operation
    ({"w", "features", "scaled", "b", "h"}, 1),       # a computed, recorded tensor is no leaf
    ({"h", "loss"}, 6),                               # the opposite
    (set(), 4),
])
def test_leaves_wrong_answers_are_rejected_without_giving_the_answer(answer, wrong):
    result = ch02.check_leaves(answer)
    assert not result
    text = repr(result)
    assert text.startswith("✗") and f"{wrong} of the 6 tensors" in text and "wrong side" in text
    for name in ("scaled", "\"b\"", "features"):  # the hint does not name the answer
        assert name not in text


def test_leaves_odd_answers_get_a_helpful_message():
    assert "no answer yet" in repr(ch02.check_leaves(None))
    assert "no answer yet" in repr(ch02.check_leaves(MISSING))
    assert "strings" in repr(ch02.check_leaves({mg.tensor([1.0])}))
    assert "no tensor called" in repr(ch02.check_leaves({"w", "q"}))
    assert not ch02.check_leaves(42)
    assert not ch02.check_leaves([1, 2])
    assert not ch02.check_leaves("w")


# ---------------------------------------------------------------- exercise 2: grad_fn chain

EXPECTED_CHAIN = ["MeanBackward0", "PowBackward0", "SubBackward0", "MulBackward0",
                  "AccumulateGrad"]


def test_chain_reference_matches_pytorchs_names():
    assert ch02.first_input_chain(ch02.chain_quiz_loss()) == EXPECTED_CHAIN


def test_chain_right_answers():
    assert ch02.check_grad_fn_chain(EXPECTED_CHAIN)
    assert ch02.check_grad_fn_chain(tuple(EXPECTED_CHAIN))
    assert ch02.check_grad_fn_chain([f"<{n}>" for n in EXPECTED_CHAIN])
    assert ch02.check_grad_fn_chain(EXPECTED_CHAIN[:-1] + ["torch::autograd::AccumulateGrad"])


def test_chain_computed_by_walking_the_learners_own_graph():
    w = mg.tensor([0.5, -1.0], requires_grad=True)
    features = mg.tensor([1.0, 2.0])
    target = mg.tensor([1.0, 0.0])
    loss = ((w * features - target) ** 2).mean()
    chain, node = [], loss.grad_fn
    while node is not None:
        chain.append(node)  # the nodes themselves are accepted too
        node = node.next_functions[0][0] if node.next_functions else None
    assert ch02.check_grad_fn_chain(chain)


@pytest.mark.parametrize("answer, words", [
    (EXPECTED_CHAIN[:-1], "has 4 names"),                         # stops before the leaf
    (EXPECTED_CHAIN[::-1], "name 1"),                              # leaf first
    (["MeanBackward0", "PowBackward0", "SubBackward0", "MulBackward0", "AccumulateGrad",
      "AccumulateGrad"], "has 6 names"),
    (["MeanBackward0", "PowBackward1", "SubBackward0", "MulBackward0", "AccumulateGrad"],
     "the first 1 names are right"),
    (["mean", "pow", "sub", "mul", "leaf"], "name 1"),
])
def test_chain_wrong_answers(answer, words):
    result = ch02.check_grad_fn_chain(answer)
    assert not result
    assert words in repr(result)
    assert "Hint" in repr(result)


def test_chain_odd_answers():
    assert "no answer yet" in repr(ch02.check_grad_fn_chain(None))
    assert "single string" in repr(ch02.check_grad_fn_chain("MeanBackward0"))
    assert not ch02.check_grad_fn_chain(5)


# ---------------------------------------------------------------- exercise 3: count nodes

count_nodes = ch02.count_nodes_reference  # a right answer, as a learner would write it


def count_with_repeats(tensor):
    """Wrong: counts a node once per edge that leads to it."""
    def count(node):
        if node is None:
            return 0
        return 1 + sum(count(n) for n, _ in node.next_functions)
    return count(tensor.grad_fn)


def count_first_inputs_only(tensor):
    """Wrong: walks only the first input of each node."""
    return len(ch02.first_input_chain(tensor))


def count_without_leaves(tensor):
    """Wrong: forgets the AccumulateGrad nodes."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return len(seen)


def test_count_reference_numbers():
    counts = [ch02.count_nodes_reference(t) for _, t in ch02.count_nodes_cases()]
    assert counts == [3, 6, 5, 3, 9]


def test_count_nodes_right_answer():
    result = ch02.check_count_nodes(count_nodes)
    assert result and "all 5 graphs" in repr(result)


@pytest.mark.parametrize("wrong, words", [
    (count_with_repeats, "more than once"),
    (count_first_inputs_only, "missing"),
    (count_without_leaves, "missing"),
    (lambda t: 3, "the graph has 6 nodes"),
])
def test_count_nodes_wrong_answers(wrong, words):
    result = ch02.check_count_nodes(wrong)
    assert not result and words in repr(result)


def test_count_nodes_odd_answers():
    assert "define the function" in repr(ch02.check_count_nodes(None))
    assert "define the function" in repr(ch02.check_count_nodes(MISSING))
    assert "returned None" in repr(ch02.check_count_nodes(lambda t: None))
    assert "raised AttributeError" in repr(ch02.check_count_nodes(lambda t: t.nodes))
    assert "return a number" in repr(ch02.check_count_nodes(lambda t: "3"))


# ---------------------------------------------------------------- exercise 4: define-by-run

def notebook_function(name):
    """A function the chapter's notebooks define in a cell of its own (``def name(...)``)."""
    sources = ["".join(c["source"]) for c in chapter_cells() if c["cell_type"] == "code"]
    source = next(s for s in sources if s.startswith(f"def {name}("))
    names = {}
    exec(source, names)
    return names[name]


def test_dynamic_reference_numbers():
    assert ch02.dynamic_quiz_answer() == (7, [-16.0, -16.0])


def test_notebook_defines_the_same_function_as_the_check():
    mine = notebook_function("grow_then_sum")
    for values in ([1.0, 2.0], [3.0, -5.0], [0.5, -1.0], [-0.1, 0.2], [20.0, 1.0]):
        a, b = mg.tensor(values, requires_grad=True), mg.tensor(values, requires_grad=True)
        out_a, out_b = mine(a), ch02.grow_then_sum(b)
        assert out_a.item() == out_b.item()
        assert ch02.count_nodes_reference(out_a) == ch02.count_nodes_reference(out_b)


def test_the_graph_differs_with_the_input():
    small, big = mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([3.0, -5.0],
                                                                        requires_grad=True)
    out_small, out_big = ch02.grow_then_sum(small), ch02.grow_then_sum(big)
    assert ch02.count_nodes_reference(out_small) == 5
    assert ch02.count_nodes_reference(out_big) == 4
    assert type(out_small.grad_fn).__name__ == "SumBackward0"
    assert type(out_big.grad_fn).__name__ == "NegBackward0"


@pytest.fixture
def fresh_predictions():
    """Exercise 4 starts as in a fresh kernel: nothing locked in, nothing revealed."""
    for prediction in (ch02.DYNAMIC_NODES, ch02.DYNAMIC_GRAD):
        prediction.reset()
    yield
    for prediction in (ch02.DYNAMIC_NODES, ch02.DYNAMIC_GRAD):
        prediction.reset()


def learners_run():
    """The experiment of the notebook, run as a learner runs it: (nodes, x_new.grad)."""
    x_new = mg.tensor([0.5, -1.0], requires_grad=True)
    out_new = ch02.grow_then_sum(x_new)
    nodes = count_nodes(out_new)
    out_new.backward()
    return nodes, x_new.grad


@pytest.mark.parametrize("nodes, grad", [(7, -16), (7.0, -16.0)])
def test_dynamic_right_predictions_locked_then_revealed(fresh_predictions, nodes, grad):
    locked = ch02.lock_dynamic_graph(nodes, grad)
    assert locked and "locked in" in repr(locked) and "right" not in repr(locked)
    result = ch02.reveal_dynamic_graph()
    assert result and "all parts right" in repr(result)


def test_dynamic_the_experiment_agrees_with_the_reveal(fresh_predictions):
    nodes, grad = learners_run()
    assert ch02.lock_dynamic_graph(nodes, grad[0].item())  # plain numbers from the run
    assert ch02.reveal_dynamic_graph()


def test_dynamic_computed_values_are_refused(fresh_predictions):
    nodes, grad = learners_run()
    result = ch02.lock_dynamic_graph(mg.tensor(nodes), grad)  # tensors: run, not predicted
    assert not result and repr(result).count("not a") == 2


def test_dynamic_answers_from_the_examples_fail(fresh_predictions):
    # copying the chapter's printed numbers does not pass
    assert ch02.lock_dynamic_graph(5, 8.0)
    assert not ch02.reveal_dynamic_graph()


@pytest.mark.parametrize("nodes, words", [
    (6, "missing"),            # forgot AccumulateGrad, or the NegBackward0
    (5, "missing"),            # one doubling too few
    (9, "more than"),          # counted the norm and the comparison
    (8, "more than"),          # one doubling too many
])
def test_dynamic_wrong_node_counts(fresh_predictions, nodes, words):
    assert ch02.lock_dynamic_graph(nodes, -16.0)
    result = ch02.reveal_dynamic_graph()
    text = repr(result)
    assert not result and words in text
    assert "1 of 2 parts right" in text


@pytest.mark.parametrize("grad, words", [
    (16.0, "sign"),            # the other branch of the if
    (-8.0, "size"),            # one doubling too few
    (-32.0, "size"),           # one too many
    (8.0, "power of 2"),
])
def test_dynamic_wrong_gradients(fresh_predictions, grad, words):
    assert ch02.lock_dynamic_graph(7, grad)
    result = ch02.reveal_dynamic_graph()
    text = repr(result)
    assert not result and words in text
    assert "1 of 2 parts right" in text


def test_dynamic_no_prediction_and_odd_answers_never_raise(fresh_predictions):
    result = ch02.lock_dynamic_graph(None, MISSING)
    assert not result and repr(result).count("no prediction yet") == 2
    for odd in (object(), ..., mg.ones(3, 3), [[1.0], [2.0, 3.0]], True, "seven", 7.5j):
        assert not ch02.lock_dynamic_graph(odd, odd)


def test_dynamic_a_reveal_first_makes_later_predictions_not_count(fresh_predictions):
    assert not ch02.reveal_dynamic_graph()
    late = ch02.lock_dynamic_graph(7, -16)
    assert not late and "shown already" in repr(late)


def test_dynamic_lock_messages_do_not_give_the_answer(fresh_predictions):
    text = repr(ch02.lock_dynamic_graph(5, 8))
    assert "7" not in text and "16" not in text


def test_dynamic_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    mine = notebook_function("grow_then_sum")
    x_new = torch.tensor([0.5, -1.0], requires_grad=True)
    out_new = mine(x_new)
    nodes = ch02.count_nodes_reference(out_new)
    out_new.backward()
    assert (nodes, x_new.grad.tolist()) == ch02.dynamic_quiz_answer()


# ---------------------------------------------------------------- exercise 5: recording off

WATCHED = {"w", "h", "mixed"}
LEAVES_5 = {"w", "frozen", "w_new", "again"}


def test_recording_off_expected_sets_come_from_the_graph():
    tensors = ch02.recording_off_quiz_tensors()
    assert {k for k, t in tensors.items() if t.requires_grad} == WATCHED
    assert {k for k, t in tensors.items() if t.is_leaf} == LEAVES_5


def test_recording_off_right_answers_in_any_container():
    for watched, leaves in ((WATCHED, LEAVES_5), (sorted(WATCHED), tuple(LEAVES_5))):
        result = ch02.check_recording_off(watched, leaves)
        assert result, result
        assert "all parts right" in repr(result)


@pytest.mark.parametrize("watched, leaves, wrong_part", [
    ({"w", "h", "mixed", "frozen"}, LEAVES_5, "watched"),    # detach() keeps requires_grad?
    ({"w", "h", "mixed", "w_new", "again"}, LEAVES_5, "watched"),  # no_grad() outlives its block?
    ({"w", "h"}, LEAVES_5, "watched"),                       # a detached factor stops w's recording?
    (WATCHED, {"w", "frozen", "w_new", "again", "mixed"}, "leaves"),  # mixed was recorded
    (WATCHED, {"w", "frozen", "w_new"}, "leaves"),           # again: from data only, a leaf
    (WATCHED, {"frozen", "w_new", "again"}, "leaves"),       # w, made by us, is a leaf
])
def test_recording_off_wrong_answers_are_rejected_without_giving_the_answer(watched, leaves,
                                                                          wrong_part):
    result = ch02.check_recording_off(watched, leaves)
    text = repr(result)
    assert not result and "1 of 2 parts right" in text
    assert f"✗ {wrong_part}:" in text and "wrong side" in text and "Hint:" in text
    for name in ("mixed", "again", "frozen", "w_new"):  # the hints do not name the answer
        assert name not in text


def test_recording_off_odd_answers_never_raise():
    result = ch02.check_recording_off(None, MISSING)
    assert not result and repr(result).count("no answer yet") == 2
    assert "strings" in repr(ch02.check_recording_off({mg.tensor([1.0])}, LEAVES_5))
    assert "no tensor called" in repr(ch02.check_recording_off({"w", "q"}, LEAVES_5))
    for odd in (42, [1, 2], object(), ...):
        assert not ch02.check_recording_off(odd, odd)


# ---------------------------------------------------------------- graded only after taught

NOT_YET = re.compile(r"detach|no_grad")


def test_the_chapter_comes_in_two_parts():
    assert [p.name for p in NOTEBOOKS] == ["02a_reading_the_graph.ipynb",
                                           "02b_recording_the_graph.ipynb"]


def test_no_exercise_or_code_before_section_8_uses_detach_or_no_grad():
    # the issue: chapter 2 graded detach() and no_grad() before it taught them. Before section
    # 8 no exercise prompt, solution or check, and no code cell, names them (a title's goals,
    # part 1's "Next" line and speaker notes may announce them).
    cells = chapter_cells()
    sources = ["".join(c["source"]) for c in cells]
    section_8 = next(i for i, s in enumerate(sources) if s.startswith("## 8 · "))
    assert "no_grad()" in sources[section_8] and "detach()" in sources[section_8]
    exercises = [s for s, c in zip(sources[:section_8], cells[:section_8])
                 if c["cell_type"] == "code" or s.startswith("### Exercise")]
    assert len([s for s in exercises if s.startswith("### Exercise")]) == 4
    assert not [s for s in exercises if NOT_YET.search(s)]
    # exercise 5, which asks about both, comes after the section
    exercise_5 = next(i for i, s in enumerate(sources) if s.startswith("### Exercise 5"))
    assert exercise_5 > section_8
    assert "ch02.check_recording_off" in sources[exercise_5 + 2]


@pytest.mark.parametrize("builds", [ch02.leaf_quiz_tensors, ch02.chain_quiz_loss,
                                    ch02.count_nodes_cases, ch02.grow_then_sum])
def test_the_checks_of_exercises_1_to_4_use_neither(builds):
    assert not NOT_YET.search(inspect.getsource(builds))


def test_the_messages_of_exercises_1_to_4_name_neither(fresh_predictions):
    messages = [ch02.check_leaves(set()), ch02.check_leaves(LEAVES),
                ch02.check_grad_fn_chain([]), ch02.check_count_nodes(lambda t: 1),
                ch02.check_count_nodes(lambda t: 100), ch02.check_count_nodes(count_nodes),
                ch02.lock_dynamic_graph(6, 16.0), ch02.reveal_dynamic_graph()]
    for result in messages:
        assert not NOT_YET.search(repr(result)), repr(result)


# ---------------------------------------------------------------- two drawings side by side

def two_drawings():
    drawings = {}
    for values in ([1.0, 2.0], [3.0, -5.0]):
        x = mg.tensor(values, requires_grad=True)
        out = ch02.grow_then_sum(x)
        drawings[f"x = {values}"] = teach.draw_graph(out, names={"x": x}, view="grad_fn",
                                                     rankdir="TB", legend=False)
    return teach.side_by_side(drawings)


def test_side_by_side_text_has_each_caption_with_its_node_count():
    text = repr(two_drawings())
    assert text.startswith("x = [1.0, 2.0] · 5 nodes\ncomputation graph")
    assert "\n\nx = [3.0, -5.0] · 4 nodes\ncomputation graph" in text
    assert "NegBackward0" in text and "0x" not in text


def test_side_by_side_svg_holds_both_drawings_next_to_each_other():
    pytest.importorskip("graphviz")
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("graphviz's dot is not installed")
    shown = two_drawings()
    svg = shown._repr_mimebundle_()["image/svg+xml"]
    assert svg.startswith("<svg xmlns=") and svg.rstrip().endswith("</svg>")
    assert svg.count("<svg") == 3 and "<?xml" not in svg
    xs = [float(v) for v in re.findall(r'<svg x="([\d.]+)"', svg)]
    assert xs[0] == 0 and xs[1] > 100          # the second drawing starts right of the first
    assert "x = [1.0, 2.0] · 5 nodes" in svg and "x = [3.0, -5.0] · 4 nodes" in svg
    assert svg == two_drawings().svg()          # deterministic


def test_side_by_side_without_dot_shows_the_text(monkeypatch):
    import graphviz
    shown = two_drawings()

    def no_dot(*args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])
    for drawing in shown.drawings.values():
        monkeypatch.setattr(drawing, "pipe", no_dot)
    bundle = shown._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "apt-get install graphviz" in bundle["text/plain"]


# ---------------------------------------------------------------- 02a's prediction: one node per leaf

@pytest.fixture
def leaf_node():
    ch02.leaf_node_prediction.reset()
    yield ch02.leaf_node_prediction
    ch02.leaf_node_prediction.reset()


def torch_leaf_node_letter():
    torch = pytest.importorskip("torch")
    x = torch.tensor(2.0, requires_grad=True)
    (first, _), (second, _) = (x * x).grad_fn.next_functions
    assert type(first).__name__ == "AccumulateGrad"
    return "b" if first is second else "a"


def test_leaf_node_prediction_measures_what_pytorch_does(leaf_node):
    assert leaf_node.measure()[0] == torch_leaf_node_letter()
    assert leaf_node.lock(torch_leaf_node_letter())
    assert leaf_node.reveal()


def test_leaf_node_prediction_wrong_letters_get_the_hint(leaf_node):
    answer = torch_leaf_node_letter()
    for wrong in set(ch02.LEAF_NODE_CHOICES) - {answer}:
        leaf_node.reset()
        assert leaf_node.lock(wrong)
        result = leaf_node.reveal()
        assert not result and "how many leaves" in result.message


def test_leaf_node_prediction_refuses_a_node_or_a_boolean(leaf_node):
    x = mg.tensor(2.0, requires_grad=True)
    first = (x * x).grad_fn.next_functions[0][0]
    assert not leaf_node.lock(first)
    assert not leaf_node.lock(True)
    assert leaf_node.locked is None
