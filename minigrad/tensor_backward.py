"""``Tensor.backward`` and ``run_backward``: the way from ``Tensor.backward``,
``autograd.backward`` and ``autograd.grad`` into the engine (chapter 3).

It checks what PyTorch checks, in its words, before anything changes, makes the seed
gradients and, for ``autograd.grad``, returns the captured gradients of the inputs.
"""

import numpy as np

from ._tensor import Tensor, wrap
from .graph import backward as engine_backward
from .graph import gradient_node


class BackwardMethods:
    """``Tensor.backward``."""

    __slots__ = ()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to every leaf that requires grad
        and add it into each leaf's ``.grad`` (only into ``inputs``' when given). The graph
        is freed afterwards unless ``retain_graph=True`` (which defaults to
        ``create_graph``). The same as ``minigrad.autograd.backward(self, gradient, ...)``."""
        if (gradient is None and inputs is None and not create_graph
                and self._grad_fn is not None and self._data.size == 1):
            # Speed: ``loss.backward()``, the call of every training step, needs none of the
            # general checks (about 3 us a step)
            seed = np.ones(self._data.shape, self._data.dtype)
            engine_backward([self._grad_fn], [seed], retain_graph=bool(retain_graph))
            return
        run_backward((self,), gradient, retain_graph, create_graph, inputs)


def run_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                 inputs=None, *, accumulate=True, allow_unused=None, materialize_grads=False):
    """The one way into the engine, with PyTorch's checks and messages: ``Tensor.backward``
    and ``autograd.backward`` (``accumulate=True``: gradients go into ``.grad``) and
    ``autograd.grad`` (``accumulate=False``: the gradients of ``inputs`` are returned as a
    tuple and no ``.grad`` changes). Every check runs before anything changes (chapter 3)."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = (grad_tensors,) if isinstance(grad_tensors, Tensor) else tuple(grad_tensors)
        if len(grad_tensors) < len(tensors):
            raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        _check_inputs(inputs, "backward" if accumulate else "grad")
    elif not accumulate:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    roots, seeds = [], []
    for i, (out, given) in enumerate(zip(tensors, grad_tensors)):
        roots.append(gradient_node(out) if isinstance(out, Tensor) else None)
        seeds.append(_seed(i, out, given, create_graph))
    for i, node in enumerate(roots):
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn. "
                "Create the inputs with requires_grad=True (and outside no_grad()) so that "
                "operations on them are recorded.")
    if inputs is None:
        engine_backward(roots, seeds, retain_graph=bool(retain_graph), create_graph=create_graph)
        return None
    targets = [gradient_node(t) for t in inputs]
    captured = engine_backward(roots, seeds, retain_graph=bool(retain_graph), capture=targets,
                             create_graph=create_graph)
    results = []
    for i, (t, node) in enumerate(zip(inputs, targets)):
        g = captured.get(node)
        if g is None:
            if accumulate or allow_unused and not materialize_grads:
                results.append(None)
            elif materialize_grads:
                results.append(wrap(np.zeros_like(t._data)))
            else:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
        elif accumulate:
            t.accumulate_grad(g)
        elif type(g) is Tensor:  # create_graph: the gradient keeps its history
            if g._data.dtype != t._data.dtype:
                g = g.to(t.dtype)
            results.append(g if g._data.shape == t._data.shape else g.expand(*t.shape))
        else:
            results.append(wrap(np.array(g, dtype=t._data.dtype).reshape(t._data.shape)))
    return None if accumulate else tuple(results)


def _check_inputs(inputs, caller):
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _seed(i, out, given, create_graph):
    """The gradient backward starts from at output ``i``: ``given`` (checked, in ``out``'s
    dtype), or 1 for a one-element output. An array, or a Tensor under create_graph."""
    if given is None:
        if not isinstance(out, Tensor) or not out._requires_grad:
            return None  # reported as "does not require grad" once all seeds are checked
        if out._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, but this tensor "
                f"has shape {list(out.shape)}. Reduce it to one number first (e.g. "
                "y.sum().backward()) or pass the gradient of the final result with "
                "respect to it: y.backward(gradient=minigrad.ones_like(y)).")
        grad = np.ones(out._data.shape, out._data.dtype)
        return wrap(grad) if create_graph else grad
    if not isinstance(given, Tensor):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(given).__name__}")
    if not isinstance(out, Tensor):
        return None
    if given._data.shape != out._data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {given.shape} "
                           f"and output[{i}] has a shape of {out.shape}.")
    if create_graph:  # a given gradient keeps its history (a vjp of a vjp needs it)
        if given._data.dtype == out._data.dtype:
            return given
        return wrap(given._data.astype(out._data.dtype))
    return given._data.astype(out._data.dtype, copy=False)
