"""Chapter 2's exercise checks accept the right answers and reject wrong ones, never raising."""

import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch02


# ---------------------------------------------------------------- exercise 1: leaves

def test_leaves_right_answer_in_any_container():
    for answer in ({"w", "features", "frozen", "w_new"}, ["w_new", "frozen", "features", "w"],
                   ("w", "features", "frozen", "w_new")):
        result = ch02.check_leaves(answer)
        assert result, result
        assert repr(result).startswith("✓")


def test_leaves_expected_set_comes_from_the_graph():
    tensors = ch02.leaf_quiz_tensors()
    assert {k for k, t in tensors.items() if t.is_leaf} == {"w", "features", "frozen", "w_new"}


@pytest.mark.parametrize("answer", [
    {"w"},                                    # forgets tensors that do not require grad
    {"w", "features"},                        # forgets detach and no_grad
    {"w", "features", "frozen", "w_new", "h"},       # a computed tensor is not a leaf
    {"w", "features", "frozen"},              # no_grad results are leaves too
    {"h", "loss"},                            # the opposite
    set(),
])
def test_leaves_wrong_answers_are_rejected_without_giving_the_answer(answer):
    result = ch02.check_leaves(answer)
    assert not result
    text = repr(result)
    assert text.startswith("✗") and "wrong side" in text
    for name in ("frozen", "w_new"):  # the hint does not name the answer
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
