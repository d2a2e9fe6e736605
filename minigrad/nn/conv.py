"""Convolutions: ``F.conv2d``, ``F.conv1d`` and ``nn.Conv2d``, ``nn.Conv1d``, and the
transposed ones (``F.conv_transpose2d``, ``nn.ConvTranspose2d``: the generators of DCGANs and
the decoders of autoencoders), as in ``torch.nn``: the checks of their arguments (with
PyTorch's errors) and the layers (chapter 11's CNN benchmark; ``Conv1d`` and the transposed
ones for the course's "next programs"). The op itself, its forward and backward, is
``minigrad.ops.convolution.ConvolutionBackward0`` (a matrix product once every window of the
input is laid out as a column, "im2col"; a transposed convolution is its input-gradient).
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

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "ConvNd", "Conv1d",
           "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


def pair(value, name="kernel_size", n=2):
    """``3`` -> ``(3, 3)``; a pair stays a pair (PyTorch's ``pair``); ``n=1``: ``3`` ->
    ``(3,)`` (PyTorch's ``single``)."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _same_padding(kernel, dilation):
    """PyTorch's padding='same': the total d*(k-1) split in two, the extra one at the end."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _padding(padding, kernel, stride, dilation):
    """``padding`` (int, tuple, 'same' or 'valid') -> ((before, after), ...) per side."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if stride != (1,) * n:
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            return _same_padding(kernel, dilation)
        raise RuntimeError(f"Invalid padding string: {padding!r}")
    sides = pair(padding, "padding", n)
    if min(sides) < 0:
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in sides)


def _check_rank_and_dtype(x, weight):
    """PyTorch's first two checks of any convolution: input and weight of one rank and dtype."""
    if weight.ndim != x.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {x.ndim}-"
                           f"dimensional input of size {list(x.shape)} instead")
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(x.dtype)} but found "
                           f"{scalar_name(weight.dtype)}: the input is {x.dtype} and the "
                           f"weight {weight.dtype}; convert one (x.float(), x.double(), "
                           "model.double())")


def _check_conv_arguments(x, weight, bias, groups):
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    _check_rank_and_dtype(x, weight)
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
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``conv2d`` along one side: each of ``weight``'s (out_channels, in_channels / groups,
    k) kernels slid along ``input`` (N, C, L) or (C, L) (a sequence of C features per
    step, or a signal of C channels); the same padding, stride, dilation and groups."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def _convolution(name, n, input, weight, bias, stride, padding, dilation, groups):
    """The checks of ``conv1d`` (n = 1) and ``conv2d`` (n = 2), in PyTorch's order, then the
    op; a 1-d convolution runs as a 2-d one of height 1 (``ConvolutionBackward0``)."""
    expect_tensor(name, "input", 1, input)
    expect_tensor(name, "weight", 2, weight)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if input.ndim == n + 1:
        return _convolution(name, n, input.unsqueeze(0), weight, bias, stride, padding,
                            dilation, groups).squeeze(0)
    x, w = input._data, weight._data
    b = bias._data if bias is not None else None
    groups = int(groups)
    _check_conv_arguments(x, w, b, groups)
    kernel = w.shape[2:]
    stride, dilation = pair(stride, "stride", n), pair(dilation, "dilation", n)
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    pads = _padding(padding, kernel, stride, dilation)
    padded_size = tuple(s + p0 + p1 for s, (p0, p1) in zip(x.shape[2:], pads))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(p < k for p, k in zip(padded_size, span)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded_size))}). Kernel size: "
                           f"({' x '.join(map(str, span))}). Kernel size can't be greater "
                           "than actual input size")
    if x.dtype == np.bool_ and x.size and w.size:  # (an empty one is PyTorch's too)
        raise NotImplementedError("\"slow_conv2d_cpu\" not implemented for 'Bool': convolve "
                                  "numbers (x.float())")
    if x.size == 0 and x.shape[0] and x.shape[1]:
        shape = list(x.shape[:2]) + [1] * (n == 1) + list(x.shape[2:])
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {shape}")
    if n == 1:  # the geometry of a plane of height 1
        kernel, pads = (1,) + kernel, ((0, 0),) + pads
        stride, dilation = (1,) + stride, (1,) + dilation
    return ConvolutionBackward0.run((input, weight, bias), x, w, b,
                                    geometry=(kernel, pads, stride, dilation), groups=groups)


class ConvNd(Module):
    """What ``Conv1d`` and ``Conv2d`` share (PyTorch's ``_ConvNd``): the settings, the
    parameters and their initialisation, as PyTorch does it: the weight kaiming-uniform
    with a=sqrt(5), the bias uniform in ±1/sqrt(fan_in), fan_in = in_channels / groups
    times the kernel's size. ``dims``: how many sides the kernel slides along."""

    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        check_device(device)
        n = self.dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros" and self.transposed:
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"padding_mode={padding_mode!r}: minigrad's {type(self).__name__} pads with "
                "zeros only; pad the input yourself first (F.pad), or use PyTorch for "
                "reflect/replicate/circular")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = pair(kernel_size, n=n), pair(stride, "stride", n)
        self.dilation, self.groups = pair(dilation, "dilation", n), groups
        self.output_padding = pair(output_padding, "output_padding", n)
        self.padding_mode = padding_mode
        if isinstance(padding, str) and self.transposed:
            raise ValueError(f"padding={padding!r} is not supported for "
                             f"{type(self).__name__}: give the padding as a number or a tuple")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'same', 'valid'}")
            if padding == "same" and self.stride != (1,) * n:
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = pair(padding, "padding", n)
        dtype = dtype or dtypes.float32
        if self.transposed:  # (in_channels, out_channels / groups, k...), as PyTorch's
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
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

    def extra_repr(self):
        """As PyTorch prints it: only the settings that differ from the defaults."""
        zeros, ones = (0,) * self.dims, (1,) * self.dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != zeros:
            s += f", padding={self.padding}"
        if self.output_padding != zeros:
            s += f", output_padding={self.output_padding}"
        if self.dilation != ones:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(ConvNd):
    """A 2-D convolution layer: ``out_channels`` learnt kernels of ``kernel_size`` slid over
    the input (N, in_channels, H, W) (see ``F.conv2d``)."""

    def forward(self, input):
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)


class Conv1d(ConvNd):
    """A 1-D convolution layer: ``out_channels`` learnt kernels of length ``kernel_size``
    slid along the input (N, in_channels, L) (see ``F.conv1d``)."""

    dims = 1

    def forward(self, input):
        return conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)


# ------------------------------------------------------------------ transposed convolutions

def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed convolution (the gradient of ``conv2d`` with respect to its input):
    each position of ``input`` (N, C, H, W) or (C, H, W) spreads its channels over a window
    of the output through ``weight`` (C, out_channels / groups, kh, kw); the output is
    (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1 high (and as
    wide). ``output_padding`` (smaller than stride or dilation) adds rows and columns at the
    end, to reach sizes several inputs map to. Note the order of ``groups`` and ``dilation``
    (PyTorch's)."""
    return _transposed("conv_transpose2d", 2, input, weight, bias, stride, padding,
                       output_padding, groups, dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``conv_transpose2d`` along one side: ``input`` (N, C, L) or (C, L), ``weight``
    (C, out_channels / groups, k)."""
    return _transposed("conv_transpose1d", 1, input, weight, bias, stride, padding,
                       output_padding, groups, dilation)


def _transposed(name, n, input, weight, bias, stride, padding, output_padding, groups,
                dilation):
    """The checks of the transposed convolutions in PyTorch's order, then the op
    (``ConvolutionBackward0`` in its transposed mode; 1-d on planes of height 1)."""
    expect_tensor(name, "input", 1, input)
    expect_tensor(name, "weight", 2, weight)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str "
                        "(a transposed convolution takes no 'same' or 'valid')")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if input.ndim == n + 1:
        return _transposed(name, n, input.unsqueeze(0), weight, bias, stride, padding,
                           output_padding, groups, dilation).squeeze(0)
    x, w = input._data, weight._data
    b = bias._data if bias is not None else None
    groups = int(groups)
    _check_transposed_arguments(x, w, b, groups)
    stride, dilation = pair(stride, "stride", n), pair(dilation, "dilation", n)
    sides, extra = pair(padding, "padding", n), pair(output_padding, "output_padding", n)
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if min(sides) < 0:
        raise RuntimeError("negative padding is not supported")
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        words = ["height", "width"][2 - n:]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(f"output_padding_{a}: {e}" for a, e in zip(words, extra)) + " "
            + " ".join(f"stride_{a}: {s}" for a, s in zip(words, stride)) + " "
            + " ".join(f"dilation_{a}: {d}" for a, d in zip(words, dilation)))
    kernel = w.shape[2:]
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + e + 1 for i, s, p, d, k, e in zip(
        x.shape[2:], stride, sides, dilation, kernel, extra))
    if min(size) < 1:
        raise RuntimeError(f"{name}: the output would be {list(size)}: the padding "
                           f"{list(sides)} crops more than the input of size "
                           f"{list(x.shape[2:])} spreads to; use a smaller padding")
    # the pads of the convolution this one is the input-gradient of (output_padding: rows and
    # columns added at the end; ConvolutionBackward0.transposed_geometry)
    pads = tuple((p, p - e) for p, e in zip(sides, extra))
    if n == 1:  # the geometry of a plane of height 1
        kernel, pads, size = (1,) + kernel, ((0, 0),) + pads, (1,) + size
        stride, dilation = (1,) + stride, (1,) + dilation
    return ConvolutionBackward0.run((input, weight, bias), x, w, b,
                                    geometry=(kernel, pads, stride, dilation), groups=groups,
                                    transposed=size)


def _check_transposed_arguments(x, weight, bias, groups):
    """PyTorch's checks of a transposed convolution's weight (C, O / groups, k...)."""
    _check_rank_and_dtype(x, weight)
    in_c = weight.shape[0]
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if in_c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if x.shape[1] != in_c:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {in_c} channels, but got "
                           f"{x.shape[1]} channels instead")
    out_c = weight.shape[1] * groups
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({x.dtype}) and bias type ({bias.dtype}) should be the "
                           "same: convert the bias (b.to(x.dtype)) or the input")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"bias to be 1-dimensional with {out_c} elements, but got bias of "
                           f"size {list(bias.shape)} instead")


class ConvTransposeNd(ConvNd):
    """What ``ConvTranspose1d`` and ``ConvTranspose2d`` share (PyTorch's
    ``_ConvTransposeNd``): the weight is (in_channels, out_channels / groups, k...),
    initialised as a convolution's (so fan_in is out_channels / groups times the kernel's
    size); ``forward(input, output_size=None)`` picks the output_padding that gives
    ``output_size``."""

    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (its last sides),
        PyTorch's rule and error."""
        if output_size is None:
            return self.output_padding
        n = self.dims
        sizes = list(output_size)
        if len(sizes) == n + 2 or (len(sizes) == n + 1 and input.ndim == n + 1):
            sizes = sizes[-n:]
        if len(sizes) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {n + 2} elements (got {len(sizes)})")
        spatial = list(input.shape[-n:])
        smallest = [(i - 1) * s - 2 * p + d * (k - 1) + 1 for i, s, p, d, k in zip(
            spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        largest = [low + s - 1 for low, s in zip(smallest, self.stride)]
        for size, low, high in zip(sizes, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {sizes}, but valid sizes range "
                                 f"from {smallest} to {largest} (for an input of "
                                 f"{tuple(input.shape[-n:])})")
        return tuple(size - low for size, low in zip(sizes, smallest))


class ConvTranspose2d(ConvTransposeNd):
    """A 2-D transposed convolution layer (see ``F.conv_transpose2d``): it grows an image
    (N, in_channels, H, W) by the stride, as DCGAN's generator and a decoder do."""

    def forward(self, input, output_size=None):
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(input, output_size), self.groups,
                                self.dilation)


class ConvTranspose1d(ConvTransposeNd):
    """A 1-D transposed convolution layer (see ``F.conv_transpose1d``)."""

    dims = 1

    def forward(self, input, output_size=None):
        return conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(input, output_size), self.groups,
                                self.dilation)
