"""2-D pooling (``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``; chapter 11's
CNN benchmark): each op's forward, what it saves and its backward, in one class.

Each pool looks at the same windows a convolution does, with one strided pass over the
input per kernel position (kh * kw passes, each over the whole batch). Every backward here
is linear in the gradient, and is itself an op whose backward is the forward pool again:
max pooling's backward sends each gradient to the element that was its window's maximum
(a scatter), whose backward picks those same elements (the pool at fixed positions);
average pooling's backward spreads each gradient over its window, whose backward is the
average pool. So ``create_graph=True`` records them, and second derivatives follow.

The ops take inputs of shape (N, C, H, W) or (C, H, W), already checked by
``minigrad.nn.pooling`` (which computes the geometry and PyTorch's errors).
"""

import numpy as np

from . import formulas
from .formulas import is_array
from .convolution import add_windows, pad_zeros
from .op import Op
from ..dtypes import scalar_name
from .tangents import transposed_backward

__all__ = ["MaxPool2DWithIndicesBackward0", "MaxPool2DWithIndicesBackwardBackward0",
           "AvgPool2DBackward0", "AvgPool2DBackwardBackward0", "AdaptiveAvgPool2DBackward0"]


def _batch(x):
    """(N, C, H, W) for an unbatched (C, H, W) array too."""
    return x[None] if x.ndim == 3 else x


def _array(value):
    return value if type(value) is np.ndarray else value._data


def _slices(k, kernel, stride, dilation, out_size):
    """Where kernel position k (= a * kw + b) of every window is in the padded plane."""
    (_, kw), (sh, sw), (dh, dw), (out_h, out_w) = kernel, stride, dilation, out_size
    a, b = divmod(k, kw)
    return (slice(a * dh, a * dh + sh * (out_h - 1) + 1, sh),
            slice(b * dw, b * dw + sw * (out_w - 1) + 1, sw))


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min if dtype.kind in "iu" else False


# --------------------------------------------------------------------------- max pooling

def window_max(padded, kernel, stride, dilation, out_size):
    """The largest value of each window and its kernel position (a * kw + b), a few
    strided passes per kernel position. As PyTorch, the first of equal values wins and a
    nan wins over numbers (the last nan, if several)."""
    parts = [padded[(...,) + _slices(k, kernel, stride, dilation, out_size)]
             for k in range(kernel[0] * kernel[1])]
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


class MaxPool2DWithIndicesBackward0(Op):
    """The largest value of each window; each output's gradient goes to that one element.
    ``geometry``: (pads, kernel, stride, dilation, out_size). With ``which`` given (the
    kernel position of each window's element), forward picks those elements instead: the
    backward of the scatter. ``found``: a list that receives ``which`` (return_indices)."""
    __slots__ = ("geometry",)

    def forward(self, x, geometry, which=None, found=None):
        self.geometry = geometry
        if which is None:
            pads, kernel, stride, dilation, out_size = geometry
            value, which = window_max(pad_zeros(_batch(x), pads, _lowest(x.dtype)), kernel,
                                      stride, dilation, out_size)
            value = value[0] if x.ndim == 3 else value
        else:
            value = pick(x, which, geometry)
        if found is not None:
            found.append(which)
        self.save_for_backward(which, x)  # x: changed in place, backward refuses (PyTorch's)
        return value

    def backward(self, grad, which, x):
        which = _array(which)
        if is_array(grad):
            return scatter_max(grad, which, self.geometry, self.input_shape(0))
        return MaxPool2DWithIndicesBackwardBackward0.run(
            (grad,), which=which, geometry=self.geometry, shape=self.input_shape(0))

    jvp = transposed_backward


def pick(x, which, geometry):
    """The element of each window of ``x`` that ``which`` names (zero in the padding)."""
    pads, kernel, stride, dilation, out_size = geometry
    padded = pad_zeros(_batch(x), pads)
    value = np.zeros(which.shape, x.dtype)
    for k in range(kernel[0] * kernel[1]):
        np.copyto(value, padded[(...,) + _slices(k, kernel, stride, dilation, out_size)],
                  where=which == k)
    return value[0] if x.ndim == 3 else value


def scatter_max(grad, which, geometry, shape):
    """Each gradient added to the element of ``shape`` that ``which`` names in its window:
    for each kernel position, the outputs whose element sat there add their gradient to
    that position's strided slice (kh * kw passes, as col2im)."""
    pads, kernel, stride, dilation, out_size = geometry
    (top, bottom), (left, right) = pads
    g = grad.reshape(which.shape)
    h, w = shape[-2:]
    target = np.zeros(which.shape[:2] + (h + top + bottom, w + left + right), grad.dtype)
    zero = np.zeros((), grad.dtype)
    for k in range(kernel[0] * kernel[1]):
        target[(...,) + _slices(k, kernel, stride, dilation, out_size)] += np.where(
            which == k, g, zero)
    return target[..., top:top + h, left:left + w].reshape(shape)


class MaxPool2DWithIndicesBackwardBackward0(Op):
    """Max pooling's backward as an op (for create_graph): the gradient scattered to the
    maxima; its backward picks the elements at the maxima again."""
    __slots__ = ("geometry",)

    def forward(self, grad, which, geometry, shape):
        self.geometry = geometry
        self.save_for_backward(which)
        return scatter_max(grad, which, geometry, shape)

    def backward(self, grad, which):
        which = _array(which)
        if is_array(grad):
            return pick(grad, which, self.geometry)
        return MaxPool2DWithIndicesBackward0.run((grad,), geometry=self.geometry, which=which)

    jvp = transposed_backward


# --------------------------------------------------------------------------- average pooling

def window_sums(padded, kernel, stride, out_size):
    """The sum of each window: one strided add per kernel position (faster than summing
    the windows' view)."""
    sums = None
    for k in range(kernel[0] * kernel[1]):
        part = padded[(...,) + _slices(k, kernel, stride, (1, 1), out_size)]
        sums = part.astype(np.float64 if padded.dtype.kind != "f" else padded.dtype) \
            if sums is None else sums + part
    return sums


def average(x, geometry):
    """The average pool of ``x``: each window's sum over its divisor."""
    pads, kernel, stride, out_size, divisor = geometry
    sums = window_sums(pad_zeros(_batch(x), pads), kernel, stride, out_size)
    if x.dtype.kind == "f":
        value = (sums / divisor).astype(x.dtype, copy=False)
    else:  # integers divide as C does: toward zero
        value = np.trunc(sums / divisor).astype(x.dtype)
    return value[0] if x.ndim == 3 else value


def spread(grad, geometry, shape):
    """The backward of the average pool: each gradient, divided by its window's divisor,
    added to every element of the window."""
    pads, kernel, stride, out_size, divisor = geometry
    (top, bottom), (left, right) = pads
    h, w = shape[-2:]
    g = (grad.reshape((-1, shape[-3]) + out_size) / divisor).astype(grad.dtype, copy=False)
    windows = np.broadcast_to(g[:, :, None, None], g.shape[:2] + kernel + out_size)
    target = np.zeros(g.shape[:2] + (h + top + bottom, w + left + right), grad.dtype)
    add_windows(target, windows, stride, (1, 1))
    return target[..., top:top + h, left:left + w].reshape(shape)


class AvgPool2DBackward0(Op):
    """The mean of each window (its sum over a divisor, PyTorch's count); each output's
    gradient, divided by the divisor, goes to every element of the window. ``geometry``:
    (pads, kernel, stride, out_size, divisor), the divisor a number or one per window."""
    __slots__ = ("geometry",)

    def forward(self, x, geometry):
        if x.dtype.kind not in "f" and x.dtype != np.int64:  # PyTorch's kernel: floats, long
            raise NotImplementedError(f'"avg_pool2d" not implemented for '
                                      f"'{scalar_name(x.dtype)}': use a float tensor "
                                      "(x.float())")
        self.geometry = geometry
        self.save_for_backward(x)  # changed in place, backward refuses (as PyTorch's)
        return average(x, geometry)

    def backward(self, grad, x):
        if is_array(grad):
            return spread(grad, self.geometry, self.input_shape(0))
        return AvgPool2DBackwardBackward0.run((grad,), geometry=self.geometry,
                                              shape=self.input_shape(0))

    jvp = transposed_backward


class AvgPool2DBackwardBackward0(Op):
    """Average pooling's backward as an op (for create_graph): its backward is the
    average pool."""
    __slots__ = ("geometry",)

    def forward(self, grad, geometry, shape):
        self.geometry = geometry
        return spread(grad, geometry, shape)

    def backward(self, grad):
        if is_array(grad):
            return average(grad, self.geometry)
        return AvgPool2DBackward0.run((grad,), geometry=self.geometry)

    jvp = transposed_backward


# --------------------------------------------------------------------------- adaptive pooling

def adaptive_weights(n, m, dtype):
    """The (m, n) matrix that averages n positions into m: row i has 1/len over PyTorch's
    window i, from floor(i*n/m) to ceil((i+1)*n/m)."""
    weights = np.zeros((m, n), dtype=dtype)
    for i in range(m):
        start, end = (i * n) // m, -(-((i + 1) * n) // m)
        weights[i, start:end] = 1.0 / (end - start)
    return weights


def adaptive_windows(in_size, out_size):
    """(i, j, rows, cols) of each of PyTorch's adaptive windows: output (i, j) averages
    input rows ``rows`` and columns ``cols`` (slices)."""
    (h, w), (m_h, m_w) = in_size, out_size
    for i in range(m_h):
        rows = slice((i * h) // m_h, -(-((i + 1) * h) // m_h))
        for j in range(m_w):
            yield i, j, rows, slice((j * w) // m_w, -(-((j + 1) * w) // m_w))


def window_means(x, out_size):
    """The mean of each of PyTorch's adaptive windows, one window at a time (for inputs
    with inf or nan, which only their own windows may see)."""
    out = np.empty(x.shape[:-2] + tuple(out_size), x.dtype)
    for i, j, rows, cols in adaptive_windows(x.shape[-2:], out_size):
        out[..., i, j] = x[..., rows, cols].mean(axis=(-1, -2))
    return out


def window_spread(grad, in_size):
    """The backward of ``window_means``: each output's gradient shared out over its own
    window only (a product with the averaging matrices would turn inf * 0 into nan
    outside it)."""
    out = np.zeros(grad.shape[:-2] + tuple(in_size), grad.dtype)
    for i, j, rows, cols in adaptive_windows(in_size, grad.shape[-2:]):
        count = (rows.stop - rows.start) * (cols.stop - cols.start)
        out[..., rows, cols] += grad[..., i, j, None, None] / count
    return out


class AdaptiveAvgPool2DBackward0(Op):
    """out = A_h x A_w^T per plane (A_h, A_w the averaging matrices of the two sides), so
    d(x) = A_h^T d(out) A_w: linear, with constant matrices."""
    __slots__ = ()
    constants = (0, 1)  # the averaging matrices A_h, A_w

    def forward(self, x, out_size):
        rows = adaptive_weights(x.shape[-2], out_size[0], x.dtype)
        cols = adaptive_weights(x.shape[-1], out_size[1], x.dtype)
        self.save_for_backward(rows, cols)
        if not np.isfinite(x).all():  # inf * 0 would spread nan past a window: window means
            return window_means(x, out_size)
        return np.einsum("ih,...hw,jw->...ij", rows, x, cols, optimize=True)

    def backward(self, grad, rows, cols):
        if is_array(grad) and not np.isfinite(grad).all():  # (as forward: windows alone)
            return window_spread(grad, (rows.shape[1], cols.shape[1]))
        return formulas.transpose_last(rows) @ grad @ cols

    jvp = transposed_backward
