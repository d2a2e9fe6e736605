"""The loss functions of ``nn.functional`` (chapter 7): MSE, L1, smooth L1 and Huber,
binary cross-entropy, negative log-likelihood and cross-entropy.

Each loss is one fused op with a hand-written backward where that is what PyTorch does
(``MseLossBackward0``, ``NllLossBackward0``, ...: their classes are in
``minigrad/ops/losses.py``; here they are checked and called), and is built from ordinary
ops where PyTorch builds it so (``l1_loss``, label smoothing), so that ``loss.grad_fn`` has
PyTorch's name. ``nn.MSELoss`` and the other loss modules (``nn/loss.py``) call these.
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..ops import losses as loss_ops
from ..graph import saved_version
from ..ops.op import saving_versions_of
from ..ops.losses import MseLossBackward0  # noqa: F401  (F.MseLossBackward0, shown in chapter 7)
from .._tensor import Tensor, wrap
from ..tensor_rules import broadcast_error
from ._arguments import expect_tensor

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_class_weight(weight, classes):
    if weight is not None and tuple(weight.shape) != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction: use 'mean', 'sum' "
                         "or 'none'")


# ------------------------------------------------------------------------------ MSE

def _warn_if_shapes_differ(input, target, stacklevel):
    """PyTorch's warning when a loss's input and target shapes differ: they are then
    broadcast, which is rarely what was meant."""
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning,
            stacklevel=stacklevel)


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or none) of the squared differences."""
    expect_tensor("mse_loss", "input", 1, input)
    _check_reduction(reduction)
    if not isinstance(target, Tensor):
        target = wrap(np.asarray(target, dtype=input._data.dtype))
    if input._data.dtype.kind != "f" and target._data.dtype.kind != "f":
        raise NotImplementedError(f"mse_loss is not implemented for {input.dtype} tensors: "
                                  "convert the predictions and targets with .float()")
    _warn_if_shapes_differ(input, target, stacklevel=3)
    a, b, _ = input._operands(target)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(f"mse_loss: input of shape {list(input.shape)} and target of shape "
                           f"{list(target.shape)} cannot be broadcast together") from None
    return loss_ops.MseLossBackward0.run((input, target), a, b, reduction=reduction)


# ------------------------------------------------------------------------ L1, smooth L1, Huber

def _check_pair(name, input, target, reduction):
    """Both tensors, a known reduction, and PyTorch's warning when the shapes differ (they
    are then broadcast, which is rarely what was meant)."""
    expect_tensor(name, "input", 1, input)
    expect_tensor(name, "target", 2, target)
    if target.shape != input.shape:
        _warn_if_shapes_differ(input, target, stacklevel=4)
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise broadcast_error(input._data, target._data, name) from None
    _check_reduction(reduction)


def _weighted(losses, weight, reduction, mean):
    """PyTorch's optional elementwise ``weight`` of l1_loss and huber_loss: the losses
    times the weight, then summed, or averaged (``mean`` says how)."""
    if weight.shape != losses.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = losses * weight
    if reduction == "none":
        return weighted
    return weighted.sum() if reduction == "sum" else mean(weighted)


def l1_loss(input, target, reduction="mean", weight=None):
    """Mean (or sum, or none) of the absolute differences ``|input - target|``. Made of abs
    and mean as in PyTorch: the gradient is sign(input - target), 0 where they are equal."""
    _check_pair("l1_loss", input, target, reduction)
    losses = (input - target).abs()
    if weight is not None:
        return _weighted(losses, weight, reduction, lambda w: w.sum() / weight.sum())
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _clipped_loss(name, input, target, reduction, width, node_cls):
    """The losses of ``|input - target|`` as one fused op, reduced."""
    a, b, _ = input._operands(target)
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {input.dtype}: convert the '
                                  "predictions and targets with .float()")
    return node_cls.run((input, target), a, b, reduction=reduction, width=width)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Squared error ``x² / (2 beta)`` where ``|x| < beta`` (x = input - target), absolute
    error ``|x| - beta / 2`` beyond: the L1 loss with its corner at 0 rounded off."""
    _check_pair("smooth_l1_loss", input, target, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # as PyTorch: the L1 loss itself
        return l1_loss(input, target, reduction)
    return _clipped_loss("smooth_l1_loss", input, target, reduction, beta,
                         loss_ops.SmoothL1LossBackward0)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error ``x² / 2`` where ``|x| < delta`` (x = input - target), and
    ``delta (|x| - delta / 2)`` beyond: smooth_l1_loss with beta = delta, times delta."""
    _check_pair("huber_loss", input, target, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _clipped_loss("huber_loss", input, target, reduction, delta,
                             loss_ops.HuberLossBackward0)
    each = _clipped_loss("huber_loss", input, target, "none", delta, loss_ops.HuberLossBackward0)
    return _weighted(each, weight, reduction, lambda w: w.mean())


# ------------------------------------------------------------------------ binary cross-entropy

def _same_shape_target(name, input, target):
    expect_tensor(name, "input", 1, input)
    expect_tensor(name, "target", 2, target)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size (for a model that outputs (N, 1), use target.unsqueeze(1) or "
                         "output.squeeze(1)).")


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """Binary cross-entropy of probabilities ``input`` (in [0, 1]) against targets of the
    same shape; each log is kept at -100 or above, as in PyTorch, so p = 0 gives 100, not inf."""
    _same_shape_target("binary_cross_entropy", input, target)
    _check_reduction(reduction)
    p, t, _ = input._operands(target)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1: binary_cross_entropy "
                           "takes probabilities; for raw scores use "
                           "binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss)")
    w = None if weight is None else weight._data.astype(p.dtype)
    return loss_ops.BinaryCrossEntropyBackward0.run((input, target), p, t, weight=w,
                                                  reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy of raw scores (logits): sigmoid and log in one stable formula.
    ``pos_weight`` weighs the positive targets (one value per class, on the last dimension)."""
    _same_shape_target("binary_cross_entropy_with_logits", input, target)
    _check_reduction(reduction)
    x, t, _ = input._operands(target)
    w = None if weight is None else weight._data.astype(x.dtype)
    pw = None if pos_weight is None else pos_weight._data.astype(x.dtype)
    return loss_ops.BinaryCrossEntropyWithLogitsBackward0.run(
        (input, target), x, t, weight=w, pos_weight=pw, reduction=reduction)


# ------------------------------------------------------------------------------ NLL

def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class indices, given log-probabilities (C,) or (N, C, ...)."""
    expect_tensor("nll_loss", "input", 1, input)
    expect_tensor("nll_loss", "target", 2, target)
    _check_reduction(reduction)
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}: class indices "
                           "are int64 tensors (use target.long()), or pass class probabilities "
                           "with the same shape as the input")
    logp, labels = input._data, target._data
    if weight is None and ignore_index < 0 and logp.ndim == 2 and labels.ndim == 1:
        fast = _nll_loss_batch(input, target, logp, labels, reduction)
        if fast is not None:  # None: something to report, which the general path does
            return fast
    if logp.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0): the input holds one "
                         "log-probability per class, (C,) or (N, C)")
    if logp.ndim == 1:  # one unbatched sample: (C,) with one target
        if labels.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if labels.size != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{labels.size} (a batch of samples is an input of shape (N, C))")
        labels = labels.reshape(())
    elif labels.shape != logp.shape[:1] + logp.shape[2:]:
        _refuse_target_shape(input, target)
    if logp.ndim == 3 or logp.ndim > 4:
        # As PyTorch does: the positions are flattened into a 2-D "image" (N, C, 1, -1),
        # and the per-position losses are viewed back in their own shape.
        n, classes = logp.shape[:2]
        positions = math.prod(logp.shape[2:])
        losses = nll_loss(input.contiguous().view(n, classes, 1, positions),
                          target.reshape(n, 1, positions), weight, ignore_index, reduction)
        return losses.view(target.shape) if reduction == "none" else losses
    class_dim = 0 if logp.ndim == 1 else 1
    _check_class_weight(weight, logp.shape[class_dim])
    if weight is not None and weight._data.dtype != logp.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type_name(logp.dtype)} but found "
            f"{dtypes.scalar_type_name(weight._data.dtype)}: the class weights must have the "
            f"input's dtype ({input.dtype}); convert them (weight.to(input.dtype))")
    classes = logp.shape[class_dim]
    valid = labels != ignore_index
    safe = np.where(valid, labels, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= classes):
        bad = safe[(safe < 0) | (safe >= classes)][0]
        raise IndexError(f"Target {bad} is out of bounds: class indices go from 0 to {classes - 1}")
    # (sample index, class index, position...) picks each target's log-probability
    positions = np.indices(labels.shape, sparse=True)
    key = positions[:class_dim] + (safe,) + positions[class_dim:]
    if weight is None:
        picked_weight = valid.astype(logp.dtype)
    else:
        picked_weight = weight._data.astype(logp.dtype)[safe] * valid
    node_cls = loss_ops.NllLoss2DBackward0 if logp.ndim == 4 else loss_ops.NllLossBackward0
    return saving_versions_of(node_cls.run(
        (input,), logp, key=key, labels=labels, picked_weight=picked_weight, valid=valid,
        class_dim=class_dim, reduction=reduction, total=picked_weight.sum()), target)


def _refuse_target_shape(input, target):
    """Say what is wrong with class indices that are not (N, d1, ...) for log-probabilities
    (N, C, d1, ...)."""
    logp, labels = input._data, target._data
    if labels.shape == logp.shape:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {target.dtype}: one-hot targets are "
                           "probabilities (target.float()), or take their class indices "
                           "with target.argmax(1)")
    if labels.ndim == logp.ndim == 2 and labels.shape[1] == 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported: "
                           f"targets of shape {list(labels.shape)} need .squeeze(1)")
    if labels.ndim and labels.shape[0] != logp.shape[0]:
        raise ValueError(f"Expected input batch_size ({logp.shape[0]}) to match target "
                         f"batch_size ({labels.shape[0]}).")
    raise ValueError(f"Expected target of shape {list(logp.shape[:1] + logp.shape[2:])} for "
                     f"input of shape {list(input.shape)}, got {list(target.shape)}")


def _nll_loss_batch(input, target, logp, labels, reduction):
    """The common case, (N, C) log-probabilities with N labels, no weights and none ignored,
    in a few numpy calls; None when a label is out of range, for nll_loss to report."""
    n = len(labels)
    if n == 0 or n != len(logp) or np.minimum.reduce(labels) < 0:  # (labels.min(), faster)
        return None
    rows = np.arange(n)
    try:
        loss = loss_ops.NllLossBackward0.run((input,), logp, key=(rows, labels), labels=labels,
                                             reduction=reduction, total=n)
    except IndexError:  # a label >= C
        return None
    if loss._grad_fn is not None:  # the labels are saved: check the target's version too
        loss._grad_fn.kept.append(saved_version(target))  # (saving_versions_of, inlined)
    return loss


# ------------------------------------------------------------------------------ cross-entropy

def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross-entropy of logits (N, C, ...) with class indices (N, ...) or class
    probabilities (same shape as the input). Stable for any logits: it works in log space."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    expect_tensor("cross_entropy", "input", 1, input)
    _check_reduction(reduction)
    if not isinstance(target, Tensor):
        target = wrap(np.asarray(target))
    class_dim = 0 if input.ndim == 1 else 1
    if target._data.dtype.kind == "f":
        if label_smoothing:
            classes = input.shape[class_dim]
            target = target * (1 - label_smoothing) + label_smoothing / classes
        return _cross_entropy_probs(input, target, weight, reduction)
    if label_smoothing:
        return _smoothed_indices(input, target, weight, ignore_index, reduction,
                                 label_smoothing, class_dim)
    return nll_loss(input.log_softmax(class_dim), target, weight, ignore_index, reduction)


def _cross_entropy_probs(input, target, weight, reduction):
    if target.shape != input.shape:
        raise RuntimeError(f"class-probability targets must have the input's shape "
                           f"{list(input.shape)}, got {list(target.shape)}; for class indices "
                           "use an integer tensor")
    if input.ndim == 1:  # one unbatched sample
        losses = _cross_entropy_probs(input.unsqueeze(0), target.unsqueeze(0), weight, reduction)
        return losses.squeeze(0) if reduction == "none" else losses
    _check_class_weight(weight, input.shape[1])
    z, t, _ = input._operands(target)
    if weight is not None and dtypes.promote(z, weight._data) != z.dtype:
        # float64 weights make the loss float64, as in PyTorch (class indices refuse them)
        z, t = z.astype(weight._data.dtype), t.astype(weight._data.dtype)
    weights = np.ones((), z.dtype) if weight is None else \
        weight._data.astype(z.dtype).reshape((1, -1) + (1,) * (z.ndim - 2))
    node_cls = _ProbsMeanBackward if reduction == "mean" else _ProbsSumBackward
    return node_cls.run((input, target), z, t, weights=weights, reduction=reduction)


# Named as PyTorch's last node of this loss: a division for the mean, a negation otherwise.
_ProbsMeanBackward = type("DivBackward1", (loss_ops.CrossEntropyProbsBackward,),
                          {"__slots__": ()})
_ProbsSumBackward = type("NegBackward0", (loss_ops.CrossEntropyProbsBackward,),
                         {"__slots__": ()})


def _smoothed_indices(input, target, weight, ignore_index, reduction, smoothing, class_dim):
    """Label smoothing with class indices, as PyTorch computes it: (1 - smoothing) times
    the loss of the targets plus smoothing / C times the loss against every class alike,
    where a mean divides by the total weight of the targets."""
    log_probs = input.log_softmax(class_dim)
    targets_loss = nll_loss(log_probs, target, weight, ignore_index, reduction)
    classes = input.shape[class_dim]
    if weight is not None:  # a constant, in the input's dtype, as nll_loss takes it
        shape = [1] * input.ndim
        shape[class_dim] = classes
        log_probs = log_probs * wrap(weight._data.astype(log_probs._data.dtype).reshape(shape))
    ignored = target._data == ignore_index
    uniform_loss = (-log_probs.sum(class_dim)).masked_fill(wrap(ignored), 0.0)
    if reduction == "mean":
        counted = target._data[~ignored]
        total = counted.size if weight is None else float(weight._data[counted].sum())
        uniform_loss = uniform_loss.sum() / total
    elif reduction == "sum":
        uniform_loss = uniform_loss.sum()
    return targets_loss * (1 - smoothing) + uniform_loss * (smoothing / classes)
