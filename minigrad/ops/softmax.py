"""softmax, log_softmax and logsumexp (chapters 6 and 7): the probabilities of a classifier
and the log-sum-exp under cross-entropy, each computed stably (the largest value taken out
before ``exp``) and with its backward in one class named like PyTorch's node.

log_softmax runs on every training step (``cross_entropy``): its forward and its plain
backward are kept to a few numpy calls.
"""

import numpy as np

from . import formulas
from .op import Op
from .tangents import auto_element_wise
from ..tensor_rules import takes_out
from ..tensor_rules import check_tensor
from .. import dtypes

__all__ = ["SoftmaxBackward0", "LogSoftmaxBackward0", "LogsumexpBackward0", "max_keepdim"]

_max_reduce = np.maximum.reduce  # what ndarray.max calls, without its Python wrapper


def max_keepdim(a, dim):
    """``a.max(axis=dim, keepdims=True)``. For a batch of a few classes (2-D, up to 32 on the
    last axis) numpy's row-by-row max is slow; the max down the columns of the transposed
    copy gives the same numbers 2-5x faster (softmax of a classifier's logits)."""
    if a.ndim == 2 and dim == 1 and 0 < a.shape[1] <= 32:
        return _max_reduce(np.ascontiguousarray(a.T), 0)[:, None]
    if a.ndim and not a.shape[dim]:  # no classes: nothing to subtract
        return np.zeros(a.shape[:dim] + (1,) + a.shape[dim + 1:], a.dtype)
    return a.max(axis=dim, keepdims=True)


class SoftmaxBackward0(Op):
    """softmax along ``dim``: s = exp(x) / sum(exp(x)), so dx = s * (grad - sum(grad * s))."""
    __slots__ = ("dim", "dims")

    def forward(self, a, dim):
        self.dim, self.dims = dim, (dim,) if a.ndim else ()
        if a.size:
            shifted = np.exp(a - max_keepdim(a, dim))
            out = shifted / shifted.sum(axis=dim, keepdims=True)
        else:  # nothing to compute, in any dtype (an empty bool tensor stays bool)
            out = a.copy()
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return out * (grad - formulas.sum_over(grad * out, self.dims, keepdims=True))

    jvp = auto_element_wise  # (its Jacobian is symmetric)


class LogSoftmaxBackward0(Op):
    """log_softmax along ``dim``: x - logsumexp(x), so dx = grad - softmax * sum(grad), the
    softmax being exp of the output."""
    __slots__ = ("dim", "dims")

    def forward(self, a, dim):
        self.dim, self.dims = dim, (dim,) if a.ndim else ()
        # Subtract the max first: exp never overflows, and log-sum-exp stays exact.
        if a.size:
            shifted = a - max_keepdim(a, dim)
            out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        else:  # an empty batch, or no classes: log(0) of nothing
            out = a.copy()
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad - formulas.exp(out) * formulas.sum_over(grad, self.dims, keepdims=True)

    def jvp(self, tangents, out, a):
        t = tangents[0]
        return t - formulas.sum_over(formulas.exp(out) * t, self.dims, keepdims=True)


class LogsumexpBackward0(Op):
    """log(sum(exp(x))) over ``axes``: d/dx = softmax = exp(x - out). As in PyTorch, a row of
    only -inf (out = -inf) gets nan, and so does an element +inf (nothing is special-cased)."""
    __slots__ = ("axes", "keepdim")

    def forward(self, a, axes, keepdim=False):
        self.axes, self.keepdim = axes, keepdim
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            top = np.max(a, axis=axes, keepdims=True) if a.size else \
                np.zeros([1] * a.ndim, a.dtype)
            top = np.where(np.isfinite(top), top, 0)  # all -inf or an inf: nothing to take out
            out = np.log(np.sum(np.exp(a - top), axis=axes, keepdims=True)) + top
        out = out.astype(a.dtype, copy=False)
        if not keepdim:
            out = np.squeeze(out, axis=axes)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if not self.keepdim:
            grad = formulas.unsqueeze(grad, self.axes)
            out = formulas.unsqueeze(out, self.axes)
        return grad * formulas.exp(a - out)

    def jvp(self, tangents, out, a, *options):
        if not self.keepdim:
            out = formulas.unsqueeze(out, self.axes)
        return formulas.sum_over(tangents[0] * formulas.exp(a - out), self.axes,
                                 keepdims=self.keepdim)


# ------------------------------------------------------------------ functions

@takes_out
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x)))`` along ``dim``, computed stably: the largest element is taken out
    before exp, so large inputs do not overflow (``x.exp().sum().log()`` gives inf)."""
    check_tensor("logsumexp", input)
    axes = tuple(input._dims(dim))
    return LogsumexpBackward0.run((input,), input._float_data(), axes=axes,
                                          keepdim=keepdim)


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def softmax(input, dim, dtype=None):
    if dtype is not None:
        return input.to(dtype).softmax(dim)
    dim, a = input._dim(dim), _softmax_input(input, "softmax")
    return SoftmaxBackward0.run((input,), a, dim=dim)


def log_softmax(input, dim, dtype=None):
    if dtype is not None:
        return input.to(dtype).log_softmax(dim)
    dim, a = input._dim(dim), _softmax_input(input, "log_softmax")
    return LogSoftmaxBackward0.run((input,), a, dim=dim)


def _softmax_input(input, name):
    """The values softmax works on: floats only, as in PyTorch (whose kernels have no
    integer version); the probabilities of integers would be a float tensor anyway."""
    a = input._data
    if a.dtype.kind != "f" and a.size:  # (empty: PyTorch runs no kernel, keeps the dtype)
        raise NotImplementedError(
            f'"{name}_lastdim_kernel_impl" not implemented for '
            f"'{dtypes.scalar_type_name(a.dtype)}': convert the tensor first "
            f"(x.float().{name}(dim)) or pass dtype=minigrad.float32")
    return a


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("logsumexp",)
METHODS = ("softmax", "log_softmax", "logsumexp",)
