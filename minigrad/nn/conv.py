"""2-D convolution: ``F.conv2d`` and ``nn.Conv2d``, as ``torch.nn.functional.conv2d`` and
``torch.nn.Conv2d``: the checks of their arguments (with PyTorch's errors) and the layer.
The op itself, its forward and backward, is ``minigrad.ops.convolution.ConvolutionBackward0``
(a matrix product once every window of the input is laid out as a column, "im2col").
"""

import math
import numbers

import numpy as np

from .. import creation, dtypes
from ..ops.convolution import ConvolutionBackward0
from ..tensor_device import check_device
from . import init
from ._arguments import expect_tensor
from .module import Module
from .parameter import Parameter

__all__ = ["conv2d", "Conv2d"]


def pair(value, name="kernel_size"):
    """``3`` -> ``(3, 3)``; a pair stays a pair (PyTorch's ``pair``)."""
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
    ph, pw = pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return ((ph, ph), (pw, pw))


def _check_conv_arguments(x, weight, bias, groups):
    if weight.ndim != 4:
        raise RuntimeError(f"expected stride to be a single integer value or a list of "
                           f"{weight.ndim - 2} values to match the convolution dimensions, "
                           f"but got stride=[1, 1] (conv2d's weight is 4-D: (out_channels, "
                           f"in_channels / groups, kernel_h, kernel_w), got shape "
                           f"{list(weight.shape)})")
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(x.dtype)} but found "
                           f"{scalar_name(weight.dtype)}: the input is {x.dtype} and the "
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


def scalar_name(numpy_dtype):
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
    expect_tensor("conv2d", "input", 1, input)
    expect_tensor("conv2d", "weight", 2, weight)
    unbatched = _check_4d("conv2d", input)
    if unbatched:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    x, w = input._data, weight._data
    b = bias._data if bias is not None else None
    groups = int(groups)
    _check_conv_arguments(x, w, b, groups)
    kernel = w.shape[2:]
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
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
    return ConvolutionBackward0.run((input, weight, bias), x, w, b,
                                    geometry=(kernel, pads, stride, dilation), groups=groups)


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
        self.kernel_size, self.stride = pair(kernel_size), pair(stride, "stride")
        self.dilation, self.groups = pair(dilation, "dilation"), groups
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
            self.padding = pair(padding, "padding")
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
