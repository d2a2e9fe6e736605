"""``minigrad.nn.utils``: gradient clipping and a model's parameters as one vector, as in
``torch.nn.utils``; ``nn.utils.rnn`` (padding and packing sequences) is its
submodule. Chapter 12 builds ``clip_grad_norm_`` and uses it to train a deep network at a
learning rate that otherwise makes it diverge.

Clipping goes between ``loss.backward()`` and ``optimizer.step()``::

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()

``clip_grad_norm_`` scales all gradients by the same factor, so their direction is kept and
only an unusually large step is shortened; ``clip_grad_value_`` clamps each number alone.
"""

import types
import warnings

import numpy as np

from ...creation import tensor
from ...graph import no_grad
from ..._tensor import Tensor
from ...ops.shape import cat, stack
from . import rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
           "rnn"]


def _as_list(parameters):
    """One tensor or an iterable of them (a generator is read once) -> a list."""
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale every gradient by ``max_norm / (total_norm + 1e-6)`` when that is below 1, where
    ``total_norm`` is the norm of all gradients together (as one long vector). Returns
    ``total_norm``, measured before clipping, as a tensor. ``foreach`` is accepted for
    PyTorch's sake and changes nothing here."""
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    total_norm = stack([g.norm(norm_type) for g in grads]).norm(norm_type)
    if error_if_nonfinite and not np.isfinite(total_norm._data):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    # As PyTorch: always multiply, by 1.0 when the norm is small enough (nan stays nan).
    coefficient = np.minimum(float(max_norm) / (total_norm._data + 1e-6), 1.0)
    with np.errstate(invalid="ignore"):  # an inf gradient times 0 is nan, silently
        for g in grads:
            g.mul_(float(coefficient))
    return total_norm


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    """All parameters, flattened and joined into one vector (a new tensor, in the graph)."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """The inverse: each parameter in turn takes the next ``p.numel()`` numbers of ``vec`` as
    its values. As in PyTorch they are views: the parameters share ``vec``'s memory."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected minigrad.Tensor, but got: {type(vec).__module__}."
                        f"{type(vec).__name__}")
    parameters = _as_list(parameters)
    needed = sum(p.numel() for p in parameters)
    if vec.numel() < needed:  # checked first, so that no parameter changes
        raise RuntimeError(f"the vector has {vec.numel()} numbers but the parameters need "
                           f"{needed}: use parameters_to_vector() of the same parameters")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
