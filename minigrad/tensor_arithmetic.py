"""Tensor's operators: ``+ - * / // % ** @``, comparisons and logical ops (chapters 2 and 5).

``_operands`` turns the other operand into an array with PyTorch's type promotion (a
Python number does not widen a tensor's dtype); each operator then runs one op class of
``ops/``, which records it when a gradient is needed.
"""

import numpy as np

from . import dtypes
from .ops import arithmetic
from ._tensor import tensor_from
from .ops.linalg import matmul
from .tensor_rules import (bool_subtraction_error, broadcast_error, int_operand, NUMBER_TYPES,
                           number_as, with_numbers)

from ._tensor import Tensor, wrap


class ArithmeticMethods:
    """Tensor's operators (``+``, ``*``, ``@``, ``==``, ...), their named forms and the
    elementwise tests; ``_operands`` turns the other operand into an array as PyTorch does."""

    __slots__ = ()

    # ----------------------------------------------------------------- arithmetic

    def _operands(self, other):
        """The numpy operands of ``self OP other``, promoted like PyTorch, and ``other`` as a
        Tensor (or None for a Python number)."""
        a = self._data
        if isinstance(other, Tensor):
            b = other._data
            if a.dtype is not b.dtype and a.dtype != b.dtype:
                common = dtypes.promote(a, b)
                a = a.astype(common, copy=False)
                b = b.astype(common, copy=False)
            return a, b, other
        if isinstance(other, NUMBER_TYPES):
            if isinstance(other, (np.number, np.bool_)):
                other = other.item()
            if a.dtype.kind in "biu":
                promoted = with_numbers(a, other)
                if promoted is a and a.dtype.kind in "iu" and isinstance(other, int):
                    other = int_operand(other, a.dtype)  # wraps, as PyTorch: uint8 + -1
                a = promoted
            return a, other, None
        if isinstance(other, np.ndarray):
            return self._operands(tensor_from(other))
        if isinstance(other, tuple) and hasattr(other, "values"):
            raise TypeError(f"unsupported operand type for a Tensor: {type(other).__name__} "
                            "(a (values, indices) pair from max/min: use its .values)")
        raise TypeError(f"unsupported operand type for a Tensor: {type(other).__name__}"
                        + (" (make it a tensor first: minigrad.tensor(...))"
                           if isinstance(other, (list, tuple)) else ""))

    def __add__(self, other):
        a, b, t = self._operands(other)
        try:
            return arithmetic.AddBackward0.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(a, b, "+") from None

    __radd__ = __add__

    def __sub__(self, other):
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_) or (
                isinstance(other, Tensor) and other._data.dtype.kind == "b"):
            raise bool_subtraction_error()
        a, b, t = self._operands(other)
        try:
            return arithmetic.SubBackward0.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(a, b, "-") from None

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            return other.__sub__(self)
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_):
            raise bool_subtraction_error()
        a, b, _ = self._operands(other)
        return arithmetic.RsubBackward1.run((self,), a, other=b)

    def __mul__(self, other):
        a, b, t = self._operands(other)
        try:
            return arithmetic.MulBackward0.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(a, b, "*") from None

    __rmul__ = __mul__

    def __truediv__(self, other):
        a, b, t = self._operands(other)
        if a.dtype.kind in "biu":  # int / int is float32 in PyTorch (numpy says float64),
            # each operand cast from its own dtype (int64 -2 / a uint8 tensor is -2.0 / x)
            a = self._data.astype(dtypes.DEFAULT_FLOAT)
            if isinstance(b, np.ndarray):
                b = t._data.astype(dtypes.DEFAULT_FLOAT)
            elif t is None:
                b = other  # the number itself: no wrap-around to the int dtype (x / -1)
        try:
            return arithmetic.DivBackward0.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(a, b, "/") from None

    def __rtruediv__(self, other):
        if isinstance(other, Tensor):
            return other.__truediv__(self)
        return self.reciprocal() * other  # PyTorch's nodes too: MulBackward0, Reciprocal...

    def _rounded(self, other, op, reverse=False):
        """``//`` and ``%`` (``reverse``: ``other OP self``): recorded with PyTorch's node, which
        refuses backward except for the remainder of a tensor (by a number or a tensor)."""
        a, b, t = self._operands(other)
        try:
            if reverse:  # a number on the left: no derivative
                return arithmetic.NoDerivative.run((self,), a, b=b, op=op, reverse=True)
            if op == "floor_divide":
                return arithmetic.NoDerivative.run((self, t), a, b, op=op)
            if t is None:
                return arithmetic.RemainderBackward0.run((self,), a, other=b)
            return arithmetic.RemainderBackward1.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(*((b, a) if reverse else (a, b)), op) from None

    def __floordiv__(self, other):
        return self._rounded(other, "floor_divide")

    def __rfloordiv__(self, other):
        return self._rounded(other, "floor_divide", reverse=True)

    def __mod__(self, other):
        return self._rounded(other, "remainder")

    def __rmod__(self, other):
        return self._rounded(other, "remainder", reverse=True)

    floor_divide, remainder = __floordiv__, __mod__

    def __pow__(self, exponent):
        if isinstance(exponent, NUMBER_TYPES):
            a, e, _ = self._operands(exponent)
            if a.dtype.kind in "iu" and isinstance(e, int):
                if exponent < 0:
                    raise RuntimeError("Integers to negative integer powers are not allowed.")
                e = int(number_as(exponent, a.dtype))  # checked, not wrapped (uint8 ** 300)
            return arithmetic.PowBackward0.run((self,), a, exponent=e)
        a, b, t = self._operands(exponent)
        if a.dtype == np.bool_:
            raise NotImplementedError('"pow" not implemented for \'Bool\': convert the '
                                      "tensors first (t.long())")
        try:
            return arithmetic.PowBackward1.run((self, t), a, b)
        except ValueError:
            raise broadcast_error(a, b, "**") from None

    def __rpow__(self, base):
        if isinstance(base, Tensor):
            return base.__pow__(self)
        a, b, _ = self._operands(base)
        if a.dtype == np.bool_:
            raise NotImplementedError('"pow" not implemented for \'Bool\': convert the '
                                      "exponents first (t.long())")
        return arithmetic.PowBackward2.run((self,), a, base=b)

    def __neg__(self):
        try:
            return arithmetic.NegBackward0.run((self,), self._data)
        except TypeError:  # numpy's refusal for bools
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.") from None

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(tensor_from(other), self)

    def add(self, other, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self ** exponent

    def neg(self):
        return -self

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        return matmul(self, other)

    multiply, divide, subtract, true_divide = mul, div, sub, div

    # ----------------------------------------------------------------- comparisons (no grad)

    def _compare(self, other, fn):
        a, b, _ = self._operands(other)
        try:
            return wrap(fn(a, b))
        except ValueError:
            raise broadcast_error(a, b, "a comparison") from None

    def __eq__(self, other):
        if other is None:
            return False
        return self._compare(other, np.equal)

    def __ne__(self, other):
        if other is None:
            return True
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def __invert__(self):
        if self._data.dtype.kind == "f":
            raise TypeError("~ (bitwise not) is only defined for integer and bool tensors")
        return wrap(~self._data)

    def __and__(self, other):
        return self._compare(other, np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.bitwise_or)

    def __xor__(self, other):
        return self._compare(other, np.bitwise_xor)

    def nonzero(self, as_tuple=False):
        """Indices of the non-zero elements: a (count, ndim) int64 tensor, or one per dim."""
        found = np.nonzero(self._data)
        if as_tuple:
            return tuple(wrap(i.astype(np.int64)) for i in found)
        return wrap(np.stack(found, axis=1).astype(np.int64) if found
                    else np.zeros((0, 0), np.int64))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct values, sorted; with ``dim``, the distinct slices along ``dim`` (rows
        for dim=0), sorted lexicographically. The inverse says where each value (or slice)
        went, the counts how often each occurs."""
        if dim is not None and not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = None if dim is None else self._dim(dim)
        values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True,
                                            axis=axis)
        result = [wrap(values)]
        if return_inverse:
            shape = self._data.shape if axis is None else (self._data.shape[axis],)
            result.append(wrap(inverse.reshape(shape).astype(np.int64)))
        if return_counts:
            result.append(wrap(counts.astype(np.int64)))
        return result[0] if len(result) == 1 else tuple(result)

    def bincount(self, weights=None, minlength=0):
        w = weights._data if isinstance(weights, Tensor) else weights
        return wrap(np.bincount(self._data, weights=w, minlength=minlength))

    def logical_not(self):
        return wrap(np.logical_not(self._data))

    def equal(self, other):
        return self.shape == other.shape and bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.allclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return wrap(np.isclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def isnan(self):
        return wrap(np.isnan(self._data))

    def isfinite(self):
        return wrap(np.isfinite(self._data))
