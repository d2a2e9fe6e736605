"""``F.batch_norm`` and ``F.layer_norm`` (used by ``nn.BatchNorm1d`` and ``nn.LayerNorm``).

Both normalise ``x`` to ``xhat = (x - mean) / sqrt(var + eps)`` and return
``xhat * weight + bias``: batch norm per channel, over the samples of the batch; layer
norm per sample, over its last dimensions. Each is one fused op
(``minigrad.ops.normalization``), as PyTorch's ``native_batch_norm`` and
``native_layer_norm``; here are the checks of their arguments, with PyTorch's errors.
No chapter teaches them; chapter 10's ``model.train()`` / ``model.eval()`` is what BatchNorm
depends on.
"""

import math
import numbers

import numpy as np

from ..ops.normalization import NativeBatchNormBackward0, NativeLayerNormBackward0
from ._arguments import expect_tensor

__all__ = ["batch_norm", "layer_norm"]


def _check_float(name, input):
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {input.dtype}: normalise a '
                                  "float tensor (x.float())")


def _check_same_dtype(input, tensors):
    for t in tensors:
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"mixed dtype (CPU): all inputs must share same datatype. The input is "
                f"{input.dtype} but a parameter or running statistic is {t.dtype}: convert "
                "the model (model.double() / model.float()) or the input")


def _check_batch_norm(input, stats, params, training, eps):
    """PyTorch's checks of batch_norm's arguments, in its order."""
    shape = input.shape
    if len(shape) < 2:
        raise (IndexError if training else RuntimeError)(
            f"batch_norm expects a batch (N, C) or (N, C, L), got a tensor of shape "
            f"{list(shape)}: add the batch dimension with x.unsqueeze(0)")
    if training and shape[0] * math.prod(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {shape}: a batch of one sample has no variance; use batches "
                         "of 2 or more, or model.eval() to apply the model to one sample")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    running_mean, running_var = stats
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode: pass the running "
                           "statistics, or training=True to use the batch's own")
    for name, t in zip(("running_mean", "running_var", "weight", "bias"), stats + params):
        if t is not None and t.numel() != shape[1]:
            raise RuntimeError(
                f"{name} should contain {shape[1]} elements not {t.numel()}: it holds one "
                f"value per channel, and dimension 1 of the input (of shape {list(shape)}) "
                "has the channels")
    _check_float("batch_norm", input)
    _check_same_dtype(input, stats + params)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dimension 1) of a batch (N, C) or (N, C, L, ...) to mean 0
    and variance 1, then scale by ``weight`` and shift by ``bias`` (one value per channel).

    ``training=True``: with the batch's own mean and variance (divided by the count); the
    running statistics, if given, move towards them in place:
    ``running = (1 - momentum) * running + momentum * batch`` (the variance divided by
    count - 1 there). ``training=False``: with the running statistics, whatever the batch.
    """
    expect_tensor("batch_norm", "input", 1, input)
    _check_batch_norm(input, (running_mean, running_var), (weight, bias), training, eps)
    x = input._data
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)  # one value per channel, broadcast
    axes = (0,) + tuple(range(2, x.ndim))  # every axis but the channels'
    batch_stats = training and x.size > 0  # an empty batch has none: the running ones stay
    if batch_stats:
        fixed = None
        running = None if running_mean is None else (running_mean._data, running_var._data,
                                                     momentum)
    elif training:  # an empty result, as in PyTorch
        fixed, running = (np.zeros(shape, x.dtype), np.ones(shape, x.dtype)), None
    else:
        fixed = (running_mean._data.reshape(shape).copy(),  # a copy: the node keeps it
                 1 / np.sqrt(running_var._data.reshape(shape) + eps))
        running = None
    out = NativeBatchNormBackward0.run(
        (input, weight, bias), x, _data(weight), _data(bias), stats_axes=axes,
        param_shape=shape, param_axes=axes, eps=eps, fixed=fixed, running=running)
    if running is not None:  # the op moved the running statistics in place (numpy)
        running_mean._bump_version()
        running_var._bump_version()
    return out


def _data(tensor):
    return None if tensor is None else tensor._data


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over its last dimensions (``normalized_shape``, e.g. the
    features (D,) of every position of (N, L, D)) to mean 0 and variance 1, then scale by
    ``weight`` and shift by ``bias`` (both of shape ``normalized_shape``). The same in
    training and in eval: no running statistics."""
    expect_tensor("layer_norm", "input", 1, input)
    if isinstance(normalized_shape, numbers.Integral):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not int: pass ({normalized_shape},)")
    norm_shape = tuple(int(n) for n in normalized_shape)
    if not norm_shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != norm_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(norm_shape)}")
    x = input._data
    k = len(norm_shape)
    if x.ndim < k or x.shape[x.ndim - k:] != norm_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(norm_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, norm_shape))}], but got input of size{list(x.shape)}: "
            "layer norm normalises the input's last dimensions, which must be normalized_shape")
    _check_same_dtype(input, (weight, bias))
    _check_float("LayerNormKernelImpl", input)
    return NativeLayerNormBackward0.run(
        (input, weight, bias), x, _data(weight), _data(bias),
        stats_axes=tuple(range(x.ndim - k, x.ndim)), param_shape=norm_shape,
        param_axes=tuple(range(x.ndim - k)), eps=eps)
