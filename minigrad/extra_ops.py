"""PyTorch ops beyond the course's core set, for real tutorial code: ``log10``, ``log2``,
``log1p``, ``expm1`` (differentiable), ``dot``, ``multinomial``, ``histc`` and ``histogram``.

Each op is defined here once (forward, what it saves, its backward node under PyTorch's
name; the logarithms' nodes are in ``ops/pointwise.py``); ``Tensor`` and ``minigrad`` reach
them through thin delegates (``x.log1p()``, ``mg.log1p(x)``).
"""

from collections import namedtuple

import numpy as np

from .ops import linalg, pointwise
from .random import numpy_rng
from .tensor import Tensor, _wrap

__all__ = ["log10", "log2", "log1p", "expm1", "dot", "bmm", "multinomial", "histc", "histogram"]


# ------------------------------------------------------------------ logarithms and exponentials

def _elementwise(name, input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return op.run((input,), input._float_data())


def log10(input):
    """The base-10 logarithm of each element (integers give float32)."""
    return _elementwise("log10", input, pointwise.Log10Backward0)


def log2(input):
    """The base-2 logarithm of each element."""
    return _elementwise("log2", input, pointwise.Log2Backward0)


def log1p(input):
    """``log(1 + x)``, exact for tiny x where ``(1 + x).log()`` loses x to rounding."""
    return _elementwise("log1p", input, pointwise.Log1PBackward0)


def expm1(input):
    """``exp(x) - 1``, exact for tiny x where ``x.exp() - 1`` loses x to rounding."""
    return _elementwise("expm1", input, pointwise.Expm1Backward0)


# ------------------------------------------------------------------ dot

def dot(input, tensor):
    """The dot product of two 1-D tensors of the same length and dtype (a 0-dim tensor)."""
    for position, (name, value) in enumerate((("input", input), ("tensor", tensor)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"dot(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    a, b = input._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors "
                           "(for matrices use matmul or @)")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_scalar_name(a.dtype)} and {_scalar_name(b.dtype)}")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.size}] and src "
                           f"[{b.size}] to have the same number of elements, but got {a.size} "
                           f"and {b.size} elements respectively")
    return linalg.DotBackward0.run((input, tensor), a, b)


def bmm(input, mat2):
    """The products of two batches of matrices: (b, n, m) @ (b, m, p) -> (b, n, p), with
    no broadcasting (matmul broadcasts)."""
    for position, (name, value) in enumerate((("input", input), ("mat2", mat2)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"bmm(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got shape {list(a.shape)}")
    if b.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got shape {list(b.shape)}")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(a.dtype)} but found "
                           f"{_scalar_name(b.dtype)}")
    return linalg.BmmBackward0.run((input, mat2), a, b)


def _scalar_name(numpy_dtype):
    """PyTorch's C++ name of a dtype, as its errors print it: Float, Double, Long."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(np.dtype(numpy_dtype).name, str(numpy_dtype))


# ------------------------------------------------------------------ multinomial

def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices (int64) drawn with probabilities proportional to
    the non-negative weights in each row of ``input`` (1-D or 2-D). Without
    ``replacement`` a row's categories are all different: the weights of those already
    drawn are taken out (categories of weight 0 come only once the others are used up).

    The draws come from minigrad's generator, so they are not the numbers PyTorch draws,
    but they follow the same distribution."""
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_scalar_name(p.dtype)}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = p.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement: {num_samples} from {categories} categories (pass "
                           "replacement=True to draw a category more than once)")
    rows = p.reshape(-1, categories).astype(np.float64)
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if rows.shape[0] and np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = numpy_rng(generator)
    if replacement:
        samples = _with_replacement(rows, num_samples, rng)
    else:
        samples = _without_replacement(rows, num_samples, rng)
    return _wrap(samples.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


def _with_replacement(rows, num_samples, rng):
    """Inverse CDF: a uniform number u picks the first category whose cumulative weight
    exceeds u (a category of weight 0 is never picked)."""
    cdf = np.cumsum(rows, axis=1)
    cdf /= cdf[:, -1:]
    u = rng.random((rows.shape[0], num_samples))
    samples = np.empty(u.shape, dtype=np.int64)
    for i in range(rows.shape[0]):
        samples[i] = np.searchsorted(cdf[i], u[i], side="right")
    return samples


def _without_replacement(rows, num_samples, rng):
    """The exponential race (as PyTorch does it): each category gets weight / E with E an
    exponential draw, and the largest ``num_samples`` scores win. This is exactly drawing
    one at a time and taking the drawn ones out."""
    with np.errstate(divide="ignore"):
        scores = rows / rng.exponential(size=rows.shape)
    if num_samples == 1:  # the usual draw of one token from a model's probabilities
        return scores.argmax(axis=1)[:, None]
    return np.argsort(-scores, axis=1, kind="stable")[:, :num_samples]


# ------------------------------------------------------------------ histograms

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
        below = sum((first + k < end) & (edges[np.minimum(first + k, bins)] <= x)
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
                                  f"'{_scalar_name(x.dtype)}': use a float tensor (x.float())")
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
    return _wrap(_counts(values, low, high, bins).astype(x.dtype))


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
                                  f"'{_scalar_name(x.dtype)}': use a float tensor (x.float())")
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
    return Histogram(_wrap(hist), _wrap(np.array(edges, dtype=x.dtype)))


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

