"""``Tensor``: a numpy array that remembers the operations that made it (chapters 2 and 5).

Every op computes its result with numpy. When grad mode is on and an input requires grad,
it also attaches a node from ``derivatives`` that knows the inputs' nodes and how to send a
gradient back to them. ``backward()`` hands the graph to the engine in ``graph``.

This module holds what a tensor is: its storage, its autograd attributes, its properties
and conversions. The methods that compute live in mixin classes, one module per kind:
``tensor_arithmetic`` (operators), ``tensor_math`` (elementwise functions, reductions),
``tensor_shape``, ``tensor_indexing`` and ``tensor_inplace``; ``tensor_functions`` has
``matmul``, ``stack``, ``cat`` and ``where``, ``tensor_backward`` the way into the engine.
"""

import numbers
import warnings
import weakref

import numpy as np

from . import dtypes, printing
from .ops.op import Op
from .ops import pointwise
from .ops.softmax import max_keepdim as _max_keepdim  # noqa: F401 (nn's cross-entropy)
from . import graph as _graph
from .graph import AccumulateGrad, VersionCounter, backward as _engine_backward
from . import (tensor_arithmetic, tensor_backward, tensor_functions, tensor_indexing,
               tensor_inplace, tensor_math, tensor_rules, tensor_shape)
from .tensor_arithmetic import ArithmeticMethods
from .tensor_backward import _run_backward
from .tensor_device import CPU, Size, check_device
from .tensor_indexing import IndexingMethods
from .tensor_inplace import InPlaceMethods
from .tensor_math import MathMethods, _with_numpy_names
from .tensor_shape import ShapeMethods
# Not used here, imported from here by other modules, tests and notebooks:
from .tensor_device import device  # noqa: F401
from .tensor_functions import as_array, cat, matmul, stack, tensor_from, where  # noqa: F401
from .tensor_rules import _broadcast_error, _needs_grad  # noqa: F401
from .tensor_shape import _shape_args  # noqa: F401

_new = object.__new__
_ndarray = np.ndarray


# PyTorch's old names for tensors of each dtype, as t.type() prints them.
_LEGACY_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor",
                      "float16": "HalfTensor", "int64": "LongTensor", "int32": "IntTensor",
                      "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                      "bool": "BoolTensor"}


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


_sigmoid = pointwise._sigmoid  # (of an array: the losses use it too)


class Tensor(ArithmeticMethods, MathMethods, ShapeMethods, IndexingMethods,
             InPlaceMethods):
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

    def register_hook(self, hook):
        """Call ``hook(grad)`` each time backward computes this tensor's gradient (the
        total, a Tensor); a tensor it returns replaces the gradient, for what flows on and
        for ``.grad``. Returns a handle: ``handle.remove()`` takes the hook off."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient: create it with requires_grad=True, or register "
                               "the hook on a result computed from such a tensor")
        shape = self._data.shape

        def on_gradient(grad):
            recorded = type(grad) is Tensor  # under create_graph=True
            result = hook(grad if recorded else _wrap(grad))
            if result is None:
                return grad
            if not isinstance(result, Tensor):
                raise TypeError(f"a hook must return None or a Tensor, not "
                                f"{type(result).__name__}")
            if result.shape != shape:
                raise RuntimeError(f"hook {getattr(hook, '__name__', hook)!r} has changed "
                                   f"the size of value: expected {list(shape)}, got "
                                   f"{list(result.shape)}")
            return result if recorded else result._data
        return _graph.add_gradient_hook(gradient_node(self), on_gradient)

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
        # Not an in-place change: the version stays (as in PyTorch). But a node that saved
        # this tensor saved its old array: its backward refuses (graph.check_saved_versions
        # sees another array).
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


for _name in ("sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
              "all", "any", "softmax", "log_softmax", "prod", "cumsum", "gather"):
    setattr(Tensor, _name, _with_numpy_names(getattr(Tensor, _name)))
del _name


Op.wrap = staticmethod(_wrap)  # the ops make their results through these two
Op.edge = staticmethod(_edge)
_graph.gradient_node = gradient_node  # graph.get_gradient_edge (the engine knows no Tensor)

# The method modules were imported before Tensor existed: each declares the names it needs
# from here as None, and gets them now (as Op gets _wrap above), so a method looks them up
# as plain globals.
_METHOD_MODULES = (tensor_arithmetic, tensor_backward, tensor_functions, tensor_indexing,
                   tensor_inplace, tensor_math, tensor_rules, tensor_shape)


def _hand_over(**names):
    for module in _METHOD_MODULES:
        for name, value in names.items():
            if hasattr(module, name):
                setattr(module, name, value)


_hand_over(Tensor=Tensor, _wrap=_wrap, _edge=_edge)

from . import extra_ops as _extra  # noqa: E402  (its ops build on Tensor; mixins delegate)
from . import shape_ops as _shape  # noqa: E402  (as extra_ops)
from . import math_ops as _math  # noqa: E402  (the same, for math_ops.py)

_hand_over(_extra=_extra, _shape=_shape, _math=_math)
