"""Lazy modules: ``LazyLinear``, ``LazyConv1d`` / ``2d``, ``LazyConvTranspose1d`` / ``2d`` and
``LazyBatchNorm1d`` / ``2d``, as in ``torch.nn``.

A lazy layer is made without its input size (``nn.LazyLinear(256)``: no ``in_features``).
Its parameters are ``UninitializedParameter``\\ s until the first call, which reads the size
from the input (the last dimension for ``LazyLinear``, the channels for the others), gives
the parameters their shapes, initialises them as the ordinary layer would (the same numbers
after the same seed), and turns the module into that ordinary class (``Linear``, ``Conv2d``,
...), as PyTorch does with ``cls_to_become``::

    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    net(X)        # now net[0] is a Linear(in_features=X.shape[-1], out_features=256)

Dive into Deep Learning writes its models this way. The parameters are the same objects
before and after, so an optimizer made before the first call works. Until then, using a
parameter raises (see ``nn.parameter``). Loading a state dict into a lazy module gives its
parameters the loaded shapes (``lazy.load_state_dict(trained.state_dict())``). Unlike
PyTorch, not yet when the lazy module sits inside the model that loads:
``Module.load_state_dict`` has no per-module load hook to do it there, so that raises
RuntimeError (run the model once on a batch first, then load).
"""

from collections import OrderedDict
from itertools import chain

from .. import creation, dtypes
from ..graph import no_grad
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .layers import Linear
from .normalization import BatchNorm1d, BatchNorm2d
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConvMixin", "LazyConv1d", "LazyConv2d",
           "LazyBatchNormMixin", "LazyBatchNorm1d", "LazyBatchNorm2d"]


class LazyModuleMixin:
    """What the lazy modules share: a forward pre-hook that infers the shapes and
    initialises the parameters on the first call (``initialize_parameters``, written by each
    lazy module), then removes itself and turns the module into ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)
        self._load_hook = self.register_load_state_dict_pre_hook(self._take_loaded_shapes)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """True while a parameter or buffer still waits for its shape."""
        return any(is_lazy(t) for t in chain(self._parameters.values(),
                                             self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        # Taken off by its key in this module's own hooks, not by handle.remove(): the handle
        # of a deep-copied lazy module still points at the original's hooks.
        key = module._initialize_hook.id
        module._forward_pre_hooks.pop(key, None)
        module._forward_hooks_with_kwargs.discard(key)
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """As ``Module.state_dict``, but an uninitialized parameter or buffer appears as
        itself (``<UninitializedParameter>``), as in PyTorch."""
        state = OrderedDict() if destination is None else destination
        for name, value in self._parameters.items():
            if value is not None:
                state[prefix + name] = value if keep_vars or is_lazy(value) else value.detach()
        for name, value in self._buffers.items():
            if value is not None and name not in self._non_persistent_buffers_set:
                state[prefix + name] = value if keep_vars or is_lazy(value) else value.detach()
        return state

    @staticmethod
    def _take_loaded_shapes(module, state_dict, prefix, *rest):
        """Give each uninitialized parameter or buffer the shape of the value loaded into it
        (PyTorch's load hook of lazy modules, run by ``load_state_dict`` for this module and
        as a submodule). The module stays lazy until its first call, which checks the input
        against the loaded shapes."""
        if not (hasattr(state_dict, "keys") and hasattr(state_dict, "__getitem__")):
            return  # (load_state_dict raises its own TypeError)
        with no_grad():
            for name, value in chain(module._parameters.items(), module._buffers.items()):
                key = prefix + name
                loaded = state_dict[key] if key in state_dict else None
                if is_lazy(value) and loaded is not None and not is_lazy(loaded):
                    value.materialize(loaded.shape)


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # no bias yet: nothing is drawn before the first call
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # its parameters were loaded from a state dict
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     f"is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class LazyConvMixin(LazyModuleMixin):
    """What ``LazyConv1d`` and ``LazyConv2d`` share: ``in_channels`` is the channel
    dimension of the first input, (N, C, *) or (C, *)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            self.weight.materialize((self.out_channels, self.in_channels // self.groups)
                                    + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        n = self.dims
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]


class LazyConv1d(LazyConvMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is the channel dimension of its first input,
    (N, C, L) or (C, L)."""

    cls_to_become = Conv1d


class LazyConv2d(LazyConvMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is the channel dimension of its first input,
    (N, C, H, W) or (C, H, W)."""

    cls_to_become = Conv2d


class LazyConvTransposeMixin(LazyConvMixin):
    """What ``LazyConvTranspose1d`` and ``2d`` share: PyTorch's argument order (output_padding
    after padding, dilation after bias) and the weight (in_channels, out_channels / groups,
    k...)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding,
                                 groups, False, dilation, padding_mode, device=device,
                                 dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            self.weight.materialize((self.in_channels, self.out_channels // self.groups)
                                    + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class LazyConvTranspose1d(LazyConvTransposeMixin, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is the channel dimension of its first
    input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(LazyConvTransposeMixin, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is the channel dimension of its first
    input."""

    cls_to_become = ConvTranspose2d


class LazyBatchNormMixin(LazyModuleMixin):
    """What the lazy batch norms share: ``num_features`` is the channel dimension (dim 1)
    of the first input."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype,
                         bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = creation.tensor(0, dtype=dtypes.int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(LazyBatchNormMixin, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is the channel dimension of its first
    input (N, C) or (N, C, L)."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(LazyBatchNormMixin, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is the channel dimension of its first
    input (N, C, H, W)."""

    cls_to_become = BatchNorm2d
