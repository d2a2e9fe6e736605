"""``Tensor``: a numpy array that remembers the operations that made it (chapters 2 and 5).

Every op computes its result with numpy. When grad mode is on and an input requires grad,
it also attaches a node from ``derivatives`` that knows the inputs' nodes and how to send a
gradient back to them. ``backward()`` hands the graph to the engine in ``graph``.
"""

import functools
import math
import numbers
import operator
import warnings
import weakref
from collections import namedtuple

import numpy as np

from . import dtypes, printing
from . import derivatives as d
from .ops.op import Op
from .ops import (activations, arithmetic, indexing, linalg, pointwise, reductions,
                  selection, sorting)
from .ops import shape as ops_shape
from .ops import softmax as softmax_ops
from .ops.softmax import max_keepdim as _max_keepdim  # noqa: F401 (nn's cross-entropy)
from . import graph as _graph
from .graph import (AccumulateGrad, VersionCounter, _GradMode, _check_saved_unchanged,
                    backward as _engine_backward,
                    mark_changed_in_place, note_viewed, saved_output_is)

_new = object.__new__
_ndarray = np.ndarray
_Number = (int, float, bool, np.number, np.bool_)


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``minigrad.Size([2, 3])``."""
    __slots__ = ()

    def numel(self):
        return int(np.prod(self, dtype=np.int64))

    def __repr__(self):
        return f"minigrad.Size({list(self)})"


# The device types PyTorch knows, in the order its error message lists them.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


class device:
    """Where a tensor lives: ``device('cuda:1')`` has ``.type`` 'cuda' and ``.index`` 1,
    and compares, hashes and prints as PyTorch's. Any of PyTorch's devices can be named
    (so ``device = torch.device("cuda" if ...)`` code runs), but minigrad's tensors and
    layers live on the CPU only: ``check_device`` refuses the others."""
    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise RuntimeError("Cannot access accelerator device when none is available: "
                               "name the device, e.g. device('cpu')")
        name, _, number = type.partition(":")
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {type}")
        if number:
            if not number.isdigit() or ":" in number or (len(number) > 1 and number[0] == "0"):
                raise RuntimeError(f"Invalid device string: {type!r}")
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index "
                                   f"was passed explicitly: {type}")
            index = int(number)
        if index is not None:
            index = int(index)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self.type, self.index = name, index

    def __eq__(self, other):
        """Equal devices have the same type and index; a string is never equal to a device
        (as in PyTorch: compare ``t.device.type == 'cpu'``)."""
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def check_device(dev):
    """Accept the CPU (and None); refuse anything else with what to do instead."""
    if dev is None:
        return
    name = str(dev)
    if name != "cpu" and not name.startswith("cpu:"):
        raise RuntimeError(
            f"minigrad runs on the CPU only, so it cannot use device '{name}'. "
            "Leave the device out or use 'cpu'; with PyTorch the same code can use "
            "device='cuda'.")


CPU = device("cpu")

LEAF_INPLACE = (
    "a leaf Variable that requires grad is being used in an in-place operation. "
    "To change a parameter by hand, do it without recording: `with minigrad.no_grad(): "
    "w -= lr * w.grad` (that is what optimizer.step() does).")

VIEW_INPLACE = (
    "an in-place operation on a view of another tensor's memory (a slice x[...], x.T, "
    "x.view(...), x.squeeze(), ...) cannot be recorded for backward: minigrad does not track "
    "how the change reaches the tensor it views, so that tensor's gradient would be wrong. "
    "Work out of place (y = x[:2] * 0), or assign through the tensor that owns the memory "
    "(h[:2] = 0), which minigrad records.")

_OVERLAPPING_WRITE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location (an expanded tensor). Please clone() the tensor before performing the "
    "operation.")

# PyTorch's old names for tensors of each dtype, as t.type() prints them.
_LEGACY_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor",
                      "float16": "HalfTensor", "int64": "LongTensor", "int32": "IntTensor",
                      "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                      "bool": "BoolTensor"}

MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _wrap(data, grad_fn=None):
    """A new Tensor around ``data`` (an ndarray), without copying: the fast constructor.

    Every tensor's storage is an ndarray, a 0-dim one for a single number: numpy gives a
    scalar (``np.float32(2.0)``) for ``a * b`` or ``a.sum()`` on 0-dim arrays, and a scalar
    has no memory to change in place (``zero_``, ``+=``, ``copy_``, ``optimizer.step()``)."""
    t = _new(Tensor)
    if type(data) is not _ndarray:
        try:
            data = data.__array__()  # a numpy scalar: its 0-dim array, the fastest way
        except AttributeError:
            data = np.asarray(data)
    t._data = data
    t._grad_fn = grad_fn
    t._requires_grad = grad_fn is not None
    t._grad = None
    t._accumulator = None
    t._version_counter = None  # made on first need: see Tensor._version
    return t


def gradient_node(t):
    """The node that receives ``t``'s gradient: its grad_fn, its AccumulateGrad, or None
    (an op's edge to this input: what ``next_functions`` shows)."""
    fn = t._grad_fn
    if fn is not None:
        return fn
    if not t._requires_grad:
        return None
    if t._accumulator is None:
        t._accumulator = AccumulateGrad(t)  # made on first use, then reused by every graph
    return t._accumulator


_edge = gradient_node  # the short name the ops use


def _edges(a, b):
    """The input nodes of a binary op whose second operand may be a Python number (None)."""
    return (_edge(a), _edge(b) if b is not None else None)


def _run_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                  inputs=None, *, accumulate=True, allow_unused=None, materialize_grads=False):
    """The one way into the engine, with PyTorch's checks and messages: ``Tensor.backward``
    and ``autograd.backward`` (``accumulate=True``: gradients go into ``.grad``) and
    ``autograd.grad`` (``accumulate=False``: the gradients of ``inputs`` are returned as a
    tuple and no ``.grad`` changes). Every check runs before anything changes (chapter 3)."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = (grad_tensors,) if isinstance(grad_tensors, Tensor) else tuple(grad_tensors)
        if len(grad_tensors) < len(tensors):
            raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        _check_inputs(inputs, "backward" if accumulate else "grad")
    elif not accumulate:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    roots, seeds = [], []
    for i, (out, given) in enumerate(zip(tensors, grad_tensors)):
        roots.append(_edge(out) if isinstance(out, Tensor) else None)
        seeds.append(_seed(i, out, given, create_graph))
    for i, (out, node) in enumerate(zip(tensors, roots)):
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn. "
                "Create the inputs with requires_grad=True (and outside no_grad()) so that "
                "operations on them are recorded.")
    if inputs is None:
        _engine_backward(roots, seeds, retain_graph=bool(retain_graph), create_graph=create_graph)
        return None
    targets = [_edge(t) for t in inputs]
    captured = _engine_backward(roots, seeds, retain_graph=bool(retain_graph), capture=targets,
                             create_graph=create_graph)
    results = []
    for i, (t, node) in enumerate(zip(inputs, targets)):
        g = captured.get(node)
        if g is None:
            if accumulate or allow_unused and not materialize_grads:
                results.append(None)
            elif materialize_grads:
                results.append(_wrap(np.zeros_like(t._data)))
            else:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
        elif accumulate:
            t.accumulate_grad(g)
        elif type(g) is Tensor:  # create_graph: the gradient keeps its history
            if g._data.dtype != t._data.dtype:
                g = g.to(t.dtype)
            results.append(g if g._data.shape == t._data.shape else g.expand(*t.shape))
        else:
            results.append(_wrap(np.array(g, dtype=t._data.dtype).reshape(t._data.shape)))
    return None if accumulate else tuple(results)


def _check_inputs(inputs, caller):
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _seed(i, out, given, create_graph):
    """The gradient backward starts from at output ``i``: ``given`` (checked, in ``out``'s
    dtype), or 1 for a one-element output. An array, or a Tensor under create_graph."""
    if given is None:
        if not isinstance(out, Tensor) or not out._requires_grad:
            return None  # reported as "does not require grad" once all seeds are checked
        if out._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, but this tensor "
                f"has shape {list(out.shape)}. Reduce it to one number first (e.g. "
                "y.sum().backward()) or pass the gradient of the final result with "
                "respect to it: y.backward(gradient=minigrad.ones_like(y)).")
        grad = np.ones(out._data.shape, out._data.dtype)
        return _wrap(grad) if create_graph else grad
    if not isinstance(given, Tensor):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(given).__name__}")
    if not isinstance(out, Tensor):
        return None
    if given._data.shape != out._data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {given.shape} "
                           f"and output[{i}] has a shape of {out.shape}.")
    if create_graph:  # a given gradient keeps its history (a vjp of a vjp needs it)
        if given._data.dtype == out._data.dtype:
            return given
        return _wrap(given._data.astype(out._data.dtype))
    return given._data.astype(out._data.dtype, copy=False)


def _needs_grad(*tensors):
    if not _GradMode.enabled:
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


def _int_operand(value, dtype):
    """A Python int as the operand of an arithmetic op or comparison with an integer tensor
    of ``dtype``: PyTorch converts it to that dtype with wrap-around (``uint8 + -1`` adds
    255, ``uint8 < -1`` compares with 255), where numpy 2 refuses or compares exactly."""
    low, high = _INT_RANGE[dtype]
    if low <= value <= high:
        return value
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError(f"int too big to convert: {value} does not fit in 64 bits")
    return (value - low) % (high - low + 1) + low


def _number_as(value, dtype):
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


def _int_bounds(low, high, dtype):
    """clamp's number bounds for an integer tensor, converted as PyTorch does (``_number_as``:
    ``clamp_min(-2)`` on uint8 means 254)."""
    return tuple(None if b is None else _number_as(b, dtype) for b in (low, high))


def _writable(a):
    """``a``, or for an expanded array (read-only: one element seen many times) the same
    elements as a writable array on the memory it views, for zero_ and fill_, which PyTorch
    allows on an expanded tensor (every position gets the same value, so overlap is fine)."""
    if a.flags.writeable:
        return a
    base = a.base
    while base is not None and not base.flags.writeable:
        base = base.base
    if base is None:
        raise RuntimeError(_OVERLAPPING_WRITE)
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    try:
        return np.ndarray(a.shape, a.dtype, buffer=base, offset=offset, strides=a.strides)
    except (TypeError, ValueError):  # a base that is not contiguous has no buffer to share
        raise RuntimeError(_OVERLAPPING_WRITE) from None


def _with_numbers(a, *numbers):
    """``a`` in the dtype PyTorch gives ``a`` combined with Python numbers (``None`` is no
    number): a float makes an integer or bool array float32, an int makes a bool one int64."""
    kind = a.dtype.kind
    if kind in "biu" and any(isinstance(n, float) for n in numbers):
        return a.astype(dtypes.DEFAULT_FLOAT)
    if kind == "b" and any(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return a.astype(dtypes.DEFAULT_INT)
    return a


def _refuse_empty_reduction(name, a, dim, error=RuntimeError):
    """max, min, argmax and argmin of nothing do not exist: PyTorch's errors for them (its
    argmax says IndexError where its max says RuntimeError)."""
    if dim is None and a.size == 0:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.")
    if dim is not None and a.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _bool_subtraction_error():
    """PyTorch has no ``-`` for bools (numpy computes int - True, and True - 1)."""
    return RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                        "If you are trying to invert a mask, use the `~` or `logical_not()` "
                        "operator instead.")


def _bound_as_number(bound):
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


def _kind(value):
    """The numpy kind of an operand: an array, a Tensor or a Python number."""
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, np.ndarray):
        return value.dtype.kind
    return "b" if isinstance(value, bool) else "i" if isinstance(value, numbers.Integral) \
        else "f" if isinstance(value, numbers.Real) else "c"


def _can_hold(dtype, other):
    """PyTorch's rule for an in-place result: a tensor holds any result of its own kind or a
    lower one (float32 += float64 and uint8 += int64 are fine), never a higher one
    (int_tensor += 1.5, bool_tensor += 1)."""
    return _KIND_ORDER[_kind(other)] <= _KIND_ORDER[dtype.kind]


def _cannot_hold(other, t):
    """PyTorch's error when an in-place op's result (of ``other``'s kind) does not fit ``t``."""
    return RuntimeError(f"result type {_KIND_NAMES[_kind(other)]} can't be cast to the "
                        f"desired output type {t.dtype}: work on a converted copy "
                        f"(t = t.float() + ...) instead of in place")


def _true_divide(a, b, out, casting):
    """``np.true_divide`` in place, silent about x/0 and 0/0 (inf and nan, as in PyTorch)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b, out=out, casting=casting)


_sigmoid = pointwise._sigmoid  # (of an array: the losses use it too)


def _broadcast_error(a, b, op):
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


# How PyTorch reads an index (python_variable_indexing.cpp), which is not numpy's rule:
# integers select first, one dimension at a time, so an integer never counts as an advanced
# index; the arrays (int positions, bool masks) are then applied to what is left, with
# numpy's placement rule (their dims stay in place when they are adjacent, go first when a
# slice or None separates them). minigrad does the same in two numpy steps: ``first`` (ints,
# slices, None: a view) and then ``advanced`` (full slices and arrays only).

_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated (PyTorch still "
    "reads x[[0, [1]]] as x[0, [1]], and so does minigrad): use x[tuple(seq)] instead of "
    "x[seq], or x[torch.tensor(seq)] for an index tensor.")

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")


def _check_step(step):
    """PyTorch refuses a slice that walks backwards (numpy would return a reversed view)."""
    if step <= 0:
        raise ValueError("step must be greater than zero" if step else
                         "slice step cannot be zero")


def _sequence_as_tuple(seq):
    """PyTorch's (and old numpy's) heuristic: a short list holding a sequence, a tensor, a
    slice, None or Ellipsis is a tuple of indices, not one index."""
    if len(seq) >= 32:
        return False
    for item in seq:
        if item is None or item is Ellipsis or isinstance(item, (Tensor, np.ndarray, list, tuple,
                                                                  slice, str, range)):
            return True
    return False


def _sequence_index(seq):
    """A (nested) list used as one index -> an index array, as PyTorch converts it: bools
    make a mask, other numbers int64 positions (floats are truncated, [] is an empty
    int64 index)."""
    array = np.array([x._data if isinstance(x, Tensor) else x for x in seq])
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind not in "iuf":
        raise TypeError(f"an index list must hold numbers or bools, not {array.dtype}")
    return array.astype(np.int64)


def _index_part(k):
    """One item of an index: an int (select), a slice, None, Ellipsis or an array (int
    positions, or a bool mask; a 0-dim bool array stands for a Python True/False)."""
    if k is None or k is Ellipsis:
        return k
    kind = type(k)
    if kind is int:
        return k
    if kind is slice:
        if k.step is not None:
            _check_step(k.step)
        return k
    if kind is bool or kind is np.bool_:
        return np.asarray(k)
    if isinstance(k, numbers.Integral):
        return int(k)
    if isinstance(k, Tensor):
        k = k._data
    elif isinstance(k, (list, tuple, range)):
        k = _sequence_index(k)
    elif isinstance(k, str):
        raise TypeError(f"a string cannot be an index ({k!r})")
    elif not isinstance(k, np.ndarray):
        raise IndexError(_BAD_INDEX.format(type(k).__name__))
    kind = k.dtype.kind
    if kind == "b":
        return k
    if kind == "u" and k.dtype.itemsize == 1:
        warnings.warn("indexing with dtype uint8 is now deprecated, please use a dtype bool "
                      "instead.", UserWarning, stacklevel=5)
        return k.astype(bool)
    if kind in "iu":
        return int(k) if k.ndim == 0 else k
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors, "
                     f"not {dtypes.from_numpy(k.dtype)}")


def _check_masks(advanced, shape):
    """A bool mask must have the shape of the dims it covers (numpy lets an empty mask
    through); PyTorch's IndexError otherwise. ``advanced`` holds no Ellipsis."""
    dim = 0
    for p in advanced:
        if not isinstance(p, np.ndarray) or p.dtype.kind != "b":
            dim += 1
            continue
        for j, n in enumerate(p.shape):
            if dim + j < len(shape) and shape[dim + j] != n:
                raise IndexError(f"The shape of the mask {list(p.shape)} at index {j} does not "
                                 f"match the shape of the indexed tensor {list(shape)} at "
                                 f"index {dim + j}")
        dim += p.ndim


def _split_advanced(parts, array):
    """``parts`` holding arrays -> ``(first, advanced)``: ``array[first]`` does the ints,
    slices and None (``first`` is None when there is nothing to do), ``[advanced]`` then
    the arrays, which is PyTorch's order of the result's dims."""
    first, advanced = [], []
    trivial = True
    ndim = array.ndim  # of array[first]
    for p in parts:
        if isinstance(p, np.ndarray):
            if p.ndim == 0:  # True / False: a new dim, indexed by [0] (size 1) or [] (size 0)
                first.append(None)
                advanced.append(np.zeros(1 if p else 0, np.int64))
                trivial = False
                ndim += 1
            else:
                first.extend([_ALL] * (p.ndim if p.dtype.kind == "b" else 1))
                advanced.append(p)
        elif p is Ellipsis:
            first.append(p)
            advanced.append(p)
        elif type(p) is int:
            first.append(p)
            trivial = False
            ndim -= 1
        else:  # slice or None
            first.append(p)
            advanced.append(_ALL)
            trivial = trivial and p == _ALL
            ndim += p is None
    at = [i for i, p in enumerate(advanced) if p is Ellipsis]
    if at:
        # Spelled out: numpy would see an Ellipsis (even of no dims) between two arrays as
        # separating them, PyTorch sees the dims.
        if len(at) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        rest = advanced[:at[0]] + advanced[at[0] + 1:]
        taken = sum(p.ndim if isinstance(p, np.ndarray) and p.dtype.kind == "b" else 1
                    for p in rest)
        advanced = advanced[:at[0]] + [_ALL] * (ndim - taken) + rest[at[0]:]
    first = None if trivial else tuple(first)
    advanced = tuple(advanced)
    if any(isinstance(p, np.ndarray) and p.dtype.kind == "b" for p in advanced):
        _check_masks(advanced, (array if first is None else array[first]).shape)
    return first, advanced


_ALL = slice(None)


def _to_index(key, array):
    """A Python/Tensor index into ``array`` -> ``(index, advanced)``. Basic indexing (ints,
    slices, None, Ellipsis) gives ``advanced = None`` and ``array[index]`` is a view. Otherwise
    the result is ``array[index][advanced]`` (``index`` None: ``array[advanced]``)."""
    kind = type(key)
    if kind is int:
        return key, None
    if kind is Tensor and key._data.ndim and key._data.dtype.kind == "i":
        return None, (key._data,)  # a batch of positions, as a training loop indexes
    if kind is slice:
        if key.step is not None:
            _check_step(key.step)
        return key, None
    if kind is tuple:
        for k in key:
            kind = type(k)
            if kind is slice:
                if k.step is not None:
                    _check_step(k.step)
            elif kind is not int and k is not None and k is not Ellipsis:
                break
        else:
            return key, None
        items = key
    elif kind is list and _sequence_as_tuple(key):
        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
        items = tuple(key)
    else:
        items = (key,)
    parts = tuple(_index_part(k) for k in items)
    if not any(isinstance(p, np.ndarray) for p in parts):
        return parts, None
    return _split_advanced(parts, array)


def _one_mask(advanced):
    """Is the advanced part of an index one bool mask (beside full slices)? PyTorch then
    assigns a one-element value of any dtype as masked_fill_ does."""
    arrays = [k for k in advanced if isinstance(k, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype.kind == "b"


def _is_view_at(value, array, index):
    """Is ``value`` (an array) exactly the memory of ``array[index]``?"""
    if value.base is not (array if array.base is None else array.base):
        return False
    target = array[index]
    if type(target) is not np.ndarray:
        target = _element_view(array, index)
    return (value.shape == target.shape and value.strides == target.strides
            and value.__array_interface__["data"][0] == target.__array_interface__["data"][0])


def _unchanged_view_nodes(tensors):
    """The view nodes of ``tensors`` whose memory has not changed since they were made
    (a changed one must keep refusing backward: something may have used the stale view)."""
    nodes = []
    for t in tensors:
        node = t._grad_fn
        if node is None:
            continue
        if getattr(node, "viewed", None) is not None or getattr(node, "versions", None):
            try:
                _check_saved_unchanged(node)
            except RuntimeError:
                continue
            nodes.append(node)
    return nodes


def _forget_viewed(node):
    """A view node whose memory is about to change through this very view: the change is
    recorded (CopySlices), so what used the view before may still backward."""
    if getattr(node, "viewed", None) is not None:
        node.viewed = None
    else:  # an Op view: forgotten as well, whatever changes its memory later
        node.versions[0] = _ANY_VERSION


class _AnyVersion:
    """A version that every version equals: a forgotten view node's expectation."""
    __slots__ = ()

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


_ANY_VERSION = _AnyVersion()


def _assigned(tensor, key, value):
    """A copy of ``tensor`` with ``copy[key] = value`` done (and recorded)."""
    out = tensor.clone()
    out[key] = value
    return out


def _element_view(array, index):
    """``array[index]`` for a basic index that picks one element, as a 0-dim view: numpy
    gives a copied scalar, but ``t[0].fill_(7)`` must change ``t`` as in PyTorch."""
    return array[(*index, ...) if type(index) is tuple else (index, ...)]


def _indexed(array, index, advanced):
    """``array`` indexed as ``_to_index`` said."""
    if advanced is not None:
        return (array if index is None else array[index])[advanced]
    value = array[index]
    return value if type(value) is np.ndarray else _element_view(array, index)


class Tensor:
    """An n-dimensional array of numbers that can record how it was computed.

    Create tensors with ``minigrad.tensor(data, requires_grad=...)`` or ``zeros``, ``randn``,
    ...; ``Tensor(data)`` works too and, as in PyTorch, makes float32.
    """

    # ``_view`` (set only on a basic-index view made in grad mode): (the indexed tensor, key).
    # ``_version_counter``: a graph.VersionCounter shared with the views, or None (version 0).
    __slots__ = ("_data", "_grad_fn", "_requires_grad", "_grad", "_accumulator", "_view",
                 "_version_counter", "__weakref__")
    __array_priority__ = 1000  # numpy_array * tensor -> Tensor.__rmul__

    def __init__(self, *args, dtype=None, requires_grad=False):
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            data = np.array(args[0]._data if isinstance(args[0], Tensor) else args[0],
                            dtype=dtypes.to_numpy(dtype) if dtype else dtypes.DEFAULT_FLOAT)
        else:
            data = np.zeros(tuple(int(a) for a in args),
                            dtype=dtypes.to_numpy(dtype) if dtype else dtypes.DEFAULT_FLOAT)
        self._init_leaf(data, requires_grad)

    def _init_leaf(self, data, requires_grad):
        """Make this object a leaf holding ``data`` (shared, not copied)."""
        self._data = data if type(data) is _ndarray else np.asarray(data)
        self._grad_fn = None
        self._requires_grad = False
        self._grad = None
        self._accumulator = None
        self._version_counter = None
        if requires_grad:
            self.requires_grad_(True)

    # ----------------------------------------------------------------- versions

    @property
    def _version(self):
        """How many in-place changes this tensor's memory has had, through it or through a
        view sharing it (PyTorch's ``t._version``): backward refuses a saved tensor whose
        version moved since it was saved."""
        counter = self._version_counter
        return 0 if counter is None else counter._version

    def _counter(self):
        """This tensor's version counter, made now if it has none yet (to share it)."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = VersionCounter()
        return counter

    def _bump_version(self):
        """Count one in-place change of this tensor's memory. Every in-place op calls it
        once, after changing the values (an op that changes a tensor's array with numpy
        calls it too)."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = VersionCounter()
        counter._version += 1
        # The clock of changes, for the nodes that are not Ops yet (graph._InPlace).
        mark_changed_in_place(self._data)

    # ----------------------------------------------------------------- autograd attributes

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        """Start (or stop) recording operations on this leaf; returns the tensor."""
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients, "
                f"but this tensor has dtype {self.dtype}. Make it a float tensor first, e.g. "
                "minigrad.tensor([1., 2.], requires_grad=True) or t.float().requires_grad_().")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        """The node that made this tensor (None for leaves): ``<MulBackward0>``, ..."""
        return self._grad_fn

    @property
    def is_leaf(self):
        """True for tensors the user made (and for any tensor that does not require grad)."""
        return self._grad_fn is None

    @property
    def grad(self):
        """The accumulated gradient: kept for leaves that require grad (and retain_grad())."""
        if self._grad_fn is not None and self._grad_fn.retained is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: got "
                                   f"{list(value.shape)}, expected {list(self.shape)}")
            if value.dtype != self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype {value.dtype} to "
                                   f"a tensor of dtype {self.dtype}: convert it first "
                                   f"(g.to({self.dtype}))")
        self._grad = value

    @property
    def retains_grad(self):
        return self._grad_fn is not None and self._grad_fn.retained is not None

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor too (leaves keep theirs anyway)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None:
            self._grad_fn.retained = weakref.ref(self)
        return None

    def accumulate_grad(self, grad, owned=False):
        """``self.grad += grad``: how the engine hands a tensor its gradient (``AccumulateGrad``
        for a leaf, and the same call for a non-leaf that asked for ``retain_grad()``; see
        ``minigrad.graph``'s leaf protocol). ``grad`` is a numpy array of this tensor's shape
        (or one that broadcasts to it), or a Tensor under ``create_graph=True``.

        The first gradient is stored, later ones are added in place, so gradients add up
        until someone zeroes them. The first is copied unless the engine says nothing else
        refers to it (``owned``). Not in PyTorch (its engine does this in C++)."""
        if type(grad) is Tensor:
            return self._accumulate_grad_graph(grad)
        if grad.shape != self._data.shape:
            grad = self._broadcast_grad(grad)
        if self._grad is None:  # the first gradient becomes .grad
            self._grad = _wrap(self._new_grad(grad, owned))
        elif self._grad.shape == grad.shape:  # every later one is added to it, in place
            self._grad._data += grad
        else:
            raise self._grad_shape_error(grad)

    def _new_grad(self, grad, owned):
        """Speed: ``grad`` itself when the engine says nothing else refers to it (``owned``)
        and it already has this tensor's dtype and layout (saves a copy); else a copy."""
        if (owned and grad.dtype == self._data.dtype and grad.flags.c_contiguous
                and grad.flags.writeable):
            return grad
        return np.array(grad, dtype=self._data.dtype, order="C")

    def _accumulate_grad_graph(self, grad):
        """The same under ``create_graph=True``: ``grad`` has a history, and so does
        ``.grad``: a copy of the first gradient, then ``.grad + grad`` (out of place, as
        in PyTorch, so the gradient before stays as it was)."""
        if grad.shape != self._data.shape:
            grad = grad.expand(*self._data.shape)
        if grad.dtype != self.dtype:
            grad = grad.to(self.dtype)
        if self._grad is None:
            self._grad = _wrap(np.empty_like(self._data, order="C")).copy_(grad)
        elif self._grad.shape == grad.shape:
            self._grad = self._grad + grad
        else:
            raise self._grad_shape_error(grad._data)

    def _broadcast_grad(self, grad):
        """A gradient of another shape, broadcast to this tensor's (or PyTorch's error)."""
        try:
            return np.broadcast_to(grad, self._data.shape)
        except ValueError:
            raise self._grad_shape_error(grad) from None

    def _grad_shape_error(self, grad):
        """The gradient no longer fits: the tensor's .data was replaced by another shape."""
        return RuntimeError(
            f"The size of the gradient {list(grad.shape)} does not match the tensor "
            f"{list(self.shape)}" + ("" if self._grad is None else
                                     f" or its .grad {list(self._grad.shape)}") +
            ": its .data was replaced by data of another shape after the forward pass "
            "or after .grad was made. Run the forward pass again, and set .grad = None "
            "when the shape changes.")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to every leaf that requires grad
        and add it into each leaf's ``.grad`` (only into ``inputs``' when given). The graph
        is freed afterwards unless ``retain_graph=True`` (which defaults to
        ``create_graph``). The same as ``minigrad.autograd.backward(self, gradient, ...)``."""
        if (gradient is None and inputs is None and not create_graph
                and self._grad_fn is not None and self._data.size == 1):
            # Speed: ``loss.backward()``, the call of every training step, needs none of the
            # general checks (about 3 us a step)
            seed = np.ones(self._data.shape, self._data.dtype)
            _engine_backward([self._grad_fn], [seed], retain_graph=bool(retain_graph))
            return
        _run_backward((self,), gradient, retain_graph, create_graph, inputs)

    def detach(self):
        """The same numbers (same memory, same version counter), cut off from the graph."""
        out = _wrap(self._data)
        out._version_counter = self._counter()
        return out

    def detach_(self):
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """A tensor sharing this one's memory, outside the graph (PyTorch's ``.data``). It has
        a version counter of its own: changing it in place is not seen by the graph."""
        return _wrap(self._data)

    @data.setter
    def data(self, value):
        """``x.data = t``: x now holds t's memory (shared, any shape), and stays in the graph
        as it was. A graph recorded before that saved x's old values refuses backward, as
        after an in-place change (PyTorch would use the new values there)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(value).__name__} (wrap it: minigrad.tensor(...))")
        if self._requires_grad and value._data.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               f"point or complex dtype, not {value.dtype}: convert it first "
                               "(t.float())")
        if value._data is not self._data:
            # Not an in-place change: the version stays (as in PyTorch). But an op that
            # saved this tensor saved its old array: its backward refuses (Op._check_versions
            # sees another array; the clock tells the nodes that are not Ops yet).
            mark_changed_in_place(self._data)
            self._data = value._data

    # ----------------------------------------------------------------- basic properties

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._dim(dim)]

    @property
    def dtype(self):
        return dtypes.from_numpy(self._data.dtype)

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    def nelement(self):
        return self._data.size

    def element_size(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    @property
    def device(self):
        return CPU

    @property
    def is_cuda(self):
        return False

    def _dim(self, dim):
        """A dim that may be negative -> 0..ndim-1, with PyTorch's error when out of range."""
        n = max(self._data.ndim, 1)
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {dim})")
        return dim % n

    def _dims(self, dim):
        """One dim or several (negative allowed) -> sorted axes. As in PyTorch, no dims at all
        means every axis, and a 0-dim tensor's dim 0 (or -1) is the tensor itself."""
        axes = [self._dim(x) for x in ((dim,) if isinstance(dim, int) else dim)]
        repeated = [axis for i, axis in enumerate(axes) if axis in axes[:i]]
        if repeated:
            raise RuntimeError(f"dim {repeated[0]} appears multiple times in the list of dims")
        if not self._data.ndim:
            return ()
        return tuple(sorted(axes)) if axes else tuple(range(self._data.ndim))

    # ----------------------------------------------------------------- conversions

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar: use .tolist() for several numbers")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        """The numpy array behind this tensor (shared memory, no copy)."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __float__(self):
        return float(self._one_element())

    def __int__(self):
        return int(self._one_element())

    def _one_element(self):
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"(this one has {self._data.size}): pick one with t[i], or "
                             "use .tolist()")
        return self._data.reshape(()).item()

    def __index__(self):
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(it has {self._data.size}): use .any() or .all()")
        return bool(self._data.reshape(()).item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self):
        return printing.tensor_repr(self._data, self._requires_grad, self._grad_fn)

    def __str__(self):
        return self.__repr__()  # so print(parameter) says "Parameter containing:"

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment. Call .detach() first.")
        t = _new(type(self))
        t._data = self._data.copy()
        t._grad_fn = None
        t._requires_grad = self._requires_grad
        t._grad = None if self._grad is None else _wrap(self._grad._data.copy())
        t._accumulator = None
        t._version_counter = None
        memo[id(self)] = t
        return t

    def __reduce__(self):
        raise TypeError("minigrad tensors are not pickled: save them with minigrad.save(), "
                        "which writes a plain .npz file")

    # ----------------------------------------------------------------- dtype and device

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False,
           memory_format=None):
        """``.to("cpu")``, ``.to(minigrad.float64)`` or both; a new tensor only if needed.
        (``non_blocking`` and ``memory_format`` are accepted and change nothing here.)"""
        for a in args:
            if isinstance(a, Tensor):  # first: ``a in (...)`` would compare a tensor
                dtype = a.dtype
            elif isinstance(a, dtypes.dtype) or a in (float, int, bool):
                dtype = a
            else:
                check_device(a)
        check_device(device)
        result = self if dtype is None else self._cast(dtypes.to_numpy(dtype))
        return result.clone() if copy and result is self else result

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        check_device("cuda")

    def type(self, dtype=None):
        if dtype is None:
            return f"minigrad.{_LEGACY_TYPE_NAMES.get(self._data.dtype.name, 'Tensor')}"
        return self.to(dtype)

    def float(self):
        return self._cast(np.float32)

    def double(self):
        return self._cast(np.float64)

    def half(self):
        return self._cast(np.float16)

    def long(self):
        return self._cast(np.int64)

    def int(self):
        return self._cast(np.int32)

    def bool(self):
        return self._cast(np.bool_)

    def _cast(self, numpy_dtype):
        numpy_dtype = np.dtype(numpy_dtype)
        if self._data.dtype == numpy_dtype:
            return self
        if numpy_dtype.kind == "f":
            return pointwise.ToCopyBackward0.run((self,), self._data, numpy_dtype)
        return _wrap(self._data.astype(numpy_dtype))

    def _set_grad_fn(self, node):
        self._grad_fn = node
        self._requires_grad = True
        return self

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
        if isinstance(other, _Number):
            if isinstance(other, (np.number, np.bool_)):
                other = other.item()
            if a.dtype.kind in "biu":
                promoted = _with_numbers(a, other)
                if promoted is a and a.dtype.kind in "iu" and isinstance(other, int):
                    other = _int_operand(other, a.dtype)  # wraps, as PyTorch: uint8 + -1
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
            raise _broadcast_error(a, b, "+") from None

    __radd__ = __add__

    def __sub__(self, other):
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_) or (
                isinstance(other, Tensor) and other._data.dtype.kind == "b"):
            raise _bool_subtraction_error()
        a, b, t = self._operands(other)
        try:
            return arithmetic.SubBackward0.run((self, t), a, b)
        except ValueError:
            raise _broadcast_error(a, b, "-") from None

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            return other.__sub__(self)
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_):
            raise _bool_subtraction_error()
        a, b, _ = self._operands(other)
        return arithmetic.RsubBackward1.run((self,), a, other=b)

    def __mul__(self, other):
        a, b, t = self._operands(other)
        try:
            return arithmetic.MulBackward0.run((self, t), a, b)
        except ValueError:
            raise _broadcast_error(a, b, "*") from None

    __rmul__ = __mul__

    def __truediv__(self, other):
        a, b, t = self._operands(other)
        if a.dtype.kind in "biu":  # int / int is float32 in PyTorch (numpy says float64)
            a = a.astype(dtypes.DEFAULT_FLOAT)
            if isinstance(b, np.ndarray):
                b = b.astype(dtypes.DEFAULT_FLOAT)
            elif t is None:
                b = other  # the number itself: no wrap-around to the int dtype (x / -1)
        try:
            return arithmetic.DivBackward0.run((self, t), a, b)
        except ValueError:
            raise _broadcast_error(a, b, "/") from None

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
            raise _broadcast_error(*((b, a) if reverse else (a, b)), op) from None

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
        if isinstance(exponent, _Number):
            a, e, _ = self._operands(exponent)
            if a.dtype.kind in "iu" and isinstance(e, int):
                if exponent < 0:
                    raise RuntimeError("Integers to negative integer powers are not allowed.")
                e = int(_number_as(exponent, a.dtype))  # checked, not wrapped (uint8 ** 300)
            return arithmetic.PowBackward0.run((self,), a, exponent=e)
        a, b, t = self._operands(exponent)
        if a.dtype == np.bool_:
            raise NotImplementedError('"pow" not implemented for \'Bool\': convert the '
                                      "tensors first (t.long())")
        try:
            return arithmetic.PowBackward1.run((self, t), a, b)
        except ValueError:
            raise _broadcast_error(a, b, "**") from None

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
            return _wrap(fn(a, b))
        except ValueError:
            raise _broadcast_error(a, b, "a comparison") from None

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
        return _wrap(~self._data)

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
            return tuple(_wrap(i.astype(np.int64)) for i in found)
        return _wrap(np.stack(found, axis=1).astype(np.int64) if found else np.zeros((0, 0), np.int64))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct values, sorted; with ``dim``, the distinct slices along ``dim`` (rows
        for dim=0), sorted lexicographically. The inverse says where each value (or slice)
        went, the counts how often each occurs."""
        if dim is not None and not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = None if dim is None else self._dim(dim)
        values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True,
                                            axis=axis)
        result = [_wrap(values)]
        if return_inverse:
            shape = self._data.shape if axis is None else (self._data.shape[axis],)
            result.append(_wrap(inverse.reshape(shape).astype(np.int64)))
        if return_counts:
            result.append(_wrap(counts.astype(np.int64)))
        return result[0] if len(result) == 1 else tuple(result)

    def bincount(self, weights=None, minlength=0):
        w = weights._data if isinstance(weights, Tensor) else weights
        return _wrap(np.bincount(self._data, weights=w, minlength=minlength))

    def logical_not(self):
        return _wrap(np.logical_not(self._data))

    def equal(self, other):
        return self.shape == other.shape and bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.allclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _wrap(np.isclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def isnan(self):
        return _wrap(np.isnan(self._data))

    def isfinite(self):
        return _wrap(np.isfinite(self._data))

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
        return _wrap(out.astype(np.uint8) if a.dtype == np.uint8 else out)

    # ----------------------------------------------------------------- elementwise functions

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

    def relu_(self):
        """ReLU in place (``nn.ReLU(inplace=True)``): the tensor itself holds the result."""
        if self._data.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        if self._check_inplace():
            return self._record_in_place(lambda before: before.relu())
        np.maximum(self._data, 0, out=self._data)
        self._bump_version()
        return self

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
            low, high = _bound_as_number(low), _bound_as_number(high)
        a = _with_numbers(self._data, low, high)
        if a.dtype.kind == "b":
            raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\': convert the '
                                      "tensor first (t.long())")
        if a.dtype.kind in "iu":
            low, high = _int_bounds(low, high, a.dtype)
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
            raise _broadcast_error(a, lo if hi is None else hi, "clamp") from None

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
        fill = _number_as(value.item() if value_tensor is not None else value, a.dtype)
        if value_tensor is not None and value_tensor._requires_grad and a.dtype.kind != "f" \
                and _GradMode.enabled:
            raise RuntimeError(f"Autograd not support dtype: {self.dtype}: only a float tensor "
                               "can be filled with a value that requires grad")
        try:
            if value_tensor is None:
                return selection.MaskedFillBackward0.run((self,), a, mask=m, value=fill)
            return selection.MaskedFillBackward1.run((self, value_tensor), a, fill, mask=m)
        except ValueError:
            raise _broadcast_error(a, m, "masked_fill") from None

    def masked_fill_(self, mask, value):
        """``masked_fill`` in place: the mask broadcasts to this tensor's shape, not beyond."""
        if self._check_inplace(value, overlapping=True):
            return self._record_in_place(lambda before: before.masked_fill(mask, value))
        out = self.masked_fill(mask, value.detach() if isinstance(value, Tensor) else value)
        if out._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(out.shape)}")
        np.copyto(_writable(self._data), out._data)
        self._bump_version()
        return self

    def maximum(self, other):
        return _pairwise(self, other, selection.MaximumBackward0)

    def addcmul(self, tensor1, tensor2, value=1):
        """``self + value * tensor1 * tensor2``, broadcast (Adam's update, in place)."""
        return _addc(self, tensor1, tensor2, value, arithmetic.AddcmulBackward0)

    def addcdiv(self, tensor1, tensor2, value=1):
        """``self + value * tensor1 / tensor2``, broadcast (Adam's update, in place)."""
        return _addc(self, tensor1, tensor2, value, arithmetic.AddcdivBackward0)

    def minimum(self, other):
        return _pairwise(self, other, selection.MinimumBackward0)

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

    def clone(self):
        return pointwise.CloneBackward0.run((self,), self._data)

    def contiguous(self):
        """``self`` if its memory is laid out row by row, else such a copy (PyTorch's fix
        before ``.view`` of a transposed tensor)."""
        if self._data.flags.c_contiguous:
            return self
        return self.clone()

    def is_contiguous(self):
        return bool(self._data.flags.c_contiguous)

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
            _refuse_empty_reduction(name, a, None)
            return full_op.run((self,), a)
        dim = self._dim(dim)
        _refuse_empty_reduction(name, a, dim if a.ndim else None)
        indices = np.expand_dims(arg(a, axis=dim), dim) if a.ndim else np.zeros((), np.int64)
        out = dim_op.run((self,), a, indices=indices, axis=dim, keepdim=keepdim)
        return result_type(out, _wrap((indices if keepdim else indices.squeeze(dim))
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
            _refuse_empty_reduction(arg.__name__, a, None, IndexError)
            return _wrap(np.asarray(arg(a), dtype=np.int64))
        dim = self._dim(dim)
        if a.ndim:
            _refuse_empty_reduction(arg.__name__, a, dim)
        return _wrap(np.asarray(arg(a, axis=dim if a.ndim else None, keepdims=keepdim),
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
        dim = self._dim(_one_dim("prod", dim, " (one dim at a time: x.prod(0).prod(0) for two)"))
        return reductions.ProdBackward1.run((self,), a, dim=dim, keepdim=keepdim)

    def cumsum(self, dim, dtype=None):
        """Running sums along ``dim``: ``out[i] = self[0] + ... + self[i]``."""
        if dtype is not None:
            return self.to(dtype).cumsum(dim)
        dim = self._dim(_one_dim("cumsum", dim))
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

    # ----------------------------------------------------------------- shapes

    def reshape(self, *shape):
        shape = _shape_args(shape)
        if shape.count(-1) > 1:
            raise RuntimeError(f"only one dimension can be inferred: shape {list(shape)} has "
                               f"{shape.count(-1)} entries -1")
        for i, n in enumerate(shape):
            if n < -1:  # numpy would read any negative size as -1
                raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape "
                                   f"{list(shape)}: sizes are >= 0, or -1 for the one to infer")
        if -1 in shape and self._data.size == 0 and 0 in shape:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value "
                               "and is ambiguous")
        try:
            a = self._data
            node_class = ops_shape.ViewBackward0 if a.flags.c_contiguous \
                else ops_shape.reshape_class(a, shape)
            return node_class.run((self,), a, shape=shape)
        except ValueError:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{self._data.size}") from None

    def view(self, *shape):
        """Like reshape, but only where no copy is needed (the result shares memory)."""
        shape = _shape_args(shape)
        try:
            np.reshape(self._data, shape, copy=False)
        except ValueError:
            if (-1 not in shape and int(np.prod(shape)) != self._data.size
                    or shape.count(-1) > 1 or min(shape, default=0) < -1):
                return self.reshape(shape)  # reshape's error says what is wrong with the size
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
        return self.reshape(shape)

    def view_as(self, other):
        return self.reshape(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        shape = self._data.shape
        start, end = self._dim(start_dim), self._dim(end_dim)
        if not shape:
            return self.reshape(1)
        if start > end:
            raise RuntimeError(f"flatten() has invalid args: start_dim cannot come after "
                               f"end_dim (dims {start} and {end} of a {len(shape)}-D tensor)")
        new = shape[:start] + (int(np.prod(shape[start:end + 1])),) + shape[end + 1:]
        return self.reshape(new)

    def unsqueeze(self, dim):
        n = self._data.ndim + 1
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {dim})")
        return ops_shape.UnsqueezeBackward0.run((self,), self._data, dim=dim % n)

    def squeeze(self, dim=None):
        a = self._data
        if dim is None:
            return ops_shape.SqueezeBackward0.run((self,), a)
        # squeeze(()) squeezes nothing (for _dims, no dims means every dim)
        given = self._dims(dim) if isinstance(dim, int) or len(dim) else ()
        dims = [x for x in given if a.ndim and a.shape[x] == 1]
        return ops_shape.SqueezeBackward1.run((self,), a, dims=tuple(dims))

    def expand(self, *sizes):
        if not sizes:
            raise TypeError('expand() missing 1 required positional arguments: "size"')
        sizes = _shape_args(sizes)
        a = self._data
        lead = len(sizes) - a.ndim
        if lead < 0:
            raise RuntimeError(f"expand(size={list(sizes)}): the number of sizes provided "
                               f"({len(sizes)}) must be greater or equal to the number of "
                               f"dimensions in the tensor ({a.ndim})")
        for i, s in enumerate(sizes[:lead]):
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}: -1 keeps the size of "
                                   "an existing dimension, a new one needs its size")
        target = tuple(a.shape[i - lead] if s == -1 and i >= lead else s
                       for i, s in enumerate(sizes))
        try:
            if a.size and math.prod(target) == a.size:
                value = a.reshape(target)  # nothing repeated: a writable view, as in PyTorch
            else:
                value = np.broadcast_to(a, target)  # read-only: one element seen many times
                if not value.size and a.flags.writeable:  # no element: none seen twice
                    value = np.lib.stride_tricks.as_strided(a, target, value.strides)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor must match the existing size "
                               f"at each non-singleton dimension: cannot expand shape "
                               f"{list(a.shape)} to {list(sizes)}") from None
        return ops_shape.ExpandBackward0.run((self,), a, value=value)

    def expand_as(self, other):
        return self.expand(other.shape)

    def permute(self, *dims):
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims" '
                            '(give the new order of all dimensions, e.g. x.permute(1, 0))')
        dims = _shape_args(dims)
        if len(dims) != self._data.ndim:
            raise RuntimeError(f"permute(): number of dimensions in the tensor input does not "
                               f"match the length of the desired ordering of dimensions i.e. "
                               f"input.dim() = {self._data.ndim} is not equal to len(dims) = "
                               f"{len(dims)}")
        dims = tuple(self._dim(x) for x in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
        return ops_shape.PermuteBackward0.run((self,), self._data, dims=dims)

    def transpose(self, dim0, dim1):
        dim0, dim1 = self._dim(dim0), self._dim(dim1)
        return ops_shape.TransposeBackward0.run((self,), self._data, dim0=dim0, dim1=dim1)

    swapaxes = transpose

    def t(self):
        if self._data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D. Use transpose(dim0, dim1).")
        return ops_shape.TBackward0.run((self,), self._data)

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self._data.ndim))))

    @property
    def mT(self):
        if self._data.ndim == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               "Got 1-D tensor.")
        return self.transpose(-2, -1)

    def split(self, split_size_or_sections, dim=0):
        """Pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of
        the sizes in a list. Each piece is a slice, so gradients flow back into place."""
        dim = self._dim(dim)
        n = self._data.shape[dim]
        if isinstance(split_size_or_sections, (numbers.Integral, Tensor)):
            size = operator.index(split_size_or_sections)
            if size < 0 or size == 0 and n:
                raise RuntimeError(f"split expects split_size be non-negative, but got {size} "
                                   f"(0 only for a dimension of size 0; this one has {n})")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        else:
            sizes = [operator.index(s) for s in split_size_or_sections]
            if any(s < 0 for s in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes have only "
                                   f"non-negative entries, but got split_sizes={sizes}")
            if sum(sizes) != n:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                                   f"(input tensor's size at dimension {dim}), but got {sizes}")
        pieces, start = [], 0
        for size in sizes:
            key = (slice(None),) * dim + (slice(start, start + size),)
            pieces.append(self[key])
            start += size
        return tuple(pieces)

    def chunk(self, chunks, dim=0):
        """``chunks`` pieces (or fewer) of equal size along ``dim``, the last may be smaller."""
        if not isinstance(chunks, numbers.Integral):
            raise TypeError(f"chunk(): argument 'chunks' (position 1) must be int, not "
                            f"{type(chunks).__name__}")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self._data.shape[self._dim(dim)]
        if n == 0:  # PyTorch gives ``chunks`` empty pieces
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    # ----------------------------------------------------------------- indexing

    def __getitem__(self, key):
        a = self._data
        try:
            index, advanced = _to_index(key, a)
            if advanced is not None:
                return indexing.IndexBackward0.run((self,), a, first=index, key=advanced)
            if _GradMode.enabled:
                node_class = indexing.view_node_class(index, a.shape) if self._requires_grad \
                    else indexing.SliceBackward0
                out = node_class.run((self,), a, key=index)
                out._view = (self, index)  # so an in-place change of out can be recorded in self
                return out
            return indexing.SliceBackward0.run((self,), a, key=index)  # a view: one version
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None

    def __setitem__(self, key, value):
        a = self._data
        t = value if isinstance(value, Tensor) else None
        v = value._data if t is not None else value
        if t is None and a.dtype.kind in "iu" and isinstance(v, _Number):
            v = _number_as(v, a.dtype)  # first, as PyTorch: x[::-1] = inf names the value
        try:
            index, advanced = _to_index(key, a)
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None
        if t is not None and advanced is None and v.base is not None and _is_view_at(v, a, index):
            return  # x[i] = x[i], the end of x[i] += 1: the view already holds the values
        if advanced is not None and t is not None and v.dtype != a.dtype:
            if v.size == 1 and _one_mask(advanced):
                # PyTorch's masked_fill_ path: the one value is converted like a number
                v = _number_as(v.reshape(()).item(), a.dtype)
            else:
                raise RuntimeError(
                    f"Index put requires the source and destination dtypes match, got "
                    f"{self.dtype} for the destination and {t.dtype} for the source (convert "
                    f"the value first: value.to({self.dtype}))")
        try:
            recorded = self._check_inplace(t)
        except RuntimeError:
            if index is not None:  # PyTorch applies ints (and slices) first: their IndexError
                a[index]
            raise
        if recorded and a.base is not None:  # a view: assign in a copy, record it in the root
            self._record_in_place(lambda before: _assigned(before, key, value))
            return
        if recorded:
            node_class = d.CopySlices if advanced is None else d.IndexPutBackward0
            node = node_class(_edges(self, t), advanced if advanced is not None else index,
                              t.shape if t is not None else (),
                              index if advanced is not None else None)
        try:
            if advanced is None:
                a[index] = v
            else:
                (a if index is None else a[index])[advanced] = v
        except IndexError as error:
            raise IndexError(f"{error} (tensor of shape {list(self.shape)})") from None
        except ValueError as error:
            raise RuntimeError(f"cannot assign a value of shape {list(np.shape(v))} to "
                               f"x[{key!r}], which has shape "
                               f"{list(_indexed(a, index, advanced).shape)} ({error})") from None
        self._bump_version()  # a node that saved the old values refuses backward
        if recorded:
            self._set_grad_fn(node)

    def gather(self, dim, index, *, sparse_grad=False):
        """Pick along ``dim`` the positions that ``index`` names; the result has the index's
        shape. For a 2-D tensor and dim=1: ``out[i][j] = self[i][index[i][j]]``
        (each row picks its own columns, e.g. the score of each sample's label)."""
        dim = _one_dim("gather", dim)
        if not isinstance(index, Tensor):
            raise TypeError(f"gather(): argument 'index' (position 2) must be Tensor, not "
                            f"{type(index).__name__}")
        dim = self._dim(dim)
        a, idx = self._data, index._data
        if idx.dtype not in (np.int64, np.int32):
            raise RuntimeError(f"gather(): Expected dtype int32/int64 for index, got "
                               f"{index.dtype} (make it an integer tensor: index.long())")
        # As PyTorch does, see a 0-dim tensor (input or index) as 1-D of size 1.
        a1, idx1 = a.reshape(a.shape or (1,)), idx.reshape(idx.shape or (1,))
        if a1.ndim != idx1.ndim:
            raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                               f"tensor: index has {idx.ndim}, input has {a.ndim} "
                               "(unsqueeze the index to add the missing ones)")
        if idx.size:
            for i, (n, m) in enumerate(zip(idx1.shape, a1.shape)):
                if i != dim and n > m:
                    raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                       f"{list(idx.shape)} to be no larger than self "
                                       f"{list(a.shape)} apart from dimension {dim}")
            bad = idx1[(idx1 < 0) | (idx1 >= a1.shape[dim])]
            if bad.size:
                raise RuntimeError(f"index {bad[0]} is out of bounds for dimension {dim} with "
                                   f"size {a1.shape[dim]}")
        key = list(np.indices(idx1.shape, sparse=True))
        key[dim] = idx1
        return indexing.GatherBackward0.run((self,), a, key=tuple(key), index=idx1,
                                             shape=idx.shape)

    # ----------------------------------------------------------------- in-place updates

    def _check_inplace(self, other=None, overlapping=False):
        """True when the update must be recorded in the graph. Raises for a leaf that
        requires grad (PyTorch's rule: nothing changes, and the error says what to do) and
        for a view, whose change minigrad could not record in the tensor it views."""
        t = other if isinstance(other, Tensor) else None
        if not (overlapping or self._data.flags.writeable):
            raise RuntimeError(_OVERLAPPING_WRITE)
        if not _needs_grad(self, t) or self._data.dtype.kind not in "fc":
            return False  # (an integer or bool tensor cannot require grad)
        if self._grad_fn is None and self._requires_grad:
            raise RuntimeError(LEAF_INPLACE)
        if self._data.base is not None:
            self._view_root()
        return True

    def _record_in_place(self, compute):
        """An in-place op on a tensor in the graph, as PyTorch does it: the values change in
        the tensor's own memory (views of it see them), the tensor gets the op's node, and a
        node that saved the old values refuses backward afterwards. ``compute`` receives the
        old values as a tensor of their own (a copy, kept by the new node) and returns the
        result; nothing changes if it raises."""
        if self._data.base is not None:
            return self._record_in_place_on_view(compute)
        result = compute(_wrap(self._data.copy(), self._grad_fn))
        if result._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        if not np.can_cast(result._data.dtype, self._data.dtype, casting="same_kind"):
            raise RuntimeError(f"result type {result.dtype} can't be cast to the desired "
                               f"output type {self.dtype}")
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        saved_output_is(result._grad_fn, result._data, self._data, self._version_counter)
        self._set_grad_fn(result._grad_fn)
        return self

    def _view_root(self):
        """``(root, path)`` for a view whose in-place change minigrad can record: made by
        basic indexing in grad mode (perhaps of a view made the same way) of ``root``, which
        owns the memory and is in the graph (not a leaf), so that every other view of it made
        in grad mode has a node that refuses backward once the memory changes. Raises
        otherwise: PyTorch's error for a view of a leaf, minigrad's for the rest."""
        path, t = [], self
        while getattr(t, "_view", None) is not None:
            t, key = t._view
            path.append(key)
        if t._grad_fn is None and t._requires_grad and path:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation. " + LEAF_INPLACE.split(". ", 1)[1])
        if not path or self._data.base is not t._data or t._grad_fn is None:
            raise RuntimeError(VIEW_INPLACE)
        return t, tuple(reversed(path))

    def _record_in_place_on_view(self, compute):
        """``_record_in_place`` for a view ``root[path]`` (PyTorch's CopySlices): the view's
        memory changes, ``root`` gets a node that sends the gradient of the changed part to
        the op and the rest to its old node, and the view becomes a view of the new ``root``."""
        root, path = self._view_root()
        old = _edge(root)
        before = _wrap(self._data.copy())
        if old is not None:
            before._set_grad_fn(d.AsStridedBackward0((old,), root._data.shape, path))
        result = compute(before)
        if result._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        if not np.can_cast(result._data.dtype, self._data.dtype, casting="same_kind"):
            raise RuntimeError(f"result type {result.dtype} can't be cast to the desired "
                               f"output type {self.dtype}")
        chain = [self]
        while len(chain) < len(path):
            chain.append(chain[-1]._view[0])
        unchanged = _unchanged_view_nodes(chain)
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        node = d.ViewCopySlices((old, _edge(result)), path)
        root._set_grad_fn(node)
        # This view and the views it was made from are views of the new root now. Their old
        # nodes stay in the graph of what used them before the change, which was right.
        for old_node in unchanged:
            _forget_viewed(old_node)
        for depth, t in zip(range(len(path), 0, -1), chain):
            t._set_grad_fn(note_viewed(d.AsStridedBackward0((node,), root._data.shape,
                                                            path[:depth]), root._data, t._data))
        return self

    def _inplace(self, other, ufunc, out_of_place, name):
        b = _direct(self, other)
        if b is not None:
            a = self._data
            try:
                ufunc(a, b, out=a, casting="same_kind")
            except ValueError:
                pass  # the general path below gives PyTorch's error
            else:
                self._bump_version()
                return self
        if self._check_inplace(other):
            return self._record_in_place(lambda before: out_of_place(before, other))
        b = other._data if isinstance(other, Tensor) else other
        if type(b) is int and self._data.dtype.kind in "iu":
            b = _int_operand(b, self._data.dtype)
        try:
            ufunc(self._data, b, out=self._data, casting="same_kind")
        except ValueError:
            try:
                shape = np.broadcast_shapes(self._data.shape, np.shape(b))
            except ValueError:
                raise _broadcast_error(self._data, b, name) from None
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(shape)} in {name}") from None
        except TypeError:
            # numpy's "same_kind" refused; PyTorch's rule decides (it allows int64 -> uint8).
            # The result of a true division is a float even for two integers.
            result = b if ufunc is not _true_divide or _kind(b) in "fc" else 1.0
            if not _can_hold(self._data.dtype, result):
                raise _cannot_hold(result, self) from None
            ufunc(self._data, b, out=self._data, casting="unsafe")
        self._bump_version()
        return self

    def __iadd__(self, other):
        return self._inplace(other, np.add, Tensor.__add__, "+=")

    def __isub__(self, other):
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_) or (
                isinstance(other, Tensor) and other._data.dtype.kind == "b"):
            raise _bool_subtraction_error()
        return self._inplace(other, np.subtract, Tensor.__sub__, "-=")

    def __imul__(self, other):
        return self._inplace(other, np.multiply, Tensor.__mul__, "*=")

    def __itruediv__(self, other):
        return self._inplace(other, _true_divide, Tensor.__truediv__, "/=")

    # The ops an optimizer's step is made of (under no_grad) first try the direct path:
    # ``_direct`` checks that nothing is recorded and the dtypes agree, then one numpy op
    # writes into the tensor's memory (a shape that does not broadcast raises ValueError:
    # the general path then gives PyTorch's error).

    def add_(self, other, alpha=1):
        """``self += alpha * other``."""
        a = self._data
        if type(other) is Tensor or isinstance(other, Tensor):  # _direct, inlined: the hot one
            b = other._data
            if (b.dtype is a.dtype and a.dtype.kind == "f"
                    and not (_GradMode.enabled and (self._requires_grad or other._requires_grad))):
                try:
                    a += b if alpha == 1 else b * alpha  # (numpy's operator: np.add(out=a))
                except ValueError:
                    pass
                else:
                    counter = self._version_counter
                    if counter is None:
                        counter = self._version_counter = VersionCounter()
                    counter._version += 1
                    mark_changed_in_place(a)
                    return self
        elif (b := _direct(self, other)) is not None:
            try:
                np.add(a, b if alpha == 1 else b * alpha, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        return self.__iadd__(other * alpha if alpha != 1 else other)

    def sub_(self, other, alpha=1):
        """``self -= alpha * other``."""
        b = _direct(self, other)
        if b is not None:
            a = self._data
            try:
                np.subtract(a, b if alpha == 1 else b * alpha, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        return self.__isub__(other * alpha if alpha != 1 else other)

    def mul_(self, other):
        a = self._data
        if type(other) is float:  # buf.mul_(momentum): _direct and _bump_version, inlined
            if a.dtype.kind == "f" and not (_GradMode.enabled and self._requires_grad):
                try:
                    a *= other
                except ValueError:
                    pass
                else:
                    counter = self._version_counter
                    if counter is None:
                        counter = self._version_counter = VersionCounter()
                    counter._version += 1
                    mark_changed_in_place(a)
                    return self
        return self.__imul__(other)

    def div_(self, other):
        return self.__itruediv__(other)

    def addcmul_(self, tensor1, tensor2, value=1):
        """``self += value * tensor1 * tensor2`` (computed in that order, as PyTorch does)."""
        b1, b2 = _direct(self, tensor1), _direct(self, tensor2)
        if b1 is not None and b2 is not None and type(value) in (int, float):
            a = self._data
            try:
                np.add(a, b1 * value * b2, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        if self._check_inplace(tensor1) or self._check_inplace(tensor2):
            return self._record_in_place(lambda before: before.addcmul(tensor1, tensor2, value))
        return self.__iadd__(tensor1 * tensor2 * value)

    def addcdiv_(self, tensor1, tensor2, value=1):
        """``self += value * tensor1 / tensor2`` (computed in that order, as PyTorch does)."""
        b1, b2 = _direct(self, tensor1), _direct(self, tensor2)
        if b1 is not None and b2 is not None and type(value) in (int, float):
            a = self._data
            try:
                np.add(a, b1 * value / b2, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        if self._check_inplace(tensor1) or self._check_inplace(tensor2):
            return self._record_in_place(lambda before: before.addcdiv(tensor1, tensor2, value))
        return self.__iadd__(tensor1 / tensor2 * value)

    def lerp_(self, end, weight):
        """``self += weight * (end - self)``, in PyTorch's two forms (the other one, for a
        weight of 0.5 or more, is exact at weight 1)."""
        e = _direct(self, end)
        if (e is not None and type(weight) in (int, float) and e.shape == self._data.shape
                and self._data.flags.writeable):
            a = self._data
            if abs(weight) < 0.5:
                a += weight * (e - a)
            else:
                np.subtract(e, (e - a) * (1 - weight), out=a)
            self._bump_version()
            return self
        if self._check_inplace(end) or self._check_inplace(weight):
            return self._record_in_place(lambda before: before.lerp(end, weight))
        result = self.lerp(end, weight)
        if result._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        return self

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        low = min.item() if isinstance(min, Tensor) else min
        high = max.item() if isinstance(max, Tensor) else max
        for bound in (low, high):
            if bound is not None and not _can_hold(self._data.dtype, bound):
                raise _cannot_hold(bound, self)  # int_tensor.clamp_(min=0.5)
        if self._check_inplace():
            return self._record_in_place(lambda before: before.clamp(low, high))
        if self._data.dtype.kind in "iu":
            low, high = _int_bounds(low, high, self._data.dtype)
        np.clip(self._data, low, high, out=self._data)
        self._bump_version()
        return self

    def zero_(self):
        """Set every element to 0 in place (``x.grad.zero_()`` in chapter 4)."""
        recorded = self._check_inplace(overlapping=True)
        if recorded and self._data.base is not None:  # a view: through its base's CopySlices
            return self._record_in_place(lambda before: _wrap(np.zeros_like(before._data)))
        _writable(self._data).fill(0)
        self._bump_version()
        if recorded:
            self._set_grad_fn(d.ZeroBackward0((_edge(self),)))
        return self

    def fill_(self, value):
        """Set every element to ``value`` in place: a number, or a 0-dim tensor, which then
        gets a gradient too (the sum of the gradient of every element)."""
        value_tensor = value if isinstance(value, Tensor) else None
        if value_tensor is not None:
            if value_tensor.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {value_tensor.ndim} dimensions.")
            value = value_tensor.item()
        recorded = self._check_inplace(value_tensor, overlapping=True)
        if recorded and self._data.base is not None:  # a view: through its base's CopySlices
            return self._record_in_place(
                lambda before: _wrap(np.full_like(before._data, value)) if value_tensor is None
                else value_tensor.to(self.dtype).expand(self.shape) * 1)
        if value_tensor is None:
            fill = _number_as(value, self._data.dtype)
        else:  # a tensor's value is cast unchecked, as by .to(dtype)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                fill = value_tensor._data.astype(self._data.dtype)
        _writable(self._data).fill(fill)
        self._bump_version()
        if recorded:
            if value_tensor is None:
                self._set_grad_fn(d.FillBackward2((_edge(self),)))
            else:
                self._set_grad_fn(d.FillBackward3(_edges(self, value_tensor),
                                                  value_tensor._data.dtype))
        return self

    def copy_(self, src):
        """Copy ``src``'s values into this tensor (broadcast to its shape, converted to its
        dtype). In the graph, ``src`` gets the gradient and the old values none."""
        src_t = src if isinstance(src, Tensor) else tensor_from(src)
        recorded = self._check_inplace(src_t)
        if recorded and self._data.base is not None:  # a view: through its base's CopySlices
            return self._record_in_place(lambda _: src_t.expand(self.shape).to(self.dtype) * 1)
        try:
            np.copyto(self._data, src_t._data, casting="unsafe")
        except ValueError:
            raise _broadcast_error(self._data, src_t._data, "copy_") from None
        self._bump_version()
        if recorded:
            self._set_grad_fn(d.CopyBackwards(_edges(self, src_t), src_t._data.shape,
                                              src_t._data.dtype))
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        from .random import numpy_rng
        self._check_inplace()
        self._data[...] = numpy_rng(generator).uniform(a, b, self._data.shape)
        self._bump_version()
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        from .random import numpy_rng
        self._check_inplace()
        self._data[...] = numpy_rng(generator).normal(mean, std, self._data.shape)
        self._bump_version()
        return self

    # ----------------------------------------------------------------- ops of extra_ops.py

    def log10(self):
        return _extra.log10(self)

    def log2(self):
        return _extra.log2(self)

    def log1p(self):
        return _extra.log1p(self)

    def expm1(self):
        return _extra.expm1(self)

    def dot(self, tensor):
        return _extra.dot(self, tensor)

    def bmm(self, mat2):
        return _extra.bmm(self, mat2)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _extra.multinomial(self, num_samples, replacement, generator=generator)

    def histc(self, bins=100, min=0, max=0):
        return _extra.histc(self, bins, min, max)

    def histogram(self, bins, *, range=None, weight=None, density=False):
        return _extra.histogram(self, bins, range=range, weight=weight, density=density)

    # ----------------------------------------------------------------- ops of shape_ops.py

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _shape.new_zeros(self, *size, dtype=dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _shape.new_ones(self, *size, dtype=dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _shape.new_empty(self, *size, dtype=dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return _shape.new_full(self, size, fill_value, dtype=dtype, requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _shape.new_tensor(self, data, dtype=dtype, requires_grad=requires_grad)

    def type_as(self, other):
        return _shape.type_as(self, other)

    def flip(self, *dims):
        return _shape.flip(self, dims[0] if len(dims) == 1 else dims)

    def repeat(self, *sizes):
        return _shape.repeat(self, *sizes)

    def tile(self, *dims):
        return _shape.tile(self, dims[0] if len(dims) == 1 else dims)

    def index_select(self, dim, index):
        return _shape.index_select(self, dim, index)

    def unbind(self, dim=0):
        return _shape.unbind(self, dim)

    def select(self, dim, index):
        return _shape.select(self, dim, index)

    def narrow(self, dim, start, length):
        return _shape.narrow(self, dim, start, length)

    def tril(self, diagonal=0):
        return _shape.tril(self, diagonal)

    def triu(self, diagonal=0):
        return _shape.triu(self, diagonal)

    def tril_(self, diagonal=0):
        return _shape.tril_(self, diagonal)

    def triu_(self, diagonal=0):
        return _shape.triu_(self, diagonal)

    def masked_select(self, mask):
        return _shape.masked_select(self, mask)

    def movedim(self, source, destination):
        return _shape.movedim(self, source, destination)

    moveaxis = movedim

    def roll(self, shifts, dims=None):
        return _shape.roll(self, shifts, dims)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _shape.repeat_interleave(self, repeats, dim)

    def diag(self, diagonal=0):
        return _shape.diag(self, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _shape.diagonal(self, offset, dim1, dim2)

    def trace(self):
        return _shape.trace(self)

    def take(self, index):
        return _shape.take(self, index)

    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        return _shape.scatter(self, dim, index, src, value, reduce=reduce)

    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        return _shape.scatter_(self, dim, index, src, value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        return _shape.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim, index, src):
        return _shape.scatter_add_(self, dim, index, src)

    def index_add(self, dim, index, source, *, alpha=1):
        return _shape.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim, index, source, *, alpha=1):
        return _shape.index_add_(self, dim, index, source, alpha=alpha)

    def index_fill(self, dim, index, value):
        return _shape.index_fill(self, dim, index, value)

    def index_fill_(self, dim, index, value):
        return _shape.index_fill_(self, dim, index, value)

    # ----------------------------------------------------------------- ops of math_ops.py

    def floor(self):
        return _math.floor(self)

    def ceil(self):
        return _math.ceil(self)

    def round(self, *, decimals=0):
        return _math.round(self, decimals=decimals)

    def trunc(self):
        return _math.trunc(self)

    def frac(self):
        return _math.frac(self)

    def rsqrt(self):
        return _math.rsqrt(self)

    def erf(self):
        return _math.erf(self)

    def sinh(self):
        return _math.sinh(self)

    def cosh(self):
        return _math.cosh(self)

    def asin(self):
        return _math.asin(self)

    def acos(self):
        return _math.acos(self)

    def atan(self):
        return _math.atan(self)

    def atan2(self, other):
        return _math.atan2(self, other)

    def fmod(self, other):
        return _math.fmod(self, other)

    def lerp(self, end, weight):
        return _math.lerp(self, end, weight)

    def isinf(self):
        return _math.isinf(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return _math.nan_to_num(self, nan, posinf, neginf)

    def logical_and(self, other):
        return _math.logical_and(self, other)

    def logical_or(self, other):
        return _math.logical_or(self, other)

    def logical_xor(self, other):
        return _math.logical_xor(self, other)

    def count_nonzero(self, dim=None):
        return _math.count_nonzero(self, dim)

    def logsumexp(self, dim, keepdim=False):
        return _math.logsumexp(self, dim, keepdim)

    def cumprod(self, dim, *, dtype=None):
        return _math.cumprod(self, dim, dtype=dtype)

    def sort(self, dim=-1, descending=False, *, stable=None):
        return _math.sort(self, dim, descending, stable=stable)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        return _math.argsort(self, dim, descending, stable=stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _math.topk(self, k, dim, largest, sorted)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _math.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def median(self, dim=None, keepdim=False):
        return _math.median(self, dim, keepdim)

    def bernoulli(self, p=None, *, generator=None):
        return _math.bernoulli(self, p, generator=generator)

    def outer(self, vec2):
        return self.unsqueeze(1) * vec2.unsqueeze(0)


def _with_numpy_names(method):
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


for _name in ("sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
              "all", "any", "softmax", "log_softmax", "prod", "cumsum", "gather"):
    setattr(Tensor, _name, _with_numpy_names(getattr(Tensor, _name)))
del _name


# --------------------------------------------------------------------- functions on tensors

def _one_dim(op, dim, hint=""):
    """PyTorch's TypeError for ops that take a single dim (an int), not a tuple of them."""
    if not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}{hint}")
    return int(dim)


def _direct(t, other):
    """What ``t OP= other`` may use straight in numpy (``other``'s array, or a Python
    number), or None when the general path must decide: something to record, another
    dtype, a tensor that is not float, or memory that cannot be written."""
    a = t._data  # (memory that cannot be written: numpy raises ValueError, as for shapes)
    if a.dtype.kind != "f":
        return None
    if isinstance(other, Tensor):
        if other._data.dtype is not a.dtype or (
                _GradMode.enabled and (t._requires_grad or other._requires_grad)):
            return None
        return other._data
    if type(other) is float or type(other) is int:
        return None if _GradMode.enabled and t._requires_grad else other
    return None


def _shape_args(args):
    """``reshape(2, 3)`` and ``reshape((2, 3))`` both mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    return tuple(_size(a) for a in args)


def _size(n):
    """One size of a shape: an integer (a float would silently be cut, so it is refused)."""
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"a size must be an int, not {type(n).__name__} ({n!r}): sizes "
                        "count elements, e.g. zeros(2, 3); write int(n) to round down "
                        "on purpose") from None


def tensor_from(value):
    """A Tensor for ``value`` (a Tensor is returned as is), inferring the dtype as PyTorch."""
    if isinstance(value, Tensor):
        return value
    return _wrap(as_array(value))


def as_array(data, dtype=None):
    """``data`` as a fresh numpy array with PyTorch's dtype rules: Python floats -> float32,
    ints -> int64, bools -> bool; numpy arrays keep their dtype."""
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        arr = np.array([as_array(x) for x in data])
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
        return selection.WhereBackward0.run((input, t), x, y, condition=cond)
    except ValueError:
        raise _broadcast_error(x, y, "where") from None


Op.wrap = staticmethod(_wrap)  # the ops make their results through these two
Op.edge = staticmethod(_edge)
_graph.gradient_node = gradient_node  # graph.get_gradient_edge (the engine knows no Tensor)

from . import extra_ops as _extra  # noqa: E402  (its ops build on Tensor; methods above delegate)
from . import shape_ops as _shape  # noqa: E402  (as extra_ops)
from . import math_ops as _math  # noqa: E402  (the same, for math_ops.py)
