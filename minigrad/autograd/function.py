"""Custom ``Function``s: an op whose forward and backward you write by hand (chapter 11), as
``torch.autograd.Function``, and ``once_differentiable``.

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
from .._tensor import Tensor, gradient_node, wrap

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_OUTPUT = -1  # a saved tensor that is the output of forward


class FunctionCtx:
    """The ``ctx`` of a custom Function: stash what backward needs on it."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self._to_save = ()
        self._node = None
        self._history = None  # the saved tensors with history, while backward is recorded

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
        return tuple(None if s is None else wrap(s[0]) for s in self._saved)


class FunctionNode(Node):
    """The node of one call of a custom Function: wraps gradients in Tensors for the
    user's ``backward`` and unwraps what it returns."""

    # kept: graph.saved_version's entry for each saved tensor: checked before backward.
    __slots__ = ("ctx", "function", "positions", "shapes", "tensors", "sources", "kept")
    twice_differentiable = True

    def check_saved(self):
        """PyTorch's error if a tensor ``ctx.save_for_backward`` kept was changed in place
        since (or got other memory by ``x.data = ...``)."""
        check_saved_versions(self, self.kept)

    def apply(self, grad):
        if isinstance(grad, Tensor):  # create_graph=True: record the user's backward
            self.ctx._history = self._saved_with_history()
            try:
                results = self.function.backward(self.ctx, grad)
            finally:
                self.ctx._history = None
        else:
            with no_grad():
                results = self.function.backward(self.ctx, wrap(grad))
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
            if isinstance(grad, Tensor):  # keep the history (the engine adds Tensors)
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

    def _saved_with_history(self):
        """``ctx.saved_tensors`` for a recorded backward: inputs as themselves, the output
        rebuilt around its values with this node as grad_fn (no reference cycle: the node
        keeps arrays only), anything else a constant."""
        saved = self.saved_arrays()
        result = []
        for item, source in zip(saved, self.sources):
            if item is None:
                result.append(None)
            elif source == _OUTPUT:
                result.append(wrap(item[0], self))
            elif source is not None:
                result.append(self.tensors[source])
            else:
                result.append(wrap(item[0]))
        return tuple(result)

    def release(self):
        if self.saved:
            self.saved = None
            self.ctx._saved = ()
            self.tensors = None
            self.kept = ()


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

    @classmethod
    def _node_class(cls):
        if "_node_cls" not in cls.__dict__:
            cls._node_cls = type(f"{cls.__name__}Backward", (FunctionNode,), {"__slots__": ()})
        return cls._node_cls

    @classmethod
    def apply(cls, *args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        ctx._n_args = len(args)
        with no_grad():
            output = cls.forward(ctx, *args)
        if isinstance(output, tuple):
            raise RuntimeError(
                f"{cls.__name__}.forward returned {len(output)} values: a minigrad Function "
                "returns exactly one tensor (split it into several Functions)")
        if not isinstance(output, Tensor):
            raise TypeError(f"{cls.__name__}.forward must return a Tensor, "
                            f"not {type(output).__name__}")
        returned = output
        if any(output is t for t in tensors):
            output = output.detach()  # never rewire an input's own history
        else:
            output = wrap(output._data)
        to_save, ctx._to_save = ctx._to_save, ()  # no reference to the output from the graph
        if is_grad_enabled() and any(t.requires_grad for t in tensors):
            if output._data.dtype.kind != "f":
                return output
            node = cls._node_class()(tuple(gradient_node(t) for t in tensors), ctx._saved)
            node.ctx, node.function = ctx, cls
            node.positions = positions
            node.shapes = [t._data.shape for t in tensors]
            node.tensors = tensors
            node.sources = [_source(t, returned, tensors) for t in to_save]
            node.kept = [saved_version(output, None) if source == _OUTPUT else saved_version(t)
                         for t, source in zip(to_save, node.sources) if t is not None]
            ctx._node = node
            output._set_grad_fn(node)
        return output


def _source(saved, output, tensors):
    """Where a saved tensor came from: the output, the index of an input, or None."""
    if saved is None:
        return None
    if saved is output:
        return _OUTPUT
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
