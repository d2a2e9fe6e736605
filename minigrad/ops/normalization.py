"""Layer norm and batch norm (``F.layer_norm``, ``F.batch_norm``; the layers ``nn.LayerNorm``
and ``nn.BatchNorm1d``, whose train/eval difference chapter 10 shows): one fused op each,
its forward, what it saves and its backward in one class, as PyTorch's
``native_layer_norm`` and ``native_batch_norm``.

Both normalise ``x`` to ``xhat = (x - mean) * invstd``, ``invstd = 1 / sqrt(var + eps)``,
and return ``xhat * weight + bias``. A plain ``backward()`` uses the closed-form gradient
with the ``xhat`` and ``invstd`` forward kept; under ``create_graph=True`` they are
computed again from the input Tensor, so that the gradient records how it depends on x.
"""

import math

import numpy as np

from . import formulas
from .formulas import is_array
from .op import Op
from .tangents import transposed_backward

__all__ = ["NativeLayerNormBackward0", "NativeBatchNormBackward0"]


def _mean(x, axes):
    """The mean over ``axes``, kept as axes of length 1."""
    if is_array(x):
        return x.mean(axis=axes, keepdims=True)
    return x.mean(dim=axes, keepdim=True)


class NativeLayerNormBackward0(Op):
    """y = xhat * weight + bias, xhat = (x - mean) * invstd; inputs (x, weight, bias), the
    last two may be None. ``stats_axes``: the axes of x the mean and variance come from;
    ``fixed``: instead, given (mean, invstd) arrays (batch norm in eval mode, with the
    running statistics). ``param_shape``: weight and bias as they broadcast against x;
    ``param_axes``: the axes their gradients are summed over. ``running`` (batch norm
    training with running statistics): (running_mean, running_var, momentum), arrays moved
    in place towards the batch's mean and variance (divided by count - 1 there)."""
    __slots__ = ("stats_axes", "param_axes", "param_shape", "eps")
    constants = (3, 4)  # invstd, mean: given with ``fixed``; else backward recomputes them

    def forward(self, x, weight, bias, stats_axes, param_shape, param_axes, eps, fixed=None,
                running=None):
        self.param_shape, self.param_axes, self.eps = param_shape, param_axes, eps
        if fixed is None:
            self.stats_axes = stats_axes
            mean = x.mean(axis=stats_axes, keepdims=True)
            centered = x - mean
            squares = (centered * centered).sum(axis=stats_axes, keepdims=True)
            count = math.prod([x.shape[axis] for axis in stats_axes])
            invstd = 1 / np.sqrt(squares / count + eps)
            if running is not None:
                _move_running(running, mean, squares / (count - 1))
        else:
            self.stats_axes = None
            mean, invstd = fixed
            centered = x - mean
        xhat = centered * invstd
        out = xhat.copy() if weight is None else xhat * weight.reshape(param_shape)
        if bias is not None:
            out += bias.reshape(param_shape)
        self.save_for_backward(x, weight, xhat, invstd, mean)
        return out

    def backward(self, grad, x, weight, xhat, invstd, mean):
        axes = self.stats_axes
        if not is_array(grad):  # xhat and invstd as recorded functions of the input
            if axes is not None:
                centered = x - _mean(x, axes)
                invstd = 1 / formulas.sqrt(_mean(centered * centered, axes) + self.eps)
            else:
                centered = x - mean
            xhat = centered * invstd
        needs_x, needs_weight, needs_bias = self.needs_input_grad
        grad_x = grad_weight = grad_bias = None
        if needs_x:
            g = grad if weight is None else grad * weight.reshape(*self.param_shape)
            if axes is None:
                grad_x = g * invstd
            else:  # x moves the mean and the variance too, hence the two means subtracted
                grad_x = invstd * (g - _mean(g, axes) - xhat * _mean(g * xhat, axes))
        if needs_weight:
            grad_weight = formulas.sum_over(grad * xhat, self.param_axes)
        if needs_bias:
            grad_bias = formulas.sum_over(grad, self.param_axes)
        return grad_x, grad_weight, grad_bias

    jvp = transposed_backward


class NativeBatchNormBackward0(NativeLayerNormBackward0):
    """Batch norm: the same op over every axis but the channels' (1), with one weight and
    bias per channel."""
    __slots__ = ()

    jvp = transposed_backward


def _move_running(running, mean, var):
    """``running = (1 - momentum) * running + momentum * batch``, in place (the caller bumps
    the running tensors' versions: ``nn._norms.batch_norm``)."""
    running_mean, running_var, momentum = running
    for target, batch in ((running_mean, mean), (running_var, var)):
        target[...] = momentum * batch.reshape(target.shape) + (1 - momentum) * target
