"""Chapter 2 exercises (the computation graph): ``from minigrad.teach.exercises import ch02``.

Each function takes the learner's answer, builds the exercise's tensors again itself with
minigrad, works out the right answer from the recorded graph and returns a ``CheckResult``
(it prints ✓ or ✗ with a hint and never raises).
"""

import numbers

from ... import creation
from ...graph import no_grad
from ...tensor import Tensor
from ..checks import CheckResult
from ..checks import no_answer as _no_answer

__all__ = ["check_leaves", "check_grad_fn_chain", "check_count_nodes"]

NO_ANSWER = ("no answer yet. Write your answer in the cell above and run it, then run this "
             "check again.")


# ---------------------------------------------------------------- exercise 1: leaves

def leaf_quiz_tensors():
    """The tensors of exercise 1, built exactly as the notebook's prompt builds them."""
    w = creation.tensor([0.5, -1.0], requires_grad=True)
    features = creation.tensor([1.0, 2.0])
    h = w * features
    loss = h.sum()
    frozen = h.detach()
    with no_grad():
        w_new = w - 0.1
    return {"w": w, "features": features, "h": h, "loss": loss, "frozen": frozen, "w_new": w_new}


def check_leaves(leaves):
    """Exercise 1: ``leaves`` is the set of names (strings) of the exercise's tensors that
    are leaves (``is_leaf`` is True)."""
    name = "leaves"
    if _no_answer(leaves):
        return CheckResult(False, f"{name}: {NO_ANSWER}")
    tensors = leaf_quiz_tensors()
    known = ", ".join(tensors)
    if isinstance(leaves, str):
        leaves = [leaves]
    try:
        answer = list(leaves)
    except TypeError:
        return CheckResult(False, f"{name}: expected a set of names such as {{\"a\", \"b\"}}, "
                                  f"got {type(leaves).__name__}.")
    if any(isinstance(item, Tensor) for item in answer):
        return CheckResult(False, f"{name}: write the names as strings (\"w\"), not the "
                                  "tensors themselves.")
    if not all(isinstance(item, str) for item in answer):
        return CheckResult(False, f"{name}: every element should be a name in quotes, one of "
                                  f"{known}.")
    unknown = sorted(set(answer) - set(tensors))
    if unknown:
        return CheckResult(False, f"{name}: there is no tensor called {', '.join(unknown)} in "
                                  f"this exercise; the tensors are {known}.")
    expected = {key for key, t in tensors.items() if t.is_leaf}
    wrong = len(set(answer) ^ expected)
    if wrong:
        tensor_word = "tensor is" if wrong == 1 else "tensors are"
        return CheckResult(False, f"{name}: {wrong} of the {len(tensors)} {tensor_word} on the "
                                  "wrong side. Hint: for each tensor ask whether a *recorded* "
                                  "operation made it; a tensor's grad_fn tells you.")
    return CheckResult(True, f"{name}: correct! {len(expected)} leaves; only the other "
                             f"{len(tensors) - len(expected)} tensors have a grad_fn.")


# ---------------------------------------------------------------- exercise 2: grad_fn chain

def chain_quiz_loss():
    """The loss of exercise 2, built exactly as the notebook's prompt builds it."""
    w = creation.tensor([0.5, -1.0], requires_grad=True)
    features = creation.tensor([1.0, 2.0])
    target = creation.tensor([1.0, 0.0])
    return ((w * features - target) ** 2).mean()


def first_input_chain(tensor):
    """Names of the nodes met from ``tensor.grad_fn`` following each node's first input."""
    names = []
    node = tensor.grad_fn
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def _clean_name(item):
    if not isinstance(item, str) and hasattr(item, "next_functions"):
        return type(item).__name__  # a node instead of its name: fine too
    text = str(item).strip().strip("<>").strip()
    return text.rsplit("::", 1)[-1]  # PyTorch's AccumulateGrad.name() has a namespace


def check_grad_fn_chain(chain):
    """Exercise 2: ``chain`` lists the grad_fn names from ``loss.grad_fn`` down to the leaf,
    following the first entry of ``next_functions`` each time."""
    name = "chain"
    if _no_answer(chain):
        return CheckResult(False, f"{name}: {NO_ANSWER}")
    if isinstance(chain, str):
        return CheckResult(False, f"{name}: expected a list of names, one per node, such as "
                                  "[\"AddBackward0\", ...], not a single string.")
    try:
        got = [_clean_name(item) for item in chain]
    except TypeError:
        return CheckResult(False, f"{name}: expected a list of names, got "
                                  f"{type(chain).__name__}.")
    expected = first_input_chain(chain_quiz_loss())
    hint = ("Hint: loss.grad_fn belongs to the last operation applied; each step goes to the "
            "node of that operation's first input, and a leaf that requires grad ends the "
            "chain with its AccumulateGrad.")
    if got == expected:
        return CheckResult(True, f"{name}: correct! {' -> '.join(expected)}")
    if len(got) != len(expected):
        return CheckResult(False, f"{name}: your chain has {len(got)} names, but the walk "
                                  f"from loss.grad_fn to the leaf meets {len(expected)} "
                                  f"nodes. {hint}")
    first_wrong = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    right = (f"the first {first_wrong} names are right, but " if first_wrong else "")
    return CheckResult(False, f"{name}: {right}name {first_wrong + 1} ({got[first_wrong]!r}) "
                              f"is not. {hint}")


# ---------------------------------------------------------------- exercise 3: count nodes

def count_nodes_reference(tensor):
    """How many distinct nodes (grad_fn nodes and AccumulateGrad) the graph of ``tensor``
    has, each counted once."""
    seen = set()
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)


def count_nodes_cases():
    """(description, tensor) pairs: a chain, a leaf used twice, a shared intermediate,
    two leaves, a constant and a detached branch."""
    cases = []
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    cases.append(("z = (x * x) * 3", y * 3))
    w = creation.tensor([0.5, -1.0], requires_grad=True)
    b = creation.tensor(0.1, requires_grad=True)
    features = creation.tensor([1.0, 2.0])
    cases.append(("out = ((w * features).sum() + b).tanh()", ((w * features).sum() + b).tanh()))
    a = creation.tensor([1.0, 2.0], requires_grad=True)
    h = a.exp()
    cases.append(("h = a.exp(); s = (h * h + h).sum()", (h * h + h).sum()))
    cases.append(("s = (a * a.detach()).sum()", (a * a.detach()).sum()))
    t = a
    for _ in range(4):
        t = t * 1.5 + a
    cases.append(("t = a, then 4 times t = t * 1.5 + a", t))
    return cases


def check_count_nodes(count_nodes):
    """Exercise 3: ``count_nodes(tensor)`` returns how many nodes the backward graph of
    ``tensor`` has: its grad_fn and every node reachable through next_functions, each once."""
    name = "count_nodes"
    if _no_answer(count_nodes) or not callable(count_nodes):
        return CheckResult(False, f"{name}: define the function in the cell above and run it.")
    cases = count_nodes_cases()
    for description, tensor in cases:
        want = count_nodes_reference(tensor)
        try:
            got = count_nodes(tensor)
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{name} on {description}: raised "
                                      f"{type(error).__name__}: {error}")
        if got is None:
            return CheckResult(False, f"{name} on {description}: returned None. Does your "
                                      "function end with a return?")
        if isinstance(got, bool) or not isinstance(got, numbers.Real):
            return CheckResult(False, f"{name} on {description}: returned a "
                                      f"{type(got).__name__}; return a number.")
        if got == want:
            continue
        if got > want:
            hint = ("you count some nodes more than once: several edges can lead to the same "
                    "node (x * x uses x's AccumulateGrad twice).")
        else:
            hint = ("some nodes are missing: follow every entry of next_functions, not only "
                    "the first, skip the None entries, and count the AccumulateGrad nodes too.")
        return CheckResult(False, f"{name} on {description}: you count {got}, the graph has "
                                  f"{want} nodes. Hint: {hint}")
    return CheckResult(True, f"{name}: correct on all {len(cases)} graphs!")
