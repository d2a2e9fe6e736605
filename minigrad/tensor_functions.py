"""The functions on tensors that are not methods: ``matmul``, ``stack``, ``cat``, ``where``,
and ``tensor_from``/``as_array``, which make an array with PyTorch's dtype rules (chapter 5).
"""

import numpy as np

from . import dtypes
from .ops import arithmetic, linalg, selection
from .ops import shape as ops_shape
from .ops.op import saving_versions_of
from .tensor_rules import _broadcast_error, _needs_grad

# Set by tensor.py once Tensor exists (it imports this module first): no import, nothing
# to look up per call but a global.
Tensor = _wrap = None


def tensor_from(value):
    """A Tensor for ``value`` (a Tensor is returned as is), inferring the dtype as PyTorch."""
    if isinstance(value, Tensor):
        return value
    return _wrap(as_array(value))


def as_array(data, dtype=None):
    """``data`` as a fresh numpy array with PyTorch's dtype rules: Python floats -> float32,
    ints -> int64, bools -> bool; numpy arrays keep their dtype. A tensor inside a list is
    one number, as in PyTorch (``[t.sum(), t.mean()]``); a bigger one raises ValueError."""
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        arr = np.array([_element(x) for x in data], dtype=_list_dtype(_flat(data)))
    else:
        from_numpy = isinstance(data, (np.ndarray, np.generic))
        arr = np.array(data)
        if arr.dtype == object:
            raise TypeError(f"could not make a tensor from {type(data).__name__}: "
                            "nested lists must be rectangular and hold numbers only")
        if not from_numpy and arr.dtype == np.float64 and dtype is None:
            arr = arr.astype(dtypes.DEFAULT_FLOAT)
        if arr.dtype.kind in "US":
            raise TypeError("new(): invalid data type 'str'")
    if dtype is not None:
        arr = arr.astype(dtypes.to_numpy(dtype), copy=False)
    dtypes.from_numpy(arr.dtype)  # refuse dtypes minigrad does not have
    return arr


def _element(x):
    """An element of a list given to ``tensor``: a tensor there must hold one number."""
    if isinstance(x, Tensor):
        if x._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars "
                             f"(a tensor of shape {list(x.shape)} inside a list): use "
                             "mg.stack(list_of_tensors) to stack tensors")
        return x._data.reshape(())
    return as_array(x) if isinstance(x, (list, tuple)) else x


def _list_dtype(leaves):
    """PyTorch's dtype for a list that holds tensors: the widest float among its numbers (a
    Python float counts as the default float32, not numpy's float64), else the widest
    integer, else bool; None (numpy decides) for anything else."""
    found = []
    for x in leaves:
        if isinstance(x, (Tensor, np.ndarray, np.generic)):
            found.append((x._data if isinstance(x, Tensor) else np.asarray(x)).dtype)
        elif isinstance(x, bool):
            found.append(np.dtype(np.bool_))
        elif isinstance(x, int):
            found.append(np.dtype(np.int64))
        elif isinstance(x, float):
            found.append(np.dtype(dtypes.DEFAULT_FLOAT))
        else:
            return None
    for kind in "fiub":
        same = [d for d in found if d.kind == kind]
        if same:
            return max(same, key=lambda d: d.itemsize)
    return None


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _addc(t, t1, t2, value, node_cls):
    """``t + value * t1 * t2`` or ``t + value * t1 / t2``: addcmul and addcdiv."""
    a, b, c = t._data, t1._data, t2._data
    if node_cls is arithmetic.AddcdivBackward0 and b.dtype.kind in "biu" \
            and c.dtype.kind in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported: make "
                           "tensor1 or tensor2 a float tensor (tensor1.float())")
    try:
        return node_cls.run((t, t1, t2), a, b, c, value=value)
    except ValueError:
        raise _broadcast_error(a, np.broadcast(b, c), node_cls.__name__[:7].lower()) from None


def _pairwise(a, b, node_cls):
    """maximum and minimum: ``b`` may be a number (then made a tensor of ``a``'s dtype)."""
    if not isinstance(a, Tensor):
        a = tensor_from(a)
    x, y, t = a._operands(b)
    if t is None:
        y = np.asarray(y, dtype=x.dtype)
    try:
        return node_cls.run((a, t), x, y)
    except ValueError:
        raise _broadcast_error(x, y, node_cls.__name__[:7].lower()) from None


def matmul(a, b):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    if not isinstance(a, Tensor):
        a = tensor_from(a)
    if isinstance(b, Tensor) and a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}. "
            "Convert one of them first, e.g. a.double() or b.float()")
    x, y, t = a._operands(b)
    if t is None or x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{x.ndim}D and {np.ndim(y)}D")
    try:
        return linalg.node_for_matmul(x, y).run((a, t), x, y)
    except ValueError:
        if x.ndim <= 2 and y.ndim <= 2:
            sa = "x".join(map(str, x.shape if x.ndim == 2 else (1,) + x.shape))
            sb = "x".join(map(str, y.shape if y.ndim == 2 else y.shape + (1,)))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): "
                               f"the last dimension of the first ({x.shape[-1]}) must equal "
                               f"the first dimension of the second ({y.shape[0]})") from None
        raise RuntimeError(f"matmul: shapes {list(x.shape)} and {list(y.shape)} cannot be "
                           "multiplied: the last dimension of the first must equal the "
                           "second-to-last of the second, and batch dimensions must "
                           "broadcast") from None


def _common(tensors):
    tensors = [tensor_from(t) for t in tensors]
    if not tensors:
        raise RuntimeError("expected a non-empty list of Tensors")
    common = tensors[0]._data.dtype
    for t in tensors[1:]:
        # stack and cat promote a 0-dim tensor like any other (no "wrapped number" rule)
        common = dtypes.promote(np.empty(1, common), np.empty(1, t._data.dtype))
    return tensors, [t._data.astype(common, copy=False) for t in tensors]


def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dimension."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    tensors, arrays = _common(tensors)
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got shapes "
                           f"{[list(a.shape) for a in arrays]}")
    n = arrays[0].ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    dim %= n
    if not _needs_grad(*tensors):
        return _wrap(np.stack(arrays, axis=dim))
    return ops_shape.StackBackward0.run(tensors, *arrays, dim=dim)


def cat(tensors, dim=0):
    """Join tensors end to end along an existing dimension. As in PyTorch, a 1-D empty tensor
    (shape [0], a common "nothing yet" start) is skipped whatever the others' shapes."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    tensors, arrays = _common(tensors)
    for i, a in enumerate(arrays):
        if not a.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated: stack them, or unsqueeze(0) each first")
    joined = [a for a in arrays if a.shape != (0,)]
    # only [0]-shaped tensors: PyTorch gives one, whatever the dim
    dim = _wrap(joined[0])._dim(dim) if joined else 0
    joined = joined or arrays
    try:
        if not _needs_grad(*tensors):
            return _wrap(np.concatenate(joined, axis=dim))
        sizes = [a.shape[dim] if a.shape != (0,) or len(joined) == len(arrays) else None
                 for a in arrays]
        return ops_shape.CatBackward0.run(tensors, *arrays, joined=joined, dim=dim,
                                          sizes=sizes)
    except ValueError:
        raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}: got shapes "
                           f"{[list(a.shape) for a in arrays]}") from None


def where(condition, input=None, other=None):
    """Elementwise choice: ``input`` where ``condition`` holds, ``other`` elsewhere.
    ``where(condition)`` alone is ``condition.nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return tensor_from(condition).nonzero(as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {dtypes.from_numpy(cond.dtype)}")
    if not isinstance(input, Tensor):
        if isinstance(other, Tensor):  # a number and a tensor: promoted as in ``other + 1.5``
            promoted, number, _ = other._operands(input)
            input = _wrap(np.asarray(number).astype(promoted.dtype))
        else:
            input = tensor_from(input)
    x, y, t = input._operands(other)
    if t is None:
        y = np.asarray(y).astype(x.dtype)
    try:
        return saving_versions_of(selection.WhereBackward0.run((input, t), x, y, condition=cond),
                                  condition if isinstance(condition, Tensor) else None)
    except ValueError:
        raise _broadcast_error(x, y, "where") from None
