"""Making tensors: ``tensor``, ``zeros``, ``randn``, ``arange``, ... (chapters 2 and 5).

Signatures follow PyTorch: sizes as ``zeros(2, 3)`` or ``zeros((2, 3))``, keyword
``dtype``, ``requires_grad`` and ``device`` (which must be the CPU), and a ``generator``
for the random ones.
"""

import numpy as np

from . import dtypes
from .random import numpy_rng
from ._tensor import Tensor, as_array, wrap
from .tensor_device import check_device, shape_args
from .dtypes import scalar_name

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye",
    "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
    "randn", "rand", "randint", "randperm", "randn_like", "rand_like", "normal",
]


def _finish(array, requires_grad, device):
    check_device(device)
    t = wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_shape(size):
    """The shape of a new tensor: integers (a float is refused), none negative."""
    shape = shape_args(size)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: {list(shape)}")
    return shape


def _size(name, size, keyword):
    """The shape of ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(keyword, (tuple, list)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                            f"{type(keyword).__name__}")
        size = (keyword,)
    return _new_shape(size)


def _float(dtype):
    return dtypes.to_numpy(dtype) if dtype is not None else dtypes.DEFAULT_FLOAT


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (numbers, nested lists, a numpy array).

    Python floats give float32, ints int64, bools bool; a numpy array keeps its dtype.
    """
    return _finish(as_array(data, dtype), requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a numpy array (or tensor) when it can."""
    if isinstance(data, Tensor) and dtype is None:
        return data
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.to_numpy(dtype) == data.dtype):
        return _finish(data, False, device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor that shares ``array``'s memory and keeps its dtype (float64 stays float64)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy(array.dtype)
    return wrap(array)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False):
    """Zeros of the shape ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    return _finish(np.zeros(_size("zeros", args, size), _float(dtype)), requires_grad, device)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.ones(_size("ones", args, size), _float(dtype)), requires_grad, device)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False):
    """Like PyTorch's ``empty`` but filled with zeros, so results never depend on garbage."""
    return zeros(_size("empty", args, size), dtype=dtype, device=device,
                 requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = as_array(fill_value).dtype
    return _finish(np.full(_new_shape((size,)), fill_value, dtypes.to_numpy(dtype)),
                   requires_grad, device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.eye(n, m, dtype=_float(dtype)), requires_grad, device)


def _like(t, dtype):
    return dtypes.to_numpy(dtype) if dtype is not None else t._data.dtype


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad, device)


def ones_like(input, dtype=None, device=None, requires_grad=False):
    return _finish(np.ones(input._data.shape, _like(input, dtype)), requires_grad, device)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)),
                   requires_grad, device)


def arange(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """``arange(5)`` -> 0..4 (int64); any float argument gives float32, as in PyTorch."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = dtypes.int64 if is_int else dtypes.float32
    numpy_dtype = dtypes.to_numpy(dtype)
    values = np.arange(start, end, step, dtype=np.float64 if numpy_dtype.kind == "f" else None)
    return _finish(values.astype(numpy_dtype), requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    return _finish(np.linspace(start, end, int(steps)).astype(_float(dtype)), requires_grad, device)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples, drawn from ``generator`` (the default one if None)."""
    values = numpy_rng(generator).standard_normal(_size("randn", args, size))
    return _finish(values.astype(_float(dtype)), requires_grad, device)


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    values = numpy_rng(generator).random(_size("rand", args, size))
    return _finish(values.astype(_float(dtype)), requires_grad, device)


def normal(mean, std, size, generator=None, dtype=None, device=None, requires_grad=False):
    values = numpy_rng(generator).normal(mean, std, _new_shape((size,)))
    return _finish(values.astype(_float(dtype)), requires_grad, device)


def randint(low=0, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers in [low, high): ``randint(10, (3,))``, ``randint(0, 10, (3,))``,
    ``randint(10, size=(3,))`` or ``randint(low=0, high=10, size=(3,))``."""
    if size is None:
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high is None or size is None:
        raise TypeError("randint() needs high and size, e.g. randint(0, 10, (3,))")
    values = numpy_rng(generator).integers(low, high, _new_shape((size,)))
    numpy_dtype = dtypes.to_numpy(dtype) if dtype is not None else dtypes.DEFAULT_INT
    return _finish(values.astype(numpy_dtype), requires_grad, device)


def randperm(n, generator=None, dtype=None, device=None, requires_grad=False):
    """A random ordering of 0..n-1 (what a shuffling DataLoader uses)."""
    values = numpy_rng(generator).permutation(int(n))
    numpy_dtype = dtypes.to_numpy(dtype) if dtype is not None else dtypes.DEFAULT_INT
    return _finish(values.astype(numpy_dtype), requires_grad, device)


def randn_like(input, generator=None, dtype=None, requires_grad=False):
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 requires_grad=requires_grad)


def rand_like(input, generator=None, dtype=None, requires_grad=False):
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


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
                           f"{scalar_name(p.dtype)}")
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
    return wrap(samples.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


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


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("multinomial",)
METHODS = ("multinomial", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",)


# ------------------------------------------------------------------ new tensors like another

def like_dtype(self, dtype):
    return self.dtype if dtype is None else dtype


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=like_dtype(self, dtype), requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return ones(*size, dtype=like_dtype(self, dtype), requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return empty(*size, dtype=like_dtype(self, dtype), requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=like_dtype(self, dtype), requires_grad=requires_grad)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor of ``data`` (copied, never in the graph) with this tensor's dtype."""
    if isinstance(data, Tensor):
        data = data.detach()._data.copy()
    return tensor(data, dtype=like_dtype(self, dtype), requires_grad=requires_grad)
