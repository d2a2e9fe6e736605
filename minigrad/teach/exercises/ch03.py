"""Exercise checks of chapter 3 (backward): a gradient by hand, the order of the backward
pass, and a custom Function whose backward must pass gradcheck.

Every check computes the right answer itself with minigrad, never raises, and returns a
``CheckResult`` whose hints point the way without giving the answer.
"""

import numpy as np

from ... import graph
from ...autograd import Function, gradcheck
from ...creation import tensor
from ...dtypes import float64
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
