"""Convolution and constant padding (``F.conv2d``, ``F.pad``; chapter 6's layers, chapter
11's CNN benchmark): each op's forward, what it saves and its backward, in one class.

A convolution is a matrix product once every window of the input is laid out as a column
("im2col", PyTorch's ``F.unfold``): for each sample, a (C * kh * kw, out_h * out_w) matrix
whose column p holds the window of output position p. ``sliding_window_view`` gives the
windows without copying; one reshape copies them into that layout, and one (batched)
matmul per group multiplies the weight (out_channels, C * kh * kw) by it.

Backward is matmuls and the two layout ops, which are each other's backward: im2col
(``Im2ColBackward0``) and "col2im" (``Col2ImBackward0``, ``F.fold``), which adds each
column back to where its window came from. So under ``create_graph=True`` the gradient of
a convolution is made of recorded ops and can be differentiated again; a plain
``backward()`` runs the same formula on arrays.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import formulas
from .formulas import is_array
from .op import Op
from .tangents import transposed_backward

__all__ = ["ConvolutionBackward0", "Im2ColBackward0", "Col2ImBackward0",
           "ConstantPadNdBackward0", "as_plane", "windows", "add_windows", "pad_zeros",
           "constant_pad",
           "im2col", "col2im", "unfold", "fold", "padded"]


# --------------------------------------------------------------------------- on arrays

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


def out_size(size, kernel, pads, stride, dilation):
    """The (out_h, out_w) of sliding ``kernel`` over a plane of ``size`` padded by ``pads``."""
    return tuple((n + p0 + p1 - d * (k - 1) - 1) // s + 1
                 for n, k, (p0, p1), s, d in zip(size, kernel, pads, stride, dilation))


def im2col(x, kernel, pads, stride, dilation):
    """(N, C, H, W) -> (N, C * kh * kw, out_h * out_w): column p is the window of output
    position p (rows in the order channel, kernel row, kernel column)."""
    view = windows(pad_zeros(x, pads), kernel, stride, dilation)
    n, c, out_h, out_w = view.shape[:4]
    return view.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kernel[0] * kernel[1],
                                                      out_h * out_w)


def col2im(cols, size, kernel, pads, stride, dilation):
    """The backward of ``im2col``: (N, C * kh * kw, L) -> (N, C, H, W), ``size`` = (H, W),
    each column added back over its window (the padding is dropped)."""
    (kh, kw), ((top, bottom), (left, right)) = kernel, pads
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    out_h, out_w = out_size(size, kernel, pads, stride, dilation)
    target = np.zeros((n, c, size[0] + top + bottom, size[1] + left + right), cols.dtype)
    add_windows(target, cols.reshape(n, c, kh, kw, out_h, out_w), stride, dilation)
    return target[:, :, top:top + size[0], left:left + size[1]]


def constant_pad(a, pad, value):
    """numpy pad where ``pad`` lists (before, after) from the last dim back; a negative
    amount crops."""
    pairs = [(0, 0)] * (a.ndim - len(pad) // 2) + [
        (pad[i], pad[i + 1]) for i in range(len(pad) - 2, -1, -2)]
    grown = np.pad(a, [(max(lo, 0), max(hi, 0)) for lo, hi in pairs], constant_values=value)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(pairs, grown.shape))
    return grown[crop].copy()


# --------------------------------------------------------------------------- on arrays or Tensors

def unfold(x, geometry):
    """im2col of an array, or of a Tensor as a recorded op. ``geometry``: (kernel, pads,
    stride, dilation)."""
    if is_array(x):
        return im2col(x, *geometry)
    return Im2ColBackward0.run((x,), geometry=geometry)


def fold(cols, size, geometry):
    """col2im of an array, or of a Tensor as a recorded op."""
    if is_array(cols):
        return col2im(cols, size, *geometry)
    return Col2ImBackward0.run((cols,), size=size, geometry=geometry)


def padded(x, pad, value=0):
    """``x`` padded (or cropped, by negative amounts) as ``F.pad`` does it."""
    if is_array(x):
        return constant_pad(x, pad, value)
    return ConstantPadNdBackward0.run((x,), pad=pad, value=value)


# --------------------------------------------------------------------------- the ops

class Im2ColBackward0(Op):
    """Every window of x as a column (``F.unfold``); its backward adds them back (col2im)."""
    __slots__ = ("geometry",)

    def forward(self, x, geometry):
        self.geometry = geometry
        return im2col(x, *geometry)

    def backward(self, grad):
        return fold(grad, self.input_shape(0)[2:], self.geometry)

    jvp = transposed_backward


class Col2ImBackward0(Op):
    """Each column added back over its window (``F.fold``); its backward is im2col."""
    __slots__ = ("geometry",)

    def forward(self, cols, size, geometry):
        self.geometry = geometry
        return col2im(cols, size, *geometry)

    def backward(self, grad):
        return unfold(grad, self.geometry)

    jvp = transposed_backward


def as_plane(a):
    """A 1-d convolution's (N, C, L) input or (O, C, k) weight as a plane of height 1
    (N, C, 1, L): an array, or a Tensor as a recorded view."""
    return a[:, :, None] if is_array(a) else a.unsqueeze(2)


class ConvolutionBackward0(Op):
    """out = W @ im2col(x) + b, per sample and group. d(x): W^T times the gradient, put
    back window by window (col2im); d(W): the gradient times the window matrix, summed
    over the batch; d(b): the gradient summed over the batch and the positions.
    ``geometry``: (kernel, pads, stride, dilation), pairs. A 1-d convolution (``F.conv1d``:
    x (N, C, L), weight (O, C / groups, k)) is the 2-d one on planes of height 1, with a
    geometry of height 1 too; its output and gradients keep the 1-d shapes.

    ``transposed`` (the output's (H, W), or None): the transposed convolution
    (``F.conv_transpose2d``, weight (C, O / groups, kh, kw); its geometry's pads are
    (padding, padding - output_padding)), the backward of a convolution
    with respect to its input, which PyTorch records under the same node: out =
    col2im(W^T @ x) + b; d(x) = W @ im2col(g), d(W) = x @ im2col(g)^T, d(b) the sums of g."""
    __slots__ = ("geometry", "groups", "transposed")

    def forward(self, x, weight, bias, geometry, groups, transposed=None):
        self.geometry, self.groups, self.transposed = geometry, groups, transposed
        if x.ndim == 3:
            self.save_for_backward(x, weight, None)
            value = self.forward(x[:, :, None], weight[:, :, None], bias, geometry, groups,
                                 transposed)
            self.save_for_backward(x, weight, self.saved[2])
            return value[:, :, 0]
        if transposed is not None:
            self.save_for_backward(x, weight, None)
            return self.forward_transposed(x, weight, bias)
        n, out_c = x.shape[0], weight.shape[0]
        out_h, out_w = out_size(x.shape[2:], *geometry)
        if x.shape[1] == 0:  # no input channels: PyTorch's output has none either
            self.save_for_backward(x, weight, None)
            return np.zeros((n, 0, out_h, out_w), np.result_type(x, weight))
        cols = im2col(x, *geometry)  # (N, C * kh * kw, out_h * out_w)
        w2 = weight.reshape(out_c, -1)
        if groups == 1:
            value = np.matmul(w2, cols)
        else:
            value = np.empty((n, out_c, out_h * out_w), dtype=np.result_type(cols, w2))
            group_out, group_k = out_c // groups, w2.shape[1]
            for i in range(groups):
                rows = slice(i * group_out, (i + 1) * group_out)
                value[:, rows] = np.matmul(w2[rows], cols[:, i * group_k:(i + 1) * group_k])
        if bias is not None:
            value += bias[:, None]
        self.save_for_backward(x, weight, cols)
        return value.reshape(n, out_c, out_h, out_w)

    def backward(self, grad, x, weight, cols):
        if grad.ndim == 3:  # 1-d: the 2-d gradients of the planes, back to the 1-d shapes
            grad_x, grad_w, grad_b = self.backward(as_plane(grad), as_plane(x),
                                                   as_plane(weight), cols)
            return (None if grad_x is None else grad_x.reshape(*self.input_shape(0)),
                    None if grad_w is None else grad_w.reshape(*self.input_shape(1)), grad_b)
        if self.transposed is not None:
            return self.backward_transposed(grad, x, weight)
        if x.shape[1] == 0:  # no input channels: every gradient is zeros
            dtype = (grad if is_array(grad) else grad._data).dtype
            zeros = [np.zeros(self.input_shape(i), dtype) if needed else None
                     for i, needed in enumerate(self.needs_input_grad)]
            return tuple(z if z is None or is_array(grad) else self.wrap(z) for z in zeros)
        # one matmul over the groups as a batch axis: (N, G, out_c / G, L) and (G, out_c / G, K)
        groups = self.groups
        n, out_c, out_h, out_w = grad.shape
        g = grad.reshape(n, groups, out_c // groups, out_h * out_w)
        w = weight.reshape(groups, out_c // groups, -1)
        needs_x, needs_w, needs_b = self.needs_input_grad
        grad_x = grad_w = grad_b = None
        if needs_x:
            # (explicit sizes, not -1: an empty batch must reshape too)
            grad_cols = (formulas.transpose_last(w) @ g).reshape(n, groups * w.shape[2],
                                                                 out_h * out_w)
            grad_x = fold(grad_cols, x.shape[2:], self.geometry)
        if needs_w:
            if not is_array(grad):  # the windows of x as a recorded function of x
                cols = unfold(x, self.geometry)
            c = cols.reshape(n, groups, cols.shape[1] // groups, out_h * out_w)
            grad_w = formulas.sum_over(g @ formulas.transpose_last(c), (0,)).reshape(
                *weight.shape)
        if needs_b:
            grad_b = formulas.sum_over(grad, (0, 2, 3))
        return grad_x, grad_w, grad_b

    def transposed_geometry(self):
        """The geometry of the convolution whose input-gradient this transposed one is, and
        the rows and columns at the end of the output that no window reaches. Its pads are
        (padding, padding - output_padding) per side; where that is negative, it is 0 and
        the difference is the extra rows (columns) of zeros."""
        kernel, pads, stride, dilation = self.geometry
        clipped = tuple((top, max(bottom, 0)) for top, bottom in pads)
        extra = tuple(max(-bottom, 0) for _, bottom in pads)
        return (kernel, clipped, stride, dilation), extra

    def forward_transposed(self, x, weight, bias):
        """col2im of W^T @ x, per sample and group: each input position spreads its
        channels, weighted by the kernel, over the window it stands for."""
        groups, (n, in_c, h, w) = self.groups, x.shape
        kh, kw = weight.shape[2:]
        out_c = weight.shape[1] * groups
        wg = weight.reshape(groups, in_c // groups, -1)  # (G, C / G, O / G * kh * kw)
        xg = x.reshape(n, groups, in_c // groups, h * w)
        cols = np.matmul(wg.transpose(0, 2, 1), xg).reshape(n, out_c * kh * kw, h * w)
        geometry, extra = self.transposed_geometry()
        core = tuple(n - e for n, e in zip(self.transposed, extra))
        value = col2im(cols, core, *geometry)
        if any(extra):  # rows and columns no window reaches (output_padding past padding)
            value = constant_pad(value, (0, extra[1], 0, extra[0]), 0)
        if bias is not None:
            value = value + bias[:, None, None]
        return np.ascontiguousarray(value, dtype=np.result_type(x, weight))

    def backward_transposed(self, grad, x, weight):
        groups = self.groups
        n, in_c, h, w = x.shape
        geometry, extra = self.transposed_geometry()
        reached = padded(grad, (0, -extra[1], 0, -extra[0])) if any(extra) else grad
        g_cols = unfold(reached, geometry)  # (N, O * kh * kw, H * W)
        g = g_cols.reshape(n, groups, g_cols.shape[1] // groups, h * w)
        needs_x, needs_w, needs_b = self.needs_input_grad
        grad_x = grad_w = grad_b = None
        if needs_x:
            wg = weight.reshape(groups, in_c // groups, g.shape[2])
            grad_x = (wg @ g).reshape(n, in_c, h, w)
        if needs_w:
            xg = x.reshape(n, groups, in_c // groups, h * w)
            grad_w = formulas.sum_over(xg @ formulas.transpose_last(g), (0,)).reshape(
                *weight.shape)
        if needs_b:
            grad_b = formulas.sum_over(grad, (0, 2, 3))
        return grad_x, grad_w, grad_b

    jvp = transposed_backward


class ConstantPadNdBackward0(Op):
    """``F.pad`` in constant mode: the gradient is cropped back (padded by minus the
    amounts), itself a constant pad."""
    __slots__ = ("pad",)

    def forward(self, a, pad, value=0):
        self.pad = pad
        return constant_pad(a, pad, value).astype(a.dtype, copy=False)

    def backward(self, grad):
        return padded(grad, [-p for p in self.pad])

    jvp = transposed_backward
