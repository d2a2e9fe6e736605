"""Layer norm, batch norm and group norm (``F.layer_norm``, ``F.batch_norm``,
``F.group_norm``; the layers ``nn.LayerNorm``, ``nn.BatchNorm1d`` / ``2d``, whose train/eval
difference chapter 10 shows, and ``nn.GroupNorm``): one fused op each, its forward, what it
saves and its backward in one class, as PyTorch's ``native_layer_norm``,
``native_batch_norm`` and ``native_group_norm``.

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

__all__ = ["NativeLayerNormBackward0", "NativeBatchNormBackward0", "NativeGroupNormBackward0"]


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
            # float32's statistics in float64, as PyTorch accumulates them on the CPU: the
            # centred values stay exact, so gradients that cancel (their sum is 0) do
            xs = x.astype(np.float64) if x.dtype == np.float32 else x
            mean = xs.mean(axis=stats_axes, keepdims=True)
            centered = xs - mean
            squares = (centered * centered).sum(axis=stats_axes, keepdims=True)
            count = math.prod([x.shape[axis] for axis in stats_axes])
            invstd = 1 / np.sqrt(squares / count + eps)
            if running is not None:
                _move_running(running, mean, squares / (count - 1))
            xhat = (centered * invstd).astype(x.dtype, copy=False)
            mean, invstd = mean.astype(x.dtype, copy=False), invstd.astype(x.dtype, copy=False)
        else:
            self.stats_axes = None
            mean, invstd = fixed
            xhat = (x - mean) * invstd
        out = self.scale_and_shift(x, xhat, mean, invstd, weight, bias)
        self.save_for_backward(x, weight, xhat, invstd, mean)
        return out

    def scale_and_shift(self, x, xhat, mean, invstd, weight, bias):
        """``xhat * weight + bias`` (either may be None; PyTorch adds a bias of 0 then,
        so that a -0.0 product is +0.0)."""
        out = xhat.copy() if weight is None else xhat * weight.reshape(self.param_shape)
        out += 0 if bias is None else bias.reshape(self.param_shape)
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
        if needs_x and axes is not None and is_array(grad) and x.size:
            grad_x = self.kernel_grad(grad, x, weight, mean, invstd, axes)
        elif needs_x:
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

    def kernel_grad(self, grad, x, weight, mean, invstd, axes):
        """The input's gradient (on arrays, statistics of the batch) in the order of
        PyTorch's CPU kernel for this op (see ``layer_norm_kernel_grad``)."""
        g = grad if weight is None else grad * weight.reshape(self.param_shape)
        return layer_norm_kernel_grad(g, x, mean, invstd, axes)

    jvp = transposed_backward


def layer_norm_kernel_grad(g, x, mean, invstd, axes):
    """The input's gradient as PyTorch's CPU layer-norm kernel computes it, per row, from
    g = grad * weight: a g + b x + c with a = invstd, b = (Σg mean - Σg x) a³ / N and
    c = -b mean - Σg a / N. The same number as the textbook form, but where a weight is
    infinite this order gives PyTorch's nan (the textbook form gives ±inf there)."""
    count = math.prod(x.shape[axis] for axis in axes)
    db = g.sum(axis=axes, keepdims=True)
    ds = (g * x).sum(axis=axes, keepdims=True)
    b = (db * mean - ds) * invstd * invstd * invstd / count
    c = -b * mean - db * invstd / count
    return invstd * g + b * x + c


class NativeBatchNormBackward0(NativeLayerNormBackward0):
    """Batch norm: the same op over every axis but the channels' (1), with one weight and
    bias per channel."""
    __slots__ = ()

    def kernel_grad(self, grad, x, weight, mean, invstd, axes):
        """PyTorch's CPU batch-norm kernel: (dy - mean(dy) - (x - mean) k) invstd w per
        channel, k = Σ (x - mean) dy invstd² / count; the weight comes last, so an infinite
        one gives PyTorch's ±inf (scaling dy first, as layer norm does, gives nan)."""
        count = math.prod(x.shape[axis] for axis in axes)
        centered = x - mean
        k = (centered * grad).sum(axis=axes, keepdims=True) * invstd * invstd / count
        grad_mean = grad.sum(axis=axes, keepdims=True) / count
        grad_x = (grad - grad_mean - centered * k) * invstd
        return grad_x if weight is None else grad_x * weight.reshape(self.param_shape)

    jvp = transposed_backward

    def scale_and_shift(self, x, xhat, mean, invstd, weight, bias):
        """As PyTorch computes it: ``x * alpha + beta`` with one alpha = invstd * weight and
        beta = bias - mean * alpha per channel (an infinite weight gives PyTorch's nan)."""
        alpha = invstd if weight is None else invstd * weight.reshape(self.param_shape)
        beta = (0 if bias is None else bias.reshape(self.param_shape)) - mean * alpha  # (+0)
        return x * alpha + beta


def _move_running(running, mean, var):
    """``running = (1 - momentum) * running + momentum * batch``, in place (the caller bumps
    the running tensors' versions: ``nn._norms.batch_norm``)."""
    running_mean, running_var, momentum = running
    for target, batch in ((running_mean, mean), (running_var, var)):
        target[...] = momentum * batch.reshape(target.shape) + (1 - momentum) * target


def group_norm_kernel_grad(grad, x, weight, invstd, groups):
    """The input's gradient as PyTorch's CPU group-norm kernel computes it: per sample and
    group, from ds = Σ w Σ dy x and db = Σ w Σ dy (positions, then the group's channels),
    dx = (invstd w) dy + c2 x + c3 with c2 = (db mean - ds) invstd³ / count and
    c3 = -c2 mean - db invstd / count. The textbook form's number, but with an infinite
    weight this order gives PyTorch's nan where the textbook form gives ±inf."""
    n, channels = x.shape[:2]
    per_group, positions = channels // groups, math.prod(x.shape[2:])
    dy, xs = grad.reshape(n, channels, positions), x.reshape(n, channels, positions)
    gamma = np.ones(channels, dtype=x.dtype) if weight is None else weight
    ds = ((dy * xs).sum(axis=2) * gamma).reshape(n, groups, per_group).sum(axis=2)
    db = (dy.sum(axis=2) * gamma).reshape(n, groups, per_group).sum(axis=2)
    wide = x.astype(np.float64) if x.dtype == np.float32 else x
    mean = wide.reshape(n, groups, -1).mean(axis=2).astype(x.dtype, copy=False)
    rstd = invstd.reshape(n, groups)
    count = per_group * positions
    c2 = (db * mean - ds) * rstd * rstd * rstd / count
    c3 = -c2 * mean - db * rstd / count
    c1 = (rstd[:, :, None] * gamma.reshape(groups, per_group)).reshape(n, channels, 1)
    c2, c3 = (np.repeat(c, per_group, axis=1)[:, :, None] for c in (c2, c3))  # per channel
    return (c1 * dy + c2 * xs + c3).reshape(x.shape)


class NativeGroupNormBackward0(Op):
    """Group norm: the channels of each sample of x (N, C, *) split into ``groups`` groups
    of C / groups channels, each group normalised over its channels and positions (layer
    norm of x viewed as (N, groups, rest)); then one weight and bias per channel, as batch
    norm's. Inputs (x, weight, bias), the last two may be None."""
    __slots__ = ("groups", "eps")

    def forward(self, x, weight, bias, groups, eps):
        self.groups, self.eps = groups, eps
        xs = x.astype(np.float64) if x.dtype == np.float32 else x  # (as layer norm's)
        grouped = xs.reshape(self._grouped(x.shape))
        centered = grouped - _group_mean(grouped)
        invstd = 1 / np.sqrt(_group_mean(centered * centered) + eps)
        xhat = (centered * invstd).reshape(x.shape).astype(x.dtype, copy=False)
        # As PyTorch computes it: x * alpha + beta, one alpha = invstd * weight and one
        # beta = bias - mean * alpha per sample and channel (an infinite weight gives nan)
        shape = _per_channel(x.shape)
        per_channel = (x.shape[0], x.shape[1]) + (1,) * (x.ndim - 2)
        spread = x.shape[1] // self.groups if self.groups else 0
        alpha = np.repeat(invstd[:, :, 0], spread, axis=1).reshape(per_channel)
        mean = np.repeat(_group_mean(grouped)[:, :, 0], spread, axis=1).reshape(per_channel)
        if weight is not None:
            alpha = alpha * weight.reshape(shape)
        beta = (0 if bias is None else bias.reshape(shape)) - mean * alpha  # (a bias of 0: +0)
        with np.errstate(invalid="ignore"):
            out = xs * alpha + beta
        invstd = invstd.astype(x.dtype, copy=False)
        self.save_for_backward(x, weight, xhat, invstd)
        return out.astype(x.dtype, copy=False)

    def _grouped(self, shape):
        """(N, groups, the rest): explicit, so that an empty batch reshapes too."""
        return (shape[0], self.groups, math.prod(shape[1:]) // self.groups)

    def backward(self, grad, x, weight, xhat, invstd):
        shape, grouped = tuple(x.shape), self._grouped(tuple(x.shape))
        if not is_array(grad):  # xhat and invstd as recorded functions of the input
            centered = x.reshape(*grouped) - _group_mean(x.reshape(*grouped))
            invstd = 1 / formulas.sqrt(_group_mean(centered * centered) + self.eps)
            xhat = (centered * invstd).reshape(*shape)
        needs_x, needs_weight, needs_bias = self.needs_input_grad
        axes = (0,) + tuple(range(2, len(shape)))
        grad_x = grad_weight = grad_bias = None
        if needs_x and is_array(grad) and x.size:
            grad_x = group_norm_kernel_grad(grad, x, weight, invstd, self.groups)
        elif needs_x:
            g = grad if weight is None else grad * weight.reshape(*_per_channel(shape))
            g, xh = g.reshape(*grouped), xhat.reshape(*grouped)
            grad_x = (invstd * (g - _group_mean(g) - xh * _group_mean(g * xh))).reshape(*shape)
        if needs_weight:
            grad_weight = formulas.sum_over(grad * xhat, axes)
            if grouped[0] and not grouped[2]:  # samples whose groups hold no value: PyTorch's
                grad_weight = grad_weight * math.nan  # mean of none is 0/0, its gradient nan
        if needs_bias:
            grad_bias = formulas.sum_over(grad, axes)
        return grad_x, grad_weight, grad_bias

    jvp = transposed_backward


def _per_channel(shape):
    """The shape of a per-channel value broadcast against x (N, C, *): (1, C, 1, ...)."""
    return (1, shape[1]) + (1,) * (len(shape) - 2)


def _group_mean(grouped):
    """The mean of each group of (N, groups, rest), kept as (N, groups, 1); 0 for groups
    with no element (their results are empty anyway)."""
    return formulas.sum_over(grouped, (2,), keepdims=True) / max(grouped.shape[2], 1)
