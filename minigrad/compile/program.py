"""The recorded program of a step and its replay (chapter 14).

A program is a flat list of instructions over *slots*: slot ``n`` holds one array of the
step (an input of the step, or what an instruction computed). Replaying it runs, in order:

* ``ForwardOp``: the op's ``forward`` on the arrays of its input slots (and its constants),
  its output into its slot. The op object is the one the trace made, reused: ``forward``
  saves into it what ``backward`` will need, as in the eager step;
* ``Backward``: the engine's walk (``graph.propagate``), written out over the recorded
  order of nodes: each node's ``apply`` on the gradient that reached it, gradients added
  where two paths meet, and each leaf's gradient into its ``.grad``;
* ``Call``: ``optimizer.step()`` or ``zero_grad()``, run again as they are;
* ``ClassCheck``: a check of values the eager step makes in Python before an op
  (``nll_loss``'s class indices in range); when it fails the call runs eagerly instead.

Each computes what the eager step computes, with the same numpy calls in the same order,
so a replayed step gives the eager step's numbers bit for bit. What a replay saves is the
Python around the numpy calls: no Tensor is made, no graph is linked, nothing is checked
op by op (the guards checked once, before the replay). ``fast.py`` goes further for the ops
of the course's models: their numpy calls write into arrays kept from the last step.
"""

import numpy as np

from .._tensor import wrap
from ..graph import AccumulateGrad, owned_gradients

__all__ = ["SLOT", "TUPLE", "fetch", "ForwardOp", "ClassCheck", "ReplayRefused", "Backward",
           "Call", "Program"]

SLOT = "slot"  # an input that is the array in a slot (else: a constant)
TUPLE = "tuple"  # an input that is a tuple of inputs (an index: rows and labels)
_ndarray = np.ndarray


class ForwardOp:
    """``slots[out] = op.forward(*inputs, **options)``: ``inputs`` and ``options`` hold
    ``(SLOT, n)`` or ``(None, constant)``."""

    def __init__(self, op, inputs, options, out):
        self.op, self.inputs, self.options, self.out = op, inputs, options, out

    def compile(self):
        """The instruction as a function of the slots."""
        op, out = self.op, self.out
        forward = op.forward
        constants = [value if kind is None else None for kind, value in self.inputs]
        from_slots = [(i, spec) for i, spec in enumerate(self.inputs) if spec[0] is not None]
        options = {k: value for k, (kind, value) in self.options.items() if kind is None}
        option_slots = [(k, spec) for k, spec in self.options.items() if spec[0] is not None]

        if not option_slots and all(kind is SLOT for kind, _ in self.inputs):
            return _all_from_slots(op, [n for _, n in self.inputs], options, out)

        def run(slots, args):
            arrays = constants.copy()
            for i, spec in from_slots:
                arrays[i] = slots[spec[1]] if spec[0] is SLOT else fetch(spec, slots)
            if option_slots:
                for k, spec in option_slots:
                    options[k] = fetch(spec, slots)
            op.saved = ()
            result = forward(*arrays, **options)
            if type(result) is not _ndarray:  # a 0-dim result: numpy gave a scalar
                result = op._own_output(result)
            slots[out] = result
        return run


def _all_from_slots(op, inputs, options, out):
    """``ForwardOp.compile`` for an op whose inputs are all slots (speed: most ops)."""
    forward = op.forward
    if len(inputs) == 1:
        (a,) = inputs

        def run(slots, args):
            op.saved = ()
            result = forward(slots[a], **options)
            if type(result) is not _ndarray:
                result = op._own_output(result)
            slots[out] = result
        return run

    def run(slots, args):
        op.saved = ()
        result = forward(*[slots[n] for n in inputs], **options)
        if type(result) is not _ndarray:
            result = op._own_output(result)
        slots[out] = result
    return run


def fetch(spec, slots):
    """The value an input ``spec`` stands for, in this replay's ``slots``."""
    kind, value = spec
    if kind is SLOT:
        return slots[value]
    if kind is TUPLE:
        return tuple([fetch(part, slots) for part in value])
    return value


class Backward:
    """The engine's walk of one ``backward()``: ``roots`` get the ``seeds`` (``(SLOT, n)``
    or ``(None, array)``), ``order`` is the order the engine ran the nodes in, ``leaves``
    maps each ``AccumulateGrad`` to the step's input it belongs to (its position) or None
    (a parameter: the node's own tensor)."""

    def __init__(self, roots, seeds, order, leaves, retain_graph):
        self.roots, self.seeds, self.order = roots, seeds, order
        self.leaves, self.retain_graph = leaves, retain_graph

    def compile(self):
        roots, seeds, order, leaves = self.roots, self.seeds, self.order, self.leaves
        release = not self.retain_graph

        def run(slots, args):
            given = [slots[n] if kind is SLOT else n for kind, n in seeds]
            buffers = {}
            for node, grad in zip(roots, given):
                buffers[node] = buffers[node] + grad if node in buffers else grad
            arrived = {}
            with np.errstate(all="ignore"):
                for node in order:
                    grad = buffers.pop(node, None)
                    if grad is None:
                        continue
                    if type(node) is AccumulateGrad:
                        arrived[node] = grad
                        continue
                    for nxt, g in zip(node.inputs, node.apply(grad)):
                        if nxt is None or g is None:
                            continue
                        buffers[nxt] = buffers[nxt] + g if nxt in buffers else g
                owned = owned_gradients(arrived, given)
                for node, grad in arrived.items():
                    position = leaves[node]
                    leaf = node.variable if position is None else args[position]
                    leaf.accumulate_grad(grad, node in owned)
            if release:
                for node in order:
                    node.release()
        return run


class ReplayRefused(Exception):
    """A value check failed during a replay: the call runs eagerly instead."""


class ClassCheck:
    """Class indices (``slots[labels]``) all in ``0 .. classes - 1``: eager ``nll_loss``
    checks them before its fast path (and raises on a bad one); a replay must too."""

    def __init__(self, labels, classes):
        self.labels, self.classes = labels, classes

    def compile(self):
        labels, classes = self.labels, self.classes
        low, high = np.minimum.reduce, np.maximum.reduce

        def run(slots, args):
            values = slots[labels]
            if values.size and (low(values, None) < 0 or high(values, None) >= classes):
                raise ReplayRefused("values: a class index is out of range")
        return run


class Call:
    """``function(obj, *args, **kwargs)``, run again at each replay (``optimizer.step()``,
    ``zero_grad()``)."""

    def __init__(self, function, obj, args, kwargs):
        self.function, self.obj, self.args, self.kwargs = function, obj, args, kwargs

    def compile(self):
        function, obj, args, kwargs = self.function, self.obj, self.args, self.kwargs

        def run(slots, step_args):
            function(obj, *args, **kwargs)
        return run


class Program:
    """The instructions of a traced step, ready to replay: ``program(args)`` runs them on
    the step's input tensors ``args`` and returns what the step returned."""

    def __init__(self, instructions, n_slots, n_args, outputs, faster=None):
        self.instructions = instructions
        self.n_slots, self.n_args = n_slots, n_args
        self.outputs = outputs  # see ``rebuild``
        # run(slots, args) for each instruction: ``faster(instruction)`` (fast.py) when it
        # has one, else the instruction as recorded
        self.steps = [(faster and faster(instruction)) or instruction.compile()
                      for instruction in instructions]

    def __call__(self, args):
        slots = [None] * self.n_slots
        for i, t in enumerate(args):
            slots[i] = t._data
        for step in self.steps:
            step(slots, args)
        return rebuild(self.outputs, slots, args)

    def __len__(self):
        return len(self.instructions)


def rebuild(spec, slots, args):
    """What the step returns, from ``spec`` (made by the trace): ``("slot", n, grad_fn)`` a
    tensor made of slot n (with the node the trace's tensor had: its graph was freed by
    backward), ``("arg", i)`` an input tensor, ``("tensor", t)`` a tensor from outside the
    step, ``("value", v)`` None, ``("tuple"|"list", parts)``, ``("dict", keys, parts)``."""
    kind = spec[0]
    if kind == "slot":
        return wrap(slots[spec[1]], spec[2])
    if kind == "arg":
        return args[spec[1]]
    if kind in ("tensor", "value"):
        return spec[1]
    if kind == "dict":
        return dict(zip(spec[1], [rebuild(s, slots, args) for s in spec[2]]))
    parts = [rebuild(s, slots, args) for s in spec[1]]
    return tuple(parts) if kind == "tuple" else parts
