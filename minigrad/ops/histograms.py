"""Histograms of a tensor's values (chapter 5): ``histc`` and ``histogram``, as PyTorch
counts them. Counting has no gradient, so there is no op class here: only the functions.
"""

import builtins  # (the bins are counted with Python's sum over numpy masks)
from collections import namedtuple

import numpy as np

from .._tensor import Tensor, wrap
from ..dtypes import scalar_name


Histogram = namedtuple("histogram", ["hist", "bin_edges"])


def _counts(x, left, right, bins, weight=None, edges=None):
    """PyTorch's histogram kernel: elements outside [left, right] are left out; the bin is
    found by one division in the input's dtype (checked against ``edges`` when given),
    and the right end belongs to the last bin."""
    keep = (x >= left) & (x <= right)
    x = x[keep]
    if right > left:
        pos = ((x - left) * x.dtype.type(bins) / (right - left)).astype(np.int64)
    else:
        pos = np.zeros(x.shape, np.int64)
    if edges is not None:
        # PyTorch's local search: the last edge <= x among edges pos-1, pos and pos+1
        first = np.maximum(pos - 1, 0)
        end = np.minimum(pos + 2, bins + 1)
        below = builtins.sum((first + k < end) & (edges[np.minimum(first + k, bins)] <= x)
                    for k in range(3))
        pos = first + below - 1
    pos = np.minimum(pos, bins - 1)
    w = None if weight is None else weight[keep]
    return np.bincount(pos, weights=w, minlength=bins)[:bins]


def histc(input, bins=100, min=0, max=0):
    """A histogram of the elements in ``bins`` equal bins from ``min`` to ``max`` (both 0:
    the smallest and largest element). Elements outside are left out; the result has the
    input's dtype."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{scalar_name(x.dtype)}': use a float tensor (x.float())")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = x.dtype.type(min), x.dtype.type(max)
    if low == high and x.size:
        low, high = x.min(), x.max()
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    values = x.reshape(-1)
    return wrap(_counts(values, low, high, bins).astype(x.dtype))


def _linspace(low, high, steps, dtype):
    """PyTorch's linspace: from both ends toward the middle, in ``dtype``."""
    low, high = dtype.type(low), dtype.type(high)
    step = (high - low) / dtype.type(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, low + step * i.astype(dtype),
                    high - step * (steps - 1 - i).astype(dtype)).astype(dtype)


def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: how many elements (or how much ``weight``) fall in each bin.
    ``bins`` is a number of equal bins over ``range`` (default: the smallest to the largest
    element) or a 1-D tensor of increasing edges. ``density=True`` scales the counts so
    that they integrate to 1 over the edges."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{scalar_name(x.dtype)}': use a float tensor (x.float())")
    values = x.reshape(-1)
    w = None
    if weight is not None:
        if weight._data.dtype != x.dtype:
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({x.dtype}), and "
                f"weight({weight._data.dtype})")
        w = weight._data.reshape(-1).astype(np.float64)
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {edges.ndim} dimensions in the bins tensor for dimension 0")
        if edges.dtype != x.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype {x.dtype} and bins "
                               f"with dtype {edges.dtype}")
        count = edges.size - 1
        keep = (values >= edges[0]) & (values <= edges[-1])
        pos = np.minimum(np.searchsorted(edges, values[keep], side="right") - 1, count - 1)
        hist = np.bincount(pos, weights=None if w is None else w[keep], minlength=count)
        hist = hist[:count]
    else:
        count = int(bins)
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                               "dimension 0")
        low, high = _range(values, range)
        edges = _linspace(low, high, count + 1, x.dtype)
        hist = _counts(values, edges[0], edges[-1], count, w, edges)
    hist = hist.astype(x.dtype)
    if density:
        widths = np.diff(edges)
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = (hist / (hist.sum() * widths)).astype(x.dtype)
    return Histogram(wrap(hist), wrap(np.array(edges, dtype=x.dtype)))


def _range(values, range):
    """The outer edges of a histogram with a number of bins, as PyTorch picks them."""
    if range is not None:
        low, high = (float(v) for v in range)
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{low:g} max {high:g} for dimension 0")
    elif values.size:
        low, high = values.min(), values.max()
    else:
        low, high = 0.0, 1.0
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low}, {high}] is not "
                           "finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return low, high


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("histc", "histogram",)
METHODS = ("histc", "histogram",)
