"""The capstone's batteries (``notebooks/15_capstone_your_own_engine.ipynb``): the learner's
engine, written from a blank cell (a ``Tensor`` that records its inputs, four ops and
``backward()``) and their ``SGD``, run side by side with minigrad's own on the build track's
cases, rewritten with the engine's four ops: chapter 3's graphs and random graphs with
reuse from random output gradients, chapter 4's "12, then 24", chapter 5's broadcasting
summed back, chapter 8's steps and ``zero_grad`` (and its regression, ``teach.training_run``,
with the learner's SGD plugged in through the ``sgd`` piece's own plug and an adapter).

The engine's interface (what the notebook's spec states and the checks rely on):
``Tensor(data, inputs=(), backward_fn=None, op="")`` keeps ``data`` (a float64 numpy
array), ``inputs`` (the Tensors it was computed from), ``backward_fn`` (the gradient of this
tensor -> a tuple of gradients, one per input), ``op`` and ``grad`` (None until backward
adds a numpy array into it); ``a + b``, ``a * b`` (a Tensor or a number, broadcasting),
``a @ b`` (2-D) and ``a.relu()``; ``backward(grad=None)`` (ones when None). ``SGD(params,
lr)`` has ``step()`` and ``zero_grad()`` (``.grad`` back to None, PyTorch's default).

Each function raises ``build.Mismatch`` at the first difference, with a message that names
the mistake and where it shows, without the code of the answer (``capstone.py`` turns it
into a ``CheckResult``).
"""

import numpy as np

from ...optim.sgd import SGD as MinigradSGD
from ...creation import from_numpy, tensor
from ...dtypes import float64 as MG_FLOAT64
from ...graph import no_grad
from ..build import Mismatch, attempt, piece_named, show
from ..stepping import training_run

__all__ = ["engine_battery", "sgd_battery", "walk_graph", "random_program", "EXAMPLES",
           "OP_CASES", "ALIASING"]

STACK_HINT = (" A walk that calls itself once per tensor goes as deep as the graph is long "
              "(Python stops at about 1000 calls): order the tensors with a loop and a list "
              "used as a stack (chapter 3's walk), not with recursion.")


def walk_graph(out):
    """Every tensor of the learner's graph that ends in ``out``, each once, found through
    ``inputs`` with a loop (no recursion): the checks count runs and draw with it."""
    seen, found, todo = set(), [], [out]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        found.append(t)
        todo.extend(x for x in (getattr(t, "inputs", None) or ()) if id(x) not in seen)
    return found


# ----------------------------------------------------------------- the cases

def _rng_values(rng, shape, zeros=False):
    values = rng.uniform(-1.5, 1.5, size=shape).round(2)
    if zeros and values.size > 1:
        values.flat[::3] = 0.0  # relu's kink: PyTorch's gradient there is 0
    return values


# (what the check says, the program, the leaves' shapes, relu's zeros among the values?)
OP_CASES = [
    ("a + b", lambda a, b: a + b, [(3, 4), (3, 4)], False),
    ("a * b", lambda a, b: a * b, [(3, 4), (3, 4)], False),
    ("a @ b", lambda a, b: a @ b, [(2, 3), (3, 4)], False),
    ("a.relu()", lambda a: a.relu(), [(3, 4)], True),
    ("a + b, b broadcast over the rows (a bias)", lambda a, b: a + b, [(3, 4), (4,)], False),
    ("a * b, a of shape (3, 1), b of shape (1, 4)", lambda a, b: a * b, [(3, 1), (1, 4)], False),
    ("a + b, a of shape (4, 1), b of shape (3,)", lambda a, b: a + b, [(4, 1), (3,)], False),
    ("a * 2.5 (a number)", lambda a: a * 2.5, [(2, 3)], False),
    ("a + 1.0 (a number)", lambda a: a + 1.0, [(2, 3)], False),
    ("a * b, b a 0-d tensor", lambda a, b: a * b, [(2, 3), ()], False),
]

EXAMPLES = [  # chapter 3's graphs and chapter 4's, in the engine's four ops
    ("(a * b + a) * (a * b + a), chapter 3's example with a * a for ** 2",
     lambda a, b: (a * b + a) * (a * b + a), [(), ()]),
    ("u = a * b; out = u + ((u * 2.0).relu() * 3.0): u reached along a short and a long path",
     lambda a, b: (lambda u: u + (u * 2.0).relu() * 3.0)(a * b), [(3,), (3,)]),
    ("relu(x @ w + b) @ v: a neuron layer", lambda x, w, b, v: (x @ w + b).relu() @ v,
     [(4, 3), (3, 5), (5,), (5, 2)]),
    ("h = a @ a; h * h + a: a square matrix used four times",
     lambda a: (lambda h: h * h + a)(a @ a), [(3, 3)]),
]


def random_program(rng):
    """A random graph of 2 or 3 (3, 3) leaves and 3 to 7 ops that reuse earlier values (so
    gradients meet along several paths), ending in the sum of the last two values, as
    chapter 3's battery builds them. Returns (text, program, shapes)."""
    n = int(rng.integers(2, 4))
    names = ["a", "b", "c"][:n]
    lines, pool = [], list(names)
    for k in range(int(rng.integers(3, 8))):
        x, y = (pool[int(rng.integers(len(pool)))] for _ in range(2))
        lines.append(f"v{k} = " + [f"{x} * {y}", f"{x} + {y}", f"{x} @ {y}", f"{x}.relu()",
                                    f"({x} + {y}) * 0.5"][int(rng.integers(5))])
        pool.append(f"v{k}")
    lines.append(f"out = {pool[-1]} + {pool[-2]}")
    text = "; ".join(lines)
    code = compile("\n".join(lines), "<random graph>", "exec")

    def program(*leaves):
        scope = dict(zip(names, leaves))
        exec(code, {}, scope)
        return scope["out"]
    return text, program, [(3, 3)] * n


# ----------------------------------------------------------------- running one case

def _minigrad_run(program, values, seed):
    """minigrad's own (float64): the output's value and each leaf's gradient."""
    leaves = [tensor(v, dtype=MG_FLOAT64, requires_grad=True) for v in values]
    out = program(*leaves)
    out.backward(tensor(seed, dtype=MG_FLOAT64))
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in leaves]


class _Runs:
    """Each backward_fn of a graph wrapped to count its runs and their order: a second run
    of one tensor's backward_fn in one backward() stops the walk at once (a walk along every
    path runs one node once per path, exponentially many on a doubling chain)."""

    def __init__(self, out, text):
        self.order, self.text = [], text
        self.users = {}
        for t in walk_graph(out):
            for x in getattr(t, "inputs", None) or ():
                self.users.setdefault(id(x), []).append(t)
            fn = getattr(t, "backward_fn", None)
            if callable(fn):
                t.backward_fn = self._wrap(t, fn)

    def _wrap(self, t, fn):
        def counted(grad):
            if any(ran is t for ran in self.order):
                raise Mismatch(f"on {self.text!r}, the backward_fn of one tensor (op "
                               f"{getattr(t, 'op', '?')!r}) ran twice in one backward(). Run "
                               "each tensor once, after every gradient meant for it has been "
                               "added up (one buffer per tensor): a walk that follows every "
                               "path on its own runs a tensor once per path (03a).")
            self.order.append(t)
            return fn(grad)
        return counted

    def ran_too_early(self):
        """A tensor whose backward_fn ran before that of a tensor using it (which sends it
        a gradient): the order of the walk is wrong."""
        position = {id(t): k for k, t in enumerate(self.order)}
        for t in self.order:
            for user in self.users.get(id(t), []):
                if id(user) in position and position[id(user)] > position[id(t)]:
                    return t, user
        return None


def _copying(fn):
    """``fn`` (a backward_fn) with each array it returns copied: no two buffers share one."""
    def copied(grad):
        return tuple(None if g is None else np.array(g, dtype=np.float64, copy=True)
                     for g in fn(grad))
    return copied


def _aliasing_at_fault(Tensor, program, values, seed, seed_ones, want):
    """Does the same graph give the right gradients once every array a backward_fn returns
    is a copy of its own? Then an in-place add (``buffer += g``) changed an array that
    another tensor's gradient also holds (``a + b`` hands one array to both inputs)."""
    try:
        leaves = [Tensor(np.array(v, dtype=np.float64)) for v in values]
        out = program(*leaves)
        for t in walk_graph(out):
            if callable(getattr(t, "backward_fn", None)):
                t.backward_fn = _copying(t.backward_fn)
        out.backward() if seed_ones else out.backward(seed.copy())
        return all(
            (w is None and t.grad is None) or (
                w is not None and isinstance(t.grad, np.ndarray) and t.grad.shape == w.shape
                and np.allclose(t.grad, w, rtol=1e-9, atol=1e-12))
            for t, w in zip(leaves, want))
    except Exception:  # noqa: BLE001 (the first run's message says what went wrong)
        return False


ALIASING = (" This graph gives the right gradients once every array a backward_fn returns is "
            "copied first, so the walk's order and sums are not at fault: an in-place "
            "+= changed an array another tensor's gradient also holds: make a new array when "
            "adding (total = total + g, never += into a buffer). a + b hands the same array "
            "to both its inputs, and a + a twice to one.")


def _inner_grads(out, text):
    """Rule 6: the inner tensors' totals are forgotten when backward() ends; only leaves keep
    a .grad (PyTorch's non-leaf .grad is None unless retain_grad())."""
    for t in walk_graph(out):
        if getattr(t, "inputs", None) and getattr(t, "grad", None) is not None:
            raise Mismatch(f"on {text!r}, after backward() the tensor made by "
                           f"{getattr(t, 'op', '?')!r} (an inner tensor, not a leaf) has .grad "
                           f"{show(t.grad)}; expected None. Rule 6: an inner tensor's total is "
                           "forgotten when backward() ends (PyTorch keeps .grad on leaves only): "
                           "keep the totals in buffers that belong to one backward() call, not "
                           "in the inner tensors' .grad.")


def _learner_leaves(Tensor, values, text):
    return [attempt(f"Tensor(np.array of shape {np.shape(v)}) for {text!r}",
                    lambda v=v: Tensor(np.array(v, dtype=np.float64))) for v in values]


def _forward(Tensor, program, leaves, want, text):
    out = attempt(f"the forward pass of {text!r} with your Tensor", lambda: program(*leaves))
    if not isinstance(out, Tensor):
        raise Mismatch(f"{text!r} gave a {type(out).__name__}, not one of your Tensors: every "
                       "op returns a new Tensor that records its inputs and its backward_fn.")
    data = np.asarray(getattr(out, "data", None))
    if data.shape != want.shape or not np.allclose(data, want, rtol=1e-12, atol=1e-12):
        raise Mismatch(f"the value of {text!r} is {show(data)}; expected {show(want)} (numpy's "
                       "own result for the same arrays): the forward computation is off.")
    return out


def _leaf_mismatch(text, name, got, want, ones, shape, counted, seed_shape):
    at = f"on {text!r}, {name}.grad"
    if got is None:
        return f"{at} is None after backward(); expected {show(want)}."
    if not isinstance(got, np.ndarray):
        return (f"{at} is a {type(got).__name__}; keep .grad a numpy array (the total "
                "gradient added up by backward()).")
    if got.shape != shape:
        if got.shape == seed_shape and shape != seed_shape:
            return (f"{at} has shape {got.shape}, the output's shape; {name} has shape {shape}. "
                    f"{name} was broadcast in the forward pass, so its gradient is the sum over "
                    "the broadcast axes (chapter 5's sum_to), back to its own shape.")
        return f"{at} has shape {got.shape}; expected {shape}, {name}'s own shape."
    if got.dtype != np.float64:
        return f"{at} is {got.dtype}; expected float64, the dtype of the data."
    if ones is not None and np.allclose(got, ones, rtol=1e-9, atol=1e-12):
        return (f"{at} is {show(got)}; expected {show(want)}. That is what a gradient of ones "
                "at the output gives, but backward(grad) was given another grad here: start "
                "the walk from the grad argument as it is (ones only when it is None).")
    early = counted.ran_too_early()
    if early is not None:
        t, user = early
        return (f"{at} is {show(got)}; expected {show(want)}. The backward_fn of a tensor made "
                f"by {getattr(t, 'op', '?')!r} ran before that of a tensor made from it (by "
                f"{getattr(user, 'op', '?')!r}), which still had a gradient to send it: a "
                "tensor runs after every tensor that uses it (a topological order, the output "
                "first), never before.")
    return f"{at} is {show(got)}; expected {show(want)}."


def _op_hint(text, name, got, want, leaves, seed, index):
    """For a single op: which formula is off (the mistake named, not the code given)."""
    data = [t.data for t in leaves]
    if text.startswith("a * b") and len(data) == 2 and np.shape(got) == np.shape(data[index]):
        if np.allclose(got, seed * data[index]):
            return (f" {name} received the grad times {name} itself: in a product, each "
                    "input's gradient is scaled by the other input's value.")
    if "relu" in text:
        zero = data[0] == 0
        if zero.any() and np.allclose(got[~zero], want[~zero]):
            return (" Right everywhere except where the input is exactly 0: there PyTorch's "
                    "relu passes gradient 0 (the input must be greater than 0).")
    if "@" in text:
        return (" The gradient of each factor of a matrix product has that factor's shape: "
                "which product of the output's gradient and the other factor (transposed?) "
                "gives it? (chapter 5's mm_backward)")
    return ""


def _walk_hint(error, text):
    """A line on what to fix for the errors a walk or an op's backward_fn typically raises
    (after the error's own message, which it ends with a full stop)."""
    hint = _walk_advice(error, text)
    return ("" if not hint or str(error).rstrip().endswith(".") else ".") + hint


def _walk_advice(error, text):
    if isinstance(error, RecursionError):
        return STACK_HINT
    if "NoneType" in str(error) and "callable" in str(error):
        return (" A leaf has no backward_fn (None): the walk hands a leaf its total, it does "
                "not call it.")
    if "@" in text and isinstance(error, ValueError):
        return (" The gradient of each factor of a matrix product has that factor's shape: "
                "which product of the output's gradient and the other factor (transposed?) "
                "gives it? (chapter 5's mm_backward)")
    return ""


def _compare(Tensor, text, program, shapes, rng, seed_ones=False, zeros=False, op_case=False):
    """One case: minigrad's forward and leaves' gradients against the learner's, from a
    random gradient at the output (ones with ``seed_ones``: then backward() is called
    without an argument)."""
    values = [_rng_values(rng, s, zeros) for s in shapes]
    probe = program(*[tensor(v, dtype=MG_FLOAT64) for v in values]).detach().numpy()
    seed = np.ones(probe.shape) if seed_ones else rng.uniform(0.3, 2.5, probe.shape).round(2)
    want_value, want = _minigrad_run(program, values, seed)
    ones = None if seed_ones else _minigrad_run(program, values, np.ones(probe.shape))[1]
    leaves = _learner_leaves(Tensor, values, text)
    out = _forward(Tensor, program, leaves, want_value, text)
    counted = _Runs(out, text)
    call = "backward()" if seed_ones else "backward(grad)"
    attempt(f"on {text!r}, {call} with your walk",
            lambda: out.backward() if seed_ones else out.backward(seed.copy()),
            lambda error: _walk_hint(error, text))
    names = "abc" if len(shapes) <= 3 else "xwbv"
    for k, (t, w, s) in enumerate(zip(leaves, want, shapes)):
        name = names[k]
        got = getattr(t, "grad", None)
        got = np.asarray(got) if isinstance(got, (float, int, np.floating)) else got
        if w is None:  # a leaf no path reaches: PyTorch leaves its .grad None
            if got is None:
                continue
            raise Mismatch(f"on {text!r}, {name} takes no part in the output, yet its .grad is "
                           f"{show(got)}; expected None (no gradient reaches it, as in PyTorch).")
        if isinstance(got, np.ndarray) and got.shape == w.shape and np.allclose(
                got, w, rtol=1e-9, atol=1e-12) and got.dtype == np.float64:
            continue
        message = _leaf_mismatch(text, name, got, w, None if ones is None else ones[k], s,
                                 counted, probe.shape)
        if message.endswith(f"expected {show(w)}.") and _aliasing_at_fault(
                Tensor, program, values, seed, seed_ones, want):
            message += ALIASING
        elif op_case and isinstance(got, np.ndarray) and got.shape == w.shape:
            message += _op_hint(text, name, got, w, leaves, seed, k)
        elif not op_case and message.endswith(f"expected {show(w)}."):
            message += (" Each op alone passed, so the walk is at fault: a tensor used more "
                        "than once gets the sum of the gradients from all its uses, added up "
                        "in one buffer per tensor, and it runs (a leaf: adds its total into "
                        ".grad) only after every tensor made from it has run: a topological "
                        "order, the output first.")
        raise Mismatch(message)
    _inner_grads(out, text)
    return leaves, out


# ----------------------------------------------------------------- the engine's battery

def _check_class(Tensor):
    if not isinstance(Tensor, type):
        raise Mismatch(f"expected a class (class Tensor: ...), got {type(Tensor).__name__}.")
    leaf = attempt("Tensor(np.array([1.0, 2.0]))", lambda: Tensor(np.array([1.0, 2.0])))
    for attribute in ("data", "grad", "inputs", "backward_fn"):
        if not hasattr(leaf, attribute):
            raise Mismatch(f"a Tensor made from data has no attribute {attribute!r}; the spec "
                           "names data, inputs, backward_fn, op and grad.")
    if leaf.grad is not None:
        raise Mismatch(f"a new Tensor's grad is {show(leaf.grad)}; it is None until backward() "
                       "adds a gradient into it (as in PyTorch).")
    if len(tuple(leaf.inputs)) or leaf.backward_fn is not None:
        raise Mismatch("a Tensor made from data alone (a leaf) has no inputs and no "
                       "backward_fn: inputs=() and backward_fn=None by default.")
    ints = attempt("Tensor([1, 2])", lambda: Tensor([1, 2]))
    if not isinstance(ints.data, np.ndarray) or ints.data.dtype != np.float64:
        kind = getattr(ints.data, "dtype", type(ints.data).__name__)
        raise Mismatch(f"Tensor([1, 2]).data is {kind}; expected a float64 numpy array: "
                       "integers would make every gradient an integer too.")


def _check_recording(Tensor):
    a, b = Tensor(np.array([1.0, -2.0])), Tensor(np.array([3.0, 4.0]))
    for text, make in (("a + b", lambda: a + b), ("a * b", lambda: a * b)):
        out = attempt(text, make)
        inputs = tuple(getattr(out, "inputs", ()) or ())
        if len(inputs) != 2 or inputs[0] is not a or inputs[1] is not b:
            shown = [type(x).__name__ for x in inputs]
            raise Mismatch(f"({text}).inputs is {shown}; expected the two Tensors a and b "
                           "themselves, in that order: the graph is made of the very tensors "
                           "(their data alone, or copies, cannot carry gradients back).")
        if not callable(getattr(out, "backward_fn", None)):
            raise Mismatch(f"({text}).backward_fn is not a function: an op's result records "
                           "how to send its gradient back to its inputs.")
    relu = attempt("a.relu()", a.relu)
    if len(tuple(relu.inputs)) != 1 or tuple(relu.inputs)[0] is not a:
        raise Mismatch("a.relu().inputs must be (a,): the one Tensor it was computed from.")


def _check_accumulation(Tensor):
    """Chapter 4: x = 2, y = x * 3 * x; y.backward() twice gives 12, then 24; and a leaf's
    .grad is its own array, never shared with another leaf or with the seed."""
    x = Tensor(np.array(2.0))
    attempt("(x * 3.0 * x).backward()", lambda: (x * 3.0 * x).backward())
    first = None if x.grad is None else float(np.asarray(x.grad))
    if first is None or not np.isclose(first, 12.0):
        raise Mismatch(f"x = 2, y = x * 3.0 * x: after y.backward(), x.grad is {show(x.grad)}; "
                       "expected 12, the gradient 6x. x is used twice: both uses count.")
    attempt("a second (x * 3.0 * x).backward()", lambda: (x * 3.0 * x).backward())
    second = float(np.asarray(x.grad))
    if np.isclose(second, 12.0):
        raise Mismatch("x = 2: after two backward() calls (each on a new y = x * 3.0 * x), "
                       "x.grad is 12; expected 24. backward() adds into a leaf's .grad "
                       "(chapter 4), it never replaces it: only zero_grad() clears it.")
    if not np.isclose(second, 24.0):
        raise Mismatch(f"x = 2: after two backward() calls, x.grad is {show(second)}; "
                       "expected 24 (12, then 12 more).")
    x = Tensor(np.array(2.0))
    y = x * 3.0 * x
    attempt("y.backward() twice on the same y", lambda: (y.backward(), y.backward()))
    if not np.isclose(float(np.asarray(x.grad)), 24.0):
        raise Mismatch(f"x = 2, y = x * 3.0 * x, then y.backward() twice on the same y: x.grad "
                       f"is {show(x.grad)}; expected 24 (PyTorch gives 24 with retain_graph="
                       "True). Does each backward() start every tensor's buffer from zero? A "
                       "total kept on an inner tensor carries the first call into the second.")
    a, b = Tensor(np.array([1.0, 2.0])), Tensor(np.array([3.0, 4.0]))
    seed = np.array([0.5, -1.5])
    attempt("(a + b).backward(grad)", lambda: (a + b).backward(seed))
    b_before = None if b.grad is None else np.array(b.grad, copy=True)
    attempt("then (a * 2.0).backward(grad)", lambda: (a * 2.0).backward(np.array([1.0, 1.0])))
    if b_before is None or not np.array_equal(b.grad, b_before) or not np.array_equal(
            seed, [0.5, -1.5]):
        raise Mismatch("(a + b).backward(v), then (a * 2.0).backward(): adding into a.grad also "
                       f"changed b.grad (now {show(b.grad)}) or the v you were given: a + b "
                       "sends one gradient array to both, so a leaf's .grad must be an array "
                       "of its own (a copy, or a sum that makes a new array).")


def _check_deep_chain(Tensor, depth=5000):
    x = Tensor(np.array(1.0))
    y = x
    for _ in range(depth):
        y = y * 1.0
    attempt(f"backward() on a chain of {depth} products", y.backward,
            lambda error: _walk_hint(error, ""))
    if x.grad is None or not np.isclose(float(np.asarray(x.grad)), 1.0):
        raise Mismatch(f"on a chain of {depth} products by 1.0, x.grad is {show(x.grad)}; "
                       "expected 1.0.")


def _check_doubling(Tensor, depth=30):
    """03a's doubling chain: x, then x = x + x thirty times: 2**30 paths, each tensor once."""
    x = Tensor(np.array(1.0))
    y = x
    for _ in range(depth):
        y = y + y
    counted = _Runs(y, f"{depth} doublings y = y + y")
    attempt(f"backward() on {depth} doublings y = y + y", y.backward)
    if x.grad is None or not np.isclose(float(np.asarray(x.grad)), 2.0 ** depth):
        raise Mismatch(f"on {depth} doublings y = y + y (x = 1), x.grad is {show(x.grad)}; "
                       f"expected 2**{depth} = {2 ** depth}.")
    return counted


def engine_battery(Tensor, n_random=80):
    """The spec's interface, the recording, each op alone (broadcasting included) from
    random output gradients, chapter 3's graphs and random graphs with reuse, chapter 4's
    accumulation, a 5000-op chain and a doubling chain; every value against minigrad's."""
    _check_class(Tensor)
    _check_recording(Tensor)
    rng = np.random.default_rng(27)
    for text, program, shapes, zeros in OP_CASES:
        _compare(Tensor, text, program, shapes, rng, zeros=zeros, op_case=True)
    first = EXAMPLES[0]
    _compare(Tensor, first[0], first[1], first[2], rng, seed_ones=True)
    for text, program, shapes in EXAMPLES:
        _compare(Tensor, text, program, shapes, rng)
    programs = np.random.default_rng(3)
    for _ in range(n_random):
        text, program, shapes = random_program(programs)
        _compare(Tensor, text, program, shapes, rng)
    _check_accumulation(Tensor)
    _check_doubling(Tensor)
    _check_deep_chain(Tensor)
    return (f"{len(OP_CASES)} cases of the four ops (broadcasting summed back), "
            f"{len(EXAMPLES)} of the course's graphs and {n_random} random ones from random "
            "output gradients, 12 then 24, a doubling chain and a 5000-op chain")


# ----------------------------------------------------------------- SGD's battery

class _Plain:
    """A parameter for the learner's SGD when their Tensor is not there: data and grad."""

    def __init__(self, data):
        self.data, self.grad = data, None


def _param(Tensor, array):
    if Tensor is not None:
        try:
            p = Tensor(array.copy())
            if isinstance(getattr(p, "data", None), np.ndarray):
                return p
        except Exception:  # noqa: BLE001 (their Tensor's check says why)
            pass
    return _Plain(array.copy())


def _sgd_run(SGD, Tensor, lr, seed):
    """Four steps on a seeded problem, side by side with optim.SGD; before step 3
    zero_grad() runs with no backward after it; ``unused`` never gets a gradient."""
    rng = np.random.default_rng(seed)
    values = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2), "unused": rng.normal(size=2)}
    own = {k: tensor(v, dtype=MG_FLOAT64, requires_grad=True) for k, v in values.items()}
    mine = {k: _param(Tensor, v) for k, v in values.items()}
    label = f"SGD([w, b, unused], lr={lr})"
    own_opt = MinigradSGD(list(own.values()), lr=lr)
    opt = attempt(label, lambda: SGD(list(mine.values()), lr=lr))
    x, y = tensor(rng.normal(size=(5, 3))), tensor(rng.normal(size=(5, 2)))
    for step in range(1, 5):
        own_opt.zero_grad()
        attempt(f"{label}, step {step}: zero_grad()", opt.zero_grad)
        for k, p in mine.items():
            if p.grad is not None:
                raise Mismatch(f"{label}: after zero_grad(), {k}.grad is {show(p.grad)}; "
                               "expected None, PyTorch's default (set_to_none=True).")
        if step != 3:
            ((x @ own["w"] + own["b"] - y) ** 2).mean().backward()
            for k in ("w", "b"):
                mine[k].grad = own[k].grad.numpy().copy()
        grads = {k: None if p.grad is None else p.grad.copy() for k, p in mine.items()}
        before = {k: np.array(p.data, copy=True) for k, p in mine.items()}
        own_opt.step()
        attempt(f"{label}, step {step}: step()", opt.step,
                lambda error: ". Hint: a parameter whose .grad is None (unused, or zero_grad() "
                "with no backward after it) stays where it is." if "NoneType" in str(error)
                else "")
        what = " (zero_grad() ran, then step() with no backward: no gradient)" if step == 3 else ""
        for k, p in mine.items():
            got, want = np.asarray(p.data), own[k].detach().numpy()
            if grads[k] is not None and not np.array_equal(p.grad, grads[k]):
                raise Mismatch(f"{label}, step {step}: step() changed {k}.grad; it reads the "
                               "gradient and leaves it as it was.")
            if got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=1e-14):
                continue
            if grads[k] is None:
                hint = (" Its .grad is None: it took no part, so step() leaves it alone (as "
                        "PyTorch does).")
            elif got.shape == want.shape and np.allclose(got, before[k]):
                hint = " It did not move: does step() change each parameter's own data?"
            elif got.shape == want.shape and np.allclose(got, before[k] + lr * grads[k]):
                hint = " It moved up the gradient: a step goes against it, downhill."
            elif got.shape == want.shape and np.allclose(got, before[k] - grads[k]):
                hint = " It moved by the whole gradient: the step is lr times it."
            else:
                hint = " A step moves each parameter by lr times its gradient, downhill."
            raise Mismatch(f"{label}, step {step}{what}: parameter {k} is {show(got)}; expected "
                           f"{show(want)}.{hint}")


class _OnMinigrad:
    """The learner's SGD behind ``optim.SGD``'s face, for chapter 8's regression: each
    minigrad parameter gets a twin (one of their Tensors, or data and grad), the twins are
    handed their gradients before ``step`` and give their data back after it."""

    SGD = Tensor = None

    def __init__(self, params, lr=1e-3):
        self.params = list(params)
        self.twins = [_param(self.Tensor, p.detach().numpy().astype(np.float64))
                      for p in self.params]
        self.inner = self.SGD(self.twins, lr=lr)

    def _grads_in(self):
        for p, twin in zip(self.params, self.twins):
            twin.grad = None if p.grad is None else p.grad.numpy().astype(np.float64)

    def zero_grad(self, set_to_none=True):
        self._grads_in()
        self.inner.zero_grad()
        for p, twin in zip(self.params, self.twins):
            p.grad = None if twin.grad is None else from_numpy(
                np.asarray(twin.grad, dtype=p.detach().numpy().dtype).copy())

    def step(self):
        self._grads_in()
        self.inner.step()
        with no_grad():
            for p, twin in zip(self.params, self.twins):
                p.copy_(from_numpy(np.asarray(twin.data, dtype=p.detach().numpy().dtype)))


def sgd_battery(SGD, Tensor=None):
    """Four steps against optim.SGD for two learning rates and three seeds (zero_grad to
    None, a step without gradients, a parameter never used), then chapter 8's regression
    (``teach.training_run``, also with micro-batches) with the learner's SGD plugged in as
    ``optim.SGD`` by the ``sgd`` piece's plug, through an adapter."""
    if not isinstance(SGD, type):
        raise Mismatch(f"expected a class (class SGD: ...), got {type(SGD).__name__}.")
    for lr in (0.1, 0.03):
        for seed in (0, 1, 2):
            _sgd_run(SGD, Tensor, lr, seed)
    adapter = type("YourSGDOnMinigrad", (_OnMinigrad,), {"SGD": SGD, "Tensor": Tensor})
    for steps in (1, 3):
        want = training_run(lr=0.01, epochs=10, accumulation_steps=steps)
        with piece_named("sgd").plug(adapter):
            got = attempt("chapter 8's regression (teach.training_run) with your SGD",
                          lambda: training_run(lr=0.01, epochs=10, accumulation_steps=steps))
        if not np.allclose(got, want, rtol=1e-5):
            raise Mismatch(f"chapter 8's regression ({steps} micro-batch(es) an epoch) with "
                           f"your SGD: the losses are {np.round(got, 4).tolist()}; expected "
                           f"{np.round(want, 4).tolist()}.")
    return ("6 runs of 4 steps against optim.SGD (zero_grad, a step without gradients, an "
            "unused parameter) and chapter 8's regression with your SGD plugged in")
