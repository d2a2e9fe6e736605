"""2-D convolution: ``F.conv2d`` and ``nn.Conv2d``, as ``torch.nn.functional.conv2d`` and
``torch.nn.Conv2d``.

A convolution is a matrix product once every window of the input is laid out as a column
("im2col"): for each sample, a (channels * kh * kw, out_h * out_w) matrix whose column p
holds the window of output position p. ``sliding_window_view`` gives the windows without
copying; one reshape copies them into that layout, and one (batched) matmul per group
multiplies the weight (out_channels, channels * kh * kw) by it, which gives the output
(N, out_channels, out_h * out_w) already in PyTorch's layout. Backward multiplies by the
same matrices, and sends each window's gradient back to where the window came from with
one strided add per kernel position ("col2im").
"""

import math
import numbers

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import creation, dtypes
from ..graph import Node
from ..tensor import _edge, _needs_grad, _wrap, check_device
from . import init
from ._arguments import _expect_tensor
from .module import Module
from .parameter import Parameter

__all__ = ["conv2d", "Conv2d", "ConvolutionBackward0"]


def _pair(value, name="kernel_size"):
    """``3`` -> ``(3, 3)``; a pair stays a pair (PyTorch's ``_pair``)."""
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _check_4d(op, input):
    """True for an unbatched (C, H, W) input, False for a batch (N, C, H, W); PyTorch's
    error for anything else."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to {op}, but got "
                           f"input of size: {list(input.shape)}")
    return input.ndim == 3


def windows(padded, kernel, stride, dilation):
    """The windows of a (N, C, H, W) array as a view (N, C, out_h, out_w, kh, kw): entry
    [n, c, i, j, a, b] is ``padded[n, c, i*sh + a*dh, j*sw + b*dw]``."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    view = sliding_window_view(padded, span, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def add_windows(target, grads, stride, dilation):
    """The backward of ``windows`` (col2im): add ``grads`` (N, C, kh, kw, out_h, out_w)
    into ``target`` (N, C, H, W) where each window came from, one strided add per kernel
    position (kh * kw adds, each over the whole batch)."""
    (sh, sw), (dh, dw) = stride, dilation
    kh, kw, out_h, out_w = grads.shape[2:]
    for a in range(kh):
        rows = slice(a * dh, a * dh + sh * (out_h - 1) + 1, sh)
        for b in range(kw):
            cols = slice(b * dw, b * dw + sw * (out_w - 1) + 1, sw)
            target[:, :, rows, cols] += grads[:, :, a, b]
    return target


def _same_padding(kernel, dilation):
    """PyTorch's padding='same': the total d*(k-1) split in two, the extra one at the end."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _padding(padding, kernel, stride, dilation):
    """``padding`` (int, pair, 'same' or 'valid') -> ((top, bottom), (left, right))."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            return _same_padding(kernel, dilation)
        raise RuntimeError(f"Invalid padding string: {padding!r}")
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return ((ph, ph), (pw, pw))


def pad_zeros(x, pads, value=0):
    """``x`` (N, C, H, W) with ``pads`` ((top, bottom), (left, right)) of ``value`` around
    its planes; ``x`` itself when there is nothing to pad."""
    (top, bottom), (left, right) = pads
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


class ConvolutionBackward0(Node):
    """out = W @ im2col(x) + b, per sample and group. d(x): W^T times the gradient, put
    back window by window (col2im); d(W): the gradient times the window matrix, summed
    over the batch; d(b): the gradient summed over the batch and the positions."""
    __slots__ = ("geometry",)

    def __init__(self, inputs, x, weight, cols, geometry):
        super().__init__(inputs, (x, weight, cols))
        self.geometry = geometry  # (padded shape, pads, stride, dilation, groups)

    def apply(self, grad):
        x, weight, cols = self.saved_arrays()
        padded_shape, pads, stride, dilation, groups = self.geometry
        n, out_c, out_h, out_w = grad.shape
        in_c, (kh, kw) = x.shape[1], weight.shape[2:]
        g = grad.reshape(n, out_c, out_h * out_w)
        w = weight.reshape(out_c, -1)
        group_out, group_k = out_c // groups, w.shape[1]
        grad_x = grad_w = grad_b = None
        if self.inputs[0] is not None:
            grad_cols = np.empty((n, in_c * kh * kw, out_h * out_w), dtype=grad.dtype)
            for i in range(groups):
                rows = slice(i * group_out, (i + 1) * group_out)
                grad_cols[:, i * group_k:(i + 1) * group_k] = np.matmul(w[rows].T, g[:, rows])
            grad_cols = grad_cols.reshape(n, in_c, kh, kw, out_h, out_w)
            grad_padded = add_windows(np.zeros(padded_shape, grad.dtype), grad_cols, stride,
                                      dilation)
            (top, _), (left, _) = pads
            grad_x = grad_padded[:, :, top:top + x.shape[2], left:left + x.shape[3]]
        if self.inputs[1] is not None:
            grad_w = np.empty_like(w)
            for i in range(groups):
                rows = slice(i * group_out, (i + 1) * group_out)
                window_rows = cols[:, i * group_k:(i + 1) * group_k].transpose(0, 2, 1)
                grad_w[rows] = np.matmul(g[:, rows], window_rows).sum(axis=0)
            grad_w = grad_w.reshape(weight.shape)
        if len(self.inputs) > 2 and self.inputs[2] is not None:
            grad_b = g.sum(axis=(0, 2))
        return (grad_x, grad_w, grad_b)[:len(self.inputs)]


def _check_conv_arguments(x, weight, bias, groups):
    if weight.ndim != 4:
        raise RuntimeError(f"expected stride to be a single integer value or a list of "
                           f"{weight.ndim - 2} values to match the convolution dimensions, "
                           f"but got stride=[1, 1] (conv2d's weight is 4-D: (out_channels, "
                           f"in_channels / groups, kernel_h, kernel_w), got shape "
                           f"{list(weight.shape)})")
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(x.dtype)} but found "
                           f"{_scalar_name(weight.dtype)}: the input is {x.dtype} and the "
                           f"weight {weight.dtype}; convert one (x.float(), x.double(), "
                           "model.double())")
    out_c = weight.shape[0]
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if out_c < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} "
                           f"at dimension 0, but got weight of size {list(weight.shape)} instead")
    if out_c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {weight.shape[1] * groups} "
                           f"channels, but got {x.shape[1]} channels instead")
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({x.dtype}) and bias type ({bias.dtype}) should be the "
                           "same: convert the bias (b.to(x.dtype)) or the input")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_c} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _scalar_name(numpy_dtype):
    """PyTorch's C++ name of a dtype, as its dtype errors print it: Float, Double, Long."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(np.dtype(numpy_dtype).name, str(numpy_dtype))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Slide each of ``weight``'s (out_channels, in_channels / groups, kh, kw) kernels over
    ``input`` (N, C, H, W) or (C, H, W) and take the dot product at each position; add
    ``bias`` (out_channels,). ``padding`` pads with zeros: a number, a pair, 'valid' (none)
    or 'same' (the output as large as the input; stride 1 only). ``groups`` splits the
    channels into independent convolutions."""
    _expect_tensor("conv2d", "input", 1, input)
    _expect_tensor("conv2d", "weight", 2, weight)
    unbatched = _check_4d("conv2d", input)
    if unbatched:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    x, w = input._data, weight._data
    b = bias._data if bias is not None else None
    groups = int(groups)
    _check_conv_arguments(x, w, b, groups)
    kernel = w.shape[2:]
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    pads = _padding(padding, kernel, stride, dilation)
    padded_size = tuple(n + p0 + p1 for n, (p0, p1) in zip(x.shape[2:], pads))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if padded_size[0] < span[0] or padded_size[1] < span[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded_size[0]} x "
                           f"{padded_size[1]}). Kernel size: ({span[0]} x {span[1]}). "
                           "Kernel size can't be greater than actual input size")
    padded = pad_zeros(x, pads)
    n, in_c = x.shape[:2]
    out_c = w.shape[0]
    view = windows(padded, kernel, stride, dilation)  # (N, C, out_h, out_w, kh, kw)
    out_h, out_w = view.shape[2:4]
    # (N, C * kh * kw, out_h * out_w): column p is the window of output position p
    cols = view.transpose(0, 1, 4, 5, 2, 3).reshape(n, in_c * w.shape[2] * w.shape[3],
                                                      out_h * out_w)
    w2 = w.reshape(out_c, -1)
    if groups == 1:
        value = np.matmul(w2, cols)
    else:
        value = np.empty((n, out_c, out_h * out_w), dtype=np.result_type(cols, w2))
        group_out, group_k = out_c // groups, w2.shape[1]
        for i in range(groups):
            rows = slice(i * group_out, (i + 1) * group_out)
            value[:, rows] = np.matmul(w2[rows], cols[:, i * group_k:(i + 1) * group_k])
    if b is not None:
        value += b[:, None]
    value = value.reshape(n, out_c, out_h, out_w)
    if not _needs_grad(input, weight, bias):
        return _wrap(value)
    inputs = (_edge(input), _edge(weight)) + ((_edge(bias),) if bias is not None else ())
    geometry = (padded.shape, pads, stride, dilation, groups)
    return _wrap(value, ConvolutionBackward0(inputs, x, w, cols, geometry))


class Conv2d(Module):
    """A 2-D convolution layer: ``out_channels`` learnt kernels of ``kernel_size`` slid over
    the input (N, in_channels, H, W). Initialised as PyTorch does: the weight
    kaiming-uniform with a=sqrt(5), the bias uniform in ±1/sqrt(fan_in), fan_in =
    in_channels / groups * kh * kw."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        check_device(device)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"padding_mode={padding_mode!r}: minigrad's Conv2d pads with zeros only; pad "
                "the input yourself first, or use PyTorch for reflect/replicate/circular")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride, "stride")
        self.dilation, self.groups = _pair(dilation, "dilation"), groups
        self.output_padding, self.transposed = (0, 0), False
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'same', 'valid'}")
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _pair(padding, "padding")
        dtype = dtype or dtypes.float32
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(creation.empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)

    def extra_repr(self):
        """As PyTorch prints it: only the settings that differ from the defaults."""
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
