"""Chapter 3's build exercise (the engine's walk, ``push_gradients``): the notebook's
solution passes its check, typical wrong walks fail it with the message a learner needs,
and ``teach.use`` really runs the learner's walk inside ``backward()``."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import graph, teach
from minigrad.teach import build

from build_cells import solution


@pytest.fixture(scope="module")
def push_gradients():
    return solution("03", "push_gradients")


def newest_first_walk(add=True, run_leaves=False, order=None, in_place=False):
    """A walk over graph.execution_order: right with the defaults; ``add=False`` overwrites
    a buffer, ``run_leaves=True`` runs AccumulateGrad itself, ``order`` reorders,
    ``in_place=True`` adds into the array that arrived."""
    def walk(root, grad):
        nodes = graph.execution_order([root])
        if order is not None:
            nodes = order(nodes)
        buffers, arrived = {root: grad}, {}
        for node in nodes:
            if node not in buffers:
                continue
            total = buffers.pop(node)
            arrived[node] = total
            if hasattr(node, "variable"):
                if run_leaves:
                    node.apply(total)
                continue
            for (nxt, _), g in zip(node.next_functions, node.apply(total)):
                if nxt is None or g is None:
                    continue
                if in_place and nxt in buffers:
                    buffers[nxt] += g
                else:
                    buffers[nxt] = buffers[nxt] + g if add and nxt in buffers else g
        return arrived
    return walk


def road_by_road(root, grad):
    """Follows every path on its own: right sums, but a node runs once per path."""
    arrived = {}

    def visit(node, g):
        arrived[node] = arrived.get(node, 0) + g
        if not hasattr(node, "variable"):
            for (nxt, _), h in zip(node.next_functions, node.apply(g)):
                if nxt is not None and h is not None:
                    visit(nxt, h)
    visit(root, grad)
    return arrived


def test_the_notebooks_walk_passes(push_gradients):
    result = teach.check_piece("engine", push_gradients)
    assert result, result.message
    assert "200 random" in result.message


def test_a_reference_walk_over_minigrads_order_passes():
    assert teach.check_piece("engine", newest_first_walk())


@pytest.mark.parametrize("wrong, words", [
    (newest_first_walk(add=False), ["received 48.0; expected 64.0", "2 paths", "added"]),
    (road_by_road, ["ran 2 times", "once"]),
    (newest_first_walk(run_leaves=True), ["leaf a got a .grad", "AccumulateGrad"]),
    (newest_first_walk(order=lambda nodes: nodes[::-1]), ["received no gradient"]),
    (newest_first_walk(order=lambda nodes: nodes[:-1]), ["received no gradient"]),
    (lambda root, grad: [root], ["returned list", "dict"]),
    (newest_first_walk(in_place=True), ["read-only", "a new array"]),
])
def test_a_wrong_walk_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("engine", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_a_walk_that_raises_is_reported_not_raised():
    def broken(root, grad):
        raise KeyError("no buffer")
    result = teach.check_piece("engine", broken)
    assert not result and "KeyError" in result.message


def test_not_written_yet_leaves_minigrads_own_walk():
    result = teach.check_piece("engine", None)
    assert not result and "not written yet" in result.message
    a = mg.tensor(2.0, requires_grad=True)
    with teach.use(engine=None):
        ((a * 3.0 + a) ** 2).backward()
    assert a.grad.item() == 64.0


def test_use_runs_the_learners_walk_and_puts_minigrads_back(push_gradients):
    calls = []

    def counted(root, grad):
        calls.append(root.name())
        return push_gradients(root, grad)

    own = graph.propagate
    a = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    with teach.use(engine=counted):
        assert graph.propagate is not own
        ((a * a + a) ** 2).sum().backward()
    assert calls == ["SumBackward0"]
    assert graph.propagate is own
    np.testing.assert_allclose(a.grad.numpy(), [12.0, 60.0])
    with pytest.raises(ZeroDivisionError):
        with teach.use(engine=counted):
            1 / 0
    assert graph.propagate is own


def test_autograd_grad_still_works_with_the_walk_plugged_in(push_gradients):
    x = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    with teach.use(engine=push_gradients):
        (g,) = mg.autograd.grad((x.sin() * x).sum(), x)
    v = x.detach().numpy()
    np.testing.assert_allclose(g.numpy(), np.sin(v) + v * np.cos(v))


def test_an_unknown_piece_is_named():
    with pytest.raises(ValueError, match="no piece named 'engin'"):
        with teach.use(engin=None):
            pass


def test_every_registered_piece_names_its_chapter_and_definition():
    pieces = build.pieces()
    assert [p.name for p in pieces if p.chapter == "03"] == ["engine"]
    for piece in pieces:
        assert piece.chapter.isdigit() and piece.defines.isidentifier() and piece.summary
