"""The public face of autograd: custom ``Function``s, ``grad``, ``gradcheck`` (chapters 3 and 11).

``Function`` lets you write an op's forward and backward by hand, exactly as in
``torch.autograd.Function``; ``grad`` returns gradients without touching ``.grad``;
``gradcheck`` compares backward with finite differences. ``Variable`` is PyTorch's old name
for a tensor that can require grad, kept so old code runs.
"""

import numpy as np

from . import graph
from .graph import Node, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .tensor import Tensor, _edge, _wrap, _run_backward

__all__ = ["Function", "FunctionCtx", "grad", "gradcheck", "GradcheckError", "Variable",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "backward"]


# --------------------------------------------------------------------------- Function

class FunctionCtx:
    """The ``ctx`` of a custom Function: stash what backward needs on it."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self._node = None

    def save_for_backward(self, *tensors):
        """Keep tensors for backward. Their values are kept, not the tensor objects, so the
        graph holds no reference cycle even when an output is saved."""
        self._saved = tuple(None if t is None else (t._data, t.dtype) for t in tensors)

    @property
    def saved_tensors(self):
        if self._node is not None and self._node.saved is None:
            raise RuntimeError(graph.FREED_MESSAGE)
        return tuple(None if s is None else _wrap(s[0]) for s in self._saved)


class _FunctionNode(Node):
    """The node of one call of a custom Function: wraps gradients in Tensors for the
    user's ``backward`` and unwraps what it returns."""

    __slots__ = ("ctx", "function", "positions", "shapes")

    def apply(self, grad):
        with no_grad():
            results = self.function.backward(self.ctx, _wrap(grad))
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
            # A copy: the caller may keep the tensor it returned, and .grad must not share it.
            g = np.array(g._data if isinstance(g, Tensor) else g)
            if g.shape != shape:
                raise RuntimeError(
                    f"Function {type(self).__name__} returned an invalid gradient at index "
                    f"{position} - got {list(g.shape)} but expected shape compatible with "
                    f"{list(shape)}")
            grads.append(g)
        return tuple(grads)

    def release(self):
        if self.saved:
            self.saved = None
            self.ctx._saved = ()


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
            cls._node_cls = type(f"{cls.__name__}Backward", (_FunctionNode,), {"__slots__": ()})
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
        if any(output is t for t in tensors):
            output = output.detach()  # never rewire an input's own history
        else:
            output = _wrap(output._data)
        if is_grad_enabled() and any(t.requires_grad for t in tensors):
            if output._data.dtype.kind != "f":
                return output
            node = cls._node_class()(tuple(_edge(t) for t in tensors), ctx._saved)
            node.ctx, node.function = ctx, cls
            node.positions = positions
            node.shapes = [t._data.shape for t in tensors]
            ctx._node = node
            output._set_grad_fn(node)
        return output


# --------------------------------------------------------------------------- grad

def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradients of ``tensors`` (one tensor or several, each seeded with its entry of
    ``grad_tensors``, or 1 for a one-element tensor) into the ``.grad`` of every leaf, or of
    ``inputs`` only. ``loss.backward(...)`` is ``backward(loss, ...)``: one set of checks.
    ``retain_graph`` defaults to ``create_graph``."""
    _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned as a tuple (one per
    input). Unlike ``backward()``, no ``.grad`` is changed.

    An input the outputs do not depend on raises, unless ``allow_unused=True`` (its gradient
    is then None) or ``materialize_grads=True`` (zeros). ``create_graph=True`` records the
    gradients' computation, so they can be differentiated again."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(..., is_grads_batched=True) is not supported "
                                  "by minigrad: call grad once per gradient")
    if inputs is None:
        inputs = ()
    return _run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs,
                        accumulate=False, allow_unused=allow_unused,
                        materialize_grads=materialize_grads)


# --------------------------------------------------------------------------- gradcheck

class GradcheckError(RuntimeError):
    """Backward disagrees with finite differences."""


def _numerical_jacobian(func, inputs, index, eps):
    """d outputs / d inputs[index] by central differences: one row per input element, one
    column per output element (PyTorch's layout)."""
    target = inputs[index]._data
    rows = []
    with no_grad():
        for k in range(target.size):
            flat = target.reshape(-1)
            original = flat[k]
            flat[k] = original + eps
            plus = _as_outputs(func(*inputs))
            flat[k] = original - eps
            minus = _as_outputs(func(*inputs))
            flat[k] = original
            rows.append(np.concatenate([((p - m) / (2 * eps)).reshape(-1)
                                        for p, m in zip(plus, minus)]))
    return np.stack(rows) if rows else np.zeros((0, 0))


def _as_outputs(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [r._data.astype(np.float64) for r in result if isinstance(r, Tensor)]


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check ``func``'s backward against finite differences, for every input that requires
    grad. Use float64 inputs: float32 rounding alone exceeds the tolerances."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in checked:
        if inputs[i].dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. gradcheck may fail: use dtype=minigrad.float64.",
                          UserWarning, stacklevel=2)
    outputs = func(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    outputs = [o for o in outputs if isinstance(o, Tensor)]
    sizes = [o.numel() for o in outputs]
    for i in checked:
        numerical = _numerical_jacobian(func, inputs, i, eps)
        analytical = np.zeros_like(numerical)
        column = 0
        for out, size in zip(outputs, sizes):
            if not out.requires_grad:
                column += size
                continue
            for k in range(size):
                seed = np.zeros(out.shape)
                seed.reshape(-1)[k] = 1.0
                (g,) = grad([out], [inputs[i]], [_wrap(seed.astype(out._data.dtype))],
                            retain_graph=True, allow_unused=True)
                if g is not None:
                    analytical[:, column + k] = g._data.reshape(-1)
            column += size
        if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{_wrap(numerical)!r}\nanalytical:{_wrap(analytical)!r}\n")
    return True


# --------------------------------------------------------------------------- Variable

class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's old wrapper: ``Variable(t, requires_grad=True)`` now just returns a tensor."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        t = _wrap(data._data if isinstance(data, Tensor) else np.asarray(data))
        if requires_grad:
            t.requires_grad_(True)
        return t
