"""2-D pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d`` and their
layers ``nn.MaxPool2d``, ``nn.AvgPool2d``, ``nn.AdaptiveAvgPool2d``, as in PyTorch.

Each pool looks at the same windows a convolution does and keeps their largest value or
their mean, computed with one strided pass over the input per kernel position (kh * kw
passes, each over the whole batch). Max pooling remembers where each maximum was, so
backward sends each gradient to that one element; average pooling sends each gradient,
divided by the window's size, back over the whole window (``conv.add_windows``).
"""

import numpy as np

from ..graph import Node
from ..tensor import _edge, _needs_grad, _wrap
from ._arguments import _expect_tensor
from .conv import _pair, _scalar_name, add_windows, pad_zeros
from .module import Module

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0",
           "AdaptiveAvgPool2DBackward0"]


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
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] or stride == () else _pair(stride, "stride")
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
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

class MaxPool2DWithIndicesBackward0(Node):
    """Each output's gradient goes to the one input element that was the window's largest:
    for each kernel position, the outputs whose maximum sat there add their gradient to
    that position's strided slice (kh * kw passes, as col2im)."""
    __slots__ = ("geometry",)

    def __init__(self, inputs, x, which, geometry):
        super().__init__(inputs, (x, which))
        self.geometry = geometry  # (padded shape, pads, kernel, stride, dilation)

    def apply(self, grad):
        x, which = self.saved_arrays()
        padded_shape, pads, (kh, kw), (sh, sw), (dh, dw) = self.geometry
        g = grad.reshape(which.shape)
        out_h, out_w = which.shape[2:]
        padded = np.zeros(padded_shape, grad.dtype)
        zero = np.zeros((), grad.dtype)
        for a in range(kh):
            rows = slice(a * dh, a * dh + sh * (out_h - 1) + 1, sh)
            for b in range(kw):
                cols = slice(b * dw, b * dw + sw * (out_w - 1) + 1, sw)
                padded[:, :, rows, cols] += np.where(which == a * kw + b, g, zero)
        (top, _), (left, _) = pads
        h, w = x.shape[-2:]
        return (padded[..., top:top + h, left:left + w].reshape(x.shape),)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min if dtype.kind in "iu" else False


def _window_max(padded, kernel, stride, dilation, out_size):
    """The largest value of each window and its kernel position (a * kw + b), a few
    strided passes per kernel position. As PyTorch, the first of equal values wins and a
    nan wins over numbers (the last nan, if several)."""
    (kh, kw), (sh, sw), (dh, dw), (out_h, out_w) = kernel, stride, dilation, out_size
    parts = [padded[:, :, a * dh:a * dh + sh * (out_h - 1) + 1:sh,
                    b * dw:b * dw + sw * (out_w - 1) + 1:sw]
             for a in range(kh) for b in range(kw)]
    best = parts[0].copy()
    for part in parts[1:]:
        np.maximum(best, part, out=best)  # nan propagates, as in PyTorch
    which = np.zeros(best.shape, np.int64)
    for k in range(len(parts) - 1, -1, -1):  # backwards, so the first equal one wins
        np.copyto(which, k, where=parts[k] == best)
    if best.dtype.kind == "f" and np.isnan(best).any():
        for k, part in enumerate(parts):
            np.copyto(which, k, where=np.isnan(part))
    return best, which


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each ``kernel_size`` window (N, C, H, W) -> (N, C, out_h, out_w);
    ``stride`` defaults to the kernel size (windows side by side). Padding counts as -inf.
    ``return_indices=True`` also gives where each maximum is (flat index into H*W)."""
    _expect_tensor("max_pool2d", "input", 1, input)
    x, unbatched = _batched("max_pool2d", input)
    kernel, stride, _, dilation, (out_h, out_w), pads = _geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode)
    padded = pad_zeros(x, pads, _lowest(x.dtype))
    value, which = _window_max(padded, kernel, stride, dilation, (out_h, out_w))
    result = _wrap(_unbatch(value, unbatched))
    if _needs_grad(input):
        geometry = (padded.shape, pads, kernel, stride, dilation)
        result._set_grad_fn(MaxPool2DWithIndicesBackward0((_edge(input),), input._data, which,
                                                          geometry))
    if return_indices:
        # where each maximum is: its row and column in the input, as one index into H*W
        a, b = np.divmod(which, kernel[1])
        rows = np.arange(out_h)[:, None] * stride[0] + a * dilation[0] - pads[0][0]
        cols = np.arange(out_w)[None, :] * stride[1] + b * dilation[1] - pads[1][0]
        return result, _wrap(_unbatch(rows * x.shape[3] + cols, unbatched))
    return result


# --------------------------------------------------------------------------- average pooling

class AvgPool2DBackward0(Node):
    """Each output's gradient, divided by its window's divisor, goes to every element of
    the window."""
    __slots__ = ("geometry",)

    def __init__(self, inputs, x, geometry):
        super().__init__(inputs, (x,))
        self.geometry = geometry  # (padded shape, pads, kernel, stride, divisor)

    def apply(self, grad):
        (x,) = self.saved_arrays()
        padded_shape, pads, kernel, stride, divisor = self.geometry
        g = (grad.reshape((-1,) + padded_shape[1:2] + grad.shape[-2:]) / divisor).astype(
            grad.dtype, copy=False)
        spread = np.broadcast_to(g[:, :, None, None], g.shape[:2] + kernel + g.shape[2:])
        padded = add_windows(np.zeros(padded_shape, grad.dtype), spread, stride, (1, 1))
        (top, _), (left, _) = pads
        h, w = x.shape[-2:]
        return (padded[..., top:top + h, left:left + w].reshape(x.shape),)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each ``kernel_size`` window; ``stride`` defaults to the kernel size.
    Padding counts as zeros in the mean unless ``count_include_pad=False``;
    ``divisor_override`` divides every window's sum by that number instead."""
    _expect_tensor("avg_pool2d", "input", 1, input)
    x, unbatched = _batched("avg_pool2d", input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, (out_h, out_w), pads = _geometry(
        x, kernel_size, stride, padding, 1, ceil_mode)
    padded = pad_zeros(x, pads)
    sums = _window_sums(padded, kernel, stride, (out_h, out_w))
    divisor = _divisors(x.shape[2:], kernel, stride, padding, pads, (out_h, out_w),
                        count_include_pad, divisor_override)
    if x.dtype.kind == "f":
        value = (sums / divisor).astype(x.dtype, copy=False)
    else:  # integers divide as C does: toward zero
        value = np.trunc(sums / divisor).astype(x.dtype)
    result = _wrap(_unbatch(value, unbatched))
    if _needs_grad(input):
        geometry = (padded.shape, pads, kernel, stride, divisor)
        result._set_grad_fn(AvgPool2DBackward0((_edge(input),), input._data, geometry))
    return result


def _window_sums(padded, kernel, stride, out_size):
    """The sum of each window: one strided add per kernel position (faster than summing
    the windows' view)."""
    (kh, kw), (sh, sw), (out_h, out_w) = kernel, stride, out_size
    sums = None
    for a in range(kh):
        for b in range(kw):
            part = padded[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
            sums = part.astype(np.float64 if padded.dtype.kind != "f" else padded.dtype) \
                if sums is None else sums + part
    return sums


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


# --------------------------------------------------------------------------- adaptive pooling

def _adaptive_weights(n, m, dtype):
    """The (m, n) matrix that averages n positions into m: row i has 1/len over PyTorch's
    window i, from floor(i*n/m) to ceil((i+1)*n/m)."""
    weights = np.zeros((m, n), dtype=dtype)
    for i in range(m):
        start, end = (i * n) // m, -(-((i + 1) * n) // m)
        weights[i, start:end] = 1.0 / (end - start)
    return weights


class AdaptiveAvgPool2DBackward0(Node):
    """out = A_h x A_w^T per plane, so d(x) = A_h^T d(out) A_w."""
    __slots__ = ()

    def apply(self, grad):
        rows, cols = self.saved_arrays()
        return (np.einsum("ih,...ij,jw->...hw", rows, grad, cols, optimize=True),)


def adaptive_avg_pool2d(input, output_size):
    """Average (C, H, W) or (N, C, H, W) down to ``output_size`` (a number, a pair, None for
    "keep this side") whatever the input's size: window i along a side of n covers
    floor(i*n/m) to ceil((i+1)*n/m). An output of 1x1 is the mean, as in PyTorch."""
    _expect_tensor("adaptive_avg_pool2d", "input", 1, input)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for '
                                  f"'{_scalar_name(x.dtype)}': use a float tensor (x.float())")
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size, output_size)
    out_h, out_w = (n if m is None else int(m) for n, m in zip(x.shape[-2:], output_size))
    if out_h == 1 and out_w == 1:
        return input.mean((-1, -2), keepdim=True)
    rows = _adaptive_weights(x.shape[-2], out_h, x.dtype)
    cols = _adaptive_weights(x.shape[-1], out_w, x.dtype)
    value = np.einsum("ih,...hw,jw->...ij", rows, x, cols, optimize=True)
    if _needs_grad(input):
        return _wrap(value, AdaptiveAvgPool2DBackward0((_edge(input),), (rows, cols)))
    return _wrap(value)


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
