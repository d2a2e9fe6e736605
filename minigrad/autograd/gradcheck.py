"""``gradcheck`` and ``gradgradcheck``: backward compared with finite differences, element by
element (chapter 11), as ``torch.autograd.gradcheck`` / ``gradgradcheck``.

``gradcheck`` builds the Jacobian of every output with respect to every input that requires
grad twice: column by column from central differences, and row by row from backward (one
``autograd.grad`` per output element), and compares them. ``gradgradcheck`` does the same for
the function ``(inputs, v) -> v^T J`` that backward computes with ``create_graph=True``, so
it checks the second derivatives (double backward).
"""

import warnings

import numpy as np

from ..creation import rand
from ..graph import enable_grad, no_grad
from .._tensor import Tensor, wrap
from ..tensor_backward import run_backward
from . import forward_ad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


def _gradient(outputs, inputs, grad_outputs, **options):
    """``autograd.grad`` (imported from here, the package would import itself)."""
    return run_backward(outputs, grad_outputs, inputs=inputs, accumulate=False, **options)


class GradcheckError(RuntimeError):
    """Backward disagrees with finite differences."""


def _numerical_jacobian(func, inputs, index, eps):
    """d outputs / d inputs[index] by central differences, one block per output: one row per
    input element, one column per output element (PyTorch's layout)."""
    target = inputs[index]._data
    rows = []
    with no_grad():
        for k in range(target.size):
            # (indexed in place: reshape(-1) of a non-contiguous input, a slice, is a copy)
            at = np.unravel_index(k, target.shape)
            original = target[at]
            target[at] = original + eps
            plus = _as_outputs(func(*inputs))
            target[at] = original - eps
            minus = _as_outputs(func(*inputs))
            target[at] = original
            rows.append([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)])
    return rows


def _as_outputs(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [r._data.astype(np.float64) for r in result if isinstance(r, Tensor)]


_UNSUPPORTED = ("check_batched_grad", "check_batched_forward_grad")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check ``func``'s backward against finite differences, for every input that requires
    grad and every output. Use float64 inputs: float32 rounding alone exceeds the tolerances.

    PyTorch's keyword arguments are accepted; ``fast_mode`` computes the full Jacobians (the
    slow mode's verdict), ``check_undefined_grad``, ``nondet_tol`` and ``masked`` change
    nothing here, and the checks minigrad cannot make (batched gradients) raise
    ``NotImplementedError`` when asked for. ``check_forward_ad=True`` also checks the JVP
    rules (forward mode, chapter 13): the Jacobian built column by column from tangents."""
    asked = {"check_batched_grad": check_batched_grad,
             "check_batched_forward_grad": check_batched_forward_grad}
    for name in _UNSUPPORTED:
        if asked[name]:
            raise NotImplementedError(f"gradcheck({name}=True) is not supported by minigrad "
                                      "(no vmap batching rules yet): "
                                      f"leave {name}=False")
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if check_forward_ad and not _check_forward(func, inputs, eps, atol, rtol, raise_exception):
        return False
    if not check_backward_ad:
        return True
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in checked:
        if inputs[i].dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. gradcheck may fail: use dtype=minigrad.float64.",
                          UserWarning, stacklevel=2)
    outputs = func(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    outputs = [o for o in outputs if isinstance(o, Tensor)]
    for i in checked:
        numerical = _numerical_jacobian(func, inputs, i, eps)
        for j, out in enumerate(outputs):
            expected = (np.stack([row[j] for row in numerical]) if numerical
                        else np.zeros((0, out.numel())))
            found = _analytical_jacobian(out, inputs[i])
            if check_grad_dtypes and out.requires_grad:
                _check_dtype(out, inputs[i], i)
            if not np.allclose(found, expected, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{wrap(expected)!r}\nanalytical:{wrap(found)!r}\n")
    return True


def _check_forward(func, inputs, eps, atol, rtol, raise_exception):
    """Forward mode against finite differences: for each input that requires grad (or is a
    float tensor, when none does), one tangent per element gives one row of the Jacobian."""
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        checked = [i for i, t in enumerate(inputs)
                   if isinstance(t, Tensor) and t.dtype.is_floating_point]
    for i in checked:
        numerical = _numerical_jacobian(func, inputs, i, eps)
        found = _forward_jacobian(func, inputs, i)
        for j, rows in enumerate(found):
            expected = (np.stack([row[j] for row in numerical]) if numerical
                        else np.zeros_like(rows))
            if not np.allclose(rows, expected, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {j} with "
                    f"respect to input {i},\nnumerical:{wrap(expected)!r}\n"
                    f"analytical:{wrap(rows)!r}\n")
    return True


def _forward_jacobian(func, inputs, index):
    """d outputs / d inputs[index] from JVPs: one forward pass per input element, its
    tangent a one-hot tensor; rows are input elements (PyTorch's layout)."""
    target = inputs[index]
    columns = []
    for k in range(target.numel()):
        seed = np.zeros(target._data.size, target._data.dtype)
        seed[k] = 1
        with forward_ad.dual_level():
            args = list(inputs)
            args[index] = forward_ad.make_dual(target, wrap(seed.reshape(target._data.shape)))
            outputs = func(*args)
            outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
            column = []
            for out in outputs:
                if not isinstance(out, Tensor):
                    continue
                tangent = forward_ad.unpack_dual(out).tangent
                column.append(np.zeros(out._data.size) if tangent is None
                              else tangent._data.astype(np.float64).reshape(-1))
        columns.append(column)
    if not columns:
        return []
    return [np.stack([c[j] for c in columns]) for j in range(len(columns[0]))]


def _analytical_jacobian(out, target):
    """d out / d target from backward: one ``autograd.grad`` per element of ``out`` (one
    column each; zeros where ``out`` does not depend on ``target``)."""
    found = np.zeros((target.numel(), out.numel()))
    if not out.requires_grad:
        return found
    for k in range(out.numel()):
        seed = np.zeros(out.shape)
        seed.reshape(-1)[k] = 1.0
        (g,) = _gradient([out], [target], [wrap(seed.astype(out._data.dtype))],
                         retain_graph=True, allow_unused=True)
        if g is not None:
            found[:, k] = g._data.reshape(-1)
    return found


def _check_dtype(out, target, index):
    seed = wrap(np.ones(out.shape, out._data.dtype))
    (g,) = _gradient([out], [target], [seed], retain_graph=True, allow_unused=True)
    if g is not None and g.dtype != target.dtype:
        raise GradcheckError(f"Gradient has dtype mismatch for input {index}: the gradient "
                             f"is {g.dtype} but the input is {target.dtype}")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: ``gradcheck`` of the function that maps the inputs and the
    output gradients ``v`` to ``v^T J`` (backward run with ``create_graph=True``). Without
    ``grad_outputs``, ``v`` is drawn uniformly from [-1, 1) with the default generator (it
    requires grad), as PyTorch does. ``check_fwd_over_rev=True`` also checks that function
    in forward mode (the JVP rules of backward's own ops: forward-over-reverse)."""
    if not (check_rev_over_rev or check_fwd_over_rev):
        return True
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        with enable_grad():
            outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple((rand(*o.shape, dtype=o.dtype if o.dtype.is_floating_point
                                   else None) * 2 - 1).requires_grad_(True) for o in outputs)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    count = len(grad_outputs)
    differentiable = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_derivatives(*args):
        """``v^T J`` for the gradients of the (differentiable) inputs that are used."""
        with enable_grad():
            given, vs = args[:len(args) - count], args[len(args) - count:]
            outputs = _differentiable_outputs(func(*given))
            grads = _gradient(list(outputs), [given[i] for i in differentiable], list(vs),
                              create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
                     fast_mode=fast_mode, masked=masked)


def _differentiable_outputs(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(o for o in result if isinstance(o, Tensor) and o.requires_grad)
