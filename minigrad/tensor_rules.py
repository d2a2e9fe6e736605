"""PyTorch's rules and messages that Tensor's methods share (chapter 5).

How a Python number meets a tensor (dtype, integer wrap-around, range checks), which
results an in-place op may keep (the kind order), the broadcast error that says which
dimensions clash, and a few small checks.
"""

import builtins
import functools
import inspect
import math
import numbers
import warnings

import numpy as np

from . import dtypes
from ._tensor import Tensor
from .graph import GradMode
from .dtypes import scalar_name


NUMBER_TYPES = (int, float, bool, np.number, np.bool_)


OVERLAPPING_WRITE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location (an expanded tensor). Please clone() the tensor before performing the "
    "operation.")


def needs_grad(*tensors):
    if not GradMode.enabled:
        return False
    for t in tensors:
        if t is not None and t._requires_grad:
            return True
    return False


# The range of each integer dtype, for converting Python numbers to it as PyTorch does.
_INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
              for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                        np.uint64)}


def _overflow(dtype):
    return RuntimeError(f"value cannot be converted to type {dtype} without overflow")


def int_operand(value, dtype):
    """A Python int as the operand of an arithmetic op or comparison with an integer tensor
    of ``dtype``: PyTorch converts it to that dtype with wrap-around (``uint8 + -1`` adds
    255, ``uint8 < -1`` compares with 255), where numpy 2 refuses or compares exactly."""
    low, high = _INT_RANGE[dtype]
    if low <= value <= high:
        return value
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError(f"int too big to convert: {value} does not fit in 64 bits")
    return (value - low) % (high - low + 1) + low


def number_as(value, dtype):
    """A Python number as a 0-dim array of ``dtype``, checked as PyTorch checks a fill value,
    a clamp bound or an assigned number: an integer dtype refuses inf, nan and numbers out
    of its range, except that an unsigned one takes an int down to -max, wrapped around
    (``fill_(-1)`` on uint8 gives 255). Floats are truncated toward 0."""
    if dtype.kind in "iu":
        if isinstance(value, (np.number, np.bool_)):
            value = value.item()
        if not math.isfinite(value):
            raise _overflow(dtype)
        low, high = _INT_RANGE[dtype]
        if dtype.kind == "u" and not isinstance(value, float):
            low = -high
        if not low <= value <= high:
            raise _overflow(dtype)
        if value < 0 and dtype.kind == "u":
            value = int(value) + high + 1
    return np.asarray(value).astype(dtype)


def int_bounds(low, high, dtype):
    """clamp's number bounds for an integer tensor, converted as PyTorch does (``number_as``:
    ``clamp_min(-2)`` on uint8 means 254)."""
    return tuple(None if b is None else number_as(b, dtype) for b in (low, high))


def writable(a):
    """``a``, or for an expanded array (read-only: one element seen many times) the same
    elements as a writable array on the memory it views, for zero_ and fill_, which PyTorch
    allows on an expanded tensor (every position gets the same value, so overlap is fine)."""
    if a.flags.writeable:
        return a
    base = a.base  # (numpy's as_strided puts an object that is no array in the chain)
    while base is not None and not (isinstance(base, np.ndarray) and base.flags.writeable):
        base = getattr(base, "base", None)
    if base is None:
        raise RuntimeError(OVERLAPPING_WRITE)
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    try:
        return np.ndarray(a.shape, a.dtype, buffer=base, offset=offset, strides=a.strides)
    except (TypeError, ValueError):  # a base that is not contiguous has no buffer to share
        raise RuntimeError(OVERLAPPING_WRITE) from None


def overlaps_itself(a):
    """Do two elements of ``a`` share memory (an expanded array, an overlapping as_strided
    view)? PyTorch refuses to write into such a tensor, and allows it into a part of an
    expanded tensor that does not overlap (``x.expand(2, 3)[0] = v`` writes the one row)."""
    if a.flags.writeable or a.size < 2:
        return False
    offsets = np.zeros(a.shape, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
        offsets += (np.arange(n, dtype=np.int64) * stride).reshape(
            (n,) + (1,) * (a.ndim - axis - 1))
    return np.unique(offsets).size != a.size


def with_numbers(a, *numbers):
    """``a`` in the dtype PyTorch gives ``a`` combined with Python numbers (``None`` is no
    number): a float makes an integer or bool array float32, an int makes a bool one int64."""
    kind = a.dtype.kind
    if kind in "biu" and any(isinstance(n, float) for n in numbers):
        return a.astype(dtypes.DEFAULT_FLOAT)
    if kind == "b" and any(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return a.astype(dtypes.DEFAULT_INT)
    return a


def refuse_empty_reduction(name, a, dim, error=RuntimeError):
    """max, min, argmax and argmin of nothing do not exist: PyTorch's errors for them (its
    argmax says IndexError where its max says RuntimeError)."""
    if dim is None and a.size == 0:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.")
    if dim is not None and a.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def bool_subtraction_error():
    """PyTorch has no ``-`` for bools (numpy computes int - True, and True - 1)."""
    return RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                        "If you are trying to invert a mask, use the `~` or `logical_not()` "
                        "operator instead.")


def bound_as_number(bound):
    """A clamp bound given with a number for the other one: a 0-dim tensor that needs no
    gradient counts as its number, as in PyTorch, which refuses any other tensor there."""
    if not isinstance(bound, Tensor):
        return bound
    if bound._data.ndim or bound._requires_grad:
        raise TypeError("clamp() received an invalid combination of arguments: min and max "
                        "must be both numbers or both tensors, got a number and a tensor"
                        f"{' that requires grad' if bound._requires_grad else ''} of shape "
                        f"{list(bound.shape)}. Make the number a tensor too.")
    return bound.item()


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_KIND_NAMES = {"b": "Bool", "u": "Long", "i": "Long", "f": "Float", "c": "ComplexFloat"}


def kind_of(value):
    """The numpy kind of an operand: an array, a Tensor or a Python number."""
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, np.ndarray):
        return value.dtype.kind
    return "b" if isinstance(value, bool) else "i" if isinstance(value, numbers.Integral) \
        else "f" if isinstance(value, numbers.Real) else "c"


def can_hold(dtype, other):
    """PyTorch's rule for an in-place result: a tensor holds any result of its own kind or a
    lower one (float32 += float64 and uint8 += int64 are fine), never a higher one
    (int_tensor += 1.5, bool_tensor += 1)."""
    return _KIND_ORDER[kind_of(other)] <= _KIND_ORDER[dtype.kind]


def cannot_hold(other, t):
    """PyTorch's error when an in-place op's result (of ``other``'s kind) does not fit ``t``."""
    return RuntimeError(f"result type {_KIND_NAMES[kind_of(other)]} can't be cast to the "
                        f"desired output type {t.dtype}: work on a converted copy "
                        f"(t = t.float() + ...) instead of in place")


def true_divide(a, b, out, casting):
    """``np.true_divide`` in place, silent about x/0 and 0/0 (inf and nan, as in PyTorch)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b, out=out, casting=casting)


def broadcast_error(a, b, op):
    """Say which two shapes do not broadcast, and where."""
    sa, sb = tuple(np.shape(a)), tuple(np.shape(b))
    for i in range(1, max(len(sa), len(sb)) + 1):
        x = sa[-i] if i <= len(sa) else 1
        y = sb[-i] if i <= len(sb) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            return RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {dim}: shapes {list(sa)} and {list(sb)} cannot be "
                f"broadcast together for {op}. Two dimensions fit when they are equal or "
                "one of them is 1 (use unsqueeze/reshape to add a dimension of size 1).")
    return RuntimeError(f"{op} failed for shapes {list(sa)} and {list(sb)}")


def one_dim(op, dim, hint=""):
    """PyTorch's TypeError for ops that take a single dim (an int), not a tuple of them."""
    if not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}{hint}")
    return int(dim)


def dims_in_order(input, dim):
    """``input._dims(dim)``, with the dims checked one after the other (each in range, none
    repeated) as PyTorch's var, std, norm, squeeze and flip check them: for (1, 1, 5) on a
    3-dim tensor the repeated 1 is the complaint (RuntimeError). sum, mean, amax and the
    other reductions check every range first (IndexError for the 5): ``_dims``' order."""
    seen = []
    for d in ((dim,) if isinstance(dim, numbers.Integral) else dim):
        axis = input._dim(d)
        if axis in seen:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        seen.append(axis)
    return input._dims(dim)


def check_tensor(name, value, argument="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def refuse_integers(name, a, kernel):
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a.dtype)}\': '
                                  f"{name} needs a float tensor (x.float())")


def run_in_place(self, other, out_of_place):
    """An in-place op through ``out_of_place``: recorded in the graph when it needs to be
    (``_record_in_place`` handles leaves, views and saved values), else written directly."""
    if self._check_inplace(other):
        return self._record_in_place(out_of_place)
    result = out_of_place(self)
    np.copyto(self._data, result._data, casting="unsafe")
    self._bump_version()
    return self


def write_out(out, result, name, inputs, dtype="same_kind"):
    """``result`` written into ``out`` as PyTorch's ``out=`` does: the values are copied
    into out's memory, and an ``out`` of another shape is resized (with PyTorch's warning
    unless it was empty). No graph is recorded, so no input (nor ``out``) may require grad.
    ``dtype``, the op's rule for out's dtype in PyTorch: ``"same_kind"`` (cast to it, if it
    can hold the result: exp, add, ...), ``"same"`` (the result's dtype only: floor, abs,
    clamp, matmul, ...) or ``"any"`` (out's dtype is the one computed in: sum, cumsum,
    prod). Returns ``out``."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if GradMode.enabled and builtins.any(t._requires_grad for t in (*inputs, out)
                                          if isinstance(t, Tensor)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad. Compute "
                           f"without out= (y = {name}(...)), or under minigrad.no_grad().")
    value, target = result._data, out._data
    if dtype == "same" and value.dtype != target.dtype:
        raise RuntimeError(f"{name}(): found dtype {scalar_name(target.dtype)} for out= but "
                           f"expected {scalar_name(value.dtype)}, the dtype of the result "
                           f"(give out= that dtype: out.to({dtypes.from_numpy(value.dtype)}))")
    if dtype != "any" and not np.can_cast(value.dtype, target.dtype, casting="same_kind"):
        raise RuntimeError(f"result type {scalar_name(value.dtype)} can't be cast to the "
                           f"desired output type {scalar_name(target.dtype)}")
    if value.shape == target.shape:
        np.copyto(target, value, casting="unsafe")
    else:
        if target.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(target.shape)}, which does not match the required output shape "
                f"{list(value.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=3)
        out._data = value.astype(target.dtype, copy=True)
    out._bump_version()
    return out


def takes_out(function=None, *, dtype="same_kind"):
    """``function`` with PyTorch's ``out=`` keyword (``torch.exp(x, out=buf)``): the result
    is written into ``out`` by ``write_out`` (its rules and errors; ``dtype``: the op's rule
    for out's dtype, see there), and ``out`` returned. Without ``out`` the function runs as
    it is. ``@takes_out`` or ``@takes_out(dtype="same")``. The function without ``out=`` is
    its ``without_out``: what ``minigrad.methods`` makes the Tensor method, since PyTorch's
    methods refuse ``out=`` (``x.exp(out=y)`` is a TypeError)."""
    if function is None:
        return functools.partial(takes_out, dtype=dtype)
    name = function.__name__

    def with_out(*args, out=None, **kwargs):
        if dtype == "any" and isinstance(out, Tensor) and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype  # (computed in out's dtype, as PyTorch does)
        result = function(*args, **kwargs)
        if out is None:
            return result
        return write_out(out, result, name, (*args, *kwargs.values()), dtype)

    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    at = len(parameters)
    if parameters and parameters[-1].kind is inspect.Parameter.VAR_KEYWORD:
        at -= 1  # out goes before **kwargs
    parameters.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    with_out.__signature__ = signature.replace(parameters=parameters)
    # (not functools.wraps: the function with out= is the op's public function itself)
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(with_out, attribute, getattr(function, attribute))
    with_out.without_out = function  # the Tensor method: PyTorch's methods take no out=
    return with_out
