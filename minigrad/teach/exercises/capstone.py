"""The capstone (``notebooks/15_capstone_your_own_engine.ipynb``, optional, after chapter 12):
the learner writes a small engine from a blank cell, a ``Tensor`` that records its inputs,
``+ * @ relu``, ``backward()`` with the walk and the accumulation, and ``SGD``, then trains
the digits with it.

``check_engine(Tensor)`` and ``check_sgd(SGD, Tensor)`` refuse minigrad's own objects (and
PyTorch's, when it is imported), as the build track's ``borrowed`` does, then run the
batteries of ``capstone_battery`` (the build track's cases of chapters 3, 4, 5 and 8 in the
engine's four ops, against minigrad's own). ``engine_or_stand_in`` and ``sgd_or_stand_in``
hand the later cells the learner's classes, or, while they are not written, a stand-in on
minigrad's own engine with the same interface, so the lecture runs top to bottom in the
student copy too (``engine_name`` and ``three_ways`` say "stand-in" then, so no line claims
the learner's engine ran).
``draw_engine_graph`` draws the learner's graph; ``digits`` loads scikit-learn's digits as
10b does; ``three_ways`` compares the learner's gradients with minigrad's and PyTorch's.
"""

import re
import sys

import numpy as np

from ... import autograd, graph
from ...autograd import Function
from ...creation import from_numpy, tensor
from ...dtypes import float64
from ...graph import no_grad
from ...nn import functional
from ...optim import Optimizer
from ...optim.sgd import SGD as MinigradSGD
from ... import Tensor as MinigradTensor
from ..build import Mismatch, Piece, borrowed, where
from ..checks import CheckResult, keeps_random_state, no_answer
from ..drawing import GraphDiagram
from .capstone_battery import engine_battery, sgd_battery, walk_graph

__all__ = ["check_engine", "check_sgd", "engine_or_stand_in", "sgd_or_stand_in",
           "engine_name", "StandInTensor", "StandInSGD", "digits", "draw_engine_graph",
           "three_ways", "init_params"]


# ----------------------------------------------------------------- the stand-in

class _GivenOp(Function):
    """An op given as (value, backward_fn) through the stand-in's interface."""

    @staticmethod
    def forward(ctx, backward_fn, value, *inputs):
        ctx.backward_fn = backward_fn
        return tensor(np.asarray(value, dtype=np.float64))

    @staticmethod
    def backward(ctx, grad):
        grads = ctx.backward_fn(grad.numpy())
        return (None, None, *[None if g is None else from_numpy(np.asarray(g, dtype=np.float64))
                              for g in grads])


class StandInTensor:
    """The capstone's interface on minigrad's own engine: what the lecture's later cells use
    while the learner's ``Tensor`` is not written yet. Each instance wraps a minigrad tensor
    (``.value``); ``data`` and ``grad`` are numpy arrays, as in the spec."""

    def __init__(self, data, inputs=(), backward_fn=None, op=""):
        self.inputs, self.backward_fn, self.op = tuple(inputs), backward_fn, op
        if isinstance(data, MinigradTensor):
            self.value = data
        elif self.inputs:
            self.value = _GivenOp.apply(backward_fn, data, *[x.value for x in self.inputs])
        else:
            self.value = tensor(np.asarray(data, dtype=np.float64), requires_grad=True)

    @property
    def data(self):
        return self.value.detach().numpy()

    @data.setter
    def data(self, value):
        with no_grad():
            self.value.copy_(from_numpy(np.array(value, dtype=np.float64)))

    @property
    def grad(self):
        if self.inputs:  # an inner tensor: its total is forgotten (rule 6), as in minigrad
            return None
        return None if self.value.grad is None else self.value.grad.numpy()

    @grad.setter
    def grad(self, value):
        self.value.grad = None if value is None else from_numpy(np.array(value, dtype=np.float64))

    def _made(self, value, other, op):
        inputs = (self,) if other is None else (self, other)
        made = StandInTensor(value, inputs, op=op)
        made.backward_fn = made._input_gradients
        return made

    def _input_gradients(self, grad):
        """What this op sends its inputs for the gradient ``grad`` of its output, by
        minigrad's own ``autograd.grad`` (the spec's backward_fn)."""
        grads = autograd.grad(self.value, [x.value for x in self.inputs],
                              grad_outputs=from_numpy(np.asarray(grad, dtype=np.float64)),
                              retain_graph=True, allow_unused=True)
        return tuple(None if g is None else g.numpy() for g in grads)

    def _other(self, other):
        return other if isinstance(other, StandInTensor) else StandInTensor(
            tensor(np.asarray(other, dtype=np.float64)))

    def __add__(self, other):
        other = self._other(other)
        return self._made(self.value + other.value, other, "+")

    def __mul__(self, other):
        other = self._other(other)
        return self._made(self.value * other.value, other, "*")

    def __matmul__(self, other):
        return self._made(self.value @ other.value, other, "@")

    def relu(self):
        return self._made(self.value.relu(), None, "relu")

    def backward(self, grad=None):
        grad = np.ones(self.value.shape) if grad is None else grad
        self.value.backward(from_numpy(np.asarray(grad, dtype=np.float64)), retain_graph=True)


class StandInSGD:
    """``optim.SGD`` behind the capstone's ``SGD(params, lr)``: each parameter (any object
    with numpy ``data`` and ``grad``: the learner's Tensor or the stand-in's) gets a minigrad
    twin that ``optim.SGD`` steps; the twin's data goes back into the parameter's."""

    def __init__(self, params, lr):
        self.params = list(params)
        self.twins = [tensor(np.array(p.data, dtype=np.float64), requires_grad=True)
                      for p in self.params]
        self.inner = MinigradSGD(self.twins, lr=lr)

    def step(self):
        for p, twin in zip(self.params, self.twins):
            with no_grad():
                twin.copy_(from_numpy(np.array(p.data, dtype=np.float64)))
            twin.grad = None if p.grad is None else from_numpy(np.array(p.grad, dtype=np.float64))
        self.inner.step()
        for p, twin in zip(self.params, self.twins):
            p.data = twin.detach().numpy().copy()

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def engine_or_stand_in(Tensor):
    """The learner's ``Tensor`` for the lecture's later cells, once written, or the stand-in
    on minigrad's own engine, with a line that says so."""
    if no_answer(Tensor):
        print("(Tensor is not written yet: minigrad's own engine runs in its place)")
        return StandInTensor
    return Tensor


def engine_name(Engine):
    """What to call the engine a later cell ran on, in its printed lines and charts: "your
    engine", or the stand-in while the learner's ``Tensor`` is not written."""
    return "the stand-in (minigrad's own)" if Engine is StandInTensor else "your engine"


def sgd_or_stand_in(SGD):
    """The learner's ``SGD`` once written, or ``optim.SGD`` behind the same face."""
    if no_answer(SGD):
        print("(SGD is not written yet: minigrad's own optim.SGD runs in its place)")
        return StandInSGD
    return SGD


# ----------------------------------------------------------------- refusing borrowed engines

def _own(kind):
    own = {"mg.Tensor": MinigradTensor, "mg.tensor": tensor, "mg.from_numpy": from_numpy,
           "mg.autograd.backward": autograd.backward, "mg.autograd.grad": autograd.grad,
           "mg.autograd.Function": Function, "the engine's walk (graph.propagate)":
           graph.propagate, "capstone.StandInTensor": StandInTensor}
    if kind == "SGD":
        own = {"optim.SGD": MinigradSGD, "optim.Optimizer": Optimizer,
               "capstone.StandInSGD": StandInSGD, **own}
    torch = sys.modules.get("torch")
    if torch is not None:  # PyTorch's engine is not the learner's either
        own.update({"torch.Tensor": torch.Tensor, "torch.tensor": torch.tensor,
                    "torch.from_numpy": torch.from_numpy,
                    "torch.autograd.backward": torch.autograd.backward})
        if kind == "SGD":
            own.update({"torch.optim.SGD": torch.optim.SGD,
                        "torch.optim.Optimizer": torch.optim.Optimizer})
    return own


def _refused(defines, obj):
    piece = Piece(name=f"capstone {defines}", chapter="15", defines=defines, summary="",
                  plug=None, battery=None, own=_own(defines))
    return borrowed(piece, obj)


def _run(defines, summary, obj, battery):
    if no_answer(obj):
        return CheckResult(False, f"{summary}: not written yet. Write {defines} in the cell "
                                  "above and run it, then run this check again.")
    refused = _refused(defines, obj)
    torch_label = re.search(r"minigrad's own (torch\.[\w.]+)", refused)
    if torch_label:
        refused = (f"it uses PyTorch's own {torch_label[1]}: the engine is yours to write "
                   "yourself, on numpy alone, as the spec asks (the check compares yours with "
                   "minigrad's and PyTorch's: theirs inside yours would only be compared with "
                   "itself).")
    if refused:
        return CheckResult(False, f"{defines}: {refused}")
    try:
        passed = battery()
    except Mismatch as difference:
        return CheckResult(False, f"{defines}: {difference}")
    except Exception as error:  # the learner's code: report where it failed, never crash
        return CheckResult(False, f"{defines} raised {type(error).__name__}: {error}"
                                  f"{where(error)}")
    return CheckResult(True, f"{defines} gives the same results as minigrad's own on {passed}.")


@keeps_random_state
def check_engine(Tensor):
    """The learner's ``Tensor`` class: ✓ with what was checked, or ✗ with the first
    difference from minigrad's own (a ``CheckResult``: a notebook never stops here)."""
    return _run("Tensor", "your engine (Tensor: recording, four ops, backward)", Tensor,
                lambda: engine_battery(Tensor))


@keeps_random_state
def check_sgd(SGD, Tensor=None):
    """The learner's ``SGD(params, lr)``; their ``Tensor`` (if written) makes the
    parameters it steps."""
    engine = None if no_answer(Tensor) or _refused("Tensor", Tensor) else Tensor
    return _run("SGD", "your optimizer (SGD: step, zero_grad)", SGD,
                lambda: sgd_battery(SGD, engine))


# ----------------------------------------------------------------- the digits, the model

def digits(seed=0, test_share=0.2):
    """scikit-learn's bundled digits (1797 images of 8 x 8 grey levels), as 10b loads them:
    (x_train, y_train, x_test, y_test), pixels scaled to 0..1 as float64 rows of 64, labels
    int64, split at random by ``seed``."""
    from sklearn.datasets import load_digits  # the course extra; the core never needs it
    data = load_digits()
    x = (data.images.reshape(len(data.images), 64) / 16.0).astype(np.float64)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_share * len(y)))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def init_params(sizes=(64, 32, 10), seed=0):
    """Kaiming-normal weights (chapter 12) and zero biases for an MLP of ``sizes``, float64
    numpy arrays by name: W1, b1, W2, b2, ..."""
    rng = np.random.default_rng(seed)
    params = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        params[f"W{k}"] = rng.normal(0.0, np.sqrt(2.0 / n_in), size=(n_in, n_out))
        params[f"b{k}"] = np.zeros(n_out)
    return params


# ----------------------------------------------------------------- the learner's graph

def draw_engine_graph(out, names=None):
    """The learner's graph that ends in ``out``: a box per tensor (its name, if given in
    ``names``, and its shape), an ellipse per op, drawn from ``inputs`` and ``op`` alone.
    Shows as SVG, and as a text listing (deterministic: ids in walk order) under nbval."""
    names = {id(t): n for n, t in (names or {}).items()}
    found = walk_graph(out)
    ids = {id(t): f"t{k}" for k, t in enumerate(found)}
    dot = GraphDiagram(graph_attr={"rankdir": "LR"},
                       node_attr={"fontname": "Helvetica", "fontsize": "11"})
    lines = []
    for t in reversed(found):
        shape = "x".join(str(n) for n in np.shape(t.data)) or "scalar"
        label = f"{names.get(id(t), '')} ({shape})".strip()
        dot.node(ids[id(t)], label, shape="box", style="filled",
                 fillcolor="#cfe2f3" if not t.inputs else "#ffffff")
        if t.inputs:
            op_id = ids[id(t)] + "op"
            dot.node(op_id, str(getattr(t, "op", "") or "op"), shape="ellipse")
            for x in t.inputs:
                dot.edge(ids[id(x)], op_id)
            dot.edge(op_id, ids[id(t)])
            inputs = ", ".join(names.get(id(x), ids[id(x)]) for x in t.inputs)
            lines.append(f"  {names.get(id(t), ids[id(t)])} = {t.op}({inputs})   shape {shape}")
        else:
            lines.append(f"  {names.get(id(t), ids[id(t)])}: a leaf, shape {shape}")
    n_ops = sum(1 for t in found if t.inputs)
    whose = ("the stand-in's graph (minigrad's own engine)" if isinstance(out, StandInTensor)
             else "your engine's graph")
    dot.listing = "\n".join([f"{whose}: {len(found)} tensors, {n_ops} ops"] + lines)
    return dot


# ----------------------------------------------------------------- three engines, one gradient

def _reference_gradients(params, x, y):
    """The MLP's cross-entropy gradients at ``params`` on (x, y), by minigrad (float64)."""
    leaves = {k: tensor(v, dtype=float64, requires_grad=True) for k, v in params.items()}
    h = tensor(x, dtype=float64)
    n_layers = len(params) // 2
    for k in range(1, n_layers + 1):
        h = h @ leaves[f"W{k}"] + leaves[f"b{k}"]
        if k < n_layers:
            h = h.relu()
    functional.cross_entropy(h, tensor(y)).backward()
    return {k: t.grad.numpy() for k, t in leaves.items()}


def _torch_gradients(params, x, y):
    try:
        import torch
    except ImportError:
        return None
    leaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in params.items()}
    h = torch.tensor(x, dtype=torch.float64)
    n_layers = len(params) // 2
    for k in range(1, n_layers + 1):
        h = h @ leaves[f"W{k}"] + leaves[f"b{k}"]
        if k < n_layers:
            h = h.relu()
    torch.nn.functional.cross_entropy(h, torch.tensor(y)).backward()
    return {k: t.grad.numpy() for k, t in leaves.items()}


def three_ways(yours, params, x, y, bound=1e-12):
    """Print how far the learner's gradients are from minigrad's and PyTorch's for the same
    MLP, weights ``params`` and batch, at ``bound`` (float64 sums in another order differ in
    the last bits only, on every CPU); returns True when all agree. ``yours`` maps each name
    to a gradient array or to the tensor that holds it in ``.grad``; tensors of the stand-in
    (the learner's Tensor not written yet) are minigrad's own gradients, and the lines say
    so: "(stand-in)", minigrad compared with itself."""
    stand_in = any(isinstance(v, StandInTensor) for v in yours.values())
    yours = {k: v.grad if hasattr(v, "grad") and not isinstance(v, np.ndarray) else v
             for k, v in yours.items()}
    others = {"minigrad": _reference_gradients(params, x, y),
              "PyTorch": _torch_gradients(params, x, y)}
    agree = True
    size = sum(np.size(v) for v in params.values())
    print(f"{len(params)} gradients, {size} numbers each way")
    if stand_in:
        print("  (stand-in: your Tensor is not written yet, so 'yours' are minigrad's own "
              "gradients, and minigrad is compared with itself)")
    label = "yours (stand-in)" if stand_in else "yours"
    for name, theirs in others.items():
        if theirs is None:
            print(f"  {name}: not installed here (pip install torch)")
            continue
        gaps = [float(np.max(np.abs(np.asarray(yours[k]) - theirs[k]))) for k in params]
        close = all(g < bound for g in gaps)
        agree = agree and close
        print(f"  {label} vs {name:<8}: max |difference| < {bound:g}: {close}")
    return agree
