"""Recording one step as a flat program (chapter 14: "Tracing a step").

``Tracer`` runs the step once, eagerly, while it listens:

* every op ``Op.run`` computes (``ops.op.set_trace_hook``) becomes a ``ForwardOp``
  instruction: which op object, where each input array comes from (a *slot*, the output of
  an earlier instruction or an input of the step; or a constant: a number, or a parameter's
  array, which the guards check is still the same array), the options, and the slot of its
  output;
* every ``backward`` the engine runs (``graph.set_backward_hook``) becomes a ``Backward``
  instruction: the nodes in the order the engine ran them and the leaves that received a
  gradient;
* ``optimizer.step()`` and ``zero_grad()`` (of an optimizer or a module) become ``Call``
  instructions: at replay they run again, as they are (their in-place updates, the step
  counters and the lazily made state of Adam are theirs).

Anything else that would make a replay differ from running the step again **breaks the
graph** (``Tracer.graph_break``): ``.item()``, ``.tolist()``, ``bool(t)`` (Python control
flow on a tensor's values), ``print(t)``, an in-place change outside an optimizer's step,
``p.grad = ...`` by hand, hooks, random draws (dropout), forward mode, ``create_graph``,
``autograd.grad``, an array that came from outside minigrad's ops. The step itself still
runs to its end (eagerly, so its numbers are right); the compiled function then warns once
and runs eagerly from then on, or raises under ``fullgraph=True``.

The listening is done by class attributes swapped in for the trace only (``patched``):
nothing costs anything when nobody traces, but a trace must not run while another thread
computes with minigrad.
"""

import contextlib

import numpy as np

from .. import graph
from .._tensor import Tensor
from ..graph import AccumulateGrad
from ..nn.module import Module
from ..ops import op as op_module
from ..optim.optimizer import Optimizer
from ..random import default_generator
from .program import SLOT, TUPLE, Backward, Call, ClassCheck, ForwardOp

__all__ = ["GraphBreak", "Tracer", "known_tensors", "reachable"]


class GraphBreak(RuntimeError):
    """What ``fullgraph=True`` raises where the step cannot be traced (torch's
    ``torch._dynamo.exc.Unsupported``)."""


# Tensor methods that hand a tensor's values to Python: the replay could not follow them.
_TO_PYTHON = {
    "item": ".item() hands a value to Python",
    "tolist": ".tolist() hands the values to Python",
    "__bool__": "bool(tensor) (an `if` on a tensor's value) depends on the values",
    "__float__": "float(tensor) hands a value to Python",
    "__int__": "int(tensor) hands a value to Python",
    "__index__": "a tensor used as an index hands a value to Python",
    "numpy": ".numpy() hands the array to Python",
    "__array__": "np.asarray(tensor) hands the array to Python",
    "__repr__": "printing a tensor reads its values",
    "__str__": "printing a tensor reads its values",
    "__format__": "formatting a tensor reads its values",
    "register_hook": "a hook runs Python on a gradient",
    "retain_grad": "retain_grad() on a tensor inside the step",
    "_bump_version": "an in-place change outside an optimizer's step",
}


# Ops whose eager function checks the class indices in Python first (nll_loss's fast path)
_CHECKS_CLASSES = ("NllLossBackward0", "NllLoss2DBackward0")
_INHERITED = object()  # a swapped method the class inherits: deleted again afterwards


class Tracer:
    """Records the run of ``fn(*args, **kwargs)``: see the module's docstring."""

    def __init__(self, arg_tensors, externals, fullgraph=False):
        self.fullgraph = fullgraph
        self.broken = None  # why the step cannot be traced, once it cannot
        self.arrays = []  # slot -> the array it held in the trace (kept alive: ids stay unique)
        self.slots = {}  # id(array) -> slot
        for t in arg_tensors:  # the step's input tensors are slots 0, 1, ...
            self.new_slot(t._data)
        self.arg_ids = {id(t): i for i, t in enumerate(arg_tensors)}
        self.externals = externals  # id(array) -> a tensor that existed before the trace
        self.used = {}  # id(tensor) -> a tensor from outside the step the program relies on
        self.instructions = []
        self.op_ids = set()
        self.opaque = 0  # > 0 inside optimizer.step() / zero_grad(): nothing recorded
        self.modules = {}  # id -> each module called (its training flag is guarded)
        self.optimizers = {}  # id -> each optimizer whose step or zero_grad ran
        self.shape_only = {}  # id -> arrays np.arange / np.indices made from Python ints

    # ----------------------------------------------------------------- what went wrong

    def graph_break(self, reason):
        """The step cannot be replayed: say why (raise under ``fullgraph=True``)."""
        if self.broken is None:
            self.broken = reason
        if self.fullgraph:
            raise GraphBreak(f"minigrad.compile(fullgraph=True) cannot trace this step: "
                             f"{reason}. Take it out of the compiled function, or compile "
                             "without fullgraph=True to run it eagerly.")

    # ----------------------------------------------------------------- slots

    def new_slot(self, array):
        slot = len(self.arrays)
        self.arrays.append(array)
        self.slots[id(array)] = slot
        return slot

    def where(self, value, what):
        """Where an input of an instruction comes from: ``(SLOT, n)`` or ``(None, value)``
        (a constant: a number, an array of a tensor from outside the step), or a graph
        break (an array the trace cannot follow)."""
        if type(value) is not np.ndarray:
            if type(value) is tuple and any(type(v) is np.ndarray for v in value):
                return TUPLE, [self.where(v, what) for v in value]
            if isinstance(value, (tuple, list, Tensor)) and any(
                    isinstance(v, (np.ndarray, Tensor)) for v in value):
                self.graph_break(f"{what} holds arrays in a {type(value).__name__}")
            return None, value
        slot = self.slots.get(id(value))
        if slot is not None and self.arrays[slot] is value:
            return SLOT, slot
        tensor = self.externals.get(id(value))
        if tensor is not None and tensor._data is value:
            self.used[id(tensor)] = tensor
            return None, value
        if self.shape_only.get(id(value)) is value:  # np.arange(n): a constant of the shapes
            return None, value
        self.graph_break(f"{what} is an array made outside minigrad's ops, which a replay "
                         "could not recompute")
        return None, value

    # ----------------------------------------------------------------- the hooks

    def on_op(self, op, tensors, arrays, options, result):
        """``Op.run``'s hook: one ``ForwardOp``."""
        if self.opaque or self.broken:
            return
        name = type(op).__name__
        if op_module.forward_mode():
            self.graph_break(f"{name} ran in forward mode (a dual level is open)")
            return
        inputs = [self.where(a, f"input {i} of {name}") for i, a in enumerate(arrays)]
        opts = {k: self.where(v, f"option {k}= of {name}") for k, v in options.items()}
        self.op_ids.add(id(op))
        labels = opts.get("labels")
        if name in _CHECKS_CLASSES and labels is not None and labels[0] is SLOT:
            logp = arrays[0]
            self.instructions.append(ClassCheck(labels[1], logp.shape[options.get(
                "class_dim", 1)] if logp.ndim else 0))
        self.instructions.append(ForwardOp(op, inputs, opts, self.new_slot(result._data)))

    def on_backward(self, roots, grads, order, retain_graph, capture, create_graph):
        """``graph.backward``'s hook: one ``Backward``."""
        if self.opaque or self.broken:
            return
        if create_graph:
            return self.graph_break("backward(create_graph=True) records a second graph")
        if capture is not None:
            return self.graph_break("autograd.grad (or backward(inputs=...)) returns gradients "
                                    "to Python")
        hooks = graph.gradient_hooks()
        leaves = {}
        for node in order:
            if hooks and id(node) in hooks:
                return self.graph_break("a gradient hook (register_hook) runs Python")
            if type(node) is AccumulateGrad:
                leaf = node.variable
                if id(leaf) in self.arg_ids:
                    leaves[node] = self.arg_ids[id(leaf)]
                elif leaf is not None and self.externals.get(id(leaf._data)) is leaf:
                    self.used[id(leaf)] = leaf
                    leaves[node] = None
                else:
                    return self.graph_break("backward reaches a leaf made inside the step")
            elif id(node) not in self.op_ids:
                return self.graph_break(f"backward runs {node.name()}, which the trace did not "
                                        "record (made before the step, or by an in-place op)")
            elif node.retained is not None:
                return self.graph_break("retain_grad() keeps a gradient of the step")
        seeds = []
        for g in grads:
            kind, value = self.where(g, "a gradient given to backward") if (
                id(g) in self.slots) else (None, g)
            if kind is None and not (type(g) is np.ndarray and np.all(g == 1)):
                return self.graph_break("backward(gradient=...) with a gradient from Python")
            seeds.append((kind, value.copy() if kind is None else value))
        self.instructions.append(Backward(list(roots), seeds, order, leaves, retain_graph))

    def opaque_call(self, original, obj, args, kwargs):
        """``optimizer.step()``, ``zero_grad()``: run, and record as a ``Call``."""
        if self.opaque or self.broken:
            return original(obj, *args, **kwargs)
        if any(callable(a) for a in list(args) + list(kwargs.values())):
            self.graph_break(f"{type(obj).__name__}.{original.__name__}(closure) runs the "
                             "closure's Python")
            return original(obj, *args, **kwargs)
        self.opaque += 1
        try:
            result = original(obj, *args, **kwargs)
        finally:
            self.opaque -= 1
        self.instructions.append(Call(original, obj, args, kwargs))
        if isinstance(obj, Optimizer):
            self.optimizers[id(obj)] = obj
        return result

    def refuse(self, name):
        """A swapped-in method that breaks the graph before running the original."""
        reason = _TO_PYTHON[name]
        original = getattr(Tensor, name)

        def method(t, *args, **kwargs):
            if not self.opaque:
                self.graph_break(reason)
            return original(t, *args, **kwargs)
        return method

    @contextlib.contextmanager
    def patched(self):
        """Listen to the step (the hooks and swapped-in methods) for the ``with`` block."""
        swaps = [(Tensor, name, self.refuse(name)) for name in _TO_PYTHON]
        grad, data = Tensor.grad, Tensor.data
        swaps.append((Tensor, "grad", property(grad.fget, self.refusing_setter(grad, "grad"))))
        swaps.append((Tensor, "data", property(data.fget, self.refusing_setter(data, "data"))))
        module_call = Module.__call__

        def call(module, *args, **kwargs):
            if not self.opaque:
                self.modules[id(module)] = module
                own = module.__dict__
                if own.get("_forward_pre_hooks") or own.get("_forward_hooks") \
                        or own.get("_backward_hooks") or own.get("_backward_pre_hooks"):
                    self.graph_break(f"{type(module).__name__} has hooks, which run Python")
            return module_call(module, *args, **kwargs)
        swaps.append((Module, "__call__", call))
        for cls in [Module, Optimizer] + _subclasses(Optimizer):
            for name in ("step", "zero_grad"):
                if name in cls.__dict__:
                    swaps.append((cls, name, self.recording(cls.__dict__[name])))
        swaps += [(np, name, self.shape_constant(getattr(np, name))) for name in _SHAPE_ONLY]
        saved = [(cls, name, cls.__dict__.get(name, _INHERITED)) for cls, name, _ in swaps]
        rng_state = default_generator.get_state()
        try:
            for cls, name, value in swaps:
                setattr(cls, name, value)
            op_module.set_trace_hook(self.on_op)
            graph.set_backward_hook(self.on_backward)
            yield self
        finally:
            op_module.set_trace_hook(None)
            graph.set_backward_hook(None)
            for cls, name, value in reversed(saved):
                if value is _INHERITED:
                    delattr(cls, name)
                else:
                    setattr(cls, name, value)
        if rng_state != default_generator.get_state():
            self.graph_break("the step draws random numbers (dropout, randn, ...)")

    def shape_constant(self, make):
        """``np.arange(n)``, ``np.indices(shape)``: arrays made of Python ints only (the
        shapes, which the guards check) are constants of the trace."""
        def function(*args, **kwargs):
            result = make(*args, **kwargs)
            if _python_ints(args) and _python_ints(kwargs.values()):
                for array in result if type(result) is tuple else (result,):
                    self.shape_only[id(array)] = array
            return result
        return function

    def refusing_setter(self, prop, name):
        def setter(t, value):
            if not self.opaque:
                self.graph_break(f"`tensor.{name} = ...` outside an optimizer's step")
            prop.fset(t, value)
        return setter

    def recording(self, original):
        def method(obj, *args, **kwargs):
            return self.opaque_call(original, obj, args, kwargs)
        method.__name__ = original.__name__
        method.__wrapped__ = original
        return method


_SHAPE_ONLY = ("arange", "indices")


def _python_ints(values):
    return all(type(v) is int or type(v) is bool or (
        type(v) is tuple and all(type(e) is int for e in v)) for v in values)


def _subclasses(cls):
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


# ----------------------------------------------------------------- what the step can reach

def reachable(roots, depth=3):
    """The objects ``fn`` can reach: its closure, the globals it names, its ``self``, its
    defaults, and (to ``depth`` levels) what lists, dicts and objects among them hold."""
    seen, found = set(), []
    stack = [(root, 0) for root in roots]
    while stack:
        obj, level = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (int, float, str, bytes, type)):
            continue
        seen.add(id(obj))
        found.append(obj)
        if level >= depth or isinstance(obj, (np.ndarray, Tensor)):
            continue
        children = []
        if isinstance(obj, (list, tuple, set, frozenset)):
            children = list(obj)
        elif isinstance(obj, dict):
            children = list(obj.values())
        elif callable(obj) and hasattr(obj, "__code__"):
            children = function_roots(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type(np)):
            children = list(vars(obj).values())
        stack.extend((child, level + 1) for child in children)
    return found


def function_roots(fn):
    """What a function refers to: its closure cells, defaults, ``self`` and the globals its
    code (and the code of functions defined in it) names."""
    roots = [getattr(fn, "__self__", None)]
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return roots + [fn]
    roots += [cell.cell_contents for cell in fn.__closure__ or () if _filled(cell)]
    roots += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    names, codes = set(), [code]
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    module_globals = fn.__globals__
    roots += [module_globals[n] for n in names if n in module_globals]
    return roots


def _filled(cell):
    try:
        return cell.cell_contents is not _filled  # (reading an empty cell raises)
    except ValueError:
        return False


def known_tensors(objects):
    """id(array) -> tensor, for every tensor among ``objects`` (and the parameters, buffers
    and optimizer state they hold): the tensors a step may use that existed before it."""
    found = {}
    for obj in objects:
        tensors = []
        if isinstance(obj, Tensor):
            tensors = [obj]
        elif isinstance(obj, Module):
            tensors = list(obj.parameters()) + list(obj.buffers())
        elif isinstance(obj, Optimizer):
            tensors = [p for group in obj.param_groups for p in group["params"]]
            tensors += [v for state in obj.state.values() for v in state.values()
                        if isinstance(v, Tensor)]
        for t in tensors:
            found[id(t._data)] = t
    return found
