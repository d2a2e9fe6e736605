"""The dtypes of minigrad tensors and PyTorch's rules for mixing them (chapter 5).

Each ``dtype`` wraps a numpy dtype and prints as ``minigrad.float32``. ``float32`` is the
default for floating-point data, as in PyTorch.
"""

import builtins

import numpy as np


class dtype:
    """A tensor element type, e.g. ``minigrad.float32``."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize")

    def __init__(self, name, numpy_type):
        self.name = name
        self.numpy = np.dtype(numpy_type)
        self.is_floating_point = self.numpy.kind == "f"
        self.itemsize = self.numpy.itemsize

    def __repr__(self):
        return f"minigrad.{self.name}"

    def __reduce__(self):
        return self.name


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
uint8 = dtype("uint8", np.uint8)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)

ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_)
_BY_NUMPY = {d.numpy: d for d in ALL}
DEFAULT_FLOAT = float32.numpy
DEFAULT_INT = int64.numpy

_PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool_}


def from_numpy(numpy_dtype):
    """The minigrad dtype of a numpy dtype; a clear error for types minigrad lacks."""
    try:
        return _BY_NUMPY[np.dtype(numpy_dtype)]
    except KeyError:
        names = ", ".join(d.name for d in ALL)
        raise TypeError(f"minigrad has no dtype for numpy's {np.dtype(numpy_dtype)}; "
                        f"use one of: {names}") from None


# The names PyTorch's C++ errors give the dtypes ("... not implemented for 'Long'").
_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                      "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                      "int64": "Long", "bool": "Bool"}


def scalar_type_name(numpy_dtype):
    """PyTorch's C++ name of a dtype, as its error messages print it: int64 -> 'Long'."""
    return _SCALAR_TYPE_NAMES[np.dtype(numpy_dtype).name]


def to_numpy(d):
    """The numpy dtype for ``d``: a minigrad dtype, a numpy dtype, or float/int/bool."""
    if isinstance(d, dtype):
        return d.numpy
    if d in _PYTHON_TYPES:
        return _PYTHON_TYPES[d].numpy
    return from_numpy(d).numpy


def _category(numpy_dtype):
    """bool < integer < floating: PyTorch promotes across categories by category first."""
    return {"b": 0, "u": 1, "i": 1, "f": 2}[numpy_dtype.kind]


def promote(a, b):
    """The result dtype of an op on arrays ``a`` and ``b``, by PyTorch's rules.

    Within a category the wider type wins (float32 with float64 gives float64). A 0-dim
    operand does not widen a dimensioned one of the same category; across categories the
    higher category wins, int with float giving the float type (not float64, as numpy would).
    """
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _category(da), _category(db)
    a_dims, b_dims = a.ndim > 0, b.ndim > 0
    if a_dims != b_dims:
        dims, zero = (da, db) if a_dims else (db, da)
        c_dims, c_zero = (ca, cb) if a_dims else (cb, ca)
        if c_zero <= c_dims:
            return dims
        return zero if c_zero == 2 else np.promote_types(dims, zero)
    if ca != cb:
        return da if ca > cb else db
    return np.promote_types(da, db)


def scalar_name(numpy_dtype):
    """PyTorch's C++ name of a dtype, as its errors print it: Float, Double, Long."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(np.dtype(numpy_dtype).name, str(numpy_dtype))
