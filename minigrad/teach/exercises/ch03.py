"""Exercise checks of chapter 3 (backward): a gradient by hand, the order of the backward
pass, and a custom Function whose backward must pass gradcheck.

Every check computes the right answer itself with minigrad, never raises, and returns a
``CheckResult`` whose hints point the way without giving the answer.
"""

import contextlib

import numpy as np

from ... import graph
from ...autograd import Function, gradcheck
from ...creation import tensor
from ...dtypes import float64
from ..build import Mismatch, Piece, register
from ..build import show as _show
from ..checks import CheckResult, check
from ..checks import no_answer as _missing

__all__ = ["NEURON", "neuron_graph", "order_graph", "check_neuron_gradients",
           "check_backward_order", "check_sigmoid"]

# Exercise 1: loss = (tanh(w * x + b) - target) ** 2 at these numbers.
NEURON = {"x": 2.0, "w": -0.5, "b": 0.3, "target": 1.0}


# ---------------------------------------------------------------- exercise 1

def neuron_graph():
    """The neuron of exercise 1 in minigrad (float64): returns w, b and the loss."""
    x = tensor(NEURON["x"], dtype=float64)
    w = tensor(NEURON["w"], dtype=float64, requires_grad=True)
    b = tensor(NEURON["b"], dtype=float64, requires_grad=True)
    loss = ((w * x + b).tanh() - NEURON["target"]) ** 2
    return w, b, loss


def check_neuron_gradients(grad_w, grad_b):
    """Exercise 1: d loss / d w and d loss / d b, worked out by hand."""
    if _missing(grad_w) or _missing(grad_b):
        return CheckResult(False, "gradients of the neuron: no answer yet. Set grad_w and "
                                  "grad_b in the cell above and run it, then run this check "
                                  "again.")
    w, b, loss = neuron_graph()
    loss.backward()
    hint = ("multiply the local derivatives from the loss back to the parameter: "
            "d loss/d y = 2 (y - target), d y/d z = 1 - tanh(z)**2 (that is 1 - y**2), "
            "and d z/d w = x, d z/d b = 1.")
    results = [check("grad_w", grad_w, w.grad, tol=1e-4, hint=hint),
               check("grad_b", grad_b, b.grad, tol=1e-4, hint=hint)]
    for result in results:
        if not result:
            if (check("grad_w", grad_w, b.grad, tol=1e-4)
                    and check("grad_b", grad_b, w.grad, tol=1e-4)):
                return CheckResult(False, "gradients of the neuron: your two numbers are the "
                                          "right ones, but swapped: which one has the factor "
                                          "x = d z/d w in it?")
            return result
    return CheckResult(True, "gradients of the neuron: correct! backward() agrees: "
                             f"w.grad = {w.grad.item():.4f}, b.grad = {b.grad.item():.4f}.")


# ---------------------------------------------------------------- exercise 2

def order_graph():
    """The graph of exercise 2: u = x * w, v = u.exp(), s = u + v, out = s ** 2."""
    x = tensor(0.5, requires_grad=True)
    w = tensor(-1.5, requires_grad=True)
    u = x * w
    v = u.exp()
    s = u + v
    out = s ** 2
    return out


def _node_name(node):
    return type(node).__name__


def _clean(name):
    """'torch::autograd::AccumulateGrad' (PyTorch's node.name()) -> 'AccumulateGrad'."""
    return name.strip().split("::")[-1].strip("<>")


def check_backward_order(order):
    """Exercise 2: the names of the backward nodes of ``order_graph()`` in the order backward
    runs them. Any order in which each node comes after every node that sends it a gradient
    is accepted (for this graph there is exactly one)."""
    name = "backward order"
    if _missing(order):
        return CheckResult(False, f"{name}: no answer yet. Set order to a list of node names "
                                  "in the cell above and run it, then run this check again.")
    if isinstance(order, str) or not all(isinstance(n, str) for n in order):
        return CheckResult(False, f"{name}: expected a list of names (strings) such as "
                                  "['PowBackward0', ...], got " + repr(order) + ".")
    answer = [_clean(n) for n in order]
    out = order_graph()
    nodes = graph.execution_order([out.grad_fn])
    known = sorted({_node_name(n) for n in nodes})
    unknown = [n for n in answer if n not in known]
    if unknown:
        return CheckResult(False, f"{name}: {unknown[0]!r} is not a node of this graph. Its "
                                  f"nodes are named {', '.join(known)} (some appear more than "
                                  "once).")
    if len(answer) != len(nodes):
        return CheckResult(False, f"{name}: backward runs {len(nodes)} nodes here, your list "
                                  f"has {len(answer)}. Count one node per operation and one "
                                  "AccumulateGrad per leaf that requires grad.")
    waiting = {}
    for node in nodes:
        for nxt in node.inputs:
            if nxt is not None:
                waiting[nxt] = waiting.get(nxt, 0) + 1
    remaining = list(nodes)
    for position, wanted in enumerate(answer, start=1):
        ready = [n for n in remaining if waiting.get(n, 0) == 0 and _node_name(n) == wanted]
        if not ready:
            if position == 1:
                return CheckResult(False, f"{name}: {wanted} cannot run first. Backward starts "
                                          "at the node that made the output: out.grad_fn.")
            return CheckResult(False, f"{name}: at position {position}, {wanted} would run "
                                      "before every gradient for it has arrived. Which nodes "
                                      f"send {wanted} a gradient, and have they all run?")
        node = ready[0]
        remaining.remove(node)
        for nxt in node.inputs:
            if nxt is not None:
                waiting[nxt] -= 1
    return CheckResult(True, f"{name}: correct! Every node runs after all the nodes that send "
                             "it a gradient.")


# ---------------------------------------------------------------- exercise 3

_SIGMOID_INPUTS = [-2.0, -0.5, 0.0, 1.5, 3.0]


def check_sigmoid(function_class):
    """Exercise 3: a ``Function`` subclass computing the sigmoid whose backward passes
    gradcheck."""
    name = "MySigmoid"
    if _missing(function_class):
        return CheckResult(False, f"{name}: no answer yet. Define the class in the cell above "
                                  "and run it, then run this check again.")
    if not (isinstance(function_class, type) and issubclass(function_class, Function)):
        return CheckResult(False, f"{name}: expected a class that subclasses "
                                  "mg.autograd.Function (class MySigmoid(mg.autograd.Function): "
                                  "...), got " + type(function_class).__name__ + ".")
    x = tensor(_SIGMOID_INPUTS, dtype=float64, requires_grad=True)
    try:
        y = function_class.apply(x)
    except Exception as error:  # the learner's forward: report, never crash
        return CheckResult(False, f"{name}.forward raised {type(error).__name__}: {error}")
    want = 1 / (1 + np.exp(-np.array(_SIGMOID_INPUTS)))
    if tuple(y.shape) != want.shape or not np.allclose(y.detach().numpy(), want, atol=1e-6):
        return CheckResult(False, f"{name}: forward gives {y.detach()!r}, which is not the "
                                  "sigmoid 1 / (1 + exp(-x)). Only backward needed fixing.")
    if not y.requires_grad:
        return CheckResult(False, f"{name}: the output does not require grad. Call it as "
                                  "MySigmoid.apply(x), and return a tensor from forward.")
    try:
        passed = gradcheck(function_class.apply, (x,), raise_exception=False)
    except Exception as error:  # the learner's backward
        return CheckResult(False, f"{name}.backward raised {type(error).__name__}: {error}")
    if not passed:
        return CheckResult(False, f"{name}: gradcheck still finds a mismatch between backward "
                                  "and finite differences. Hint: write the sigmoid's derivative "
                                  "with its own output y = sigmoid(x) (saved in forward), and "
                                  "remember to multiply by grad_output.")
    return CheckResult(True, f"{name}: correct! gradcheck passes: backward agrees with finite "
                             f"differences at all {len(_SIGMOID_INPUTS)} test inputs.")


# ---------------------------------------------------------------- build: the engine

def _propagate_with(push_gradients):
    """``graph.propagate`` with the learner's walk inside: ``push_gradients(root, grad)``
    returns the total gradient of every node it reached; minigrad's ``backward`` then hands
    the leaves theirs, as it does with its own walk."""
    own = graph.propagate

    def propagate(order, roots, grads):
        if len(roots) != 1:  # several outputs at once (autograd.backward of a list)
            yield from own(order, roots, grads)
            return
        arrived = push_gradients(roots[0], grads[0])
        if not isinstance(arrived, dict):
            raise TypeError(f"push_gradients returned {type(arrived).__name__}; return a dict "
                            "{node: the total gradient that reached it}")
        for node in order:
            if node in arrived:
                yield node, arrived[node]
    return propagate


def _plug_engine(push_gradients):
    from unittest import mock
    return mock.patch.object(graph, "propagate", _propagate_with(push_gradients))


def _random_program(rng):
    """A random little graph: 2 or 3 leaves, 3 to 7 ops that reuse earlier values (so that
    gradients meet along several paths), summed at the end. Returns (text, build) where
    build() makes the leaves and the loss, in float64."""
    n_leaves = int(rng.integers(2, 4))
    names = ["a", "b", "c"][:n_leaves]
    values = {name: rng.uniform(-1.5, 1.5, size=3).round(2) for name in names}
    lines, pool = [], list(names)
    for k in range(int(rng.integers(3, 8))):
        x, y = (pool[int(rng.integers(len(pool)))] for _ in range(2))
        kind = int(rng.integers(6))
        result = f"v{k}"
        expression = [f"{x} * {y}", f"{x} + {y}", f"{x} - {y}", f"{x}.tanh()",
                      f"{x}.sin() * {y}", f"({x} ** 2 + {y})"][kind]
        lines.append(f"{result} = {expression}")
        pool.append(result)
    lines.append(f"loss = ({pool[-1]} + {pool[-2]}).sum()")
    text = "; ".join(lines)

    def build():
        scope = {name: tensor(list(values[name]), dtype=float64, requires_grad=True)
                 for name in names}
        leaves = dict(scope)
        exec(compile(text.replace("; ", "\n"), "<random graph>", "exec"), {}, scope)
        return leaves, scope["loss"]
    return text, build


def _examples():
    """The chapter's graphs: (a b + a)^2 at a = 2, b = 3; exercise 2's; the neuron's."""
    def example():
        a = tensor(2.0, dtype=float64, requires_grad=True)
        b = tensor(3.0, dtype=float64, requires_grad=True)
        return {"a": a, "b": b}, (a * b + a) ** 2

    def exercise_2():
        x = tensor(0.5, dtype=float64, requires_grad=True)
        w = tensor(-1.5, dtype=float64, requires_grad=True)
        u = x * w
        return {"x": x, "w": w}, (u + u.exp()) ** 2

    def neuron():
        w, b, loss = neuron_graph()
        return {"w": w, "b": b}, loss
    return [("f = (a * b + a) ** 2", example), ("u = x * w; out = (u + u.exp()) ** 2", exercise_2),
            ("the neuron of exercise 1", neuron)]


def _paths_into(order):
    """How many edges reach each node (gradients that meet there)."""
    count = {}
    for node in order:
        for nxt in node.inputs:
            if nxt is not None:
                count[nxt] = count.get(nxt, 0) + 1
    return count


def _compare_walks(push_gradients, text, build):
    """Run minigrad's walk and the learner's on the same graph; raise Mismatch at the first
    node (in backward's order) whose total gradient differs."""
    leaves, loss = build()
    root, seed = loss.grad_fn, np.ones(loss.shape)
    order = graph.execution_order([root])
    expected = dict(graph.propagate(order, [root], [seed]))
    leaves, loss = build()  # a fresh graph: the learner's walk calls the nodes again
    root = loss.grad_fn
    fresh_order = graph.execution_order([root])
    with _counting_runs() as runs:
        try:
            arrived = push_gradients(root, np.ones(loss.shape))
        except ValueError as error:
            if "read-only" not in str(error):
                raise
            raise Mismatch(f"on the graph {text!r}, adding into a gradient that arrived "
                           "raised ValueError: output array is read-only. A node may send the "
                           "very same array to two nodes (AddBackward0 does), so an arrived "
                           "gradient is not yours to change: make each buffer's sum a new "
                           "array.") from None
    if not isinstance(arrived, dict):
        raise Mismatch(f"it returned {type(arrived).__name__}; return a dict "
                       "{node: the total gradient that reached it}")
    paths = _paths_into(fresh_order)
    names = {id(t.grad_fn if t.grad_fn is not None else graph.get_gradient_edge(t).node): name
             for name, t in leaves.items()}
    for step, (want_node, node) in enumerate(zip(order, fresh_order), start=1):
        label = node.name() + (f" (leaf {names[id(node)]})" if id(node) in names else "")
        want = expected.get(want_node)
        got = arrived.get(node)
        if got is None:
            raise Mismatch(f"on the graph {text!r}, {label}, step {step} of backward's order, "
                           f"received no gradient (expected {_show(want)}). Every node that "
                           "a gradient reaches must be in the dict you return.")
        if not np.allclose(np.asarray(got, dtype=float), want, rtol=1e-9, atol=1e-12):
            hint = (f" It is reached along {paths[node]} paths: their gradients must all be "
                    "added (one buffer per node) before it runs, and it must run once."
                    if paths.get(node, 0) > 1 else
                    " Did the node before it run before all of its gradients had arrived?")
            raise Mismatch(f"on the graph {text!r}, {label}, step {step} of backward's order, "
                           f"received {_show(got)}; expected {_show(want)}.{hint}")
    for node in fresh_order:
        if runs.get(node, 0) > 1:
            raise Mismatch(f"on the graph {text!r}, {node.name()} ran {runs[node]} times. "
                           "Run each node once, after all the gradients meant for it have "
                           "arrived in its buffer: a walk that follows every path on its own "
                           "runs a node once per path (03a, section 4's doubling chain).")
    for name, t in leaves.items():
        if t.grad is not None:
            raise Mismatch(f"on the graph {text!r}, leaf {name} got a .grad from your walk "
                           "itself: return the leaves' totals and let backward() hand them "
                           "over (do not call a leaf's AccumulateGrad node).")


@contextlib.contextmanager
def _counting_runs():
    """Count how often each op node runs (its ``apply``) inside the block."""
    from unittest import mock

    from ...ops.op import Op
    runs, own = {}, Op.apply

    def apply(node, grad):
        runs[node] = runs.get(node, 0) + 1
        return own(node, grad)
    with mock.patch.object(Op, "apply", apply):
        yield runs


def _engine_battery(push_gradients, n_random=200):
    """The chapter's examples, then random graphs, each compared node by node; then one
    training-like backward() through minigrad with the walk plugged in."""
    for text, build in _examples():
        _compare_walks(push_gradients, text, build)
    rng = np.random.default_rng(3)
    for _ in range(n_random):
        _compare_walks(push_gradients, *_random_program(rng))
    text, build = _random_program(np.random.default_rng(7))
    leaves, loss = build()
    loss.backward()
    want = {name: None if t.grad is None else t.grad.numpy().copy()
            for name, t in leaves.items()}
    leaves, loss = build()
    with _plug_engine(push_gradients):
        loss.backward()
    for name, t in leaves.items():
        got = None if t.grad is None else t.grad.numpy()
        if (got is None) != (want[name] is None) or (
                got is not None and not np.allclose(got, want[name])):
            raise Mismatch(f"plugged into loss.backward() on {text!r}, {name}.grad is "
                           f"{_show(got)}; expected {_show(want[name])}.")
    return f"the chapter's 3 graphs and {n_random} random ones, node by node"


register(Piece(name="engine", chapter="03", defines="push_gradients",
               summary="the engine's walk: a buffer per node, each node run once",
               plug=_plug_engine, battery=_engine_battery))
