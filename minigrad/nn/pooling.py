"""Pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``, ``F.max_pool1d``,
``F.avg_pool1d`` and their layers ``nn.MaxPool2d``, ... ``nn.AvgPool1d``, as in PyTorch
(chapter 11's CNN benchmark; the 1-d ones for sequences, the course's "next programs").

Here: the checks of their arguments (with PyTorch's errors), the windows' geometry and the
layers. The ops themselves (forward, backward, and the backward's backward) are in
``minigrad.ops.pooling``.
"""

import numpy as np

from ..ops.pooling import (AdaptiveAvgPool2DBackward0, AvgPool2DBackward0,
                           MaxPool2DWithIndicesBackward0)
from .._tensor import wrap
from ._arguments import expect_tensor
from .conv import pair, scalar_name
from .module import Module

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]


def _batched(op, input):
    """(N, C, H, W) for a (C, H, W) or (N, C, H, W) input, and whether it was unbatched.
    Only the batch may be empty, as in PyTorch."""
    x = input._data
    if x.ndim not in (3, 4):
        if op == "avg_pool2d" and x.ndim < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got -3): "
                             f"avg_pool2d takes a (C, H, W) or (N, C, H, W) input, got shape "
                             f"{list(x.shape)}")
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input, got "
                           f"shape {list(x.shape)}")
    if 0 in x.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(x.shape)}")
    return (x[None], True) if x.ndim == 3 else (x, False)


def _geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Kernel, stride, padding, dilation as pairs, the output size, and the padding on each
    side (the end may get more, for the last window of ceil_mode)."""
    kernel = pair(kernel_size)
    stride = kernel if stride is None or stride == [] or stride == () else pair(stride, "stride")
    padding, dilation = pair(padding, "padding"), pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > k // 2:  # (the kernel's half, whatever the dilation: PyTorch's rule)
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    out, pads = [], []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if ceil_mode:
            size = -(-(n + 2 * p - span) // s) + 1
            if (size - 1) * s >= n + p:  # the last window would start in the padding
                size -= 1
        else:
            size = (n + 2 * p - span) // s + 1
        out.append(size)
        pads.append((p, max(p, (size - 1) * s + span - n - p)))
    if min(out) < 1:
        c, h, w = x.shape[1:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, stride, padding, dilation, tuple(out), tuple(pads)


def _unbatch(value, unbatched):
    return value[0] if unbatched else value


# --------------------------------------------------------------------------- max pooling

def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each ``kernel_size`` window (N, C, H, W) -> (N, C, out_h, out_w);
    ``stride`` defaults to the kernel size (windows side by side). Padding counts as -inf.
    ``return_indices=True`` also gives where each maximum is (flat index into H*W)."""
    expect_tensor("max_pool2d", "input", 1, input)
    x, unbatched = _batched("max_pool2d", input)
    kernel, stride, _, dilation, (out_h, out_w), pads = _geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode)
    if x.dtype == np.bool_:
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool': use a float or "
                                  "integer tensor (x.float())")
    found = []
    result = MaxPool2DWithIndicesBackward0.run(
        (input,), geometry=(pads, kernel, stride, dilation, (out_h, out_w)), found=found)
    if return_indices:
        # where each maximum is: its row and column in the input, as one index into H*W
        a, b = np.divmod(found[0], kernel[1])
        rows = np.arange(out_h)[:, None] * stride[0] + a * dilation[0] - pads[0][0]
        cols = np.arange(out_w)[None, :] * stride[1] + b * dilation[1] - pads[1][0]
        return result, wrap(_unbatch(rows * x.shape[3] + cols, unbatched))
    return result


# --------------------------------------------------------------------------- average pooling

def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each ``kernel_size`` window; ``stride`` defaults to the kernel size.
    Padding counts as zeros in the mean unless ``count_include_pad=False``;
    ``divisor_override`` divides every window's sum by that number instead."""
    expect_tensor("avg_pool2d", "input", 1, input)
    x, unbatched = _batched("avg_pool2d", input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, (out_h, out_w), pads = _geometry(
        x, kernel_size, stride, padding, 1, ceil_mode)
    divisor = _divisors(x.shape[2:], kernel, stride, padding, pads, (out_h, out_w),
                        count_include_pad, divisor_override)
    return AvgPool2DBackward0.run((input,), geometry=(pads, kernel, stride, (out_h, out_w),
                                                      divisor))


def _divisors(size, kernel, stride, padding, pads, out_size, count_include_pad,
              divisor_override):
    """What each window's sum is divided by, as PyTorch counts it: the window's elements
    inside the padded input (not past it, where ceil_mode's last window may reach), or only
    those inside the input itself with ``count_include_pad=False``."""
    if divisor_override is not None:
        return float(divisor_override)
    counts = []
    for n, k, s, p, (before, _), m in zip(size, kernel, stride, padding, pads, out_size):
        start = np.arange(m) * s - before
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts.append(end - start)
    return (counts[0][:, None] * counts[1][None, :]).astype(np.float64)


# --------------------------------------------------------------------------- 1-d pooling

def _one(value, message):
    """``3`` or ``(3,)`` -> 3; PyTorch's RuntimeError ``message`` (with the size) otherwise."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = tuple(value)
    if len(value) != 1:
        raise RuntimeError(message.format(len(value)))
    return int(value[0])


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window of ``kernel_size`` steps along the last side of
    (N, C, L) or (C, L): ``max_pool2d`` on planes of height 1 (as PyTorch computes it, so
    the graph is its ``SqueezeBackward1`` after ``MaxPool2DWithIndicesBackward0``).
    ``return_indices=True`` also gives where each maximum is (an index into L)."""
    expect_tensor("max_pool1d", "input", 1, input)
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    size = ("max_pool1d() {} must be an int, list of ints or tuple of ints of size 1 but got "
            "size {{}}")
    k = _one(kernel_size, size.format("kernel_size"))
    s = k if stride is None or stride == [] or stride == () else _one(stride,
                                                                       size.format("stride"))
    p, d = _one(padding, size.format("padding")), _one(dilation, size.format("dilation"))
    if input._data.dtype.kind not in "f":
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for '
                                  f"'{scalar_name(input._data.dtype)}': use a float tensor "
                                  "(x.float())")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    n, span = input.shape[-1], d * (k - 1) + 1
    out = (-(-(n + 2 * p - span) // s) if ceil_mode else (n + 2 * p - span) // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    result = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                        return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean of each window of ``kernel_size`` steps along the last side of (N, C, L) or
    (C, L): ``avg_pool2d`` on planes of height 1, as PyTorch computes it."""
    expect_tensor("avg_pool1d", "input", 1, input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    k = _one(kernel_size, "avg_pool1d() argument 'kernel_size' should contain one int (got {})")
    s = k if stride is None or stride == [] or stride == () else _one(
        stride, "avg_pool1d() argument 'stride' should contain one int (got {})")
    p = _one(padding, "avg_pool1d() argument 'padding' should contain one int (got {})")
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


# --------------------------------------------------------------------------- adaptive pooling

def adaptive_avg_pool2d(input, output_size):
    """Average (C, H, W) or (N, C, H, W) down to ``output_size`` (a number, a pair, None for
    "keep this side") whatever the input's size: window i along a side of n covers
    floor(i*n/m) to ceil((i+1)*n/m). An output of 1x1 is the mean, as in PyTorch."""
    expect_tensor("adaptive_avg_pool2d", "input", 1, input)
    if not isinstance(output_size, (int, np.integer)):  # PyTorch's _list_with_default
        if len(input.shape) <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = [n if m is None else int(m)
                       for m, n in zip(output_size, input.shape[-len(output_size):])]
    else:
        output_size = [int(output_size)] * 2
    if output_size == [1, 1]:  # PyTorch's shortcut, before any check of the input
        return input.mean((-1, -2), keepdim=True)
    if min(output_size) < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           "or equal to 0")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    for i in range(input.ndim - 2, input.ndim):  # the two sides pooled (PyTorch's check)
        if input.shape[i] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but input has sizes "
                               f"{list(input.shape)} with dimension {i} being empty")
    x = input._data
    if x.dtype.kind != "f" and x.size:  # (an empty one is PyTorch's too)
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for '
                                  f"'{scalar_name(x.dtype)}': use a float tensor (x.float())")
    out_h, out_w = output_size
    return AdaptiveAvgPool2DBackward0.run((input,), out_size=(out_h, out_w))


def adaptive_avg_pool1d(input, output_size):
    """Average (N, C, L) or (C, L) down to ``output_size`` steps whatever L:
    ``adaptive_avg_pool2d`` on planes of height 1, as PyTorch computes it."""
    expect_tensor("adaptive_avg_pool1d", "input", 1, input)
    size = _one(output_size, "adaptive_avg_pool1d() argument 'output_size' should contain one "
                             "int (got {})")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


# --------------------------------------------------------------------------- layers

class MaxPool2d(Module):
    """``F.max_pool2d`` as a layer: the largest value of each window."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """``F.avg_pool2d`` as a layer: the mean of each window."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """``F.adaptive_avg_pool2d`` as a layer: any input size averaged down to ``output_size``
    (``AdaptiveAvgPool2d(1)``: one mean per channel, the "global average pooling")."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """``F.max_pool1d`` as a layer: the largest value of each window along the last side."""

    def forward(self, input):
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """``F.avg_pool1d`` as a layer: the mean of each window along the last side."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = pair(kernel_size, n=1)
        self.stride = pair(stride if stride is not None else kernel_size, "stride", n=1)
        self.padding = pair(padding, "padding", n=1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """``F.adaptive_avg_pool1d`` as a layer: any length averaged down to ``output_size``."""

    def forward(self, input):
        return adaptive_avg_pool1d(input, self.output_size)
