"""The loss functions of ``nn.functional`` (chapter 7): MSE, L1, smooth L1 and Huber,
binary cross-entropy, negative log-likelihood and cross-entropy.

Each loss is one fused op with a hand-written backward where that is what PyTorch does
(``MseLossBackward0``, ``NllLossBackward0``, ...), and is built from ordinary ops where
PyTorch builds it so (``l1_loss``, label smoothing), so that ``loss.grad_fn`` has PyTorch's
name. ``nn.MSELoss`` and the other loss modules (``nn/loss.py``) call these.
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..graph import Node, unbroadcast
from ..tensor import Tensor, _broadcast_error, _edge, _max_keepdim, _needs_grad, _sigmoid, _wrap
from ._arguments import _expect_tensor

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_class_weight(weight, classes):
    if weight is not None and tuple(weight.shape) != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'")


def _reduced(losses, reduction, divisor):
    """The loss value from per-element losses: their sum over ``divisor`` ('mean'), their
    sum ('sum'), or the losses themselves ('none')."""
    if reduction == "mean":
        if not divisor:  # nothing counted (no element, or every target ignored): nan
            return np.asarray(np.nan, dtype=losses.dtype)
        return np.asarray(losses.sum() / divisor, dtype=losses.dtype)
    if reduction == "sum":
        return np.asarray(losses.sum(), dtype=losses.dtype)
    return losses


# ------------------------------------------------------------------------------ MSE

class MseLossBackward0(Node):
    """d/da mean((a - b)^2) = 2 (a - b) / n, and the opposite for b."""
    __slots__ = ("reduction", "shapes")

    def __init__(self, inputs, diff, reduction, shapes):
        super().__init__(inputs, (diff,))
        self.reduction, self.shapes = reduction, shapes

    def apply(self, grad):
        (diff,) = self.saved_arrays()
        if self.reduction == "mean":
            grad = grad / diff.size
        local = 2 * diff * grad
        return (unbroadcast(local, self.shapes[0]) if self.inputs[0] is not None else None,
                unbroadcast(-local, self.shapes[1]) if self.inputs[1] is not None else None)


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
    _expect_tensor("mse_loss", "input", 1, input)
    _check_reduction(reduction)
    if not isinstance(target, Tensor):
        target = _wrap(np.asarray(target, dtype=input._data.dtype))
    if input._data.dtype.kind != "f" and target._data.dtype.kind != "f":
        raise NotImplementedError(f"mse_loss is not implemented for {input.dtype} tensors: "
                                  "convert the predictions and targets with .float()")
    _warn_if_shapes_differ(input, target, stacklevel=3)
    a, b, _ = input._operands(target)
    try:
        diff = a - b
    except ValueError:
        raise RuntimeError(f"mse_loss: input of shape {list(input.shape)} and target of shape "
                           f"{list(target.shape)} cannot be broadcast together") from None
    squared = diff * diff
    out = _wrap(_reduced(squared, reduction, squared.size))
    if _needs_grad(input, target):
        out._set_grad_fn(MseLossBackward0((_edge(input), _edge(target)), diff, reduction,
                                          (a.shape, b.shape)))
    return out


# ------------------------------------------------------------------------ L1, smooth L1, Huber

def _check_pair(name, input, target, reduction):
    """Both tensors, a known reduction, and PyTorch's warning when the shapes differ (they
    are then broadcast, which is rarely what was meant)."""
    _expect_tensor(name, "input", 1, input)
    _expect_tensor(name, "target", 2, target)
    if target.shape != input.shape:
        _warn_if_shapes_differ(input, target, stacklevel=4)
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise _broadcast_error(input._data, target._data, name) from None
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


class SmoothL1LossBackward0(Node):
    """smooth_l1 of x = a - b: d/da = x / beta clipped to [-1, 1]; the opposite for b."""
    __slots__ = ("reduction", "shapes", "width")

    def __init__(self, inputs, diff, reduction, shapes, width):
        super().__init__(inputs, (diff,))
        self.reduction, self.shapes, self.width = reduction, shapes, width

    def slope(self, diff):
        return np.clip(diff / self.width, -1, 1)

    def apply(self, grad):
        (diff,) = self.saved_arrays()
        if self.reduction == "mean":
            grad = grad / diff.size
        local = grad * self.slope(diff)
        return (unbroadcast(local, self.shapes[0]) if self.inputs[0] is not None else None,
                unbroadcast(-local, self.shapes[1]) if self.inputs[1] is not None else None)


class HuberLossBackward0(SmoothL1LossBackward0):
    """huber of x = a - b: d/da = x clipped to [-delta, delta]; the opposite for b."""
    __slots__ = ()

    def slope(self, diff):
        return np.clip(diff, -self.width, self.width)


def _clipped_loss(name, input, target, reduction, width, losses_of, node_cls):
    """The losses ``losses_of(|input - target|)`` as one fused op, reduced."""
    a, b, _ = input._operands(target)
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {input.dtype}: convert the '
                                  "predictions and targets with .float()")
    diff = a - b
    losses = losses_of(np.abs(diff))
    out = _wrap(_reduced(losses, reduction, losses.size))
    if _needs_grad(input, target):
        out._set_grad_fn(node_cls((_edge(input), _edge(target)), diff, reduction,
                                  (a.shape, b.shape), width))
    return out


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Squared error ``x² / (2 beta)`` where ``|x| < beta`` (x = input - target), absolute
    error ``|x| - beta / 2`` beyond: the L1 loss with its corner at 0 rounded off."""
    _check_pair("smooth_l1_loss", input, target, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # as PyTorch: the L1 loss itself
        return l1_loss(input, target, reduction)
    return _clipped_loss(
        "smooth_l1_loss", input, target, reduction, beta,
        lambda z: np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), SmoothL1LossBackward0)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error ``x² / 2`` where ``|x| < delta`` (x = input - target), and
    ``delta (|x| - delta / 2)`` beyond: smooth_l1_loss with beta = delta, times delta."""
    _check_pair("huber_loss", input, target, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")

    def losses_of(z):
        return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))

    if weight is None:
        return _clipped_loss("huber_loss", input, target, reduction, delta, losses_of,
                             HuberLossBackward0)
    losses = _clipped_loss("huber_loss", input, target, "none", delta, losses_of,
                           HuberLossBackward0)
    return _weighted(losses, weight, reduction, lambda w: w.mean())


# ------------------------------------------------------------------------ binary cross-entropy

class BinaryCrossEntropyBackward0(Node):
    """loss = -w (t log p + (1 - t) log(1 - p)): d/dp = w (p - t) / (p (1 - p)), with the
    denominator kept above 1e-12 as in PyTorch; d/dt = w log((1 - p) / p)."""
    __slots__ = ("reduction",)

    def __init__(self, inputs, p, t, w, reduction):
        super().__init__(inputs, (p, t, w))
        self.reduction = reduction

    def apply(self, grad):
        p, t, w = self.saved_arrays()
        if self.reduction == "mean":
            grad = grad / p.size
        w = 1 if w is None else w
        grad_p = grad_t = None
        if self.inputs[0] is not None:
            grad_p = grad * w * (p - t) / np.maximum(p * (1 - p), 1e-12)
        if self.inputs[1] is not None:
            grad_t = grad * w * (np.log1p(-p) - np.log(p))
        return grad_p, grad_t


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """loss = w ((1 - t) x + c softplus(-x)) with c = 1 + (pos_weight - 1) t:
    d/dx = w (c sigmoid(x) - pos_weight t), d/dt = w ((pos_weight - 1) softplus(-x) - x)."""
    __slots__ = ("reduction",)

    def __init__(self, inputs, x, t, w, pos_weight, reduction):
        super().__init__(inputs, (x, t, w, pos_weight))
        self.reduction = reduction

    def apply(self, grad):
        x, t, w, pw = self.saved_arrays()
        if self.reduction == "mean":
            grad = grad / x.size
        w = 1 if w is None else w
        grad_x = grad_t = None
        if self.inputs[0] is not None:
            sigmoid = _sigmoid(x)
            local = sigmoid - t if pw is None else (1 + (pw - 1) * t) * sigmoid - pw * t
            grad_x = grad * w * local
        if self.inputs[1] is not None:
            local = -x if pw is None else (pw - 1) * _softplus(-x) - x
            grad_t = grad * w * local
        return grad_x, grad_t


def _softplus(z):
    """log(1 + exp(z)) without overflow."""
    return np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0)


def _same_shape_target(name, input, target):
    _expect_tensor(name, "input", 1, input)
    _expect_tensor(name, "target", 2, target)
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
    with np.errstate(divide="ignore"):
        losses = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    if w is not None:
        losses = losses * w
    out = _wrap(_reduced(losses, reduction, losses.size))
    if _needs_grad(input, target):
        out._set_grad_fn(BinaryCrossEntropyBackward0((_edge(input), _edge(target)), p, t, w,
                                                     reduction))
    return out


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross-entropy of raw scores (logits): sigmoid and log in one stable formula.
    ``pos_weight`` weighs the positive targets (one value per class, on the last dimension)."""
    _same_shape_target("binary_cross_entropy_with_logits", input, target)
    _check_reduction(reduction)
    x, t, _ = input._operands(target)
    w = None if weight is None else weight._data.astype(x.dtype)
    pw = None if pos_weight is None else pos_weight._data.astype(x.dtype)
    coefficient = 1 if pw is None else 1 + (pw - 1) * t
    losses = (1 - t) * x + coefficient * _softplus(-x)
    if w is not None:
        losses = losses * w
    out = _wrap(_reduced(losses, reduction, losses.size))
    if _needs_grad(input, target):
        out._set_grad_fn(BinaryCrossEntropyWithLogitsBackward0(
            (_edge(input), _edge(target)), x, t, w, pw, reduction))
    return out


# ------------------------------------------------------------------------------ NLL

class NllLossBackward0(Node):
    """The gradient of -log_prob[target]: minus the target's weight there, 0 elsewhere and
    for ignored targets. ``key`` picks each target's position; the class indices in it are
    saved too, so changing the targets in place afterwards makes backward refuse."""
    __slots__ = ("shape", "reduction", "total", "key")

    def __init__(self, inputs, picked_weight, valid, key, classes, shape, reduction, total):
        super().__init__(inputs, (picked_weight, valid, classes))
        self.key, self.shape, self.reduction, self.total = key, shape, reduction, total

    def apply(self, grad):
        picked_weight, valid, _ = self.saved_arrays()
        scale = -grad / self.total if self.reduction == "mean" else -grad
        if picked_weight is not None:  # None: every sample counts with weight 1
            scale = picked_weight * scale
        if valid is not None:  # None: no target is ignored
            scale = np.where(valid, scale, 0)  # 0, even when all are ignored (total 0)
        out = np.zeros(self.shape, dtype=grad.dtype)
        out[self.key] = scale  # each (sample, position) has one target: no repeats
        return (out,)


# PyTorch's name when the log-probabilities have positions too: (N, C, H, W).
NllLoss2DBackward0 = type("NllLoss2DBackward0", (NllLossBackward0,), {"__slots__": ()})


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class indices, given log-probabilities (C,) or (N, C, ...)."""
    _expect_tensor("nll_loss", "input", 1, input)
    _expect_tensor("nll_loss", "target", 2, target)
    _check_reduction(reduction)
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}: class indices "
                           "are int64 tensors (use target.long()), or pass class probabilities "
                           "with the same shape as the input")
    logp, labels = input._data, target._data
    if weight is None and ignore_index < 0 and logp.ndim == 2 and labels.ndim == 1:
        fast = _nll_loss_batch(input, logp, labels, reduction)
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
    picked = np.asarray(logp[key])
    if weight is None:
        picked_weight = valid.astype(logp.dtype)
    else:
        picked_weight = weight._data.astype(logp.dtype)[safe] * valid
    losses = np.where(valid, -picked * picked_weight, 0)  # an ignored target's loss is 0
    total = picked_weight.sum()
    out = _wrap(_reduced(losses, reduction, total))
    if _needs_grad(input):
        node_cls = NllLoss2DBackward0 if logp.ndim == 4 else NllLossBackward0
        out._set_grad_fn(node_cls((_edge(input),), picked_weight, valid, key, labels,
                                  logp.shape, reduction, total))
    return out


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


def _nll_loss_batch(input, logp, labels, reduction):
    """The common case, (N, C) log-probabilities with N labels, no weights and none ignored,
    in a few numpy calls; None when a label is out of range, for nll_loss to report."""
    n = len(labels)
    if n == 0 or n != len(logp) or labels.min() < 0:
        return None
    rows = np.arange(n)
    try:
        picked = logp[rows, labels]
    except IndexError:  # a label >= C
        return None
    value = _reduced(-picked, reduction, n)
    if _needs_grad(input):
        return _wrap(value, NllLossBackward0((_edge(input),), None, None, (rows, labels),
                                             labels, logp.shape, reduction, n))
    return _wrap(value)


# ------------------------------------------------------------------------------ cross-entropy

class CrossEntropyProbsBackward(Node):
    """Cross-entropy with class probabilities, fused with its log-softmax:
    loss = -sum_c w_c t_c log softmax(z)_c."""
    __slots__ = ("reduction", "count")

    def __init__(self, inputs, softmax, log_probs, weighted, weights, reduction, count):
        super().__init__(inputs, (softmax, log_probs, weighted, weights))
        self.reduction, self.count = reduction, count

    def apply(self, grad):
        softmax, log_probs, weighted, weights = self.saved_arrays()
        if self.reduction == "mean":
            grad = grad / self.count
        elif self.reduction == "none":
            grad = np.expand_dims(grad, 1)
        grad_logits = grad_target = None
        if self.inputs[0] is not None:  # softmax * sum_c(w_c t_c) - w * t
            grad_logits = grad * (softmax * weighted.sum(axis=1, keepdims=True) - weighted)
        if self.inputs[1] is not None:  # -w_c log p_c
            grad_target = -grad * log_probs * weights
        return grad_logits, grad_target


# Named as PyTorch's last node of this loss: a division for the mean, a negation otherwise.
_ProbsMeanBackward = type("DivBackward1", (CrossEntropyProbsBackward,), {"__slots__": ()})
_ProbsSumBackward = type("NegBackward0", (CrossEntropyProbsBackward,), {"__slots__": ()})


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross-entropy of logits (N, C, ...) with class indices (N, ...) or class
    probabilities (same shape as the input). Stable for any logits: it works in log space."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    _expect_tensor("cross_entropy", "input", 1, input)
    _check_reduction(reduction)
    if not isinstance(target, Tensor):
        target = _wrap(np.asarray(target))
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
    shifted = z - _max_keepdim(z, 1)  # log-sum-exp never overflows
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    log_probs = shifted - np.log(total)
    weights = np.ones((), z.dtype) if weight is None else \
        weight._data.astype(z.dtype).reshape((1, -1) + (1,) * (z.ndim - 2))
    weighted = t * weights
    losses = -(weighted * log_probs).sum(axis=1)
    count = losses.size
    out = _wrap(_reduced(losses, reduction, count))
    if _needs_grad(input, target):
        node_cls = _ProbsMeanBackward if reduction == "mean" else _ProbsSumBackward
        out._set_grad_fn(node_cls(
            (_edge(input), _edge(target)), exp / total, log_probs, weighted, weights,
            reduction, count))
    return out


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
        log_probs = log_probs * _wrap(weight._data.astype(log_probs._data.dtype).reshape(shape))
    ignored = target._data == ignore_index
    uniform_loss = (-log_probs.sum(class_dim)).masked_fill(_wrap(ignored), 0.0)
    if reduction == "mean":
        counted = target._data[~ignored]
        total = counted.size if weight is None else float(weight._data[counted].sum())
        uniform_loss = uniform_loss.sum() / total
    elif reduction == "sum":
        uniform_loss = uniform_loss.sum()
    return targets_loss * (1 - smoothing) + uniform_loss * (smoothing / classes)
