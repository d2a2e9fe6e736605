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
    (newest_first_walk(order=lambda nodes: nodes[::-1]),
     ["AddBackward0", "received no gradient", "never ran", "PowBackward0", "order is wrong"]),
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


# ------------------------------------------------------------ the mistakes students make

def kahn_walk(seed=lambda g: g, add=lambda a, b: a + b, count_once=False, keep=lambda t: t,
              skip_none=True):
    """The notebook's kind of walk (count the arrows, run what is ready), with one slip:
    ``seed`` changes the grad it is given, ``add`` sums a buffer, ``count_once`` counts a
    node once per parent (not per arrow), ``keep`` changes a total, ``skip_none=False``
    follows the (None, 0) entries of next_functions."""
    def push_gradients(root, grad):
        arrows_in, stack, seen = {}, [root], {root}
        while stack:
            node = stack.pop()
            nexts = [n for n, _ in node.next_functions if n is not None]
            if count_once:
                nexts = list(dict.fromkeys(nexts))
            for n in nexts:
                arrows_in[n] = arrows_in.get(n, 0) + 1
                if n not in seen:
                    seen.add(n)
                    stack.append(n)
        buffers, arrived, ready = {root: seed(grad)}, {}, [root]
        while ready:
            node = ready.pop()
            total = keep(buffers.pop(node))
            arrived[node] = total
            if hasattr(node, "variable"):
                continue
            for (n, _), g in zip(node.next_functions, node.apply(total)):
                if skip_none and (n is None or g is None):
                    continue
                buffers[n] = add(buffers[n], g) if n in buffers else g
                if n in arrows_in:
                    arrows_in[n] -= 1
                    if arrows_in[n] == 0:
                        ready.append(n)
        return arrived
    return push_gradients


def depth_first_order(root, grad):
    """Runs the nodes in the order a depth-first search meets them (not topological)."""
    order, seen, stack = [], {root}, [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for n, _ in node.next_functions:
            if n is not None and n not in seen:
                seen.add(n)
                stack.append(n)
    buffers, arrived = {root: grad}, {}
    for node in order:
        arrived[node] = total = buffers.pop(node)
        if not hasattr(node, "variable"):
            for (n, _), g in zip(node.next_functions, node.apply(total)):
                if n is not None and g is not None:
                    buffers[n] = buffers[n] + g if n in buffers else g
    return arrived


def queue_every_arrival(root, grad):
    """Breadth first, a node queued (and run) each time a gradient reaches it."""
    import collections
    queue, arrived = collections.deque([(root, grad)]), {}
    while queue:
        node, g = queue.popleft()
        arrived[node] = arrived[node] + g if node in arrived else g
        if not hasattr(node, "variable"):
            for (n, _), h in zip(node.next_functions, node.apply(g)):
                if n is not None and h is not None:
                    queue.append((n, h))
    return arrived


def reversed_order(root, grad):
    """Runs backward's order reversed (the leaves first), each node on what its buffer holds
    by then (zeros when nothing has arrived)."""
    buffers, arrived = {root: grad}, {}
    for node in graph.execution_order([root])[::-1]:
        total = buffers.pop(node, np.zeros_like(grad) if node is not root else grad)
        arrived[node] = total
        if not hasattr(node, "variable"):
            for (n, _), g in zip(node.next_functions, node.apply(total)):
                if n is not None and g is not None:
                    buffers[n] = buffers[n] + g if n in buffers else g
    return arrived


def root_gradient_for_every_node(root, grad):
    """Adds the buffers right, but runs every node on the root's gradient."""
    buffers, arrived = {root: grad}, {}
    for node in graph.execution_order([root]):
        if node not in buffers:
            continue
        arrived[node] = buffers.pop(node)
        if not hasattr(node, "variable"):
            for (n, _), g in zip(node.next_functions, node.apply(grad)):
                if n is not None and g is not None:
                    buffers[n] = buffers[n] + g if n in buffers else g
    return arrived


def leaves_only(root, grad):
    return {n: g for n, g in newest_first_walk()(root, grad).items() if hasattr(n, "variable")}


def test_the_kahn_walk_without_a_slip_passes():
    result = teach.check_piece("engine", kahn_walk())
    assert result, result.message


@pytest.mark.parametrize("wrong, words", [
    # seeds the root with ones and ignores the gradient it is given
    (kahn_walk(seed=lambda g: np.ones_like(g)),
     ["received 1.0; expected 0.58", "gradient of ones", "grad argument",
      "backward(gradient=v)"]),
    (kahn_walk(seed=lambda g: np.ones(np.shape(g))), ["gradient of ones", "grad argument"]),
    (kahn_walk(seed=lambda g: np.array(1.0)), ["gradient of ones", "grad argument"]),
    # sums buffers with np.add, or copies the seed: breaks every second derivative
    (kahn_walk(add=np.add), ["create_graph=True", "np.add", "add them with +", "Tensors"]),
    (kahn_walk(seed=np.copy), ["create_graph=True", "received a numpy array",
                               "second derivative", "must stay Tensors", "np.copy"]),
    (kahn_walk(seed=lambda g: g.copy()), ["create_graph=True", "no attribute 'copy'",
                                          "must stay Tensors"]),
    (kahn_walk(seed=np.asarray), ["create_graph=True", "numpy array", "must stay Tensors"]),
    # float32 graphs: a float64 slip
    (kahn_walk(keep=lambda t: np.asarray(t, dtype=float)),
     ["in float32", "PowBackward0", "is float64", "gives float32", "dtype"]),
    (kahn_walk(add=lambda a, b: np.zeros(np.shape(b)) + a + b),
     ["in float32", "AccumulateGrad (leaf a)", "is float64"]),
    # counts a node once per parent, not once per arrow (a * a)
    (kahn_walk(count_once=True), ["received [0.0, 0.0, 0.0]", "3 paths", "added"]),
    # follows the (None, 0) of an input without gradient
    (kahn_walk(skip_none=False), ["neuron", "TypeError", "(None, 0)", "Skip those"]),
    # runs the nodes in depth-first order: a node runs before its gradients have all arrived
    (depth_first_order, ["received 16.0; expected 64.0", "2 paths"]),
    (queue_every_arrival, ["ran 2 times", "once"]),
    # the order reversed: a node runs before the nodes that send it gradients
    (reversed_order, ["AddBackward0", "received 0.0; expected 16.0",
                      "ran before PowBackward0", "order is wrong"]),
    # every node runs on the root's gradient, not on its own total
    (root_gradient_for_every_node, ["received 1.0; expected 16.0", "AddBackward0",
                                    "not on its own total", "root's gradient"]),
    (leaves_only, ["PowBackward0", "received no gradient", "dict you return"]),
    (lambda root, grad: None, ["returned NoneType", "dict"]),
])
def test_a_typical_wrong_walk_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("engine", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


# ------------------------------------------------------------ minigrad's own is refused

def calls_propagate(root, grad):
    return dict(graph.propagate(graph.execution_order([root]), [root], [grad]))


def _helper(root, grad):
    return graph.propagate(graph.execution_order([root]), [root], [grad])


def through_a_helper(root, grad):
    return dict(_helper(root, grad))


def through_backward(root, grad):
    return graph.backward([root], [grad], capture=graph.execution_order([root]))


class CallableWalk:
    def __call__(self, root, grad):
        return dict(graph.propagate(graph.execution_order([root]), [root], [grad]))


@pytest.mark.parametrize("own, words", [
    (graph.propagate, ["this is minigrad's own graph.propagate"]),
    (__import__("functools").partial(graph.propagate), ["this is minigrad's own graph.propagate"]),
    (calls_propagate, ["it uses minigrad's own graph.propagate"]),
    (through_a_helper, ["it uses minigrad's own graph.propagate"]),
    (through_backward, ["it uses minigrad's own graph.propagate (through graph.backward)"]),
    (CallableWalk(), ["it uses minigrad's own graph.propagate"]),
])
def test_minigrads_own_walk_is_refused(own, words):
    result = teach.check_piece("engine", own)
    assert not result
    for word in words + ["compare minigrad with itself"]:
        assert word in result.message, result.message


def test_the_own_walk_is_captured_before_teach_use_patches_it(push_gradients):
    with teach.use(engine=kahn_walk(seed=lambda g: np.ones_like(g))):
        result = teach.check_piece("engine", push_gradients)
    assert result, result.message  # compared with minigrad's own, not the plugged walk


# ------------------------------------------------------------ what flows on with the walk

def test_backward_with_a_gradient_runs_through_the_walk_in_float32(push_gradients):
    v = np.array([0.5, -2.0], dtype=np.float32)
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    with teach.use(engine=push_gradients):
        (a * a + a).backward(gradient=mg.tensor(v))
    assert a.grad.dtype == mg.float32
    np.testing.assert_allclose(a.grad.numpy(), v * (2 * np.array([1.0, 2.0]) + 1))


def test_a_second_derivative_runs_through_the_walk(push_gradients):
    x = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    with teach.use(engine=push_gradients):
        (g,) = mg.autograd.grad((x.sin() * x * x).sum(), x, create_graph=True)
        (h,) = mg.autograd.grad(g.sum(), x)
    v = x.detach().numpy()
    # d/dx (2 x sin x + x^2 cos x) = 2 sin x + 4 x cos x - x^2 sin x
    np.testing.assert_allclose(h.numpy(), 2 * np.sin(v) + 4 * v * np.cos(v) - v * v * np.sin(v))


def test_a_walk_that_drops_the_tensors_is_stopped_inside_backward():
    x = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    with pytest.raises(build.Mismatch, match="must stay Tensors"):
        with teach.use(engine=kahn_walk(seed=np.copy)):
            mg.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
