"""Exercise checks of chapter 3 (backward): a gradient by hand, the order of the backward
pass, and a custom Function whose backward must pass gradcheck; and the build track's
``engine`` piece, the learner's walk (``push_gradients``), checked from random output
gradients, in float32 and under create_graph=True.

Every check computes the right answer itself with minigrad, never raises, and returns a
``CheckResult`` whose hints point the way without giving the answer.
"""

import contextlib
from unittest import mock

import numpy as np

from ... import graph
from ...autograd import Function, grad as autograd_grad, gradcheck
from ...creation import tensor
from ...dtypes import float32, float64
from ...ops.op import Op
from ... import Tensor
from ..build import Mismatch, Piece, attempt, register, same_dtype, show, use, where
from ..checks import CheckResult, check, no_answer

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
    if no_answer(grad_w) or no_answer(grad_b):
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
    if no_answer(order):
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
    if no_answer(function_class):
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
# minigrad's own walk and the backward that runs it, as they are at import: ``teach.use``
# patches ``graph.propagate``, and the check must compare with minigrad's own, never with
# a walk plugged in. A piece that is, or calls, one of them is refused (``Piece.own``):
# ``graph.backward([root], [grad], capture=...)`` returns every node's total through
# minigrad's walk.
_OWN_PROPAGATE = graph.propagate
_OWN_BACKWARD = graph.backward

# What a walk must do when backward runs with create_graph=True (a second derivative).
STAY_TENSORS = ("Gradients must stay Tensors when they arrive as Tensors: add them with +, "
                "never np.add, np.copy, np.asarray or .copy(), and start from the grad you "
                "are given as it is.")


class _NotATensor(Mismatch):
    """Under create_graph=True, the learner's walk turned a Tensor gradient into an array."""


def _propagate_with(push_gradients):
    """``graph.propagate`` with the learner's walk inside: ``push_gradients(root, grad)``
    returns the total gradient of every node it reached; minigrad's ``backward`` then hands
    the leaves theirs, as it does with its own walk. Under ``create_graph=True`` the
    gradients are Tensors, and a walk that turns one into an array is stopped here (the
    second derivative would silently lose its graph)."""
    def propagate(order, roots, grads):
        if len(roots) != 1:  # several outputs at once (autograd.backward of a list)
            yield from _OWN_PROPAGATE(order, roots, grads)
            return
        arrived = push_gradients(roots[0], grads[0])
        if not isinstance(arrived, dict):
            raise TypeError(f"push_gradients returned {type(arrived).__name__}; return a dict "
                            "{node: the total gradient that reached it}")
        as_tensors = isinstance(grads[0], Tensor)
        for node in order:
            if node in arrived:
                if as_tensors and not isinstance(arrived[node], Tensor):
                    kind = ("a numpy array" if isinstance(arrived[node], np.ndarray)
                            else f"a {type(arrived[node]).__name__}")
                    raise _NotATensor(
                        "with create_graph=True (a second derivative: mg.autograd.grad(loss, "
                        "x, create_graph=True), then the gradient of that gradient) your walk "
                        f"is given a Tensor, but {node.name()} received {kind} from it, so the "
                        "second derivative "
                        f"loses its graph. {STAY_TENSORS}")
                yield node, arrived[node]
    return propagate


def _plug_engine(push_gradients):
    return mock.patch.object(graph, "propagate", _propagate_with(push_gradients))


def _own_engine():
    """minigrad's own walk in place, whatever is plugged in around the check."""
    return mock.patch.object(graph, "propagate", _OWN_PROPAGATE)


def _random_program(rng, vector=False):
    """A random little graph: 2 or 3 leaves, 3 to 7 ops that reuse earlier values (so that
    gradients meet along several paths), summed at the end (``vector=True``: not summed,
    the output has 3 numbers, as for ``backward(gradient=v)``). Returns (text, build) where
    build(dtype) makes the leaves and the output, in float64 unless told."""
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
    lines.append(f"loss = {pool[-1]} + {pool[-2]}" if vector else
                 f"loss = ({pool[-1]} + {pool[-2]}).sum()")
    text = "; ".join(lines)

    def build(dtype=float64):
        scope = {name: tensor(list(values[name]), dtype=dtype, requires_grad=True)
                 for name in names}
        leaves = dict(scope)
        exec(compile(text.replace("; ", "\n"), "<random graph>", "exec"), {}, scope)
        return leaves, scope["loss"]
    return text, build


def _examples():
    """The chapter's graphs: (a b + a)^2 at a = 2, b = 3; exercise 2's; the neuron's."""
    def example(dtype=float64):
        a = tensor(2.0, dtype=dtype, requires_grad=True)
        b = tensor(3.0, dtype=dtype, requires_grad=True)
        return {"a": a, "b": b}, (a * b + a) ** 2

    def exercise_2(dtype=float64):
        x = tensor(0.5, dtype=dtype, requires_grad=True)
        w = tensor(-1.5, dtype=dtype, requires_grad=True)
        u = x * w
        return {"x": x, "w": w}, (u + u.exp()) ** 2

    def neuron(dtype=float64):
        x = tensor(NEURON["x"], dtype=dtype)
        w = tensor(NEURON["w"], dtype=dtype, requires_grad=True)
        b = tensor(NEURON["b"], dtype=dtype, requires_grad=True)
        return {"w": w, "b": b}, ((w * x + b).tanh() - NEURON["target"]) ** 2
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


def _walk_hint(error):
    """A line on what to fix for the errors typical walks raise (after the error's own
    message and the learner's line)."""
    hint = _walk_advice(error)
    if not hint:
        return ""
    ended = not where(error) and str(error).rstrip().endswith(".")
    return ("" if ended else ".") + hint


def _walk_advice(error):
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, ValueError) and "read-only" in text:
        return (" A node may send the very same array to two nodes (AddBackward0 does), so an "
                "arrived gradient is not yours to change: make each buffer's sum a new array.")
    if "NoneType" in text:
        return (" An input that needs no gradient (a constant, such as x in the neuron of "
                "exercise 1) has no node: next_functions holds (None, 0) for it, and apply "
                "returns None for it. Skip those entries.")
    if isinstance(error, RecursionError):
        return (" A walk that calls itself along every path goes as deep as the graph is long "
                "and runs a node once per path: loop over a topological order instead.")
    if "numpy() on Tensor" in text or "'Tensor' object has no attribute" in text:
        return (" With create_graph=True (a second derivative) the gradients are Tensors. "
                + STAY_TENSORS)
    if isinstance(error, KeyError):
        return (" A node was looked up in a buffer or a count that has no entry for it: did "
                "it run before any gradient reached it, or was it never counted?")
    return ""


def _call_walk(push_gradients, root, grad, text):
    return attempt(f"on the graph {text!r}, your walk", lambda: push_gradients(root, grad),
                   _walk_hint)


def _seed_for(shape, dtype, rng):
    """A random gradient for the output (never all ones: backward(gradient=v) passes v)."""
    values = rng.uniform(0.3, 2.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(np.where(np.isclose(values, 1.0), 1.7, values).round(2), dtype=dtype)


def _compare_walks(push_gradients, text, build, dtype=float64, seed_rng=None):
    """Run minigrad's walk and the learner's on the same graph (float64 or float32), from
    the gradient of ones (``seed_rng`` None) or a random one; raise Mismatch at the first
    node (in backward's order) whose total gradient differs, in value or dtype."""
    leaves, loss = build(dtype)
    numpy_dtype = loss.detach().numpy().dtype
    seed = (np.ones(loss.shape, numpy_dtype) if seed_rng is None
            else _seed_for(loss.shape, numpy_dtype, seed_rng))
    root = loss.grad_fn
    order = graph.execution_order([root])
    expected = dict(_OWN_PROPAGATE(order, [root], [seed]))
    leaves, loss = build(dtype)  # a fresh graph: the learner's walk calls the nodes again
    fresh_root = loss.grad_fn
    fresh_order = graph.execution_order([fresh_root])
    context = f"on the graph {text!r}" + (" in float32" if dtype is float32 else "")
    with _counting_runs() as runs:
        arrived = _call_walk(push_gradients, fresh_root, seed.copy(), text)
    if not isinstance(arrived, dict):
        raise Mismatch(f"it returned {type(arrived).__name__}; return a dict "
                       "{node: the total gradient that reached it}")
    paths = _paths_into(fresh_order)
    senders = _senders(fresh_order)
    totals = {node: expected.get(w) for w, node in zip(order, fresh_order)}
    names = {id(t.grad_fn if t.grad_fn is not None else graph.get_gradient_edge(t).node): name
             for name, t in leaves.items()}
    tolerance = dict(rtol=1e-9, atol=1e-12) if dtype is float64 else dict(rtol=1e-4, atol=1e-5)
    for step, (want_node, node) in enumerate(zip(order, fresh_order), start=1):
        label = node.name() + (f" (leaf {names[id(node)]})" if id(node) in names else "")
        want = expected.get(want_node)
        got = arrived.get(node)
        at = f"{context}, {label}, step {step} of backward's order,"
        if got is None:
            sent = [s for s in senders.get(node, []) if runs.get(s, 0)]
            if sent and not hasattr(node, "variable") and not runs.get(node, 0):
                raise Mismatch(f"{at} received no gradient (expected {show(want)}) and never "
                               f"ran, although {sent[0].name()}, which sends it a gradient, "
                               "ran: your walk came to it before that node had run. The order "
                               "is wrong: a node must run after every node that sends it "
                               "gradients (backward's order, the output first), never before.")
            raise Mismatch(f"{at} received no gradient (expected {show(want)}). Every node that "
                           "a gradient reaches must be in the dict you return.")
        if np.shape(got) != np.shape(want):
            raise Mismatch(f"{at} received a gradient of shape {tuple(np.shape(got))}; expected "
                           f"shape {tuple(np.shape(want))}, the shape of the node's output. "
                           "Start from the grad you are given: it has the output's shape.")
        if not np.allclose(np.asarray(got, dtype=float), want, **tolerance):
            if seed_rng is not None and _as_if_ones(got, want_node, order, root, seed, tolerance):
                raise Mismatch(f"{at} received {show(got)}; expected {show(want)}. That is "
                               "what a gradient of ones at the output would give, but the "
                               f"gradient your walk was given here is {show(seed)}: start the "
                               "walk from the grad argument as it is (loss.backward() passes "
                               "ones, loss.backward(gradient=v) passes v).")
            hint = _value_hint(node, senders.get(node, []), runs, totals, fresh_root, seed, paths)
            raise Mismatch(f"{at} received {show(got)}; expected {show(want)}.{hint}")
        same_dtype(f"{context}, the gradient that reached {label} (step {step})", got, want)
    for node in fresh_order:
        if runs.get(node, 0) > 1:
            raise Mismatch(f"{context}, {node.name()} ran {runs[node]} times. "
                           "Run each node once, after all the gradients meant for it have "
                           "arrived in its buffer: a walk that follows every path on its own "
                           "runs a node once per path (03a, section 4's doubling chain).")
    for name, t in leaves.items():
        if t.grad is not None:
            raise Mismatch(f"{context}, leaf {name} got a .grad from your walk "
                           "itself: return the leaves' totals and let backward() hand them "
                           "over (do not call a leaf's AccumulateGrad node).")


def _senders(order):
    """The nodes that send each node a gradient (those whose next_functions hold it)."""
    found = {}
    for node in order:
        for nxt, _ in node.next_functions:
            if nxt is not None and node not in found.setdefault(nxt, []):
                found[nxt].append(node)
    return found


def _value_hint(node, senders, runs, totals, root, seed, paths):
    """What to fix when ``node`` received a wrong total: a node that sends it gradients
    ran on the output's gradient instead of its own total, or ran after it (the order is
    wrong), or its paths were not all added."""
    for sender in senders:
        ran_on = runs.grads.get(sender)
        total = totals.get(sender)
        if (sender is not root and ran_on is not None and total is not None
                and np.shape(ran_on) == np.shape(seed) and np.allclose(ran_on, seed)
                and not np.allclose(total, seed)):
            return (f" {sender.name()}, which sends it its gradient, ran on the gradient the "
                    f"walk was given at the output ({show(seed)}), not on its own total "
                    f"({show(total)}): each node must run (apply) on the total that arrived "
                    "in its own buffer, not on the root's gradient.")
    late = [s for s in senders if s in runs.order and node in runs.order
            and runs.order.index(s) > runs.order.index(node)]
    if late:
        return (f" It ran before {late[0].name()}, which sends it a gradient: the order is "
                "wrong. A node must run after every node that sends it gradients (backward's "
                "order, the output first), never before.")
    if paths.get(node, 0) > 1:
        return (f" It is reached along {paths[node]} paths: their gradients must all be "
                "added (one buffer per node) before it runs, and it must run once.")
    return " Did the node before it run before all of its gradients had arrived?"


def _as_if_ones(got, want_node, order, root, seed, tolerance):
    """Does ``got`` equal what the node receives when the output's gradient is ones?"""
    if np.allclose(seed, 1.0):
        return False
    ones = dict(_OWN_PROPAGATE(order, [root], [np.ones_like(seed)])).get(want_node)
    return ones is not None and np.allclose(np.asarray(got, dtype=float), ones, **tolerance)


class _Runs(dict):
    """How often each node ran, in which order (``order``), on what (``grads``, its first run)."""
    def __init__(self):
        super().__init__()
        self.order, self.grads = [], {}


@contextlib.contextmanager
def _counting_runs():
    """Count how often each op node runs (its ``apply``) inside the block."""

    runs, own = _Runs(), Op.apply

    def apply(node, grad):
        runs[node] = runs.get(node, 0) + 1
        runs.order.append(node)
        runs.grads.setdefault(node, grad)
        return own(node, grad)
    with mock.patch.object(Op, "apply", apply):
        yield runs


def _second_derivatives(build, seed):
    """First derivatives of the output (float64, create_graph=True, from the gradient
    ``seed``), then the gradient of their weighted sum: {leaf: (first, second)} as arrays
    (None where there is none), with whichever walk is plugged in."""
    leaves, out = build(float64)
    xs = list(leaves.values())
    firsts = autograd_grad(out, xs, grad_outputs=tensor(seed), create_graph=True,
                            allow_unused=True)
    terms = [(g * (k + 1.0)).sum() for k, g in enumerate(firsts)
             if g is not None and g.requires_grad]
    seconds = [None] * len(xs)
    if terms:
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        seconds = autograd_grad(total, xs, allow_unused=True)
    as_array = (lambda t: None if t is None else t.detach().numpy().copy())
    return {name: (as_array(f), as_array(s)) for name, f, s in zip(leaves, firsts, seconds)}


def _compare_create_graph(push_gradients, text, build, seed):
    """A second derivative through the learner's walk against minigrad's own."""
    with _own_engine():
        want = _second_derivatives(build, seed)
    with _plug_engine(push_gradients):
        try:
            got = attempt(f"on the graph {text!r}, mg.autograd.grad(out, leaves, "
                          "create_graph=True) with your walk",
                          lambda: _second_derivatives(build, seed), _walk_hint)
        except _NotATensor as error:
            raise Mismatch(f"on the graph {text!r}, {error}") from None
    for name in want:
        for which, k in (("first derivative", 0), ("second derivative", 1)):
            w, g = want[name][k], got[name][k]
            if (w is None) != (g is None) or (w is not None and not np.allclose(g, w)):
                raise Mismatch(
                    f"on the graph {text!r}, with create_graph=True the {which} for leaf "
                    f"{name} is {show(g)}; expected {show(w)}. {STAY_TENSORS}")


def _compare_backward(push_gradients, text, build, seed):
    """``out.backward(gradient=v)`` in float32 with the learner's walk plugged in through
    ``teach.use``: the leaves' .grad, values and dtype."""
    with _own_engine():
        leaves, out = build(float32)
        out.backward(gradient=tensor(seed))
    want = {name: None if t.grad is None else t.grad.numpy().copy() for name, t in leaves.items()}
    leaves, out = build(float32)
    with use(engine=push_gradients):
        attempt(f"on the graph {text!r}, out.backward(gradient=v) with your walk",
                lambda: out.backward(gradient=tensor(seed)), _walk_hint)
    for name, t in leaves.items():
        got = None if t.grad is None else t.grad.numpy()
        if (got is None) != (want[name] is None) or (
                got is not None and not np.allclose(got, want[name], rtol=1e-4, atol=1e-5)):
            raise Mismatch(f"plugged into out.backward(gradient=v) on {text!r} (float32, v = "
                           f"{show(seed)}), {name}.grad is {show(got)}; expected "
                           f"{show(want[name])}.")
        if got is not None:
            same_dtype(f"plugged into out.backward(gradient=v) on {text!r}, {name}.grad",
                       got, want[name])


def _engine_battery(push_gradients, n_random=200):
    """The chapter's examples, then random graphs from random output gradients (a third
    of them with a vector output), each compared node by node; the same in float32 (values
    and dtypes); a second derivative (create_graph=True) through the walk; and
    ``backward(gradient=v)`` in float32 with the walk plugged in."""
    seeds = np.random.default_rng(11)
    examples = _examples()
    _compare_walks(push_gradients, *examples[0])  # the lecture's example, from ones: 64
    for text, build in examples[1:]:
        _compare_walks(push_gradients, text, build, seed_rng=seeds)
    rng = np.random.default_rng(3)
    programs = [_random_program(rng, vector=k % 3 == 2) for k in range(n_random)]
    for text, build in programs:
        _compare_walks(push_gradients, text, build, seed_rng=seeds)
    for text, build in examples + programs[:20]:
        _compare_walks(push_gradients, text, build, dtype=float32, seed_rng=seeds)
    n_second = 0
    for text, build in examples + programs[:12]:
        shape = build()[1].shape
        _compare_create_graph(push_gradients, text, build, _seed_for(shape, np.float64, seeds))
        n_second += 1
    text, build = _random_program(np.random.default_rng(7), vector=True)
    _compare_backward(push_gradients, text, build, _seed_for((3,), np.float32, seeds))
    return (f"the chapter's 3 graphs and {n_random} random ones, node by node, from random "
            "output gradients; in float32 too (dtypes kept); a second derivative "
            f"(create_graph=True) on {n_second} of them; and out.backward(gradient=v)")


register(Piece(name="engine", chapter="03", defines="push_gradients",
               summary="the engine's walk: a buffer per node, each node run once",
               plug=_plug_engine, battery=_engine_battery,
               own={"graph.propagate": _OWN_PROPAGATE,
                    "graph.propagate (through graph.backward)": _OWN_BACKWARD}))
