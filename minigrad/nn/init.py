"""Weight initialisation, as ``torch.nn.init`` (chapter 6). Every function works in place,
without recording, and returns the tensor."""

import math
import warnings

import numpy as np

from ..graph import no_grad
from ..random import numpy_rng
from .._tensor import wrap

__all__ = ["uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_", "eye_",
           "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
           "orthogonal_", "calculate_gain"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d",
               "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def _fans(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans  # PyTorch's (private) name, which some code calls


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor):
    """PyTorch's kaiming_* leave a tensor without elements alone, with a warning."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def calculate_gain(nonlinearity, param=None):
    """The factor by which the kaiming and xavier functions scale their spread for a layer
    followed by ``nonlinearity`` (1 for linear layers and convolutions, 5/3 for tanh, ...)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            slope = param  # True/False are ints too: refused, as in PyTorch
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # PyTorch's value, found empirically
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std²) restricted to [a, b], drawn as PyTorch does: when most of the normal
    lies in [a, b], values outside are drawn again until none is; otherwise values drawn
    uniformly in [a, b] are kept with probability density / peak density (rejection)."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    rng = numpy_rng(generator)
    dtype, shape = tensor._data.dtype, tensor._data.shape
    p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
    if p > 0.3:
        lo, hi = dtype.type(a), dtype.type(b)  # the bounds as the tensor's dtype holds them
        result = rng.normal(mean, std, shape).astype(dtype)
        outside = (result < lo) | (result > hi)
        while outside.any():
            result[outside] = rng.normal(mean, std, int(outside.sum())).astype(dtype)
            outside = (result < lo) | (result > hi)
    else:
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={a} > to={b}")
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        result = np.empty(shape, dtype)
        pending = np.ones(shape, dtype=bool)
        while pending.any():
            n = int(pending.sum())
            candidates = rng.uniform(a, b, n).astype(dtype)
            log_ratio = -0.5 * ((candidates - mean) / std) ** 2 - log_peak
            accepted = ~(np.log(rng.uniform(size=n)).astype(dtype) > log_ratio)
            where = np.flatnonzero(pending)[accepted]
            result.flat[where] = candidates[accepted]
            pending.flat[where] = False
    with no_grad():
        return tensor.copy_(wrap(result))


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    """The identity matrix in a 2-D tensor (ones on the diagonal of a rectangular one)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(wrap(np.eye(*tensor.shape, dtype=tensor._data.dtype)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Uniform in ±gain·sqrt(3/fan). nn.Linear uses a=sqrt(5): bound = 1/sqrt(fan_in)."""
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator=generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Normal with standard deviation gain/sqrt(fan)."""
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator=generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Normal with standard deviation gain·sqrt(2/(fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator=generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix times ``gain``, from the QR decomposition of a normal one,
    as PyTorch does; dimensions after the first are flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = numpy_rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q *= np.sign(np.diag(r))  # so that q is uniform over the orthogonal matrices
    if rows < cols:
        q = q.T
    with no_grad():  # two in-place ops, as PyTorch's (two versions)
        return tensor.copy_(wrap(q.reshape(tensor.shape))).mul_(gain)
