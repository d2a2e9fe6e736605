"""Resizing images and signals (``F.interpolate``, ``nn.Upsample``: the decoders, U-Nets
and GAN generators of the course's "next programs"): each op's forward, backward and JVP in
one class named like PyTorch's node.

Nearest and (bi)linear interpolation are separable linear maps: along each resized side, out
= W @ in with W an (out, in) matrix whose row i holds the weights of the input positions
output i reads (a single 1 for nearest; two weights summing to 1 for linear). So an image
(N, C, H, W) becomes ``Wh @ x @ Ww^T``, and its gradient ``Wh^T @ g @ Ww``: matrix products
on arrays, or recorded ones on Tensors (a second derivative is free: the op is linear). The
matrices, PyTorch's source-index rules (``area_pixel_compute_source_index``), are built
here from the sizes and scales; the checks of the arguments are in ``nn/upsampling.py``.
"""

import numpy as np

from .formulas import is_array
from .op import Op
from .tangents import auto_linear

__all__ = ["Resample", "UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0",
           "UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0",
           "UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0", "NODES",
           "weight_matrix"]


def _scale(in_size, out_size, align_corners, scale):
    """PyTorch's ``area_pixel_compute_scale``: how far apart the sources of two neighbouring
    outputs are (``scale`` is 1 / scale_factor when one was given and not recomputed)."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return scale if scale is not None and scale > 0 else in_size / out_size


def weight_matrix(mode, in_size, out_size, align_corners=False, scale=None, dtype=np.float32):
    """The (out_size, in_size) matrix of one side: row i, the weights output i gives each
    input position."""
    s = _scale(in_size, out_size, align_corners, scale)
    rows = np.arange(out_size)
    if in_size == out_size:  # PyTorch's kernels copy a side whose size does not change
        return np.eye(out_size, dtype=dtype)
    matrix = np.zeros((out_size, in_size), dtype)
    if mode in ("nearest", "nearest-exact"):  # (in float, as PyTorch computes the index)
        offset = np.float32(0.5 if mode == "nearest-exact" else 0.0)
        source = np.floor((rows.astype(np.float32) + offset) * np.float32(s)).astype(np.int64)
        if mode == "nearest" and out_size == 2 * in_size:
            source = rows >> 1
        matrix[rows, np.minimum(source, in_size - 1)] = 1
        return matrix
    # linear: the source's two neighbours, weighted by distance, computed in the input's
    # precision (PyTorch's opmath: float for float32, double for float64)
    real = np.float64 if dtype == np.float64 else np.float32
    s = real(s)
    if align_corners:
        source = rows.astype(real) * s
    else:
        source = np.maximum((rows.astype(real) + real(0.5)) * s - real(0.5), real(0))
    left = np.floor(source).astype(np.int64)
    right = left + (left < in_size - 1)
    weight_right = (source - left).astype(dtype)
    np.add.at(matrix, (rows, left), 1 - weight_right)
    np.add.at(matrix, (rows, right), weight_right)
    return matrix


class Resample(Op):
    """out = Wh @ x @ Ww^T (two sides) or x @ Wl^T (one side): ``matrices`` holds one
    (out, in) weight matrix per resized side (the last one or two). The subclasses are
    PyTorch's node names for each mode."""
    __slots__ = ("matrices",)

    def forward(self, x, matrices):
        self.matrices = matrices
        out = x @ matrices[-1].T
        if len(matrices) == 2:
            out = matrices[0] @ out
        return np.ascontiguousarray(out, dtype=x.dtype)

    def backward(self, grad):
        first, last = self.matrices[0], self.matrices[-1]
        if not is_array(grad):  # constants of the recorded formula
            first, last = self.wrap(first), self.wrap(last)
        grad = grad @ last
        if len(self.matrices) == 2:
            grad = first.mT @ grad if not is_array(grad) else first.T @ grad
        return grad

    jvp = auto_linear


class UpsampleNearest1DBackward0(Resample):
    """``F.interpolate(x, mode='nearest')`` of a signal (N, C, L)."""
    __slots__ = ()


class UpsampleNearest2DBackward0(Resample):
    """``F.interpolate(x, mode='nearest')`` of an image (N, C, H, W)."""
    __slots__ = ()


class UpsampleNearestExact1DBackward0(Resample):
    """``mode='nearest-exact'`` of a signal: the nearest source of each output's centre."""
    __slots__ = ()


class UpsampleNearestExact2DBackward0(Resample):
    """``mode='nearest-exact'`` of an image."""
    __slots__ = ()


class UpsampleLinear1DBackward0(Resample):
    """``mode='linear'`` of a signal (N, C, L)."""
    __slots__ = ()


class UpsampleBilinear2DBackward0(Resample):
    """``mode='bilinear'`` of an image (N, C, H, W)."""
    __slots__ = ()


# (mode, number of resized sides) -> the node
NODES = {("nearest", 1): UpsampleNearest1DBackward0, ("nearest", 2): UpsampleNearest2DBackward0,
         ("nearest-exact", 1): UpsampleNearestExact1DBackward0,
         ("nearest-exact", 2): UpsampleNearestExact2DBackward0,
         ("linear", 1): UpsampleLinear1DBackward0, ("bilinear", 2): UpsampleBilinear2DBackward0}

