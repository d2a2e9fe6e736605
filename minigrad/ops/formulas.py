"""The few operations backward formulas need that numpy arrays and Tensors spell differently
(chapter 5): each takes either and gives back the same kind.

An op's ``backward`` gets arrays on a plain ``backward()`` and Tensors under
``create_graph=True``. ``grad * b`` or ``grad @ b`` mean the same for both; summing to a
shape, ``where`` or a transpose do not, so formulas call these instead, and one formula
serves both (with Tensors, every step is recorded and can be differentiated again).
"""

import math

import numpy as np

from .._tensor import tensor_from, wrap

__all__ = ["sum_to", "keep_where", "zero_where", "where", "transpose_last", "expand_to",
           "sum_over", "unsqueeze", "exp", "log", "sqrt", "sign", "as_mask", "dual", "sin",
           "cos", "tanh", "sinh", "cosh", "sigmoid", "erf", "zeros_like", "cast",
           "sigmoid_of_array", "erf_of_array"]

_ndarray = np.ndarray
_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def is_array(x):
    """Does a backward formula take its arrays path for ``x``: a numpy array, or a numpy
    scalar (numpy's result of an op on 0-dim arrays), not a Tensor (``create_graph``)?"""
    return type(x) is _ndarray or not hasattr(x, "_data")


def sum_to(grad, shape):
    """Sum ``grad`` down to ``shape``: the backward of broadcasting (chapter 5). A number
    that broadcasting used several times gets the sum of the gradients of its copies."""
    if grad.shape == shape:
        return grad
    added = grad.ndim - len(shape)
    if added:  # 1. dimensions that broadcasting added on the left: summed away
        grad = sum_over(grad, tuple(range(added)))
    if grad.shape != shape:  # 2. dimensions where the input had size 1: summed, keeping the 1
        stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        grad = sum_over(grad, stretched, keepdims=True)
    return grad


def sum_over(x, axes, keepdims=False):
    """``x`` summed over ``axes`` (a tuple)."""
    if type(x) is _ndarray or is_array(x):  # (the first test spares a call for arrays)
        return _add_reduce(x, axes, None, None, keepdims)
    return x.sum(dim=axes, keepdim=keepdims)


# What ndarray.sum calls, without its Python wrapper (about 1 us a call; a training step
# sums each bias gradient).
_add_reduce = np.add.reduce


def expand_to(x, shape):
    """``x`` broadcast to ``shape`` (a view: nothing copied)."""
    if is_array(x):
        return np.broadcast_to(x, shape)
    return x.expand(*shape)


def unsqueeze(x, axes):
    """``x`` with a new axis of length 1 at each of ``axes`` (a tuple, as numpy's
    expand_dims takes it): undoes a reduction without keepdim."""
    if is_array(x):
        return np.expand_dims(x, axes)
    for axis in sorted(axis % (x.ndim + len(axes)) for axis in axes):
        x = x.unsqueeze(axis)
    return x


def transpose_last(x):
    """``x`` with its last two axes swapped (``x.mT``): the transpose of each matrix."""
    if is_array(x):
        return x.swapaxes(-1, -2)
    return x.mT


def as_mask(mask, like):
    """``mask`` (a bool array or a bool Tensor) in the kind of ``like``: a Tensor formula
    needs a Tensor mask, an array formula an array."""
    if is_array(like):
        return mask if is_array(mask) else mask._data
    return mask if not is_array(mask) else tensor_from(mask)


def keep_where(mask, grad):
    """``grad`` where ``mask`` holds and +0 elsewhere, as PyTorch's masks give it: even an
    inf or nan gradient becomes 0 where the mask is False (``grad * mask`` would turn
    inf * 0 into nan, and a negative gradient into -0)."""
    if type(grad) is _ndarray and type(mask) is _ndarray:  # (speed: no as_mask for arrays)
        return _and_bits(grad, mask, keep=True)
    if is_array(grad):
        return _and_bits(grad, as_mask(mask, grad), keep=True)
    return grad.masked_fill(~as_mask(mask, grad), 0)


def zero_where(mask, grad):
    """``grad`` with +0 where ``mask`` holds (``masked_fill(mask, 0)``), whatever it was."""
    if type(grad) is _ndarray and type(mask) is _ndarray:  # (speed: relu's backward)
        return _and_bits(grad, mask, keep=False)
    if is_array(grad):
        return _and_bits(grad, as_mask(mask, grad), keep=False)
    return grad.masked_fill(as_mask(mask, grad), 0)


def where(condition, x, y):
    """``x`` where ``condition`` holds, else ``y``."""
    if is_array(x) and is_array(y):
        return np.where(as_mask(condition, x), x, y)
    if not is_array(x):  # Tensor.where(condition, other), PyTorch's method form
        return x.where(as_mask(condition, x), y)
    return y.where(~as_mask(condition, y), x)


def exp(x):
    return np.exp(x) if type(x) is _ndarray or is_array(x) else x.exp()


def log(x):
    return np.log(x) if is_array(x) else x.log()


def sqrt(x):
    return np.sqrt(x) if is_array(x) else x.sqrt()


def sign(x):
    """-1, 0 or 1 in ``x``'s dtype, and 0 for nan, as PyTorch's sgn (numpy's sign says nan):
    the slope of |x| and the gradient of the 1-norm are 0 at a nan."""
    if is_array(x):
        return np.subtract(x > 0, x < 0, dtype=x.dtype)
    return x.sign()


def _and_bits(grad, mask, keep):
    """``np.where(mask, grad, 0)`` says the same, but takes 2.5 times as long as
    ``grad * mask``, and ReLU's backward runs on every step of training. Instead, each
    mask element becomes an integer of the gradient's size, all ones (the float kept as it
    is) or 0 (+0), ANDed with the gradient's bits: 1.4 times the product's time."""
    if grad.size <= 4096 or grad.dtype.kind != "f" or mask.shape != grad.shape:
        # below about 4096 elements np.where's one call beats the four of the bit trick
        return np.where(mask if keep else ~mask, grad, np.zeros((), grad.dtype))
    bits = _SAME_SIZE_INT[grad.itemsize]
    ones = mask.view(np.int8).astype(bits)  # 1 where the mask holds, else 0
    if keep:
        np.negative(ones, out=ones)  # 1 -> -1: all bits set
    else:
        ones -= 1  # 0 -> -1: all bits set, 1 -> 0
    ones &= grad.view(bits)
    return ones.view(grad.dtype)


# ------------------------------------------------ elementwise functions of an array or a Tensor

def dual(array_fn, method):
    """A function of an array or a Tensor: ``array_fn(x)`` or ``x.method()``."""
    def fn(x):
        return array_fn(x) if is_array(x) else getattr(x, method)()
    fn.__name__ = method
    return fn


def sigmoid_of_array(a):
    """1 / (1 + e^-a) for an array, computed as PyTorch does. Where e^-a overflows to inf the
    result is exactly 0 (float32 below -88.7), which is also what PyTorch prints."""
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False)


_ERF_OF_ELEMENT = np.frompyfunc(math.erf, 1, 1)


def erf_of_array(a):
    """erf of an array, in its dtype (numpy has none: the C library's, element by element)."""
    return np.asarray(_ERF_OF_ELEMENT(a)).astype(a.dtype, copy=False)


sin, cos, tanh, sinh, cosh = (dual(np.sin, "sin"), dual(np.cos, "cos"), dual(np.tanh, "tanh"),
                              dual(np.sinh, "sinh"), dual(np.cosh, "cosh"))
sigmoid = dual(sigmoid_of_array, "sigmoid")
erf = dual(erf_of_array, "erf")


def zeros_like(grad):
    """A gradient of zeros: a constant (no history, as PyTorch's ``zeros_like(grad)``)."""
    if is_array(grad):
        return np.zeros_like(grad)
    return wrap(np.zeros_like(grad._data))


def cast(x, dtype):
    """``x`` in the numpy ``dtype`` (itself if it has it)."""
    return x.astype(dtype, copy=False) if is_array(x) else x._cast(dtype)
