"""``Tensor``: a numpy array that remembers the operations that made it (chapters 2 and 5).

Every op computes its result with numpy. When grad mode is on and an input requires grad,
it also attaches a node (an ``Op`` of ``ops/``) that knows the inputs' nodes and how to
send a gradient back to them. ``backward()`` hands the graph to the engine in ``graph``.

This module holds what a tensor *is*: its storage, its autograd attributes, its properties
and conversions to Python, ``wrap`` (the fast constructor every op makes its result with)
and ``tensor_from``/``as_array`` (PyTorch's dtype rules for data). It imports no op, so
that every op can build on it (PyTorch's ``torch/_tensor.py`` has the same name and job).
The methods that compute (``x * y``, ``x.exp()``, ``x.backward()``) are written next to what
they run and attached once by ``minigrad.methods``.
"""

import numbers
import warnings
import weakref

import numpy as np

from . import dtypes, printing
from . import graph
from .graph import VersionCounter, gradient_node
from .tensor_device import CPU, Size

_new = object.__new__
_ndarray = np.ndarray


def _no_grad_view_of_grad(t):
    """Is ``t`` a view made in no_grad mode of a tensor that requires grad? It requires grad
    (as in PyTorch: ``ops.op.note_view``), but is no leaf of its own: PyTorch sends the
    gradient that reaches it nowhere (its ``.grad`` stays None)."""
    view = getattr(t, "_view", None)
    return type(view) is tuple and view[1] is None and view[0]._requires_grad


def wrap(data, grad_fn=None):
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


def tensor_from(value):
    """A Tensor for ``value`` (a Tensor is returned as is), inferring the dtype as PyTorch."""
    if isinstance(value, Tensor):
        return value
    return wrap(as_array(value))


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
            result = hook(grad if recorded else wrap(grad))
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
        return graph.add_gradient_hook(gradient_node(self), on_gradient)

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
            if _no_grad_view_of_grad(self):
                return  # PyTorch gives such a view no AccumulateGrad: the gradient ends here
            self._grad = wrap(self._new_grad(grad, owned))
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
            if _no_grad_view_of_grad(self):
                return
            self._grad = wrap(np.empty_like(self._data, order="C")).copy_(grad)
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

    def detach(self):
        """The same numbers (same memory, same version counter), cut off from the graph."""
        out = wrap(self._data)
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
        return wrap(self._data)

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
        t._grad = None if self._grad is None else wrap(self._grad._data.copy())
        t._accumulator = None
        t._version_counter = None
        memo[id(self)] = t
        return t

    def __reduce__(self):
        raise TypeError("minigrad tensors are not pickled: save them with minigrad.save(), "
                        "which writes a plain .npz file")

    def _float_data(self):
        """The values as floats: integer tensors become float32 (exp, log, ... of ints)."""
        a = self._data
        if a.dtype.kind != "f":
            return a.astype(dtypes.DEFAULT_FLOAT)
        return a

    def _set_grad_fn(self, node):
        self._grad_fn = node
        self._requires_grad = True
        return self
