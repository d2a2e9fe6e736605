"""Derivatives of whole functions, as ``torch.autograd.functional`` (chapter 11):
``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp``.

Each takes a function of one tensor or of a tuple of tensors and answers in the same
structure (one tensor for one, a tuple for a tuple). All of them are built on
``autograd.grad`` in reverse mode:

* ``vjp``: one ``grad(outputs, inputs, v)``;
* ``jvp``: the double-vjp trick: ``g(u) = vjp(u)`` is linear in ``u``, so the vjp of ``g``
  with ``v`` is ``J v`` (needs ``create_graph``, which every ``Op`` supports);
* ``jacobian``: one vjp per output element (``vectorize`` changes nothing here);
* ``hessian``: the jacobian of the gradient;
* ``vhp``: the vjp of the gradient, ``v^T H``; ``hvp`` is ``H v``, the same numbers for the
  symmetric Hessian of a twice continuously differentiable function, computed the same way.

The inputs are taken out of the caller's graph (detached; under ``create_graph=True``
aliased, so the results stay differentiable with respect to them), and the results come
back detached unless ``create_graph=True``.
"""

import numpy as np

from ..graph import enable_grad
from ..ops.op import Op
from ..ops.tangents import auto_linear
from .._tensor import Tensor, wrap
from ..ops.shape import stack
from ..tensor_backward import run_backward

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


class AliasBackward0(Op):
    """The same values as a new tensor that passes its gradient straight through: an input
    the functional API differentiates through, still connected to the caller's graph."""
    __slots__ = ()

    def forward(self, a):
        return a.view()

    def backward(self, grad):
        return grad

    jvp = auto_linear


# ---------------------------------------------------------------------------- helpers

def _as_tuple(value, what, fn):
    """(was it a tuple?, the value as a tuple of tensors), or PyTorch's TypeError."""
    if isinstance(value, Tensor):
        return False, (value,)
    if isinstance(value, tuple) and all(isinstance(t, Tensor) for t in value):
        return True, value
    if isinstance(value, tuple):
        bad = next(i for i, t in enumerate(value) if not isinstance(t, Tensor))
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                        f"Tensors but the value at index {bad} has type {type(value[bad])}.")
    raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors "
                    f"but the given {what} has type {type(value)}.")


def _call(func, inputs, fn):
    outputs = func(*inputs)
    return _as_tuple(outputs, "outputs of the user-provided function", fn)


def _prepare(inputs, create_graph):
    """Inputs outside the caller's graph (or aliased into it, under create_graph)."""
    return tuple(AliasBackward0.run((t,)) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(True) for t in inputs)


def _finish(values, create_graph):
    return tuple(v if v is None or create_graph else v.detach() for v in values)


def _one(is_tuple, values):
    return values if is_tuple else values[0]


def _check_v(v, targets, is_tuple, of_what):
    """``v`` (one tensor per target, each of its shape) as a tuple, or PyTorch's errors."""
    if v is None:
        if is_tuple or targets[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {of_what}.")
        return (wrap(np.ones(targets[0].shape, targets[0].detach().numpy().dtype)),)
    _, v = _as_tuple(v, "v", "this function")
    if len(v) != len(targets):
        if is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(targets)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (entry, target) in enumerate(zip(v, targets)):
        if entry.shape != target.shape:
            where = f"Entry {i} in v" if is_tuple else "v"
            raise RuntimeError(f"{where} has invalid size: should be {target.shape} but got "
                               f"{entry.shape}.")
    return v


def _require_grad(outputs, strict, message):
    if strict:
        for i, out in enumerate(outputs):
            if out is None or not out.requires_grad:
                raise RuntimeError(message.format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` with allow_unused, skipping the outputs that need no gradient (all of
    them: every gradient None)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return run_backward([o for o, _ in kept], [g for _, g in kept], retain_graph, create_graph,
                         inputs, accumulate=False, allow_unused=True)


def _zeros_for_none(grads, like, strict, message):
    """An unused input's gradient is zeros (strict: PyTorch's RuntimeError)."""
    result = []
    for i, (g, t) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(message.format(i=i))
            g = wrap(np.zeros(t.shape, t.detach().numpy().dtype))
        result.append(g)
    return tuple(result)


_SINGLE_INPUT = "input to the user-provided function is a single Tensor with a single element"
_INDEPENDENT = ("The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode.")
_NO_GRAD = ("Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in "
            "strict mode.")
_JACOBIAN_CONSTANT = (
    "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {i} is independent of the input. This is not allowed in strict mode. "
    "You should ensure that your function is twice differentiable and that the jacobian "
    "depends on the inputs (this would be violated by a linear function for example).")


# ---------------------------------------------------------------------------- products

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product, one gradient per input."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp")
        _require_grad(outputs, strict, _NO_GRAD)
        v = _check_v(v, outputs, is_outputs_tuple,
                     "user-provided function returns a single Tensor with a single element")
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _zeros_for_none(grads, inputs, strict, _INDEPENDENT)
    return (_one(is_outputs_tuple, _finish(outputs, create_graph)),
            _one(is_inputs_tuple, _finish(grads, create_graph)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, one tensor per output (computed
    with two vjps: the double-backward trick)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        v = _check_v(v, inputs, is_inputs_tuple, _SINGLE_INPUT)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp")
        _require_grad(outputs, strict, _NO_GRAD)
        dummies = tuple(wrap(np.zeros(o.shape, o.detach().numpy().dtype)).requires_grad_(True)
                        for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _require_grad(grad_inputs, strict, _INDEPENDENT)
        used = [(g, w) for g, w in zip(grad_inputs, v) if g is not None]
        if used:
            grads = _grad(tuple(g for g, _ in used), dummies, tuple(w for _, w in used),
                          create_graph)
        else:
            grads = (None,) * len(outputs)
        grads = _zeros_for_none(grads, outputs, strict, (
            "The gradient with respect to the input is independent of entry {i} in the "
            "grad_outputs when using the double backward trick to compute forward mode "
            "gradients. This is not allowed in strict mode."))
    return (_one(is_outputs_tuple, _finish(outputs, create_graph)),
            _one(is_outputs_tuple, _finish(grads, create_graph)))


def _single_output(func, inputs, fn, strict):
    outputs = func(*inputs)
    is_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", fn)
    _require_grad(outs, strict, _NO_GRAD)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                           "contain a single element")
    return outs[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a function returning one number."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a function returning one number. The Hessian of a twice
    continuously differentiable function is symmetric, so this is ``vhp``'s computation."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
        inputs = _prepare(inputs, create_graph)
        v = _check_v(v, inputs, is_inputs_tuple, _SINGLE_INPUT)
        output = _single_output(func, inputs, fn, strict)
        jac = _grad((output,), inputs, create_graph=True)
        _require_grad(jac, strict, _JACOBIAN_CONSTANT)
        used = [(j, w) for j, w in zip(jac, v) if j is not None]
        grads = (_grad(tuple(j for j, _ in used), inputs, tuple(w for _, w in used),
                       create_graph) if used else (None,) * len(inputs))
        grads = _zeros_for_none(grads, inputs, strict, (
            "The hessian of the user-provided function with respect to input {i} is "
            "independent of the input. This is not allowed in strict mode."))
    return output.detach() if not create_graph else output, \
        _one(is_inputs_tuple, _finish(grads, create_graph))


# ---------------------------------------------------------------------------- matrices

def _check_strategy(strategy, vectorize):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError(
            'minigrad has no forward-mode AD: use strategy="reverse-mode" (the default), '
            "which gives the same Jacobian.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j, a tensor of shape
    ``outputs[i].shape + inputs[j].shape``. One output and one input: that tensor; tuples:
    a tuple (over the outputs, or the inputs), or a tuple of tuples ``[i][j]``.
    ``vectorize=True`` is accepted and computes the same (one vjp per output element)."""
    _check_strategy(strategy, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian")
        _require_grad(outputs, strict, _NO_GRAD)
        rows = tuple(_jacobian_of(out, i, inputs, create_graph, strict)
                     for i, out in enumerate(outputs))
    if is_outputs_tuple and is_inputs_tuple:
        return rows
    if is_outputs_tuple:
        return tuple(row[0] for row in rows)
    return rows[0] if is_inputs_tuple else rows[0][0]


def _jacobian_of(out, index, inputs, create_graph, strict):
    """The blocks d out / d inputs[j]: one vjp per element of ``out`` (a one-hot ``v``)."""
    dtype = out.detach().numpy().dtype
    per_input = [[] for _ in inputs]
    used = [False] * len(inputs)
    for k in range(out.numel()):
        seed = np.zeros(out.numel(), dtype)
        seed[k] = 1
        grads = _grad((out,), inputs, (wrap(seed.reshape(out.shape)),), create_graph,
                      retain_graph=True)
        for j, (g, t) in enumerate(zip(grads, inputs)):
            if g is None:
                g = wrap(np.zeros(t.shape, t.detach().numpy().dtype))
            else:
                used[j] = True
            per_input[j].append(g)
    blocks = []
    for j, (grads, t) in enumerate(zip(per_input, inputs)):
        if strict and out.numel() and not used[j]:
            raise RuntimeError(f"Output {index} of the user-provided function is independent "
                               f"of input {j}. This is not allowed in strict mode.")
        if grads and create_graph:
            block = stack(grads).reshape(*out.shape, *t.shape)
        elif grads:
            block = wrap(np.stack([g.detach().numpy() for g in grads])
                          .reshape(*out.shape, *t.shape))
        else:
            block = wrap(np.zeros((*out.shape, *t.shape), t.detach().numpy().dtype))
        blocks.append(block if create_graph else block.detach())
    return tuple(blocks)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of ``func`` (returning one number) at ``inputs``: for one input a tensor
    of shape ``inputs.shape * 2``; for a tuple, a tuple of tuples ``[i][j]`` of shape
    ``inputs[i].shape + inputs[j].shape``. It is the Jacobian of the gradient."""
    _check_strategy(outer_jacobian_strategy, vectorize)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        output = _single_output(func, args, "hessian", strict)
        jac = _grad((output,), args, create_graph=True)
        _require_grad(jac, strict, _JACOBIAN_CONSTANT)
        return tuple(wrap(np.zeros(t.shape, t.detach().numpy().dtype)) if g is None else g
                     for g, t in zip(jac, args))

    rows = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return rows if is_inputs_tuple else rows[0][0]
