"""Custom ``Function``s: an op whose forward and backward you write by hand (chapter 11), as
``torch.autograd.Function``, and ``once_differentiable``.

A forward may return one tensor or a tuple (several outputs, tensors or not): backward then
gets one gradient per output, zeros for an output nobody used (or None after
``ctx.set_materialize_grads(False)``), None for an output that is not a tensor.
``ctx.mark_non_differentiable(t)`` makes an output a constant (no ``grad_fn``); its
gradient in backward is zeros. The new style (``forward(*args)`` without ``ctx`` plus
``setup_context(ctx, inputs, output)``) works too.

How several outputs travel through minigrad's engine, whose nodes have one output each:
the call has one node (``FunctionNode``) and each differentiable output a small node of
its own (``FunctionOutput``, named like the call's node) whose only edge goes to it. An
output's node sends its gradient on as ``OutputGradients`` (gradients by output index,
which add up by merging), and the call's node hands the user's backward one gradient per
output. So ``a.grad_fn is b.grad_fn`` is False here, though both print the same name.

A plain ``backward()`` calls the user's ``backward`` without recording (gradients in, numpy
out). Under ``create_graph=True`` it runs in grad mode, as in PyTorch: the gradient and
``ctx.saved_tensors`` are tensors with history (a saved input is the input itself, a saved
output a tensor around the output's values whose ``grad_fn`` is this node), so what it
computes is recorded and can be differentiated again.
"""

import functools

import numpy as np

from .. import graph
from ..graph import Node, check_saved_versions, is_grad_enabled, no_grad, saved_version
from .._tensor import Tensor, wrap
from ..graph import gradient_node
from ..ops.op import forward_mode, set_forward_mode
from ..ops.tangents import set_tangent, tangent_epoch, tangent_of

__all__ = ["Function", "FunctionCtx", "FunctionOutput", "OutputGradients", "once_differentiable"]

# A saved tensor that is output j of forward has source ``-1 - j`` (inputs: their index).
_OUTPUT = -1


class FunctionCtx:
    """The ``ctx`` of a custom Function: stash what backward needs on it."""

    _in_jvp = False  # True while the Function's jvp runs

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self._to_save = ()
        self._node = None
        self._history = None  # the saved tensors with history, while backward is recorded
        self.materialize_grads = True
        self._non_differentiable = ()
        self._for_forward = None  # what save_for_forward kept, handed to jvp

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp`` (forward mode): ``ctx.saved_tensors`` gives them there."""
        self._for_forward = tensors

    def set_materialize_grads(self, value):
        """``True`` (the default): backward gets zeros for the gradient of an output that was
        not used; ``False``: it gets None (so it can skip work), as in PyTorch."""
        self.materialize_grads = bool(value)

    def mark_non_differentiable(self, *tensors):
        """Outputs of forward that get no gradient (indices, masks): they come out without
        ``grad_fn`` and backward receives zeros for them."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        raise NotImplementedError("ctx.mark_dirty (an in-place custom Function) is not "
                                  "supported by minigrad: return a new tensor from forward")

    def save_for_backward(self, *tensors):
        """Keep tensors for backward. Their values are kept, not the tensor objects, so the
        graph holds no reference cycle even when an output is saved."""
        self._to_save = tensors
        self._saved = tuple(None if t is None else (t._data, t.dtype) for t in tensors)

    @property
    def saved_tensors(self):
        if self._node is not None and self._node.saved is None:
            raise RuntimeError(graph.FREED_MESSAGE)
        if self._history is not None:
            return self._history
        if self._in_jvp:  # only what save_for_forward kept (PyTorch: () without it)
            return self._for_forward if self._for_forward is not None else ()
        return tuple(None if s is None else wrap(s[0]) for s in self._saved)


class FunctionNode(Node):
    """The node of one call of a custom Function: wraps gradients in Tensors for the
    user's ``backward`` and unwraps what it returns."""

    # kept: graph.saved_version's entry for each saved tensor: checked before backward.
    # output_tangents: output index -> its forward-mode tangent, with the level's epoch
    # (forward mode only): a saved output rebuilt for a recorded backward carries it again.
    __slots__ = ("ctx", "function", "positions", "shapes", "tensors", "sources", "kept",
                 "outputs", "single", "output_tangents")
    twice_differentiable = True

    def check_saved(self):
        """PyTorch's error if a tensor ``ctx.save_for_backward`` kept was changed in place
        since (or got other memory by ``x.data = ...``)."""
        check_saved_versions(self, self.kept)

    def apply(self, grad):
        by_output = grad.by_output if isinstance(grad, OutputGradients) else {0: grad}
        recording = any(isinstance(g, Tensor) for g in by_output.values())
        grads = self._output_gradients(by_output, recording)
        if recording:  # create_graph=True: record the user's backward
            self.ctx._history = self._saved_with_history()
            try:
                results = self.function.backward(self.ctx, *grads)
            finally:
                self.ctx._history = None
        else:
            with no_grad():
                results = self.function.backward(self.ctx, *grads)
        if not isinstance(results, tuple):
            results = (results,)
        expected = self.ctx._n_args
        extra = results[expected:]
        if len(results) < expected or any(g is not None for g in extra):
            raise RuntimeError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(results)}): return one gradient per argument "
                "of forward, None for arguments that are not tensors")
        grads = []
        for position, shape in zip(self.positions, self.shapes):
            g = results[position]
            if g is None:
                grads.append(None)
                continue
            if recording:  # keep the history (the engine adds Tensors)
                g = g if isinstance(g, Tensor) else wrap(np.array(g))
            else:
                # A copy: the caller may keep the tensor it returned, and .grad must not share it.
                g = np.array(g._data if isinstance(g, Tensor) else g)
            if g.shape != shape:
                raise RuntimeError(
                    f"Function {type(self).__name__} returned an invalid gradient at index "
                    f"{position} - got {list(g.shape)} but expected shape compatible with "
                    f"{list(shape)}")
            grads.append(g)
        return tuple(grads)

    def _output_gradients(self, by_output, recording):
        """One gradient per output of forward for the user's backward: the one that arrived,
        else zeros of the output's shape and dtype (None if ``set_materialize_grads(False)``),
        None for an output that is not a tensor."""
        grads = []
        for j, info in enumerate(self.outputs):
            g = by_output.get(j)
            if g is None:
                if info is not None and self.ctx.materialize_grads:
                    grads.append(wrap(np.zeros(*info)))
                else:
                    grads.append(None)
            else:
                grads.append(g if recording else wrap(g))
        return grads

    def _carry_tangent(self, output, j):
        """Give a rebuilt output the tangent output ``j`` got in forward mode, while its
        dual level is open: ``jvp(grad(f))`` through a Function that saves its output
        differentiates backward's use of it (PyTorch's saved output keeps its tangent)."""
        kept = self.output_tangents
        if kept is not None and j in kept[1] and kept[0] == tangent_epoch():
            set_tangent(output, kept[1][j])

    def _saved_with_history(self):
        """``ctx.saved_tensors`` for a recorded backward: inputs as themselves, an output
        rebuilt around its values with its node as grad_fn (no reference cycle: the node
        keeps arrays only), anything else a constant."""
        saved = self.saved_arrays()
        result = []
        for item, source in zip(saved, self.sources):
            if item is None:
                result.append(None)
            elif source is None:
                result.append(wrap(item[0]))
            elif source < 0:  # output j, with the node its gradient goes to
                j = _OUTPUT - source
                output = wrap(item[0], self if self.single else FunctionOutput(self, j))
                self._carry_tangent(output, j)
                result.append(output)
            else:
                result.append(self.tensors[source])
        return tuple(result)

    def release(self):
        if self.saved:
            self.saved = None
            self.ctx._saved = ()
            self.tensors = None
            self.kept = ()


class OutputGradients:
    """The gradients of some outputs of one Function call, by output index: what an
    output's node sends to the call's node. The engine adds what reaches a node with ``+``,
    which here merges (and adds the gradients of an output reached twice)."""
    __slots__ = ("by_output",)

    def __init__(self, by_output):
        self.by_output = by_output

    def __add__(self, other):
        merged = dict(self.by_output)
        for j, g in other.by_output.items():
            merged[j] = merged[j] + g if j in merged else g
        return OutputGradients(merged)

    def __repr__(self):
        return f"OutputGradients({sorted(self.by_output)})"


class FunctionOutput(Node):
    """The grad_fn of output ``index`` of a Function call with several outputs: passes its
    gradient on to the call's node, labelled with the output's index."""
    __slots__ = ("index",)
    twice_differentiable = True

    def __init__(self, call, index):
        super().__init__((call,))
        self.index = index

    def apply(self, grad):
        return (OutputGradients({self.index: grad}),)

    def name(self):
        return self.inputs[0].name()

    def __repr__(self):
        return f"<{self.name()}>"


class Function:
    """A differentiable op written by hand (chapter 11)::

        class Exp(Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                (y,) = ctx.saved_tensors
                return grad_output * y

        y = Exp.apply(x)   # y.grad_fn is <ExpBackward>
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("subclasses of Function implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of Function implement backward(ctx, grad)")

    # The name of the node (``y.grad_fn``); None: the class's name and "Backward", as in
    # PyTorch. A package op written as a Function gives PyTorch's node name here.
    node_name = None

    @classmethod
    def _node_class(cls):
        if "_node_cls" not in cls.__dict__:
            name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward"
            cls._node_cls = type(name, (FunctionNode,), {"__slots__": ()})
        return cls._node_cls

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The new style: ``forward(*args)`` computes, ``setup_context`` fills ``ctx``."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode: the tangent of each output from one tangent per input of forward
        (zeros for a tensor that carries none, None for an argument that is no tensor)."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args):
        if forward_mode() and any(isinstance(a, Tensor) and tangent_of(a) is not None
                                  for a in args):
            return _apply_dual(cls, args)
        return cls._apply(args)[0]

    @classmethod
    def _apply(cls, args):
        """``apply``'s work: the outputs, and the ctx forward filled."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        ctx._n_args = len(args)
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        single = not isinstance(output, tuple)
        if single and not isinstance(output, Tensor):  # (PyTorch hands it back as it is)
            raise TypeError(f"{cls.__name__}.forward must return a Tensor, "
                            f"not {type(output).__name__}")
        returned = (output,) if single else output
        outputs = tuple(_output_tensor(o, tensors) for o in returned)
        to_save, ctx._to_save = ctx._to_save, ()  # no reference to the outputs from the graph
        marked, ctx._non_differentiable = ctx._non_differentiable, ()
        differentiable = [j for j, (o, r) in enumerate(zip(outputs, returned))
                          if isinstance(o, Tensor) and o._data.dtype.kind in "fc"
                          and not any(r is m for m in marked)]
        if differentiable and is_grad_enabled() and any(t.requires_grad for t in tensors):
            node = cls._node_class()(tuple(gradient_node(t) for t in tensors), ctx._saved)
            node.ctx, node.function = ctx, cls
            node.positions = positions
            node.shapes = [t._data.shape for t in tensors]
            node.tensors = tensors
            node.single = single
            node.output_tangents = None
            node.outputs = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None
                            for o in outputs]
            node.sources = [_source(t, returned, tensors) for t in to_save]
            node.kept = [saved_version(outputs[_OUTPUT - source], None)
                         if source is not None and source < 0 else saved_version(t)
                         for t, source in zip(to_save, node.sources) if t is not None]
            ctx._node = node
            for j in differentiable:
                outputs[j]._set_grad_fn(node if single else FunctionOutput(node, j))
        return (outputs[0] if single else outputs), ctx


def _apply_dual(cls, args):
    """``apply`` when an input carries a tangent (forward mode): forward runs on the primals
    (forward mode off, as PyTorch does), then the Function's ``jvp`` gives the outputs'
    tangents."""
    tangents = [(tangent_of(a) if tangent_of(a) is not None else wrap(np.zeros_like(a._data)))
                if isinstance(a, Tensor) else None for a in args]
    set_forward_mode(False)
    try:
        if cls.jvp is Function.jvp:
            Function.jvp(None)  # raises PyTorch's error
        outputs, ctx = cls._apply(args)
        ctx._in_jvp = True
        try:
            results = cls.jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
    finally:
        set_forward_mode(True)
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    results = (results,) if not isinstance(results, tuple) else results
    if len(results) != len(outs):
        raise RuntimeError(f"{cls.__name__}.jvp returned {len(results)} tangents, but forward "
                           f"returned {len(outs)} outputs: return one per output")
    for j, (out, tangent) in enumerate(zip(outs, results)):
        if isinstance(out, Tensor) and isinstance(tangent, Tensor) \
                and out._data.dtype.kind in "fc":
            if tuple(tangent.shape) != tuple(out.shape):
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    f"the original Tensor, this is not supported. Tensor is of size "
                    f"{list(out.shape)} while the given forward gradient is of size "
                    f"{list(tangent.shape)}.")
            set_tangent(out, tangent)
            if ctx._node is not None:  # recorded: its backward may rebuild this output
                if ctx._node.output_tangents is None:
                    ctx._node.output_tangents = (tangent_epoch(), {})
                ctx._node.output_tangents[1][j] = tangent
    return outputs


def _output_tensor(output, inputs):
    """What the caller gets for one value forward returned: a tensor is a new one on the
    same memory (an input returned as is must keep its own history); anything else as is."""
    if not isinstance(output, Tensor):
        return output
    if any(output is t for t in inputs):
        return output.detach()  # never rewire an input's own history
    return wrap(output._data)


def _source(saved, outputs, tensors):
    """Where a saved tensor came from: output j (``-1 - j``), the index of an input, or None."""
    if saved is None:
        return None
    for j, out in enumerate(outputs):
        if saved is out:
            return _OUTPUT - j
    for i, t in enumerate(tensors):
        if saved is t:
            return i
    return None


class _DelayedError(Node):
    """The grad_fn of a gradient computed by a ``once_differentiable`` backward under
    create_graph: differentiating through it again raises (PyTorch's ``DelayedError``)."""
    __slots__ = ()
    twice_differentiable = True

    def apply(self, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(backward):
    """Decorate a Function's ``backward`` that cannot be differentiated again: it runs
    without recording (on plain tensors), and under ``create_graph=True`` the gradients it
    returns raise if someone differentiates through them."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            results = backward(ctx, *[g.detach() if isinstance(g, Tensor) else g
                                      for g in grad_outputs])
        if not is_grad_enabled():
            return results
        # as PyTorch: only a gradient with history makes the results differentiable
        sources = [g for g in grad_outputs if isinstance(g, Tensor) and g.requires_grad]
        if not sources:
            return results
        edges = tuple(gradient_node(t) for t in sources)
        single = not isinstance(results, tuple)
        wrapped = tuple(g if not isinstance(g, Tensor) or g._data.dtype.kind != "f"
                        else wrap(g._data, _DelayedError(edges))
                        for g in ((results,) if single else results))
        return wrapped[0] if single else wrapped

    return wrapper
