"""The fused loss functions (chapter 7): MSE, smooth L1 and Huber, binary cross-entropy
(of probabilities and of logits), negative log-likelihood and cross-entropy with class
probabilities, each with its forward, what it saves and its backward in one class named
like PyTorch's node.

The functions users call (``F.mse_loss``, ``F.cross_entropy``, ...) stay in
``minigrad/nn/loss_functions.py``: they check their arguments, then run one of these.
A loss saves its inputs, not the difference or the probabilities it computed on the way:
under ``create_graph=True`` a saved input is the input tensor itself, so the gradient
recomputed from it carries its history (a saved intermediate array would be a constant,
and the second derivative would be wrong).
"""

import numpy as np

from . import formulas
from .op import Op
from .tangents import tangent_sum, transposed_backward
from .formulas import sigmoid as sigmoid_of
from .softmax import max_keepdim

__all__ = ["MseLossBackward0", "SmoothL1LossBackward0", "HuberLossBackward0",
           "BinaryCrossEntropyBackward0", "BinaryCrossEntropyWithLogitsBackward0",
           "NllLossBackward0", "NllLoss2DBackward0", "CrossEntropyProbsBackward",
           "reduced", "softplus"]

_ndarray = np.ndarray
_add_reduce = np.add.reduce  # what ndarray.sum calls, without its Python wrapper (each step)


def reduced(losses, reduction, divisor):
    """The loss value from per-element losses: their sum over ``divisor`` ('mean'), their
    sum ('sum'), or the losses themselves ('none')."""
    if reduction == "mean":
        if not divisor:  # nothing counted (no element, or every target ignored): nan
            return np.asarray(np.nan, dtype=losses.dtype)
        return np.asarray(_add_reduce(losses, None) / divisor, dtype=losses.dtype)
    if reduction == "sum":
        return np.asarray(losses.sum(), dtype=losses.dtype)
    return losses


# The few elementwise functions the formulas below need, on arrays or on Tensors.

def _is_array(x):
    return type(x) is _ndarray or not hasattr(x, "_data")


def softplus(z):
    """log(1 + exp(z)) without overflow."""
    if _is_array(z):
        return np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0)
    return (-z.abs()).exp().log1p() + z.clamp(min=0)


def _log1p(x):
    return np.log1p(x) if _is_array(x) else x.log1p()


def _zeros_of(x):
    return np.zeros_like(x) if _is_array(x) else Op.wrap(np.zeros_like(x._data))


def _at_least(x, low):
    return np.maximum(x, low) if _is_array(x) else x.clamp(min=low)


def _clipped(x, width, scaled):
    """``x / width`` (``scaled``) or ``x``, clipped to [-1, 1] or [-width, width]: the slope
    of smooth L1 or Huber. On Tensors, as PyTorch differentiates it: the slope of the
    clipped part (outside ``|x| < width``, even at ``|x| = width``) is 0."""
    if _is_array(x):
        return np.clip(x / width, -1, 1) if scaled else np.clip(x, -width, width)
    inside = x.abs() < width
    return formulas.where(inside, x / width if scaled else x,
                          x.sign() if scaled else x.sign() * width)


# ------------------------------------------------------------------------------ MSE

class MseLossBackward0(Op):
    """mean((a - b)^2): d/da = 2 (a - b) / n, and the opposite for b."""
    __slots__ = ("reduction", "count")

    def forward(self, a, b, reduction="mean"):
        self.save_for_backward(a, b)
        diff = a - b
        squared = diff * diff
        self.reduction, self.count = reduction, squared.size
        return reduced(squared, reduction, squared.size)

    def backward(self, grad, a, b):
        if self.reduction == "mean":
            grad = grad / self.count
        local = 2 * (a - b) * grad
        return local, -local

    jvp = transposed_backward


# ------------------------------------------------------------------------ smooth L1, Huber

class SmoothL1LossBackward0(Op):
    """smooth_l1 of x = a - b: x² / (2 beta) where |x| < beta, |x| - beta / 2 beyond.
    d/da = x / beta clipped to [-1, 1]; the opposite for b."""
    __slots__ = ("reduction", "count", "width")
    scaled = True  # the slope is x / width (Huber's: x), clipped

    def forward(self, a, b, reduction="mean", width=1.0):
        self.save_for_backward(a, b)
        self.reduction, self.width = reduction, width
        losses = self.losses(np.abs(a - b), width)
        self.count = losses.size
        return reduced(losses, reduction, losses.size)

    @staticmethod
    def losses(z, beta):
        return np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)

    def backward(self, grad, a, b):
        if self.reduction == "mean":
            grad = grad / self.count
        local = grad * _clipped(a - b, self.width, self.scaled)
        return local, -local

    jvp = transposed_backward


class HuberLossBackward0(SmoothL1LossBackward0):
    """huber of x = a - b: x² / 2 where |x| < delta, delta (|x| - delta / 2) beyond.
    d/da = x clipped to [-delta, delta]; the opposite for b."""
    __slots__ = ()

    scaled = False

    @staticmethod
    def losses(z, delta):
        return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))

    jvp = transposed_backward


# ------------------------------------------------------------------------ binary cross-entropy

class BinaryCrossEntropyBackward0(Op):
    """loss = -w (t log p + (1 - t) log(1 - p)), each log kept at -100 or above as in
    PyTorch: d/dp = w (p - t) / (p (1 - p)), the denominator kept above 1e-12 as in PyTorch;
    d/dt = w log((1 - p) / p). (The class weight ``w`` is a constant.)"""
    __slots__ = ("reduction", "count")
    constants = (2,)  # the weight, as in PyTorch (which gives it no gradient)

    def forward(self, p, t, weight=None, reduction="mean"):
        self.save_for_backward(p, t, weight)
        self.reduction, self.count = reduction, p.size
        with np.errstate(divide="ignore"):
            losses = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
        if weight is not None:
            losses = losses * weight
        return reduced(losses, reduction, losses.size)

    def backward(self, grad, p, t, w):
        if self.reduction == "mean":
            grad = grad / self.count
        if w is not None:
            grad = grad * w
        grad_p = grad_t = None
        if self.inputs[0] is not None:
            grad_p = grad * (p - t) / _at_least(p * (1 - p), 1e-12)
        if self.inputs[1] is not None:
            grad_t = grad * (_log1p(-p) - formulas.log(p))
        return grad_p, grad_t

    def jvp(self, tangents, out, p, t):
        # PyTorch's formula, term for term: a target without a tangent counts as zeros
        # (0 * inf = nan where p is 0 or 1, as in PyTorch)
        tp, tt = tangents
        weight = self.dual[0].get("weight")
        losses = tangent_sum(
            None if tp is None else tp * (p - t) / _at_least(p * (1 - p), 1e-12),
            (_zeros_of(p) if tt is None else tt) * (_log1p(-p) - formulas.log(p)))
        if weight is not None:
            losses = losses * weight
        if self.reduction == "none":
            return losses
        total = losses.sum()
        return total / self.count if self.reduction == "mean" else total


class BinaryCrossEntropyWithLogitsBackward0(Op):
    """loss = w ((1 - t) x + c softplus(-x)) with c = 1 + (pos_weight - 1) t:
    d/dx = w (c sigmoid(x) - pos_weight t), d/dt = w ((pos_weight - 1) softplus(-x) - x).
    (The weights are constants.)"""
    __slots__ = ("reduction", "count")
    constants = (2, 3)  # weight and pos_weight, as in PyTorch (which gives them no gradient)

    def forward(self, x, t, weight=None, pos_weight=None, reduction="mean"):
        self.save_for_backward(x, t, weight, pos_weight)
        self.reduction, self.count = reduction, x.size
        coefficient = 1 if pos_weight is None else 1 + (pos_weight - 1) * t
        losses = (1 - t) * x + coefficient * softplus(-x)
        if weight is not None:
            losses = losses * weight
        return reduced(losses, reduction, losses.size)

    def backward(self, grad, x, t, w, pw):
        if self.reduction == "mean":
            grad = grad / self.count
        if w is not None:
            grad = grad * w
        grad_x = grad_t = None
        if self.inputs[0] is not None:
            sigmoid = sigmoid_of(x)
            local = sigmoid - t if pw is None else (1 + (pw - 1) * t) * sigmoid - pw * t
            grad_x = grad * local
        if self.inputs[1] is not None:
            local = -x if pw is None else (pw - 1) * softplus(-x) - x
            grad_t = grad * local
        return grad_x, grad_t

    jvp = transposed_backward


# ------------------------------------------------------------------------------ NLL

class NllLossBackward0(Op):
    """-log_prob[target] (times the target's class weight), reduced. The gradient is minus
    the target's weight at each target's position, 0 elsewhere and for ignored targets.

    ``key`` picks each target's position (sample index, class index, position...);
    ``picked_weight`` is each target's weight (None: 1 for all), ``valid`` which targets
    count (None: all), ``total`` the divisor of the mean. The class indices are saved too,
    so changing the targets in place afterwards makes backward refuse."""
    __slots__ = ("key", "class_dim", "reduction", "total")
    constants = (0,)  # each target's class weight (PyTorch gives the weights no gradient)

    def forward(self, logp, key, labels, picked_weight=None, valid=None, class_dim=1,
                reduction="mean", total=None):
        self.save_for_backward(picked_weight, valid, labels)
        self.key, self.class_dim, self.reduction, self.total = key, class_dim, reduction, total
        picked = np.asarray(logp[key])
        if picked_weight is None:
            losses = -picked
        else:  # an ignored target's loss is 0
            losses = np.where(valid, -picked * picked_weight, 0)
        return reduced(losses, reduction, total)

    def backward(self, grad, picked_weight, valid, labels):
        scale = -grad / self.total if self.reduction == "mean" else -grad
        if picked_weight is not None:
            scale = picked_weight * scale
        if valid is not None:  # 0, even when all are ignored (total 0: scale is inf)
            scale = formulas.keep_where(valid, scale)
        shape = self.shapes[0]
        if type(grad) is _ndarray or _is_array(grad):
            out = np.zeros(shape, dtype=grad.dtype)
            out[self.key] = scale  # each (sample, position) has one target: no repeats
            return out
        # On Tensors, the same as a product: each target's value spread over its classes,
        # times 1 at the target's class (0 elsewhere).
        at_target = np.zeros(shape, dtype=grad._data.dtype)
        at_target[self.key] = 1
        each = shape[:self.class_dim] + shape[self.class_dim + 1:]  # one per target
        if tuple(scale.shape) != each:
            scale = formulas.expand_to(scale, each)
        return formulas.unsqueeze(scale, (self.class_dim,)) * at_target

    jvp = transposed_backward


# PyTorch's name when the log-probabilities have positions too: (N, C, H, W).
class NllLoss2DBackward0(NllLossBackward0):
    """PyTorch's name for this node: NllLossBackward0's backward."""
    __slots__ = ()

    jvp = transposed_backward


# ------------------------------------------------------------------------------ cross-entropy

class CrossEntropyProbsBackward(Op):
    """Cross-entropy with class probabilities, fused with its log-softmax (N, C, ...):
    loss = -sum_c w_c t_c log softmax(z)_c. Its class is renamed by the caller after
    PyTorch's last node of this loss (DivBackward1 for the mean, NegBackward0 otherwise)."""
    __slots__ = ("reduction", "count")
    constants = (4,)  # the class weights (probs and log_probs are recomputed from z)

    def forward(self, z, t, weights=1.0, reduction="mean"):
        shifted = z - max_keepdim(z, 1)  # log-sum-exp never overflows
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        log_probs = shifted - np.log(total)
        losses = -((t * weights) * log_probs).sum(axis=1)
        self.save_for_backward(z, t, exp / total, log_probs, weights)
        self.reduction, self.count = reduction, losses.size
        return reduced(losses, reduction, losses.size)

    def backward(self, grad, z, t, probs, log_probs, weights):
        if not _is_array(grad):  # recomputed from the input, so that they carry its history
            log_probs = z.log_softmax(1)
            probs = log_probs.exp()
        if self.reduction == "mean":
            grad = grad / self.count
        elif self.reduction == "none":
            grad = formulas.unsqueeze(grad, (1,))
        weighted = t * weights
        grad_z = grad_t = None
        if self.inputs[0] is not None:  # softmax * sum_c(w_c t_c) - w * t
            grad_z = grad * (probs * formulas.sum_over(weighted, (1,), keepdims=True) - weighted)
        if self.inputs[1] is not None:  # -w_c log p_c
            grad_t = -grad * log_probs * weights
        return grad_z, grad_t

    jvp = transposed_backward
