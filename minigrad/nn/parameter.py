"""``Parameter``: a tensor a Module learns (chapter 6)."""

import numpy as np

from .._tensor import Tensor


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
