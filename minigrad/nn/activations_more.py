"""More of ``torch.nn``'s activations and helpers, in their functional forms (``F.silu``,
``F.elu``, ``F.softplus``, ``F.hardtanh``, ``F.relu6``, ``F.selu``, ``F.mish``,
``F.softsign``, ``F.logsigmoid``, ``F.normalize``, ``F.cosine_similarity``, ``F.pad``,
``F.kl_div``) and as modules (``nn.SiLU``, ``nn.ELU``, ..., ``nn.KLDivLoss``), plus the
containers ``nn.ModuleDict`` and ``nn.ParameterList`` and the layer ``nn.Unflatten``.

The elementwise activations check their arguments here; each op itself (forward and
backward, under PyTorch's name) is an ``Op`` class in ``ops/activations.py``."""

import warnings

import numpy as np

from ..ops import activations as ops
from ..ops.activations import hardswish
from ..ops.convolution import ConstantPadNdBackward0
from .._tensor import wrap
from ..tensor_rules import needs_grad
from ._arguments import expect_tensor
from .module import Module
from .parameter import Parameter

__all__ = ["silu", "elu", "selu", "softplus", "hardtanh", "relu6", "mish", "softsign",
           "logsigmoid", "normalize", "cosine_similarity", "pad", "kl_div"]
MODULES = ["Hardswish", "SiLU", "ELU", "SELU", "Softplus", "Hardtanh", "ReLU6", "Mish", "Softsign",
           "LogSigmoid", "CosineSimilarity", "KLDivLoss", "ModuleDict", "ParameterList",
           "Unflatten"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_input(name, input, kernel):
    expect_tensor(name, "input", 1, input)
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for {input.dtype}: use a '
                                  "float tensor (x.float())")
    return a


def _in_place(input, inplace, compute):
    """``compute(input)``, or with ``inplace`` the same written into ``input``'s memory
    (recorded in the graph as Tensor.relu_ is) and ``input`` returned."""
    if not inplace:
        return compute(input)
    if input._check_inplace():
        return input._record_in_place(compute)
    np.copyto(input._data, compute(input)._data)
    input._bump_version()
    return input


# ------------------------------------------------------------------ elementwise activations

def silu(input, inplace=False):
    """``x * sigmoid(x)`` (also called swish)."""
    _float_input("silu", input, "silu")
    return _in_place(input, inplace, lambda t: ops.SiluBackward0.run((t,), t._data))


def _elu(name, input, alpha, scale, inplace):
    _float_input(name, input, "elu")
    op = ops.EluBackward1 if inplace else ops.EluBackward0
    return _in_place(input, inplace, lambda t: op.run((t,), t._data, alpha, scale))


def elu(input, alpha=1.0, inplace=False):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise: smooth, and negative outputs
    down to -alpha."""
    return _elu("elu", input, float(alpha), 1.0, inplace)


def selu(input, inplace=False):
    """ELU with PyTorch's fixed alpha and scale (self-normalising networks)."""
    return _elu("selu", input, _SELU_ALPHA, _SELU_SCALE, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, a smooth ReLU; ``x`` itself where ``beta * x >
    threshold`` (there the two agree to float precision)."""
    a = _float_input("softplus", input, "softplus")
    return ops.SoftplusBackward0.run((input,), a, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clipped to ``[min_val, max_val]``."""
    expect_tensor("hardtanh", "input", 1, input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _in_place(input, inplace,
                     lambda t: ops.HardtanhBackward0.run((t,), t._data, min_val, max_val))


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``: hardtanh from 0 to 6."""
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _float_input("mish", input, "mish")
    return _in_place(input, inplace, lambda t: ops.MishBackward0.run((t,), t._data))


def logsigmoid(input):
    """``log(sigmoid(x))``, computed as ``-log(1 + exp(-x))`` without overflow."""
    a = _float_input("log_sigmoid", input, "log_sigmoid_forward_cpu")
    return ops.LogSigmoidBackward0.run((input,), a)


def softsign(input):
    """``x / (1 + |x|)`` (built from tensor ops, as PyTorch does)."""
    expect_tensor("softsign", "input", 1, input)
    return input / (input.abs() + 1)


# ------------------------------------------------------------------ vectors

def normalize(input, p=2.0, dim=1, eps=1e-12):
    """Each slice along ``dim`` divided by its p-norm (at least ``eps``): unit vectors."""
    expect_tensor("normalize", "input", 1, input)
    norm = input.norm(p, dim, keepdim=True).clamp_min(eps)
    return input / norm.expand_as(input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``: their dot product
    over the product of their norms (each at least ``eps``)."""
    expect_tensor("cosine_similarity", "x1", 1, x1)
    expect_tensor("cosine_similarity", "x2", 2, x2)
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pad(input, pad, mode="constant", value=None):
    """Pad with ``value`` (default 0): ``pad = (left, right)`` for the last dim, then
    ``(left, right, top, bottom)`` adds the second to last, and so on."""
    expect_tensor("pad", "input", 1, input)
    if mode != "constant":
        raise NotImplementedError(f"pad(): mode {mode!r} is not supported by minigrad; "
                                  "only 'constant'")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input._data.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input._data.ndim}")
    return ConstantPadNdBackward0.run((input,), pad=pad, value=0 if value is None else value)


# ------------------------------------------------------------------ KL divergence

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The KL divergence of ``target`` from the distribution whose log-probabilities are
    ``input``: ``target * (log(target) - input)`` (0 where target is 0). ``'batchmean'``
    divides the sum by the batch size, the true KL divergence per example."""
    expect_tensor("kl_div", "input", 1, input)
    expect_tensor("kl_div", "target", 2, target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.", UserWarning,
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        t = target._data
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(t == 0, 0, t * np.log(np.where(t == 0, 1, t)))
        if needs_grad(target):
            plogp = target * target.log()  # differentiable (target > 0 needed there)
        else:
            plogp = wrap(plogp.astype(t.dtype, copy=False))
        loss = plogp - target * input
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ------------------------------------------------------------------ modules

class _Elementwise(Module):
    """An activation module: ``forward`` calls ``_fn`` with the module's settings."""
    _fn = None
    _settings = ()

    def forward(self, input):
        settings = [getattr(self, k) for k in self._settings]
        if hasattr(self, "inplace"):
            settings.append(self.inplace)
        return type(self)._fn(input, *settings)

    def extra_repr(self):
        parts = [f"{k}={getattr(self, k)}" for k in self._settings]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)


class SiLU(_Elementwise):
    _fn = silu

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Mish(SiLU):
    _fn = mish


class SELU(SiLU):
    _fn = selu


class ELU(_Elementwise):
    _fn = elu
    _settings = ("alpha",)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class Softplus(_Elementwise):
    _fn = softplus
    _settings = ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Hardtanh(_Elementwise):
    _fn = hardtanh
    _settings = ("min_val", "max_val")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardswish(_Elementwise):
    _fn = hardswish

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return ""  # (PyTorch prints Hardswish() even when in place)


class Softsign(_Elementwise):
    _fn = softsign


class LogSigmoid(_Elementwise):
    _fn = logsigmoid


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class KLDivLoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (the inverse of Flatten)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        dim = input._dim(self.dim)
        shape = tuple(input.shape)
        return input.reshape(shape[:dim] + self.unflattened_size + shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class ModuleDict(Module):
    """Modules by name, registered as submodules (their parameters are the dict's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for name, module in items:
            self.add_module(name, module)

    def __getitem__(self, name):
        return self._modules[name]

    def __setitem__(self, name, module):
        self.add_module(name, module)

    def __delitem__(self, name):
        del self._modules[name]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, name):
        return name in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class ParameterList(Module):
    """Parameters in a list, registered as "0", "1", ... (plain tensors become Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value):
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(len(self._parameters)), value)
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index):
        return list(self._parameters.values())[index]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __repr__(self):
        lines = [f"    ({name}): Parameter containing: [{p.dtype} of size "
                 f"{'x'.join(str(n) for n in p.shape)}]" for name, p in self._parameters.items()]
        return "ParameterList(\n" + "".join(line + "\n" for line in lines) + ")"
