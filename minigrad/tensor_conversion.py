"""``Tensor.to`` and the dtype shorthands (``float()``, ``double()``, ``long()``, ...):
a tensor in another dtype, recorded when it is a float one (chapter 5)."""

import numpy as np

from . import dtypes
from ._tensor import Tensor, wrap
from .ops import pointwise
from .tensor_device import check_device

# PyTorch's old names for tensors of each dtype, as t.type() prints them.
LEGACY_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor",
                     "float16": "HalfTensor", "int64": "LongTensor", "int32": "IntTensor",
                     "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                     "bool": "BoolTensor"}


class ConversionMethods:
    """Tensor's ``to``, ``type`` and dtype shorthands."""

    __slots__ = ()

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

    def type_as(self, other):
        return self.to(other.dtype)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        check_device("cuda")

    def type(self, dtype=None):
        """The legacy type's name (``"minigrad.FloatTensor"``), or a copy in ``dtype``: a
        dtype, a legacy class (``minigrad.LongTensor``) or its name (``"torch.IntTensor"``)."""
        if dtype is None:
            return f"minigrad.{LEGACY_TYPE_NAMES.get(self._data.dtype.name, 'Tensor')}"
        if isinstance(dtype, str):
            names = {name: numpy_name for numpy_name, name in LEGACY_TYPE_NAMES.items()}
            name = dtype.rpartition(".")[2]
            if name not in names:
                raise ValueError(f"invalid type: '{dtype}': use a dtype (minigrad.float64) or "
                                 "a legacy type name such as 'torch.LongTensor'")
            return self.to(dtypes.from_numpy(np.dtype(names[name])))
        if isinstance(getattr(dtype, "dtype", None), dtypes.dtype):  # minigrad.LongTensor
            dtype = dtype.dtype
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
        return wrap(self._data.astype(numpy_dtype))
