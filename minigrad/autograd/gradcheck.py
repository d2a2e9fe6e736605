"""``gradcheck``: backward compared with finite differences, element by element (chapter 11)."""

import warnings

import numpy as np

from ..graph import no_grad
from .._tensor import Tensor, wrap
from ..tensor_backward import run_backward

__all__ = ["gradcheck", "GradcheckError"]


def _gradient(outputs, inputs, grad_outputs, **options):
    """``autograd.grad`` (imported from here, the package would import itself)."""
    return run_backward(outputs, grad_outputs, inputs=inputs, accumulate=False, **options)


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
                (g,) = _gradient([out], [inputs[i]], [wrap(seed.astype(out._data.dtype))],
                                retain_graph=True, allow_unused=True)
                if g is not None:
                    analytical[:, column + k] = g._data.reshape(-1)
            column += size
        if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{wrap(numerical)!r}\nanalytical:{wrap(analytical)!r}\n")
    return True


