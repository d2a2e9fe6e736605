"""Layers: ``Linear``, ``Sequential``, ``ModuleList``, activations, ``Flatten``, ``Dropout``
(chapter 6), and ``Dropout1d`` / ``Dropout2d`` (whole channels, for the CNNs after it)."""

import math
import numbers
from collections import OrderedDict
from collections.abc import Iterable

from .. import creation, dtypes
from ..tensor_device import check_device
from . import functional as F
from . import init
from .module import Module, indent
from .parameter import Parameter

__all__ = ["Linear", "Sequential", "ModuleList", "ReLU", "LeakyReLU", "GELU", "Tanh", "Sigmoid",
           "Softmax", "LogSoftmax", "Flatten", "Identity", "DropoutNd", "Dropout", "Dropout1d",
           "Dropout2d"]


def _check_sizes(in_features, out_features):
    for size in (in_features, out_features):
        if not isinstance(size, numbers.Integral) or isinstance(size, bool):
            raise TypeError(f"Linear(in_features, out_features) takes whole numbers of "
                            f"features, got {in_features!r} and {out_features!r}")


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features).

    Initialised as PyTorch does: weight and bias uniform in ±1/sqrt(in_features).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        check_device(device)
        _check_sizes(in_features, out_features)
        self.in_features = in_features
        self.out_features = out_features
        dtype = dtype or dtypes.float32
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Sequential(Module):
    """Modules applied one after the other; named "0", "1", ... (or by an OrderedDict)."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(OrderedDict(list(self._modules.items())[index]))
        return modules[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleList(Module):
    """A list of modules that the model can see: their parameters are in ``.parameters()``
    (a plain Python list would hide them). Named "0", "1", ...; it has no forward of its
    own: the model's forward decides how to use them."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        """Append each of ``modules``; all are checked first, so a bad one adds none."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        modules = list(modules)
        for module in modules:
            if module is not None and not isinstance(module, Module):
                raise TypeError(f"{type(module).__name__} is not a Module subclass")
        for module in modules:
            self.append(module)
        return self

    def __getitem__(self, index):
        modules = list(self._modules.values())
        return ModuleList(modules[index]) if isinstance(index, slice) else modules[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self):
        """As PyTorch prints it: a run of equal modules on one line, ``(0-2): 3 x Linear(...)``."""
        runs = []  # [first index, last index, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return "ModuleList()"
        lines = [indent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}", 2)
                 for a, b, text in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else input.relu()

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where x > 0, ``negative_slope * x`` elsewhere (see ``F.leaky_relu``)."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """``x * Φ(x)``, Φ the standard normal CDF: a smooth ReLU, the activation of transformers
    (see F.gelu). ``approximate="tanh"``: the tanh approximation of Φ."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Flatten(Module):
    """Flatten every dimension after the batch one: (N, 8, 8) -> (N, 64)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class DropoutNd(Module):
    """What the dropout layers share (PyTorch's ``_DropoutNd``): ``p`` and ``inplace``."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(DropoutNd):
    """Zeroes random elements while training; does nothing after ``model.eval()``."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class Dropout1d(DropoutNd):
    """Zeroes random whole channels (N, C, L) while training (see ``F.dropout1d``)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(DropoutNd):
    """Zeroes random whole feature maps (N, C, H, W) while training (see ``F.dropout2d``)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
