"""More of PyTorch's tensor math, the ops beginner tutorials reach for after the core set:
rounding (``floor``, ``ceil``, ``round``, ``trunc``, ``frac``), more elementwise functions
(``rsqrt``, ``erf``, ``sinh``, ``asin``, ``atan2``, ``fmod``, ``lerp``, ...), logical ops,
``logsumexp``, ``cumprod``, ``sort``/``argsort``/``topk``, ``einsum``, ``addmm``,
``std_mean``/``var_mean``, ``median`` and ``bernoulli``.

Each op computes its forward with numpy and records a backward node under PyTorch's name
only when a gradient is needed; ``Tensor`` and ``minigrad`` reach them through delegates.
The ops of one tensor element by element (rounding, ``rsqrt`` ... ``atan``, ``nan_to_num``,
``bernoulli``) are ``Op`` classes in ``ops/pointwise.py``: here they only check arguments.
"""

from collections import namedtuple

import numpy as np

from . import dtypes
from .extra_ops import _elementwise, _scalar_name
from .ops import arithmetic, linalg, pointwise, reductions, softmax, sorting
from .random import numpy_rng
from .tensor import Tensor, _wrap

__all__ = ["floor", "ceil", "round", "trunc", "frac", "rsqrt", "erf", "sinh", "cosh", "asin",
           "acos", "atan", "atan2", "fmod", "lerp", "isinf", "nan_to_num", "logical_and",
           "logical_or", "logical_xor", "count_nonzero", "logsumexp", "cumprod", "sort",
           "argsort", "topk", "einsum", "addmm", "std_mean", "var_mean", "median",
           "bernoulli"]


def _check_tensor(name, value, argument="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _refuse_integers(name, a, kernel):
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(a.dtype)}\': '
                                  f"{name} needs a float tensor (x.float())")


# ------------------------------------------------------------------ rounding

def _rounding(name, input, op, kernel):
    _check_tensor(name, input)
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if a.dtype.kind != "f":
        return _wrap(a.copy())  # an integer is already whole
    return op.run((input,), a)


def floor(input):
    """The largest whole number <= each element (integers are returned as they are)."""
    return _rounding("floor", input, pointwise.FloorBackward0, "floor_vml_cpu")


def ceil(input):
    """The smallest whole number >= each element."""
    return _rounding("ceil", input, pointwise.CeilBackward0, "ceil_vml_cpu")


def trunc(input):
    """Each element with its fraction dropped (rounded toward zero)."""
    return _rounding("trunc", input, pointwise.TruncBackward0, "trunc_vml_cpu")


def round(input, *, decimals=0):
    """Each element rounded to ``decimals`` places, halves to even (2.5 -> 2, 3.5 -> 4)."""
    if decimals == 0:
        return _rounding("round", input, pointwise.RoundBackward0, "round_vml_cpu")
    _check_tensor("round", input)
    _refuse_integers("round", input._data, "round_cpu")
    return pointwise.RoundBackward1.run((input,), input._data, decimals)


def frac(input):
    """The fractional part ``x - trunc(x)``, with x's sign."""
    _check_tensor("frac", input)
    _refuse_integers("frac", input._data, "frac_cpu")
    return pointwise.FracBackward0.run((input,), input._data)


# ------------------------------------------------------------------ more elementwise functions

def rsqrt(input):
    """``1 / sqrt(x)``."""
    return _elementwise("rsqrt", input, pointwise.RsqrtBackward0)


def erf(input):
    """The error function, ``2/sqrt(pi)`` times the integral of ``e^(-t^2)`` from 0 to x."""
    return _elementwise("erf", input, pointwise.ErfBackward0)


def sinh(input):
    return _elementwise("sinh", input, pointwise.SinhBackward0)


def cosh(input):
    return _elementwise("cosh", input, pointwise.CoshBackward0)


def asin(input):
    """The inverse sine (nan outside [-1, 1])."""
    return _elementwise("asin", input, pointwise.AsinBackward0)


def acos(input):
    """The inverse cosine (nan outside [-1, 1])."""
    return _elementwise("acos", input, pointwise.AcosBackward0)


def atan(input):
    return _elementwise("atan", input, pointwise.AtanBackward0)


def _pair(name, input, other):
    """Both operands as arrays of their promoted dtype (integers become float32 for ops
    that only exist for floats) and ``other`` as a Tensor or None."""
    _check_tensor(name, input)
    a, b, t = input._operands(other)
    return a, np.asarray(b, dtype=a.dtype), t


def atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi]: ``atan(input / other)`` with the
    quadrant from both signs."""
    _check_tensor("atan2", other, "other", 2)
    y, x, _ = _pair("atan2", input, other)
    if y.dtype.kind != "f":
        y, x = y.astype(dtypes.DEFAULT_FLOAT), x.astype(dtypes.DEFAULT_FLOAT)
    return arithmetic.Atan2Backward0.run((input, other), y, x)


def fmod(input, other):
    """The remainder of ``input / other`` with the sign of ``input`` (C's fmod; ``%`` takes
    the sign of ``other``)."""
    a, b, t = _pair("fmod", input, other)
    if a.dtype.kind in "iub" and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")
    if t is None:
        return arithmetic.FmodBackward0.run((input,), a, other=b)
    return arithmetic.FmodBackward1.run((input, t), a, b)


def lerp(input, end, weight):
    """``input + weight * (end - input)``: the point a fraction ``weight`` of the way from
    ``input`` to ``end``."""
    _check_tensor("lerp", input)
    _check_tensor("lerp", end, "end", 2)
    start, stop = input._data, end._data
    if start.dtype != stop.dtype:
        raise RuntimeError(f"expected dtype {dtypes.from_numpy(start.dtype)} for `end` but got "
                           f"dtype {dtypes.from_numpy(stop.dtype)}")
    _refuse_integers("lerp", start, "lerp_kernel_scalar")
    if isinstance(weight, Tensor):
        w = weight._data.astype(start.dtype, copy=False)
        return arithmetic.LerpBackward1.run((input, end, weight), start, stop, w)
    return arithmetic.LerpBackward0.run((input, end), start, stop, weight=float(weight))


def isinf(input):
    """True where an element is +inf or -inf."""
    _check_tensor("isinf", input)
    return _wrap(np.isinf(input._data))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (default: the dtype's largest
    and smallest finite numbers)."""
    _check_tensor("nan_to_num", input)
    a = input._data
    if a.dtype.kind != "f":
        return _wrap(a.copy())
    return pointwise.NanToNumBackward0.run((input,), a, nan=nan, posinf=posinf, neginf=neginf)


def _logical(name, fn, input, other):
    _check_tensor(name, input)
    _check_tensor(name, other, "other", 2)
    try:
        return _wrap(fn(input._data.astype(bool), other._data.astype(bool)))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(input.shape)}) must match the size of "
                           f"tensor b ({list(other.shape)}) to broadcast") from None


def logical_and(input, other):
    """True where both elements are nonzero."""
    return _logical("logical_and", np.logical_and, input, other)


def logical_or(input, other):
    return _logical("logical_or", np.logical_or, input, other)


def logical_xor(input, other):
    return _logical("logical_xor", np.logical_xor, input, other)


def count_nonzero(input, dim=None):
    """How many elements are not zero (along ``dim``: one count per slice), as int64."""
    _check_tensor("count_nonzero", input)
    axes = None if dim is None else tuple(input._dims(dim))
    return _wrap(np.asarray(np.count_nonzero(input._data, axis=axes), dtype=np.int64))


# ------------------------------------------------------------------ reductions

def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x)))`` along ``dim``, computed stably: the largest element is taken out
    before exp, so large inputs do not overflow (``x.exp().sum().log()`` gives inf)."""
    _check_tensor("logsumexp", input)
    axes = tuple(input._dims(dim))
    return softmax.LogsumexpBackward0.run((input,), input._float_data(), axes=axes,
                                          keepdim=keepdim)


def cumprod(input, dim, *, dtype=None):
    """The running product along ``dim``: ``out[i] = x[0] * x[1] * ... * x[i]``. Integers
    and bools give int64, as the running sum does."""
    _check_tensor("cumprod", input)
    a = input._data
    axis = input._dim(dim)
    target = dtypes.to_numpy(dtype) if dtype is not None else (np.int64 if a.dtype.kind in "iub"
                                                     else a.dtype)
    return reductions.CumprodBackward0.run((input,), a.astype(target, copy=False), axis=axis)


def _moments(name, input, dim, correction, keepdim, std):
    _check_tensor(name, input)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    spread = input.std if std else input.var
    kwargs = {"keepdim": keepdim, "correction": 1 if correction is None else correction}
    if dim is None:
        results = spread(**kwargs), input.mean()
    else:
        results = spread(dim, **kwargs), input.mean(dim, keepdim=keepdim)
    for t in results:  # PyTorch records both under one node, StdMeanBackward0 / VarMeanBackward0
        if t._grad_fn is not None:
            t._grad_fn.__class__ = _renamed(type(t._grad_fn), "StdMeanBackward0" if std
                                            else "VarMeanBackward0")
    return results


_RENAMED = {}


def _renamed(node_cls, name):
    """``node_cls`` under PyTorch's ``name`` (same backward, a subclass with no new fields)."""
    key = (node_cls, name)
    if key not in _RENAMED:
        _RENAMED[key] = type(name, (node_cls,), {"__slots__": ()})
    return _RENAMED[key]


def std_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    """``(std, mean)`` in one call (``correction=1`` by default: divides by N-1)."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _moments("std_mean", input, dim, correction, keepdim, std=True)


def var_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    """``(var, mean)`` in one call."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _moments("var_mean", input, dim, correction, keepdim, std=False)


# ------------------------------------------------------------------ sorting and selection

def _values_indices(name):
    """A ``(values, indices)`` namedtuple printed as PyTorch's ``torch.return_types``."""
    def __repr__(self):
        return f"minigrad.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return type(name, (namedtuple(name, ["values", "indices"]),),
                {"__slots__": (), "__repr__": __repr__})


ValuesIndices = _values_indices("sort")
_Topk = _values_indices("topk")
_Median = _values_indices("median")


def _sort_order(a, axis, descending):
    """Stable order along ``axis`` (equal elements keep their order), nan last as PyTorch
    puts it (first when descending)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # flip, stable-sort ascending, flip back: equal elements then keep their first-come order
    flipped = np.flip(a, axis=axis)
    order = np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - order


def sort(input, dim=-1, descending=False, *, stable=None):
    """``(values, indices)``: the elements sorted along ``dim`` and where each came from.
    Always stable here (PyTorch's ``stable=False`` may order equal elements either way)."""
    _check_tensor("sort", input)
    a = input._data
    op = sorting.SortBackward0 if stable is None else sorting.SortBackward1
    axis = input._dim(dim)
    order = _sort_order(a, axis, descending) if a.ndim else np.zeros((), np.int64)
    out = op.run((input,), a, indices=order, axis=axis)
    return ValuesIndices(out, _wrap(order.astype(np.int64)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable=stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim``, largest first."""
    _check_tensor("topk", input)
    a = input._data
    axis = input._dim(dim)
    size = a.shape[axis] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range: k={k} but the dimension has "
                           f"{size} elements")
    if a.ndim == 0:
        order = np.zeros((), np.int64)
    else:
        order = np.take(_sort_order(a, axis, largest), np.arange(k), axis=axis)
    out = sorting.TopkBackward0.run((input,), a, indices=order, axis=axis)
    return _Topk(out, _wrap(order.astype(np.int64)))


def median(input, dim=None, keepdim=False):
    """The lower median (of an even count, the smaller of the two middle elements, as
    PyTorch; numpy's median averages them). With ``dim``: ``(values, indices)``."""
    _check_tensor("median", input)
    a = input._data
    if dim is None:
        if a.size == 0 and a.dtype.kind == "f":
            return _wrap(np.array(np.nan, a.dtype))  # as PyTorch: the median of nothing
        if a.size == 0:
            raise IndexError("median() input tensor cannot be empty")
        flat = np.sort(a.reshape(-1))  # nan sorts last: a nan makes the median nan
        value = flat[-1] if a.dtype.kind == "f" and np.isnan(flat[-1]) else \
            flat[(flat.size - 1) // 2]
        return sorting.MedianBackward0.run((input,), a, value=np.array(value))
    axis = input._dim(dim)
    if a.ndim == 0:
        order = np.zeros((), np.int64)
        return _Median(sorting.MedianBackward1.run((input,), a, indices=order, axis=0),
                       _wrap(order))
    order = np.argsort(a, axis=axis, kind="stable")
    middle = np.take(order, [(a.shape[axis] - 1) // 2], axis=axis)
    if a.dtype.kind == "f":  # a slice with a nan: its first nan, as PyTorch
        nan = np.isnan(a)
        middle = np.where(nan.any(axis, keepdims=True), nan.argmax(axis, keepdims=True), middle)
    out = sorting.MedianBackward1.run((input,), a, indices=middle, axis=axis, keepdim=keepdim)
    out_index = middle if keepdim else np.squeeze(middle, axis)
    return _Median(out, _wrap(out_index.astype(np.int64)))


# ------------------------------------------------------------------ products

def einsum(equation, *operands):
    """Products and sums given by index letters, as numpy's and PyTorch's einsum:
    ``einsum('ij,jk->ik', a, b)`` is ``a @ b``, ``einsum('i,i->', u, v)`` the dot product,
    ``einsum('ii->i', m)`` the diagonal. (No ``...`` in the equation.)"""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, t in enumerate(operands):
        _check_tensor("einsum", t, "operands", i + 2)
    equation = equation.replace(" ", "")
    if "." in equation:
        raise NotImplementedError("einsum(): '...' is not supported by minigrad; name each "
                                  "dimension with a letter")
    if "->" in equation:
        inputs, output = equation.split("->")
    else:
        inputs = equation
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the "
                           f"equation" if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    arrays = [t._data for t in operands]
    if len({x.dtype for x in arrays}) > 1:
        raise RuntimeError(f"einsum(): expected scalar type {_scalar_name(arrays[0].dtype)} "
                           f"but found {_scalar_name([x.dtype for x in arrays][1])}: give all "
                           "operands the same dtype")
    node_cls = _renamed(linalg.EinsumBackward0, _einsum_node_name(terms, output))
    try:
        return node_cls.run(operands, *arrays, terms=terms, output=output)
    except ValueError as error:
        raise RuntimeError(f"einsum(): {error}") from None


def _einsum_node_name(terms, output):
    """The name of PyTorch's last node for this einsum: one operand is a permute (or a sum
    when it sums a letter away); several end in a batched product (a view of it), or in a
    plain product when the last step sums nothing."""
    if len(terms) == 1:
        return "SumBackward1" if set(terms[0]) - set(output) else "PermuteBackward0"
    left = set().union(*terms[:-1])
    summed = (left & set(terms[-1])) - set(output)
    return "ViewBackward0" if summed else "MulBackward0"


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices (input broadcasts): a linear
    layer's ``bias + x @ W`` in one call."""
    for position, (name, value) in enumerate((("input", input), ("mat1", mat1),
                                              ("mat2", mat2)), 1):
        _check_tensor("addmm", value, name, position)
    c, m1, m2 = input._data, mat1._data, mat2._data
    if m1.ndim != 2 or m2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor" if m1.ndim != 2
                           else f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1.shape[0]}x"
                           f"{m1.shape[1]} and {m2.shape[0]}x{m2.shape[1]})")
    if not (c.dtype == m1.dtype == m2.dtype):
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{dtypes.from_numpy(m1.dtype)} != {dtypes.from_numpy(m2.dtype)}")
    try:
        np.broadcast_to(c, (m1.shape[0], m2.shape[1]))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({m2.shape[1]}) must match "
                           f"the existing size ({c.shape[-1]}) of input") from None
    return linalg.AddmmBackward0.run((input, mat1, mat2), c, m1, m2, beta=beta, alpha=alpha)


# ------------------------------------------------------------------ random

def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (each element a probability in [0, 1]), else 0; the
    result has the input's dtype."""
    _check_tensor("bernoulli", input)
    probs = input._data
    _refuse_integers("bernoulli", probs, "bernoulli_tensor_cpu_p_")
    if p is not None:
        probs = np.full(probs.shape, p, probs.dtype)
    if np.any((probs < 0) | (probs > 1)) or np.isnan(probs).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. "
                           "(bernoulli needs probabilities between 0 and 1)")
    return pointwise.BernoulliBackward0.run((input,), probs, numpy_rng(generator))
