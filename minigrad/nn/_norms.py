"""``F.batch_norm`` and ``F.layer_norm`` (used by ``nn.BatchNorm1d`` and ``nn.LayerNorm``).

Both normalise ``x`` to ``xhat = (x - mean) / sqrt(var + eps)`` and return
``xhat * weight + bias``: batch norm per channel, over the samples of the batch; layer
norm per sample, over its last dimensions. Each is one fused op whose node applies the
closed-form gradient, as PyTorch's ``native_batch_norm`` and ``native_layer_norm`` do.
No chapter teaches them; chapter 10's ``model.train()`` / ``model.eval()`` is what BatchNorm
depends on.
"""

import math
import numbers

import numpy as np

from ..graph import Node
from ..tensor import _edge, _needs_grad, _wrap
from ._arguments import _expect_tensor

__all__ = ["batch_norm", "layer_norm"]


def _normalized_grad(g, xhat, invstd, axes):
    """The gradient of x given the gradient ``g`` of xhat, when the mean and variance were
    taken from x itself over ``axes``: x moves them too, hence the two means subtracted."""
    return invstd * (g - g.mean(axis=axes, keepdims=True)
                     - xhat * (g * xhat).mean(axis=axes, keepdims=True))


class NativeLayerNormBackward0(Node):
    """y = xhat * weight + bias, xhat = (x - mean) * invstd; inputs (x, weight, bias).
    ``stats_axes``: the axes of x the mean and variance came from (None: fixed running
    statistics, batch norm in eval mode); weight and bias sum their gradient over
    ``param_axes``."""
    __slots__ = ("stats_axes", "param_axes")

    def __init__(self, inputs, xhat, invstd, weight, stats_axes, param_axes):
        super().__init__(inputs, (xhat, invstd, weight))
        self.stats_axes, self.param_axes = stats_axes, param_axes

    def apply(self, grad):
        xhat, invstd, weight = self.saved_arrays()
        x_node, weight_node, bias_node = self.inputs
        grad_x = grad_weight = grad_bias = None
        if x_node is not None:
            g = grad if weight is None else grad * weight
            grad_x = (g * invstd if self.stats_axes is None
                      else _normalized_grad(g, xhat, invstd, self.stats_axes))
        if weight_node is not None:
            grad_weight = (grad * xhat).sum(axis=self.param_axes)
        if bias_node is not None:
            grad_bias = grad.sum(axis=self.param_axes)
        return grad_x, grad_weight, grad_bias


NativeBatchNormBackward0 = type("NativeBatchNormBackward0", (NativeLayerNormBackward0,),
                                {"__slots__": ()})


def _scaled(node_cls, input, weight, bias, xhat, invstd, param_shape, stats_axes, param_axes):
    """``xhat * weight + bias`` (either may be None) and its node."""
    w = None if weight is None else weight._data.reshape(param_shape)
    out = xhat.copy() if w is None else xhat * w  # a copy: the node keeps xhat unchanged
    if bias is not None:
        out += bias._data.reshape(param_shape)
    if not _needs_grad(input, weight, bias):
        return _wrap(out)
    edges = tuple(None if t is None else _edge(t) for t in (input, weight, bias))
    return _wrap(out, node_cls(edges, xhat, invstd, w, stats_axes, param_axes))


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
    _expect_tensor("batch_norm", "input", 1, input)
    _check_batch_norm(input, (running_mean, running_var), (weight, bias), training, eps)
    x = input._data
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)  # one value per channel, broadcast
    axes = (0,) + tuple(range(2, x.ndim))  # every axis but the channels'
    batch_stats = training and x.size > 0  # an empty batch has none: the running ones stay
    if training and not batch_stats:
        centered, invstd = x, np.ones(shape, x.dtype)  # an empty result, as in PyTorch
    elif training:
        count = x.size // x.shape[1]
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        squares = (centered * centered).sum(axis=axes, keepdims=True)
        invstd = 1 / np.sqrt(squares / count + eps)
        if running_mean is not None:
            for running, batch in ((running_mean, mean), (running_var, squares / (count - 1))):
                running._data[...] = (momentum * batch.reshape(running._data.shape)
                                      + (1 - momentum) * running._data)
                running._bump_version()
    else:
        centered = x - running_mean._data.reshape(shape)
        invstd = 1 / np.sqrt(running_var._data.reshape(shape) + eps)
    return _scaled(NativeBatchNormBackward0, input, weight, bias, centered * invstd, invstd,
                   shape, axes if batch_stats else None, axes)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over its last dimensions (``normalized_shape``, e.g. the
    features (D,) of every position of (N, L, D)) to mean 0 and variance 1, then scale by
    ``weight`` and shift by ``bias`` (both of shape ``normalized_shape``). The same in
    training and in eval: no running statistics."""
    _expect_tensor("layer_norm", "input", 1, input)
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
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    invstd = 1 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
    return _scaled(NativeLayerNormBackward0, input, weight, bias, centered * invstd, invstd,
                   norm_shape, axes, tuple(range(x.ndim - k)))
