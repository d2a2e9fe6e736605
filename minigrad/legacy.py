"""PyTorch's older spellings that programs still use: the constants ``minigrad.inf``,
``pi``, ``e``, ``nan`` (plain Python floats, as ``torch.pi``), and the legacy typed
constructors ``FloatTensor``, ``LongTensor``, ``DoubleTensor``, ... .

As in PyTorch, a legacy constructor takes either data or sizes::

    minigrad.LongTensor([1, 2])        # data: tensor([1, 2])
    minigrad.FloatTensor(2, 3)         # sizes: a 2x3 float32 tensor (zeros here; PyTorch
                                       # leaves the memory uninitialised)
    minigrad.FloatTensor(other_float)  # the same memory as a float32 tensor ``other_float``

and ``isinstance(x, minigrad.FloatTensor)`` is True for a float32 tensor. New code should
write ``minigrad.tensor(data, dtype=...)`` and ``minigrad.empty(sizes, dtype=...)`` instead.
"""

import math
import numbers

import numpy as np

from . import creation, dtypes
from ._tensor import Tensor
from .tensor_device import Size

__all__ = ["inf", "nan", "pi", "e", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e


def _data_or_sizes(name, args):
    """Decide, as PyTorch's legacy constructors do, whether ``args`` are sizes (whole
    numbers, or one ``minigrad.Size``) or data (a sequence or an array); None for data."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, (bool, np.bool_)):
            raise TypeError(f"new(): data must be a sequence (got bool): {name}(True) is "
                            f"neither data nor a size; write {name}([True]) for data")
        if isinstance(arg, numbers.Integral):
            return (int(arg),)
        if isinstance(arg, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(arg).__name__}': {name} takes "
                            "numbers, e.g. " + name + "([1, 2])")
        if isinstance(arg, (list, tuple, np.ndarray)):
            return None
        raise TypeError(f"new(): data must be a sequence (got {type(arg).__name__}): write "
                        f"{name}([{arg!r}]) for a tensor holding it")
    sizes = []
    for arg in args:
        if isinstance(arg, (bool, np.bool_)) or not isinstance(arg, numbers.Integral):
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(type(a).__name__ for a in args)}): {name} takes "
                            "either one sequence of data or whole-number sizes, "
                            f"e.g. {name}(2, 3)")
        sizes.append(int(arg))
    return tuple(sizes)


class LegacyTensorType(type):
    """The type of ``minigrad.FloatTensor`` and friends: calling one makes a tensor of its
    dtype, and ``isinstance(x, minigrad.FloatTensor)`` asks whether ``x`` is a float32
    tensor (as in PyTorch, these classes are not subclasses of ``Tensor``)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.dtype == cls.dtype

    def __call__(cls, *args, device=None, **kwargs):
        name = cls.__name__
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"keyword(s) {', '.join(map(repr, kwargs))}: {name} takes data "
                            f"or sizes (and device) only; for a dtype or requires_grad use "
                            f"minigrad.tensor(data, dtype=..., requires_grad=...)")
        if not args:
            return creation.empty(0, dtype=cls.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if other.dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {other.dtype}): {name}(t) only "
                                f"wraps a tensor of its own dtype; convert it with "
                                f"t.to({cls.dtype})")
            return other.view_as(other)  # the same memory, as PyTorch's alias
        sizes = _data_or_sizes(name, args)
        if sizes is None:
            return creation.tensor(np.asarray(args[0]).astype(dtypes.to_numpy(cls.dtype))
                                   if isinstance(args[0], np.ndarray) else args[0],
                                   dtype=cls.dtype, device=device)
        negative = [n for n in sizes if n < 0]
        if negative:
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{negative[0]}: {list(sizes)}")
        return creation.empty(*sizes, dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy(name, dtype):
    return LegacyTensorType(name, (), {"dtype": dtype, "__module__": __name__,
                                       "__doc__": f"Legacy constructor of {dtype} tensors."})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
CharTensor = _legacy("CharTensor", dtypes.int8)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
BoolTensor = _legacy("BoolTensor", dtypes.bool_)
