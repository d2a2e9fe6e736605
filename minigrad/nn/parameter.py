"""``Parameter``: a tensor a Module learns (chapter 6), and its placeholders for lazy modules,
as ``torch.nn.parameter``: ``UninitializedParameter`` and ``UninitializedBuffer`` (a tensor
whose shape is not known yet: ``nn.LazyLinear`` learns ``in_features`` from its first input),
and ``is_lazy``.

An uninitialized parameter holds no numbers. As in PyTorch, only a few things work on it (its
``dtype``, ``requires_grad``, ``grad``, ``size()``, ``.to(dtype)``, ``materialize(shape)``);
anything else raises ``ValueError``, and ``.shape`` raises ``RuntimeError``, both saying to run
the model once on a batch first.
"""

import numpy as np

from .. import creation, dtypes
from .._tensor import Tensor
from ..tensor_device import check_device

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer",
           "UninitializedTensorMixin", "is_lazy"]


class Parameter(Tensor):
    """A leaf tensor that requires grad and that a ``Module`` registers when you assign it
    as an attribute. It shares memory with the data it is made from."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            array = np.empty(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._data
        else:
            raise TypeError(f"Parameter expects a Tensor (e.g. minigrad.randn(3)), "
                            f"not {type(data).__name__}")
        self._init_leaf(array, requires_grad)
        if isinstance(data, Tensor):  # the same memory: the same version counter (PyTorch's)
            self._version_counter = data._counter()

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


# What an uninitialized tensor allows (PyTorch's list, plus the attributes it reads without
# going through an op): everything else public raises ValueError.
_ALLOWED = frozenset({
    "size", "copy_", "is_floating_point", "half", "float", "double", "long",
    "int", "cuda", "cpu", "to", "get_device", "materialize", "cls_to_become", "share_memory_",
    "data", "ndim", "grad", "is_leaf", "requires_grad", "dtype", "device", "is_cuda",
    "grad_fn", "nbytes", "itemsize", "shape",
})

# The operators, conversions and numpy hooks, which Python looks up on the class.
_REFUSED_SPECIAL = (
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
    "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
    "__pos__", "__abs__", "__invert__", "__and__", "__or__", "__xor__", "__lt__", "__le__",
    "__gt__", "__ge__", "__getitem__", "__setitem__", "__len__", "__iter__", "__bool__",
    "__float__", "__int__", "__index__", "__array__", "__contains__", "__format__",
)


def _refusal(cls_name, what):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        f"are using a `LazyModule` or explicitly manipulating "
        f"`minigrad.nn.parameter.{cls_name}` objects. When using LazyModules Call `forward` "
        f"with a dummy batch to initialize the parameters before calling minigrad functions")


def _refused(name):
    def method(self, *args, **kwargs):
        raise _refusal(type(self).__name__, f"<method '{name}'>")
    method.__name__ = name
    return method


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share: no numbers until
    ``materialize(shape)``, which gives them memory and turns them into their
    ``cls_to_become`` (``Parameter``, ``Tensor``), the same object."""

    __slots__ = ()
    cls_to_become = None

    def __getattribute__(self, name):
        if name[0] == "_" or name in _ALLOWED:
            return super().__getattribute__(name)
        raise _refusal(type(self).__name__, f"<method '{name}'>")

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor ``shape`` (uninitialized memory: zeros here), keeping its dtype
        unless ``dtype`` is given; it becomes a ``cls_to_become`` in place."""
        check_device(device)
        if isinstance(shape, int):
            shape = (shape,)
        dtype = dtype if dtype is not None else dtypes.from_numpy(self._data.dtype)
        self._data = creation.empty(tuple(shape), dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def cpu(self):
        return self

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __str__(self):
        return repr(self)

    def __deepcopy__(self, memo):  # PyTorch copies an UninitializedParameter only
        raise _refusal(type(self).__name__, "<method '__deepcopy__'>")


for _name in _REFUSED_SPECIAL:
    setattr(UninitializedTensorMixin, _name, _refused(_name))
UninitializedTensorMixin.__hash__ = object.__hash__


def _empty_leaf(tensor, requires_grad, device, dtype):
    """Start ``tensor`` as a leaf with no elements of ``dtype`` (float32 by default)."""
    check_device(device)
    tensor._init_leaf(creation.empty(0, dtype=dtype or dtypes.float32)._data, False)
    if requires_grad:
        Tensor.requires_grad_(tensor, True)  # raises PyTorch's error for an integer dtype


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet: what ``nn.LazyLinear`` and the other lazy
    modules hold until their first ``forward`` (then it is a ``Parameter``, the same object,
    so an optimizer made before that step still holds it)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        _empty_leaf(self, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, dtype=self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (``running_mean`` of ``nn.LazyBatchNorm1d``);
    ``materialize`` makes it a plain ``Tensor``."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        _empty_leaf(self, requires_grad, device, dtype)


def is_lazy(param):
    """True for an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)
