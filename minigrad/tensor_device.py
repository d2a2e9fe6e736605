"""``Size`` and ``device``: what ``t.shape`` and ``t.device`` are (chapters 5 and 6).

``Size`` is the tuple a shape prints as (``shape_args`` reads one given as arguments);
``device`` names any of PyTorch's devices so that ``torch.device(...)`` code runs, and
``check_device`` refuses all but the CPU.
"""

import operator

import numpy as np


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


# ------------------------------------------------------------------ shapes given as arguments

def shape_args(args):
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
