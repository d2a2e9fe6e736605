"""Normalisation layers: ``BatchNorm1d``, ``BatchNorm2d``, ``LayerNorm`` and ``GroupNorm``,
as in ``torch.nn``.

Both rescale what a layer outputs to mean 0 and variance 1 (then learn a scale ``weight``
and a shift ``bias``), which keeps deep models trainable with larger learning rates.
``LayerNorm`` normalises each sample on its own and behaves the same at all times.
``BatchNorm1d`` normalises each feature over the samples of the batch, so it behaves
differently in training and in evaluation: chapter 10's ``model.train()`` /
``model.eval()`` is where that matters. While training it uses the batch's statistics
and keeps running averages of them (buffers, saved in the ``state_dict``); after
``model.eval()`` it uses those running averages, so a prediction does not depend on the
other samples of the batch, and a single sample can be evaluated.
"""

import numbers

from .. import creation, dtypes
from ..tensor_device import check_device
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"]


def _scale_and_shift(module, shape, dtype, learnt, bias):
    """The learnt ``weight`` and ``bias`` of a normalisation layer (or None for each)."""
    module.register_parameter(
        "weight", Parameter(creation.empty(shape, dtype=dtype)) if learnt else None)
    module.register_parameter(
        "bias", Parameter(creation.empty(shape, dtype=dtype)) if learnt and bias else None)


def _reset_scale_and_shift(module):
    """Scale 1 and shift 0: the layer starts as a plain normalisation."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class BatchNorm(Module):
    """What ``BatchNorm1d`` and ``BatchNorm2d`` share (PyTorch's ``_BatchNorm``): batch
    normalisation per channel C, dimension 1 of the input (see F.batch_norm).

    ``momentum``: how far the running statistics move towards each batch's (None: their
    plain average over all batches so far). ``affine``: learn ``weight`` (ones at first)
    and ``bias`` (zeros). ``track_running_stats=False``: keep no running statistics, and
    use the batch's own in eval mode too.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        check_device(device)
        dtype = dtype or dtypes.float32
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _scale_and_shift(self, (num_features,), dtype, affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_scale_and_shift(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        tracking = self.training and self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum
        if tracking and self.momentum is None:  # the average of all batches so far
            momentum = 1.0 / (int(self.num_batches_tracked) + 1)
        # Batch statistics while training, and in eval mode when there are no running ones.
        use_batch = self.training or self.running_mean is None
        out = F.batch_norm(input, self.running_mean if not self.training or tracking else None,
                           self.running_var if not self.training or tracking else None,
                           self.weight, self.bias, use_batch, momentum, self.eps)
        if tracking:  # counted once F.batch_norm accepted the batch
            self.num_batches_tracked.add_(1)
        return out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input, per channel C."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input): "
                             "BatchNorm1d takes a batch (N, C) or (N, C, L)")


class BatchNorm2d(BatchNorm):
    """Batch normalisation of images (N, C, H, W), per channel C: over the samples and the
    positions of each channel (the CNNs of Dive into Deep Learning's chapters 7 and 8)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input): BatchNorm2d "
                             "takes a batch of images (N, C, H, W)")


class GroupNorm(Module):
    """Group normalisation (see F.group_norm): the ``num_channels`` channels split into
    ``num_groups`` groups, each normalised per sample. ``affine``: learn a ``weight`` (ones
    at first) and, if ``bias``, a ``bias`` (zeros), one per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        check_device(device)
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        dtype = dtype or dtypes.float32
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _scale_and_shift(self, (num_channels,), dtype, affine, bias)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_scale_and_shift(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class LayerNorm(Module):
    """Layer normalisation over the last dimensions, ``normalized_shape`` (an int for the
    last one), of every sample (see F.layer_norm). ``elementwise_affine``: learn ``weight``
    (ones at first) and, if ``bias``, ``bias`` (zeros), both of shape ``normalized_shape``."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)
        dtype = dtype or dtypes.float32
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _scale_and_shift(self, self.normalized_shape, dtype, elementwise_affine, bias)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_scale_and_shift(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")
