"""Tensor's elementwise functions (exp, log, clamp, ...), reductions (sum, mean, max, ...)
and softmax (chapters 5 and 7).

Each method checks its arguments and runs one op class of ``ops/``; the rarer ones
(``floor``, ``log1p``, ``sort``, ...) are functions of their op family in ``ops/``, declared
there as methods.
"""

import functools
import numbers
import warnings
from collections import namedtuple

import numpy as np

from . import dtypes
from .ops import activations, arithmetic, pointwise, reductions, selection, sorting
from .ops import softmax as softmax_ops
from .ops.op import saving_versions_of
from .graph import GradMode
from .ops.arithmetic import run_addc
from .ops.selection import pairwise, where
from .tensor_rules import (bound_as_number, broadcast_error, int_bounds, number_as, one_dim,
                           refuse_empty_reduction, with_numbers)

from ._tensor import Tensor, wrap


MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def with_numpy_names(method):
    """``method`` that also takes numpy's keyword names, ``axis=`` for ``dim=`` and
    ``keepdims=`` for ``keepdim=``, as PyTorch's reductions do."""
    @functools.wraps(method)
    def method_with_numpy_names(self, *args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return method(self, *args, **kwargs)
    return method_with_numpy_names


class MathMethods:
    """Tensor's elementwise functions, reductions and softmax."""

    __slots__ = ()

    # ----------------------------------------------------------------- elementwise functions

    def sign(self):
        """-1, 0 or 1; 0 for nan, as in PyTorch (numpy's sign says nan)."""
        return pointwise.SignBackward0.run((self,), self._data)

    def all(self, dim=None, keepdim=False):
        return self._test(np.all, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return self._test(np.any, dim, keepdim)

    def _test(self, fn, dim, keepdim):
        """all/any: bool, except that PyTorch answers a uint8 tensor in uint8."""
        a = self._data
        out = np.asarray(fn(a, axis=None if dim is None else self._dim(dim), keepdims=keepdim))
        return wrap(out.astype(np.uint8) if a.dtype == np.uint8 else out)

    def _float_data(self):
        """The values as floats: integer tensors become float32 (exp, log, ... of ints)."""
        a = self._data
        if a.dtype.kind != "f":
            return a.astype(dtypes.DEFAULT_FLOAT)
        return a

    def exp(self):
        return pointwise.ExpBackward0.run((self,), self._float_data())

    def log(self):
        return pointwise.LogBackward0.run((self,), self._float_data())

    def sqrt(self):
        return pointwise.SqrtBackward0.run((self,), self._float_data())

    def reciprocal(self):
        return pointwise.ReciprocalBackward0.run((self,), self._float_data())

    def abs(self):
        a = self._data
        if a.dtype.kind == "b":
            raise NotImplementedError('"abs_cpu" not implemented for \'Bool\': convert the '
                                      "tensor first (t.long()), or use it as it is")
        return pointwise.AbsBackward0.run((self,), a)

    def sin(self):
        return pointwise.SinBackward0.run((self,), self._float_data())

    def cos(self):
        return pointwise.CosBackward0.run((self,), self._float_data())

    def tanh(self):
        return pointwise.TanhBackward0.run((self,), self._float_data())

    def sigmoid(self):
        return pointwise.SigmoidBackward0.run((self,), self._float_data())

    def relu(self):
        a = self._data
        if a.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        return activations.ReluBackward0.run((self,), a)

    def square(self):
        return self ** 2

    def clamp(self, min=None, max=None):
        """Values below ``min`` become ``min``, above ``max`` become ``max``. The bounds are
        numbers, or tensors (they broadcast, and get a gradient where they win)."""
        return self._clamp(min, max, selection.ClampBackward1)

    clip = clamp

    def clamp_min(self, min):
        return self._clamp(min, None, selection.ClampMinBackward0)

    def clamp_max(self, max):
        return self._clamp(None, max, selection.ClampMaxBackward0)

    def _clamp(self, low, high, node_cls):
        if low is None and high is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        low_is_tensor, high_is_tensor = isinstance(low, Tensor), isinstance(high, Tensor)
        if low_is_tensor or high_is_tensor:
            if low is None or high is None or (low_is_tensor and high_is_tensor):
                return self._clamp_by_tensors(low, high)
            low, high = bound_as_number(low), bound_as_number(high)
        a = with_numbers(self._data, low, high)
        if a.dtype.kind == "b":
            raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\': convert the '
                                      "tensor first (t.long())")
        if a.dtype.kind in "iu":
            low, high = int_bounds(low, high, a.dtype)
        return node_cls.run((self,), a, low=low, high=high)

    def _clamp_by_tensors(self, low, high):
        """clamp with tensor bounds: promoted and broadcast with ``self`` like an add."""
        arrays = [None if t is None else t._data for t in (self, low, high)]
        common = arrays[0]
        for b in arrays[1:]:
            if b is not None:
                common = np.empty((1,) * max(common.ndim, b.ndim), dtypes.promote(common, b))
        if common.dtype.kind == "b" and low is not None and high is not None:
            raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\': convert the '
                                      "tensors first (t.long())")
        a, lo, hi = (None if b is None else b.astype(common.dtype, copy=False) for b in arrays)
        try:
            return selection.ClampBackward0.run((self, low, high), a, lo, hi)
        except ValueError:
            raise broadcast_error(a, lo if hi is None else hi, "clamp") from None

    def masked_fill(self, mask, value):
        """A copy with ``value`` where the boolean ``mask`` is True (the mask broadcasts);
        ``value`` is a number or a 0-dim tensor, which then gets a gradient too."""
        if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, numbers.Number)):
            raise TypeError(f"masked_fill() takes a boolean mask Tensor and a number or a 0-dim "
                            f"Tensor, got ({type(mask).__name__}, {type(value).__name__})")
        m = mask._data
        if m.dtype != np.bool_:
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {dtypes.from_numpy(m.dtype)}: compare first "
                               "(mask == 1) or convert it (mask.bool())")
        value_tensor = value if isinstance(value, Tensor) else None
        if value_tensor is not None and value_tensor.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value_tensor.ndim} dimension(s).")
        a = self._data
        fill = number_as(value.item() if value_tensor is not None else value, a.dtype)
        if value_tensor is not None and value_tensor._requires_grad and a.dtype.kind != "f" \
                and GradMode.enabled:
            raise RuntimeError(f"Autograd not support dtype: {self.dtype}: only a float tensor "
                               "can be filled with a value that requires grad")
        try:
            if value_tensor is None:
                out = selection.MaskedFillBackward0.run((self,), a, mask=m, value=fill)
            else:
                out = selection.MaskedFillBackward1.run((self, value_tensor), a, fill, mask=m)
            return saving_versions_of(out, mask)
        except ValueError:
            raise broadcast_error(a, m, "masked_fill") from None

    def where(self, condition, other):
        """``self`` where ``condition`` holds, ``other`` elsewhere: ``minigrad.where(condition,
        self, other)``."""
        return where(condition, self, other)

    def maximum(self, other):
        return pairwise(self, other, selection.MaximumBackward0)

    def addcmul(self, tensor1, tensor2, value=1):
        """``self + value * tensor1 * tensor2``, broadcast (Adam's update, in place)."""
        return run_addc(self, tensor1, tensor2, value, arithmetic.AddcmulBackward0)

    def addcdiv(self, tensor1, tensor2, value=1):
        """``self + value * tensor1 / tensor2``, broadcast (Adam's update, in place)."""
        return run_addc(self, tensor1, tensor2, value, arithmetic.AddcdivBackward0)

    def minimum(self, other):
        return pairwise(self, other, selection.MinimumBackward0)

    def softmax(self, dim, dtype=None):
        if dtype is not None:
            return self.to(dtype).softmax(dim)
        dim, a = self._dim(dim), self._softmax_input("softmax")
        return softmax_ops.SoftmaxBackward0.run((self,), a, dim=dim)

    def log_softmax(self, dim, dtype=None):
        if dtype is not None:
            return self.to(dtype).log_softmax(dim)
        dim, a = self._dim(dim), self._softmax_input("log_softmax")
        return softmax_ops.LogSoftmaxBackward0.run((self,), a, dim=dim)

    def _softmax_input(self, name):
        """The values softmax works on: floats only, as in PyTorch (whose kernels have no
        integer version); the probabilities of integers would be a float tensor anyway."""
        a = self._data
        if a.dtype.kind != "f" and a.size:  # (empty: PyTorch runs no kernel, keeps the dtype)
            raise NotImplementedError(
                f'"{name}_lastdim_kernel_impl" not implemented for '
                f"'{dtypes.scalar_type_name(a.dtype)}': convert the tensor first "
                f"(x.float().{name}(dim)) or pass dtype=minigrad.float32")
        return a

    # ----------------------------------------------------------------- reductions

    def sum(self, dim=None, keepdim=False, dtype=None):
        """The sum of all elements, or over ``dim`` (one or several). Integers and bools add
        up in int64, as in PyTorch (unless ``dtype`` says otherwise)."""
        a = self._data if dtype is None else self._data.astype(dtypes.to_numpy(dtype))
        if a.dtype.kind in "biu" and dtype is None:
            a = a.astype(dtypes.DEFAULT_INT, copy=False)
        if dim is None:
            return reductions.SumBackward0.run((self,), a, keepdim=keepdim)
        return reductions.SumBackward1.run((self,), a, dims=self._dims(dim), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False, dtype=None):
        a = self._data if dtype is None else self._data.astype(dtypes.to_numpy(dtype))
        if a.dtype.kind != "f":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {dtypes.scalar_type_name(a.dtype)}. "
                "Convert first: t.float().mean()")
        if dim is None:
            return reductions.MeanBackward0.run((self,), a, keepdim=keepdim)
        return reductions.MeanBackward1.run((self,), a, dims=self._dims(dim), keepdim=keepdim)

    def _extreme(self, dim, keepdim, other, arg, full_op, dim_op, result_type):
        if isinstance(other, Tensor) or (dim is not None and not isinstance(dim, int)):
            if isinstance(dim, Tensor):
                other = dim
            return self.maximum(other) if arg is np.argmax else self.minimum(other)
        a = self._data
        name = arg.__name__[3:]
        if dim is None:
            refuse_empty_reduction(name, a, None)
            return full_op.run((self,), a)
        dim = self._dim(dim)
        refuse_empty_reduction(name, a, dim if a.ndim else None)
        indices = np.expand_dims(arg(a, axis=dim), dim) if a.ndim else np.zeros((), np.int64)
        out = dim_op.run((self,), a, indices=indices, axis=dim, keepdim=keepdim)
        return result_type(out, wrap((indices if keepdim else indices.squeeze(dim))
                                      .astype(np.int64)))

    def max(self, dim=None, keepdim=False, other=None):
        """max() of all elements, max(dim) -> (values, indices), or max(other) elementwise."""
        return self._extreme(dim, keepdim, other, np.argmax, reductions.MaxBackward1,
                             sorting.MaxBackward0, MaxResult)

    def min(self, dim=None, keepdim=False, other=None):
        return self._extreme(dim, keepdim, other, np.argmin, reductions.MinBackward1,
                             sorting.MinBackward0, MinResult)

    def amax(self, dim=(), keepdim=False):
        """The largest value over ``dim`` (one or several; none: all). Ties share the
        gradient evenly."""
        return self._extreme_over(dim, keepdim, reductions.AmaxBackward0, "amax")

    def amin(self, dim=(), keepdim=False):
        """The smallest value over ``dim`` (one or several; none: all)."""
        return self._extreme_over(dim, keepdim, reductions.AminBackward0, "amin")

    def _extreme_over(self, dim, keepdim, op, name):
        a = self._data
        every_dim = dim is None or (not isinstance(dim, int) and len(dim) == 0)
        if a.size == 0 and not every_dim:  # PyTorch checks this before repeated dims
            for x in (dim,) if isinstance(dim, int) else dim:
                if a.ndim and a.shape[self._dim(x)] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {x} to have "
                                     "non-zero size.")
        dims = self._dims(() if every_dim else dim)
        if a.size == 0:  # the max of nothing does not exist
            if every_dim:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            empty = [axis for axis in dims if a.shape[axis] == 0]
            if empty:
                raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have "
                                 "non-zero size.")
        return op.run((self,), a, dims=dims, keepdim=keepdim)

    def argmax(self, dim=None, keepdim=False):
        return self._arg_extreme(dim, keepdim, np.argmax)

    def argmin(self, dim=None, keepdim=False):
        return self._arg_extreme(dim, keepdim, np.argmin)

    def _arg_extreme(self, dim, keepdim, arg):
        a = self._data
        if a.dtype.kind == "b":
            raise RuntimeError(f"{arg.__name__}(): does not support bool input: convert it "
                               "first (t.long())")
        if dim is None:
            refuse_empty_reduction(arg.__name__, a, None, IndexError)
            return wrap(np.asarray(arg(a), dtype=np.int64))
        dim = self._dim(dim)
        if a.ndim:
            refuse_empty_reduction(arg.__name__, a, dim)
        return wrap(np.asarray(arg(a, axis=dim if a.ndim else None, keepdims=keepdim),
                                dtype=np.int64))

    def var(self, dim=None, unbiased=True, keepdim=False, correction=None):
        """Variance; ``correction=1`` (the default, like ``unbiased=True``) divides by N-1."""
        return self._spread(dim, unbiased, keepdim, correction, std=False)

    def std(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return self._spread(dim, unbiased, keepdim, correction, std=True)

    def _spread(self, dim, unbiased, keepdim, correction, std):
        if correction is None:
            correction = 1 if unbiased else 0
        a = self._data
        if a.dtype.kind != "f":
            raise RuntimeError(f"std and var only support floating point and complex dtypes, "
                               f"not {self.dtype}: convert the tensor first (x.float())")
        dims = tuple(range(a.ndim)) if dim is None else self._dims(dim)
        count = int(np.prod([a.shape[x] for x in dims]))
        divisor = max(count - correction, 0)
        if divisor == 0:
            warnings.warn(f"{'std' if std else 'var'}(): degrees of freedom is <= 0. Correction "
                          "should be strictly less than the reduction factor (input numel "
                          "divided by output numel): the result is nan.", UserWarning,
                          stacklevel=3)
        op = reductions.StdBackward0 if std else reductions.VarBackward0
        return op.run((self,), a, dims=dims, correction=correction, keepdim=keepdim,
                      whole=dim is None)

    def prod(self, dim=None, keepdim=False, dtype=None):
        """The product of all elements, or along one ``dim``. Integers (and bools) multiply
        in int64, as in PyTorch."""
        if dtype is not None:
            return self.to(dtype).prod(dim, keepdim)
        a = self._data
        if a.dtype.kind in "biu":
            a = a.astype(np.int64)
        if dim is None:
            if keepdim:
                raise TypeError("prod(): keepdim=True needs a dim: prod(dim, keepdim=True)")
            return reductions.ProdBackward0.run((self,), a)
        dim = self._dim(one_dim("prod", dim, " (one dim at a time: x.prod(0).prod(0) for two)"))
        return reductions.ProdBackward1.run((self,), a, dim=dim, keepdim=keepdim)

    def cumsum(self, dim, dtype=None):
        """Running sums along ``dim``: ``out[i] = self[0] + ... + self[i]``."""
        if dtype is not None:
            return self.to(dtype).cumsum(dim)
        dim = self._dim(one_dim("cumsum", dim))
        a = self._data
        if a.dtype.kind in "biu":
            a = a.astype(np.int64)
        return reductions.CumsumBackward0.run((self,), a, dim=dim)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The vector p-norm ``(sum |x|^p)^(1/p)`` of all elements or over ``dim``: p=2 (or
        'fro', the default) is the length, p=1 the sum of |x|, p=inf the largest |x|. As
        PyTorch, this is ``linalg.vector_norm``; matrix norms ('nuc') are not in minigrad."""
        if isinstance(p, str):
            if p == "nuc":
                raise NotImplementedError("minigrad has no matrix norms: p='nuc' needs PyTorch")
            if p != "fro":
                raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
            if dim is not None and not isinstance(dim, int) and len(dim) > 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dim)}")
            p = 2
        p = 2.0 if p is None else float(p)
        if not p > 0:
            raise NotImplementedError(f"norm: minigrad has the p-norms for p > 0 (1, 2, inf, "
                                      f"...), not p={p}")
        if dtype is not None:
            if dtypes.to_numpy(dtype).kind != "f":
                raise RuntimeError(f"linalg.vector_norm: dtype should be floating point, "
                                   f"but got {dtype}")
            return self.to(dtype).norm(p, dim, keepdim)
        a = self._data
        if a.dtype.kind != "f":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point tensor as input. "
                               f"Got {self.dtype}: convert it first (t.float())")
        dims = tuple(range(a.ndim)) if dim is None else self._dims(dim)
        if p == np.inf and any(a.shape[i] == 0 for i in dims):
            raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty "
                               "tensor because the operation does not have an identity")
        return reductions.LinalgVectorNormBackward0.run((self,), a, p=p, dims=dims,
                                                        keepdim=keepdim)

    def outer(self, vec2):
        return self.unsqueeze(1) * vec2.unsqueeze(0)
