"""Chapter 2 exercises (the computation graph): ``from minigrad.teach.exercises import ch02``.
Part 1 (``notebooks/02a_reading_the_graph.ipynb``) has exercises 1-3 and a prediction
(``leaf_node_prediction``, a ``teach.predictions.Prediction``: one ``AccumulateGrad`` per
leaf, locked in before ``next_functions`` is printed), part 2
(``notebooks/02b_recording_the_graph.ipynb``) exercises 4 and 5; the chapter's build exercise
(``MulBackward0``, also in part 2) is checked by ``ch02_build``. No check before exercise 5
(section 8, where they are taught) asks about ``no_grad()`` or ``detach()``. Exercise 4 is
predicted, then run: ``lock_dynamic_graph`` keeps the learner's numbers before the code runs,
``reveal_dynamic_graph`` compares them after (``minigrad.teach.predictions``).

Each function takes the learner's answer, builds the exercise's tensors again itself with
minigrad, works out the right answer from the recorded graph and returns a ``CheckResult``
(it prints ✓ or ✗ with a hint and never raises).
"""

import numbers


from ... import creation
from ...graph import no_grad
from ... import Tensor
from ..checks import CheckResult, all_parts, no_answer
from ..predictions import Prediction, locked_together

__all__ = ["check_leaves", "check_grad_fn_chain", "check_count_nodes", "leaf_node_prediction",
           "LEAF_NODE_CHOICES", "lock_dynamic_graph", "reveal_dynamic_graph",
           "check_recording_off"]

NO_ANSWER = ("no answer yet. Write your answer in the cell above and run it, then run this "
             "check again.")


# ---------------------------------------------------------------- exercise 1: leaves

def leaf_quiz_tensors():
    """The tensors of exercise 1, built exactly as the notebook's prompt builds them (only
    what sections 1-3 teach: requires_grad, what inherits it, requires_grad_())."""
    w = creation.tensor([0.5, -1.0], requires_grad=True)
    features = creation.tensor([1.0, 2.0])
    scaled = features / 10
    h = w * scaled
    b = creation.tensor(0.1).requires_grad_()
    loss = h.sum() + b
    return {"w": w, "features": features, "scaled": scaled, "h": h, "b": b, "loss": loss}


def _names(name, answer, tensors):
    """The learner's answer, names of some of ``tensors``, as a set of strings; or a failed
    CheckResult that says what is wrong with its form."""
    if no_answer(answer):
        return CheckResult(False, f"{name}: {NO_ANSWER}")
    known = ", ".join(tensors)
    if isinstance(answer, str):
        answer = [answer]
    try:
        answer = list(answer)
    except TypeError:
        return CheckResult(False, f"{name}: expected a set of names such as {{\"a\", \"b\"}}, "
                                  f"got {type(answer).__name__}.")
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
    return set(answer)


def _sides(name, answer, tensors, expected, hint):
    """How many tensors ``answer`` puts on the wrong side of ``expected``, as a failed
    CheckResult that never names them; None when there are none."""
    wrong = len(answer ^ expected)
    if wrong:
        verb = "is" if wrong == 1 else "are"
        return CheckResult(False, f"{name}: {wrong} of the {len(tensors)} tensors {verb} on the "
                                  f"wrong side. Hint: {hint}")
    return None


def check_leaves(leaves):
    """Exercise 1: ``leaves`` is the set of names (strings) of the exercise's tensors that
    are leaves (``is_leaf`` is True)."""
    name = "leaves"
    tensors = leaf_quiz_tensors()
    answer = _names(name, leaves, tensors)
    if isinstance(answer, CheckResult):
        return answer
    expected = {key for key, t in tensors.items() if t.is_leaf}
    wrong = _sides(name, answer, tensors, expected,
                   "for each tensor ask whether a *recorded* operation made it; a tensor's "
                   "grad_fn tells you.")
    if wrong is not None:
        return wrong
    return CheckResult(True, f"{name}: correct! {len(expected)} leaves; only the other "
                             f"{len(tensors) - len(expected)} tensors have a grad_fn.")


# ---------------------------------------------------------------- prediction: one node per leaf

LEAF_NODE_CHOICES = {
    "a": "two different AccumulateGrad nodes, one for each use of x",
    "b": "the same AccumulateGrad node, twice",
    "c": "None, twice: x is a leaf, no operation made it",
}


def _leaf_node_answer():
    """What ``y.grad_fn.next_functions`` holds for ``y = x * x`` (x a leaf), measured."""
    x = creation.tensor(2.0, requires_grad=True)
    y = x * x
    (first, _), (second, _) = y.grad_fn.next_functions
    if first is None and second is None:
        return "c", "both entries are None"
    names = f"{type(first).__name__} and {type(second).__name__}"
    if first is second:
        return "b", f"first is second: True, {type(first).__name__}"
    return "a", f"{names}, first is second: False"


leaf_node_prediction = Prediction(
    "Prediction, next_functions", _leaf_node_answer, choices=LEAF_NODE_CHOICES,
    hint="Hint: how many leaves does y = x * x have, and where will backward add x's "
         "gradient?")
"""02a, section 5: what the two entries of ``y.grad_fn.next_functions`` are for ``y = x * x``,
a letter of ``LEAF_NODE_CHOICES`` locked in before the cells that print them."""


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
    if no_answer(chain):
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
    two leaves, constants and data (``None`` entries), a node reached along many paths.
    Only what the chapter has taught before exercise 3 (section 8's tools come later)."""
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
    data = creation.tensor([3.0, -1.0])
    cases.append(("s = (a * data).sum(), data = tensor([3.0, -1.0])", (a * data).sum()))
    t = a
    for _ in range(4):
        t = t * 1.5 + a
    cases.append(("t = a, then 4 times t = t * 1.5 + a", t))
    return cases


def check_count_nodes(count_nodes):
    """Exercise 3: ``count_nodes(tensor)`` returns how many nodes the backward graph of
    ``tensor`` has: its grad_fn and every node reachable through next_functions, each once."""
    name = "count_nodes"
    if no_answer(count_nodes) or not callable(count_nodes):
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


# ---------------------------------------------------------------- define-by-run: exercise 4

def grow_then_sum(x):
    """The section's function (the notebook defines the same): double ``x`` until its length
    reaches 10, then sum, made positive. The loop and the ``if`` depend on the numbers."""
    y = x * 2
    while y.norm() < 10:
        y = y * 2
    total = y.sum()
    if total > 0:
        return total
    return -total


DYNAMIC_QUIZ_INPUT = [0.5, -1.0]  # exercise 4's x: not one the notebook runs


def dynamic_quiz_answer():
    """(node count, x.grad as a list) for exercise 4's input, worked out by minigrad."""
    x = creation.tensor(DYNAMIC_QUIZ_INPUT, requires_grad=True)
    out = grow_then_sum(x)
    nodes = count_nodes_reference(out)
    out.backward()
    return nodes, x.grad.tolist()


def _measured_nodes():
    nodes, _ = dynamic_quiz_answer()
    return nodes, f"the backward graph of this call has {nodes} nodes"


def _measured_grad():
    _, grad = dynamic_quiz_answer()
    return grad[0], f"x_new.grad is {grad}"


# Exercise 4 is predicted on paper, locked in, and only then run (teach.predictions).
DYNAMIC_NODES = Prediction("nodes", _measured_nodes)
DYNAMIC_GRAD = Prediction("grad", _measured_grad)


def lock_dynamic_graph(nodes, grad):
    """Exercise 4, step 1: lock in the predicted node count of ``grow_then_sum(x_new)``'s
    backward graph (AccumulateGrad included) and the number each entry of ``x_new.grad``
    will hold, both written down as plain numbers before the code runs."""
    return locked_together("Exercise 4", [DYNAMIC_NODES.lock(nodes), DYNAMIC_GRAD.lock(grad)])


def _nodes_hint(count, want):
    if count > want:
        return ("you count more than the output's history: y.norm() and the comparisons ran, "
                "but the output was not computed from their results, so the walk from "
                "out.grad_fn never meets them; and count each doubling once.")
    return ("some nodes are missing: follow the loop by hand (how many times does y double "
            "before its length reaches 10?), every product that ran is a node, the branch "
            "the if took may add one, and x has its AccumulateGrad.")


def _grad_hint(got, want):
    if got == -want:
        return "the size is right, the sign is not: which branch of the if ran for this x?"
    if got * want > 0:
        return ("the sign is right, the size is not: the output is a sum of x times 2 for "
                "every product that ran; count them, the first x * 2 included.")
    return ("out is a sum of the elements of x times a power of 2, maybe negated: count the "
            "doublings that ran for this x, and see which branch of the if ran.")


def reveal_dynamic_graph():
    """Exercise 4, step 2 (after the experiment has run): compare the locked predictions
    with what minigrad records for ``x_new``, with a hint for each wrong one."""
    want_nodes, want_grad = dynamic_quiz_answer()
    results = []
    for prediction, want, hint in [(DYNAMIC_NODES, want_nodes, _nodes_hint),
                                   (DYNAMIC_GRAD, want_grad[0], _grad_hint)]:
        result = prediction.reveal()
        if not result and prediction.locked is not None:
            result = CheckResult(False, f"{result.message} Hint: "
                                        f"{hint(prediction.locked, want)}")
        results.append(result)
    return all_parts("Exercise 4", results)


# ---------------------------------------------------------------- exercise 5: recording off

def recording_off_quiz_tensors():
    """The tensors of exercise 5 (section 8, after no_grad() and detach() are taught), built
    exactly as the notebook's prompt builds them."""
    w = creation.tensor([0.5, -1.0], requires_grad=True)
    h = w * 3
    frozen = h.detach()
    with no_grad():
        w_new = w - 0.1
    mixed = frozen * w
    again = w_new * 2
    return {"w": w, "h": h, "frozen": frozen, "w_new": w_new, "mixed": mixed, "again": again}


def _recording_off_part(name, answer, tensors, wanted, hint, ok):
    got = _names(name, answer, tensors)
    if isinstance(got, CheckResult):
        return got
    expected = {key for key, t in tensors.items() if wanted(t)}
    wrong = _sides(name, got, tensors, expected, hint)
    if wrong is not None:
        return wrong
    return CheckResult(True, f"{name}: correct! {ok.format(len(expected))}")


def check_recording_off(watched, leaves):
    """Exercise 5: ``watched`` is the set of names of the exercise's tensors that require
    grad, ``leaves`` the set of names of its leaves."""
    tensors = recording_off_quiz_tensors()
    return all_parts("Exercise 5", [
        _recording_off_part(
            "watched", watched, tensors, lambda t: t.requires_grad,
            "detach() and no_grad() give tensors that do not require grad; an operation "
            "outside no_grad() is recorded as soon as one of its inputs requires grad.",
            "{} tensors require grad."),
        _recording_off_part(
            "leaves", leaves, tensors, lambda t: t.is_leaf,
            "a tensor is a leaf when no recorded operation made it: was its operation "
            "recorded (grad mode on, an input that requires grad)?",
            "{} leaves: the others have a grad_fn.")])
