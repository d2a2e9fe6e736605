"""The check of chapter 13's build exercise: a learner's activation checkpointing,
``checkpoint(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs)``,
PyTorch's ``torch.utils.checkpoint.checkpoint``, written as a custom ``autograd.Function``
that saves only its inputs and runs ``function`` again in backward (lecture 13c).

``plug_checkpoint(fn)`` swaps it in for ``minigrad.utils.checkpoint.checkpoint`` (so
``checkpoint_sequential`` uses it too); ``checkpointing_battery(fn)`` runs it next to
minigrad's own (``use_reentrant=False``) on the same cases (two tensors, a float and a
keyword argument, an input without grad, a module's weights, dropout with and without
``preserve_rng_state``, two outputs, float64), compares outputs, gradients, the random
stream afterwards, how often the function runs and what the graph keeps, then trains a
small network with it plugged in; it raises ``build.Mismatch`` at the first difference with
a message that names the mistake without giving the code. ``saved_bytes(output)`` is what
the lecture and the check count: the bytes of the arrays the graph behind ``output`` keeps
for backward. ``teach.exercises.ch13`` registers the piece.
"""

import contextlib
import inspect
import warnings
from unittest import mock

import numpy as np

from .. import nn
from ..creation import tensor
from ..dtypes import float32, float64
from ..graph import AccumulateGrad, is_grad_enabled
from ..nn import functional as F
from ..optim import SGD
from ..random import default_generator, manual_seed
from ..utils import checkpoint as checkpoint_module
from .. import Tensor
from .build import Mismatch, attempt, own_out_of_reach, same_dtype, show
from .checks import keeps_random_state

__all__ = ["OWN_CHECKPOINT", "checkpointing_battery", "plug_checkpoint", "saved_bytes"]

# minigrad's own, whatever utils.checkpoint.checkpoint is while a piece is plugged in
OWN_CHECKPOINT = checkpoint_module.checkpoint
OWN_CLASSES = {"utils.checkpoint.Checkpoint": checkpoint_module.Checkpoint,
               "utils.checkpoint.CheckpointFunction": checkpoint_module.CheckpointFunction}
_OUT_OF_REACH = {checkpoint_module: [("checkpoint", "utils.checkpoint.checkpoint"),
                                     ("checkpoint_sequential",
                                      "utils.checkpoint.checkpoint_sequential")]}


@contextlib.contextmanager
def plug_checkpoint(checkpoint):
    """Inside the block ``minigrad.utils.checkpoint.checkpoint`` is the learner's."""
    with mock.patch.object(checkpoint_module, "checkpoint", checkpoint):
        yield


# ------------------------------------------------------------------ what a graph keeps

def _arrays(value, found):
    if isinstance(value, np.ndarray):
        found[id(value)] = value.nbytes
    elif isinstance(value, (tuple, list)):
        for item in value:
            _arrays(item, found)


def _graph_nodes(*outputs):
    """Each node of the graph behind ``outputs`` once (AccumulateGrad left out), walking
    from their ``grad_fn``s to the leaves."""
    seen = set()
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if not isinstance(node, AccumulateGrad):
            yield node
        stack.extend(n for n, _ in node.next_functions)


def saved_bytes(*outputs):
    """The bytes of the arrays that the graph behind ``outputs`` keeps for backward (each
    array once), walking from their ``grad_fn``s to the leaves."""
    found = {}
    for node in _graph_nodes(*outputs):
        _arrays(getattr(node, "saved", None), found)
    return sum(found.values())


def _nodes(*outputs):
    """The names of the nodes (not AccumulateGrad) of the graph behind ``outputs``."""
    return [node.name() for node in _graph_nodes(*outputs)]


# ------------------------------------------------------------------ the cases

def _array(rng, shape, dtype):
    return rng.standard_normal(shape).astype(np.float64 if dtype is float64 else np.float32)


class _Counted:
    """The function a case checkpoints, counting its calls (forward and rerun)."""

    def __init__(self, function):
        self.function, self.calls = function, 0
        self.grad_modes, self.inputs_require = [], []  # per call: grad mode, args' flags

    def __call__(self, *args, **kwargs):
        self.calls += 1
        self.grad_modes.append(is_grad_enabled())
        self.inputs_require.append([a.requires_grad for a in args if isinstance(a, Tensor)])
        return self.function(*args, **kwargs)


def _mlp():
    manual_seed(7)
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 3))


def _case_two_tensors(dtype=float32):
    rng = np.random.default_rng(1)
    x = tensor(_array(rng, (8, 6), dtype), requires_grad=True)
    w = tensor(_array(rng, (6, 32), dtype), requires_grad=True)
    return dict(leaves=[x, w], args=(x, w), kwargs={},
                function=lambda a, b: (a @ b).tanh().pow(2).sum(1))


def _case_float_and_keyword():
    rng = np.random.default_rng(2)
    x = tensor(_array(rng, (10, 32), float32), requires_grad=True)

    def scaled(a, scale, shift=0.0):
        return (a * scale + shift).sigmoid()
    return dict(leaves=[x], args=(x, 3.0), kwargs={"shift": -1.5}, function=scaled)


def _case_input_without_grad():
    rng = np.random.default_rng(3)
    x = tensor(_array(rng, (8, 6), float32))
    w = tensor(_array(rng, (6, 32), float32), requires_grad=True)
    return dict(leaves=[x, w], args=(x, w), kwargs={}, function=lambda a, b: (a @ b).relu())


def _case_module():
    model = _mlp()
    rng = np.random.default_rng(4)
    x = tensor(_array(rng, (16, 6), float32), requires_grad=True)
    return dict(leaves=[x] + list(model.parameters()), args=(x,), kwargs={}, function=model)


def _case_dropout():
    model = _mlp()
    rng = np.random.default_rng(5)
    x = tensor(_array(rng, (16, 6), float32), requires_grad=True)

    def block(a):
        return F.dropout(model(a), p=0.5, training=True)
    return dict(leaves=[x] + list(model.parameters()), args=(x,), kwargs={}, function=block)


def _case_two_outputs():
    rng = np.random.default_rng(6)
    x = tensor(_array(rng, (5, 32), float32), requires_grad=True)
    y = tensor(_array(rng, (5, 32), float32), requires_grad=True)
    return dict(leaves=[x, y], args=(x, y), kwargs={},
                function=lambda a, b: ((a * b).tanh(), (a - b).exp()))


_CASES = [
    # (what the message calls it, how to make it, keyword arguments of checkpoint)
    ("tanh(x @ w) with x and w requiring grad", _case_two_tensors, {}),
    ("a function with a float argument and a keyword argument (shift=-1.5)",
     _case_float_and_keyword, {}),
    ("x without requires_grad, w with it", _case_input_without_grad, {}),
    ("a module (Linear, Tanh, Linear, Tanh, Linear) whose weights are not arguments",
     _case_module, {}),
    ("a module followed by dropout, preserve_rng_state=True", _case_dropout, {}),
    ("a module followed by dropout, preserve_rng_state=False", _case_dropout,
     {"preserve_rng_state": False}),
    ("a function with two outputs", _case_two_outputs, {}),
    ("tanh(x @ w) in float64", lambda: _case_two_tensors(float64), {}),
]


def _loss(outputs):
    """A loss that weighs every output element differently (seeded), so that a wrong
    gradient cannot hide in a sum of ones."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    total = 0
    for k, o in enumerate(outputs):
        weights = np.random.default_rng(20 + k).standard_normal(tuple(o.shape))
        total = total + (o * tensor(weights, dtype=o.dtype)).sum()
    return total


def _run(checkpoint, case_maker, kwargs, mine, what):
    """Seed, make the case, checkpoint it, backward a loss: what came out, the gradients of
    the leaves, the bytes the graph kept, how often the function ran, and one number drawn
    after backward (where the random stream stands)."""
    case = case_maker()
    counted = _Counted(case["function"])
    manual_seed(11)

    def forward():
        return checkpoint(counted, *case["args"], use_reentrant=False, **kwargs,
                          **case["kwargs"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = (attempt(f"checkpoint with {what}", lambda: _mine(forward), _error_hint)
                   if mine else forward())
    calls_forward = counted.calls
    flat = outputs if isinstance(outputs, tuple) else (outputs,)
    kept = saved_bytes(*flat)
    nodes = _nodes(*flat)
    values = [None if not isinstance(o, Tensor) else o.detach().numpy().copy() for o in flat]
    requires = [isinstance(o, Tensor) and o.requires_grad for o in flat]
    if mine:
        attempt(f"the backward of checkpoint with {what}",
                lambda: _mine(lambda: _loss(outputs).backward()), _error_hint)
    else:
        _loss(outputs).backward()
    after = default_generator.get_state()
    grads = [None if leaf.grad is None else leaf.grad.detach().numpy().copy()
             for leaf in case["leaves"]]
    inputs_bytes = sum(a.detach().numpy().nbytes for a in case["args"] if isinstance(a, Tensor))
    return dict(outputs=outputs, flat=flat, values=values, requires=requires, grads=grads,
                kept=kept, nodes=nodes, calls_forward=calls_forward,
                calls=counted.calls, after=after, inputs_bytes=inputs_bytes,
                grad_modes=counted.grad_modes, inputs_require=counted.inputs_require,
                leaves=case["leaves"])


def _mine(function):
    with own_out_of_reach(_OUT_OF_REACH), np.errstate(all="ignore"):
        return function()


def _error_hint(error):
    text = str(error)
    if "does not require grad" in text:
        return (" The rerun in backward made outputs without a graph: backward runs with "
                "grad mode off, so switch it on around the rerun, and give the inputs of the "
                "rerun requires_grad (the saved tensors come back without it).")
    if "incorrect number of gradients" in text:
        return (" backward returns one gradient per argument of forward, in order: None "
                "for the function, for a flag and for every argument that is not a tensor.")
    if "invalid gradient" in text:
        return (" backward returns, for each argument, the gradient with respect to that "
                "argument (its shape): the .grad the rerun's backward gives each input.")
    if "'tuple' object has no attribute" in text:
        return (" The function may return several outputs (a tuple): backward then gets one "
                "gradient per output; backpropagate each output with its gradient.")
    if "_data" in text or "save_for_backward" in text:
        return (" save_for_backward takes tensors only: keep the other arguments (the "
                "function, numbers, flags) as attributes of ctx.")
    if isinstance(error, TypeError) and ("keyword" in text or "argument" in text):
        return (" checkpoint passes its own keyword arguments (**kwargs) on to the function, "
                "in forward and in the rerun.")
    return ""


# ------------------------------------------------------------------ comparing one case

def _check_case(checkpoint, case):
    what, maker, kwargs = case
    want = _run(OWN_CHECKPOINT, maker, kwargs, mine=False, what=what)
    got = _run(checkpoint, maker, kwargs, mine=True, what=what)
    shown = f"checkpoint with {what}"
    if len(got["flat"]) != len(want["flat"]) or \
            isinstance(got["outputs"], tuple) != isinstance(want["outputs"], tuple):
        raise Mismatch(f"{shown} returned {_kind(got['outputs'])}; the function returns "
                       f"{_kind(want['outputs'])}: return what it returns, as it returns it.")
    for k, (g, w) in enumerate(zip(got["values"], want["values"])):
        if g is None or g.shape != w.shape or not np.allclose(g, w, rtol=1e-6, atol=1e-7):
            raise Mismatch(f"{shown}: output {k} differs from the plain call's (got "
                           f"{show(g)[:70]}, expected {show(w)[:70]}). forward returns "
                           "exactly what the function returns for the same arguments.")
        same_dtype(f"output {k} of {shown}", got["flat"][k], want["flat"][k])
    if not all(got["requires"]):
        raise Mismatch(f"{shown}: an output does not require grad, so backward cannot reach "
                       "the inputs. The outputs must come out of your Function's apply (its "
                       "node is their grad_fn).")
    if got["calls_forward"] != 1:
        raise Mismatch(f"{shown}: the function ran {got['calls_forward']} times during the "
                       "forward pass; it runs once there (without a graph), and once more in "
                       "backward.")
    if got["kept"] > got["inputs_bytes"]:
        inner = [n for n in got["nodes"] if not n.endswith("Backward") or "Backward0" in n]
        hint = (f" The graph has the function's own nodes ({', '.join(sorted(set(inner))[:4])}"
                "): the function ran with the graph recorded. Run it inside your Function's "
                "forward, where nothing is recorded."
                if inner else " Save the tensor inputs and nothing else: the outputs and "
                              "everything in between are computed again in backward.")
        raise Mismatch(f"{shown}: the graph keeps {got['kept']} bytes for backward, more than "
                       f"the inputs' {got['inputs_bytes']} bytes.{hint}")
    if got["calls"] != 2:
        raise Mismatch(f"{shown}: the function ran {got['calls']} times in all; it runs "
                       "twice: once in forward, once more in backward (the recomputation).")
    if not got["grad_modes"][1]:
        raise Mismatch(f"{shown}: the rerun in backward ran with grad mode off (backward runs "
                       "with it off), so it recorded no graph and nothing can be "
                       "backpropagated through it. Switch grad mode on around the rerun.")
    wanted = [t.requires_grad for t in _tensors(maker)]
    if got["inputs_require"][1] != wanted:
        raise Mismatch(f"{shown}: in the rerun the inputs' requires_grad is "
                       f"{got['inputs_require'][1]}, where the arguments had {wanted}: the saved "
                       "tensors come back without requires_grad; give it back to those that "
                       "need a gradient (ctx.needs_input_grad says which), and only to them.")
    for leaf_index, (g, w) in enumerate(zip(got["grads"], want["grads"])):
        name = _leaf_name(maker, leaf_index)
        if w is None and g is not None:
            raise Mismatch(f"{shown}: {name} got a gradient, but it does not require grad.")
        if w is None:
            continue
        if g is None:
            hint = (" The function uses these weights without taking them as arguments: "
                    "the rerun's backward must reach them too (a backward of the rerun's "
                    "outputs gives every leaf it uses its .grad; a gradient with respect to "
                    "the inputs alone does not)." if "weight" in name or "bias" in name else
                    " Return its gradient from backward: the rerun's inputs need "
                    "requires_grad (the saved tensors come back without it), so that the "
                    "backward of the rerun gives each of them a .grad.")
            raise Mismatch(f"{shown}: {name} got no gradient.{hint}")
        same_dtype(f"the gradient of {name} after {shown}", g, w)
        tol = (1e-10, 1e-12) if w.dtype == np.float64 else (1e-5, 1e-6)
        if g.shape != w.shape or not np.allclose(g, w, rtol=tol[0], atol=tol[1]):
            hint = _grad_hint(what, kwargs, g, w)
            raise Mismatch(f"{shown}: the gradient of {name} differs from the plain call's "
                           f"(got {show(g)[:70]}, expected {show(w)[:70]}).{hint}")
    if got["after"] != want["after"]:
        raise Mismatch(f"{shown}: after backward the random stream stands elsewhere than it "
                       "would without checkpointing, so every later random draw changes. "
                       "Put the generator's state back as it was before the rerun once the "
                       "rerun is done.")


def _tensors(maker):
    return [a for a in maker()["args"] if isinstance(a, Tensor)]


def _kind(outputs):
    return (f"a tuple of {len(outputs)}" if isinstance(outputs, tuple)
            else type(outputs).__name__)


def _leaf_name(maker, index):
    if maker in (_case_module, _case_dropout):
        if index == 0:
            return "x"
        names = [n for n, _ in _mlp().named_parameters()]
        return f"the model's {names[index - 1]}"
    return ["x", "w" if maker is not _case_two_outputs else "y"][min(index, 1)]


def _grad_hint(what, kwargs, got, want):
    if "dropout" in what and kwargs.get("preserve_rng_state", True):
        return (" The rerun drew other dropout masks than the first run: with "
                "preserve_rng_state=True, keep the generator's state before the first run "
                "(mg.default_generator.get_state()) and set it again before the rerun.")
    if "dropout" in what:
        return (" With preserve_rng_state=False PyTorch does not touch the random stream: the "
                "rerun draws the next numbers, whatever they are. Keep and restore the state "
                "only when preserve_rng_state is True.")
    if np.allclose(got, 2 * want, rtol=1e-5, atol=1e-6):
        return " It is twice the right one: the gradient reached that tensor twice."
    return ""


def _values_named(function, depth=3):
    """The globals and closure values that ``function``'s code (and the code of the
    functions and classes of its own module it names) reads by name."""
    found, todo, seen = [], [(function, 0)], set()
    while todo:
        current, level = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if inspect.isfunction(current):
            codes = [current.__code__]
        elif inspect.isclass(current):
            methods = (getattr(v, "__func__", v) for v in vars(current).values())
            codes = [m.__code__ for m in methods if inspect.isfunction(m)]
        else:
            codes = []
        for code in codes:
            stack = [code]
            while stack:
                c = stack.pop()
                stack.extend(k for k in c.co_consts if inspect.iscode(k))
                for name in c.co_names + c.co_freevars:
                    value = _lookup(current, name)
                    if value is not None:
                        found.append(value)
                        if level < depth and (inspect.isfunction(value) or
                                              inspect.isclass(value)):
                            todo.append((value, level + 1))
    return found


def _lookup(owner, name):
    function = owner if inspect.isfunction(owner) else None
    if function is not None:
        cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
        if name in cells:
            try:
                return cells[name].cell_contents
            except ValueError:
                return None
        return function.__globals__.get(name)
    module = inspect.getmodule(owner)
    return getattr(module, name, None) if module is not None else None


# ------------------------------------------------------------------ a training run

def _train(steps=5):
    """The losses of five SGD steps of a network whose hidden blocks are checkpointed
    through ``checkpoint_sequential`` (which calls whatever ``checkpoint`` is now)."""
    manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(),
                          nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 2))
    x = tensor(np.random.default_rng(8).standard_normal((32, 4)), dtype=float32)
    y = tensor((np.random.default_rng(9).standard_normal(32) > 0).astype(np.int64))
    optimizer = SGD(model.parameters(), lr=0.3)
    losses = []
    for _ in range(steps):
        x_in = x.detach().requires_grad_(True)  # a checkpointed input that requires grad
        out = checkpoint_module.checkpoint_sequential(model, 3, x_in, use_reentrant=False)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _check_training(checkpoint):
    want = _train()
    with plug_checkpoint(checkpoint), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = attempt("a training run with checkpoint_sequential using your checkpoint", _train)
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        raise Mismatch("in a training run whose blocks go through checkpoint_sequential with "
                       f"your checkpoint plugged in, the losses are {np.round(got, 4).tolist()};"
                       f" with minigrad's own {np.round(want, 4).tolist()}.")


@keeps_random_state
def checkpointing_battery(checkpoint):
    """Every case of ``_CASES`` against minigrad's own, then a short training run with the
    piece plugged in."""
    if not callable(checkpoint) or isinstance(checkpoint, type):
        raise Mismatch("expected a function, def checkpoint(function, *args, "
                       "use_reentrant=False, preserve_rng_state=True, **kwargs): ..., got "
                       f"{type(checkpoint).__name__}.")
    for value in _values_named(checkpoint):
        if inspect.isclass(value) and issubclass(value, tuple(OWN_CLASSES.values())):
            raise Mismatch(f"it uses {value.__name__}, a subclass of minigrad's own checkpoint "
                           "Function, so it runs minigrad's code, not yours. Write your "
                           "Function from mg.autograd.Function.")
    for case in _CASES:
        _check_case(checkpoint, case)
    _check_training(checkpoint)
    return (f"{len(_CASES)} cases (two inputs, a float and a keyword argument, an input "
            "without grad, a module's weights, dropout with and without preserve_rng_state, "
            "two outputs, float64: outputs, gradients, the random stream, two runs of the "
            "function, a graph that keeps only the inputs) and 5 training steps with it "
            "plugged in")
