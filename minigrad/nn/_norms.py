"""``F.batch_norm``, ``F.layer_norm`` and ``F.group_norm`` (used by ``nn.BatchNorm1d`` /
``2d``, ``nn.LayerNorm`` and ``nn.GroupNorm``).

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

from ..ops.normalization import (NativeBatchNormBackward0, NativeGroupNormBackward0,
                                 NativeLayerNormBackward0)
from ._arguments import expect_tensor
from .conv import scalar_name

__all__ = ["batch_norm", "layer_norm", "group_norm"]


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
    """PyTorch's checks of batch_norm's arguments, in its order; True for an empty input
    (which PyTorch answers before checking the rest)."""
    shape = input.shape
    if training and not shape:
        raise IndexError("tuple index out of range: batch_norm expects a batch (N, C) or "
                         "(N, C, L), got a 0-dim tensor")
    if training and shape[0] * math.prod(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {shape}: a batch of one sample has no variance; use batches "
                         "of 2 or more, or model.eval() to apply the model to one sample")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.numel() == 0:
        return True
    running_mean, running_var = stats
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode: pass the running "
                           "statistics, or training=True to use the batch's own")
    channels = shape[1] if len(shape) >= 2 else 0  # (PyTorch's count for a 0-dim or 1-d input)
    for name, t in zip(("running_mean", "running_var", "weight", "bias"), stats + params):
        if t is not None and t.numel() != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {t.numel()}: it holds one "
                f"value per channel, and dimension 1 of the input (of shape {list(shape)}) "
                "has the channels")
    if len(shape) < 2:
        raise (RuntimeError if not shape else IndexError)(
            f"batch_norm expects a batch (N, C) or (N, C, L), got a tensor of shape "
            f"{list(shape)}: add the batch dimension with x.unsqueeze(0)")
    _check_float("batch_norm", input)
    _check_same_dtype(input, stats + params)
    return False


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
    if _check_batch_norm(input, (running_mean, running_var), (weight, bias), training, eps):
        # An empty batch: PyTorch's own answer, a copy scaled by weight[0], shifted by
        # bias[0] (so the gradient chain holds); the running statistics stay.
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        return out if bias is None else out + bias[0]
    x = input._data
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)  # one value per channel, broadcast
    axes = (0,) + tuple(range(2, x.ndim))  # every axis but the channels'
    if training:
        fixed = None
        running = None if running_mean is None else (running_mean._data, running_var._data,
                                                     momentum)
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


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels (dimension 1) of each sample of (N, C, *) into ``num_groups``
    groups and normalise each group (its channels and positions together) to mean 0 and
    variance 1, then scale by ``weight`` and shift by ``bias`` (one value per channel). Per
    sample, as layer norm: the same in training and in eval, whatever the batch size."""
    expect_tensor("group_norm", "input", 1, input)
    shape = list(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(shape)}")
    groups = int(num_groups)
    if groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero: num_groups must be "
                                "positive")
    if shape[0] * shape[1] // groups * math.prod(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {[shape[0] * shape[1] // groups, groups] + shape[2:]}: a group "
                         "of one value has no variance")
    if shape[1] % groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {shape} and "
                           f"num_groups={groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != shape[1]):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(t.shape)} and input of shape {shape}")
    _check_float("GroupNormKernelImpl", input)
    for t in (weight, bias):
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{scalar_name(input._data.dtype)}: the input is {input.dtype}"
                               f" and the {'weight' if t is weight else 'bias'} {t.dtype}; "
                               "convert the model (model.double() / model.float()) or the "
                               "input")
    return NativeGroupNormBackward0.run((input, weight, bias), input._data, _data(weight),
                                        _data(bias), groups=groups, eps=eps)
