"""The public face of autograd (chapters 3 and 11), laid out as ``torch.autograd``.

* ``backward`` and ``grad``: gradients into ``.grad``, or returned without touching it;
* ``Function`` (``function.py``): an op whose forward and backward you write by hand;
* ``functional`` (``functional.py``): ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``,
  ``vhp``, built on ``grad``;
* ``gradcheck``, ``gradgradcheck`` (``gradcheck.py``): first and second derivatives compared
  with finite differences;
* ``forward_ad`` (``forward_ad.py``): forward-mode AD on tensors (dual levels, tangents,
  a JVP rule per op), chapter 13;
* ``graph``: the engine (``minigrad.graph``), with ``graph.get_gradient_edge``.

``Variable`` is PyTorch's old name for a tensor that can require grad, kept so old code runs.
"""

import numpy as np

from .. import graph
from ..graph import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .._tensor import Tensor, wrap
from ..tensor_backward import run_backward
from . import forward_ad, function, functional
from .function import Function, FunctionCtx, FunctionNode, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["Function", "FunctionCtx", "grad", "gradcheck", "gradgradcheck", "GradcheckError",
           "Variable",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "backward",
           "functional", "forward_ad", "once_differentiable"]


# --------------------------------------------------------------------------- grad

def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradients of ``tensors`` (one tensor or several, each seeded with its entry of
    ``grad_tensors``, or 1 for a one-element tensor) into the ``.grad`` of every leaf, or of
    ``inputs`` only. ``loss.backward(...)`` is ``backward(loss, ...)``: one set of checks.
    ``retain_graph`` defaults to ``create_graph``."""
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


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
    return run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs,
                        accumulate=False, allow_unused=allow_unused,
                        materialize_grads=materialize_grads)


# --------------------------------------------------------------------------- Variable

class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's old wrapper: ``Variable(t, requires_grad=True)`` now just returns a tensor."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        t = wrap(data._data if isinstance(data, Tensor) else np.asarray(data))
        if requires_grad:
            t.requires_grad_(True)
        return t
