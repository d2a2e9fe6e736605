"""Chapter 7 exercises: losses, both parts (``notebooks/07a_*.ipynb``: a prediction of MSE's
gradient, ``mse_grad_prediction``, and exercises 1 and 2; ``notebooks/07b_*.ipynb``:
exercise 3, a prediction of ``log(softmax(z))`` for a logit far below the others,
``log_prediction``, and the build). The predictions are ``teach.predictions.Prediction``s:
locked in before the cell that shows the answer, revealed after it.

Each check builds the exercise's tensors itself, lets minigrad compute the right answer
(with ``nn.MSELoss``, ``nn.CrossEntropyLoss`` and ``backward()``) and compares the
learner's answer with it. Answers may be numbers, lists, arrays or tensors (with or without
a graph). Hints name the idea, never the number.

The build exercise (``teach.check_piece("log_softmax", LogSoftmaxBackward0)``): the
learner's own op for log-softmax, forward and backward, plugged in as
``minigrad.ops.softmax.LogSoftmaxBackward0`` (what ``Tensor.log_softmax``,
``F.log_softmax`` and ``F.cross_entropy`` run).
"""

import contextlib
import warnings
from unittest import mock

import numpy as np

from ... import creation, functions, nn
from ...graph import execution_order
from ...nn import functional as F
from ...ops import softmax as softmax_ops
from ...ops.op import Op
from ... import Tensor
from ..build import Mismatch, Piece, attempt, register, same_dtype
from ..checks import MISSING, all_parts, check
from ..predictions import Prediction

__all__ = ["check_mse_by_hand", "check_cross_entropy_by_hand", "check_soft_target_gradient",
           "MSE_PREDICTIONS", "MSE_TARGETS", "CE_SCORES", "CE_LABELS",
           "SOFT_LOGITS", "SOFT_TARGET", "mse_grad_prediction", "log_prediction",
           "LOG_CHOICES", "GRAD_PRED", "GRAD_TARGET", "FAR_LOGITS"]

# The data each exercise prints in its prompt (the notebook builds the same tensors).
MSE_PREDICTIONS = [2.5, 0.0, 2.0, 8.0]
MSE_TARGETS = [3.0, -0.5, 2.0, 7.0]
CE_SCORES = [[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]]
CE_LABELS = [1, 2, 0]
SOFT_LOGITS = [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]
SOFT_TARGET = [[1.0, 0.0, 2.0], [0.0, 0.5, 0.5]]


def _given(answer):
    return not (answer is None or answer is MISSING or answer is Ellipsis)


def _array(answer):
    """The answer as a float array, or None when it is not made of numbers."""
    if isinstance(answer, Tensor):
        return answer.detach().numpy().astype(float)
    try:
        return np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None


def _number(answer):
    """A one-element answer (0-d or 1-element tensor, list, number) as a float; anything
    else unchanged, so ``check`` reports it."""
    if not _given(answer) or isinstance(answer, bool):
        return answer
    array = _array(answer)
    return float(array.reshape(-1)[0]) if array is not None and array.size == 1 else answer


def _matches(answer, value, tol=1e-5):
    array = _array(answer)
    value = np.asarray(value, dtype=float)
    return array is not None and array.shape == value.shape and \
        np.allclose(array, value, rtol=tol, atol=tol)


def check_mse_by_hand(mse, grad_pred):
    """Exercise 1: the mean squared error of the exercise's predictions and its gradient
    with respect to the predictions, both from the formulas."""
    predictions = creation.tensor(MSE_PREDICTIONS, requires_grad=True)
    targets = creation.tensor(MSE_TARGETS)
    loss = nn.MSELoss()(predictions, targets)
    loss.backward()
    want_mse, want_grad = loss.item(), predictions.grad
    diff = np.array(MSE_PREDICTIONS) - np.array(MSE_TARGETS)
    n = diff.size

    mse_hint = "square each difference, then average them over all the elements."
    if _given(mse) and _matches(_number(mse), (diff ** 2).sum()):
        mse_hint = "that is the sum of the squares (reduction='sum'): the mean divides by n."
    elif _given(mse) and _matches(_number(mse), np.abs(diff).mean()):
        mse_hint = "that is the mean of the absolute differences: square them instead."
    grad_hint = "differentiate (p_i - t_i)**2 / n with respect to p_i; keep every factor."
    if _given(grad_pred) and _matches(grad_pred, 2 * diff):
        grad_hint = "that is the gradient of the sum; the mean also divides by n."
    elif _given(grad_pred) and _matches(grad_pred, diff / n):
        grad_hint = "the derivative of a square brings down a factor."
    elif _given(grad_pred) and _matches(grad_pred, -2 * diff / n):
        grad_hint = "check the sign: a prediction that is too big must get a positive gradient."
    return all_parts("Exercise 1", [
        check("mse", _number(mse), want_mse, tol=1e-5, hint=mse_hint),
        check("grad_pred", grad_pred, want_grad, tol=1e-5, hint=grad_hint),
    ])


def check_cross_entropy_by_hand(ce):
    """Exercise 2: the mean cross-entropy of the exercise's scores (logits) and labels
    (class indices), computed without softmax or the loss functions."""
    scores = creation.tensor(CE_SCORES)
    labels = creation.tensor(CE_LABELS)
    want = nn.CrossEntropyLoss()(scores, labels).item()
    per_sample = nn.CrossEntropyLoss(reduction="none")(scores, labels).numpy().astype(float)
    hint = ("softmax each row (exp, divided by the row's sum of exp), take the probability "
            "of the right class, then the negative log, then the mean over the samples.")
    got = _number(ce)
    if _given(ce) and _matches(got, per_sample.sum()):
        hint = "that is the sum over the samples: CrossEntropyLoss averages them."
    elif _given(ce) and _matches(got, -per_sample.mean()):
        hint = "check the sign: a probability's log is negative, the loss is positive."
    elif _given(ce) and _matches(ce, per_sample):
        hint = "these are the per-sample losses (reduction='none'): reduce them to one number."
    return check("ce", got, want, tol=1e-5, hint=hint)


def check_soft_target_gradient(grad_logits):
    """Exercise 3: the gradient of ``nn.CrossEntropyLoss()(logits, target)`` with respect
    to the logits, for a batch of two samples whose class-probability targets do not all
    sum to 1 (the loss is the mean over the batch)."""
    logits = creation.tensor(SOFT_LOGITS, requires_grad=True)
    target = creation.tensor(SOFT_TARGET)
    nn.CrossEntropyLoss()(logits, target).backward()
    z, t = np.array(SOFT_LOGITS), np.array(SOFT_TARGET)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    s, n = t.sum(axis=1, keepdims=True), len(z)
    hint = ("write each sample's loss as -sum_c t_c z_c + (sum_c t_c) log sum_j exp(z_j), "
            "differentiate with respect to z_k, and remember how the batch's loss is made "
            "from the samples' losses.")
    def like(*candidates):
        return _given(grad_logits) and any(_matches(grad_logits, c) for c in candidates)
    if like(p * s - t):
        hint = ("that is the gradient of the SUM of the two samples' losses; "
                "nn.CrossEntropyLoss() takes their mean (reduction='mean'): how does that "
                "enter each logit's gradient?")
    elif like((p * s - t) / z.size):
        hint = ("the mean is over the samples of the batch, not over every logit: how many "
                "samples are there?")
    elif like((p - t) / n, p - t):
        hint = ("the first target sums to more than 1: where does each sample's sum(target) "
                "enter the formula?")
    elif like((p * t.sum() - t) / n, p * t.sum() - t):
        hint = ("that multiplies p by the sum of ALL the batch's targets: each sample's own "
                "target sum goes with its own logits.")
    elif like((t - p * s) / n, t - p * s):
        hint = "check the sign: a class with a big target must get a negative gradient."
    elif like(p * s / n, p * s):
        hint = "that is only the part from the log-sum-exp: the -t_c z_c terms add more."
    return check("grad_logits", grad_logits, logits.grad, tol=1e-5, hint=hint)


# ---------------------------------------------------------------- predictions (07a, 07b)

GRAD_PRED = [1.0, 2.0, 4.0]      # 07a, section 2: pred (requires grad) and target of MSELoss
GRAD_TARGET = [1.5, 2.0, 3.0]


def _mse_grad_answer():
    """pred.grad[2] after ``nn.MSELoss()(pred, target).backward()``, measured."""
    pred = creation.tensor(GRAD_PRED, requires_grad=True)
    nn.MSELoss()(pred, creation.tensor(GRAD_TARGET)).backward()
    grad = pred.grad.tolist()
    return grad[2], "pred.grad is [" + ", ".join(f"{g:.4f}" for g in grad) + "]"


def _mse_grad_hint(predicted, answer):
    if abs(predicted - 3 * answer) < 0.02:
        return "Hint: the loss is a mean: every term is divided by n."
    if abs(predicted - answer / 2) < 0.02:
        return "Hint: the derivative of a square brings down a factor 2."
    if abs(predicted + answer) < 0.02:
        return "Hint: mind the sign: the third prediction is larger than its target."
    return "Hint: use the formula 2 (p - t) / n for the third entry only."


mse_grad_prediction = Prediction("Prediction, pred.grad[2]", _mse_grad_answer, tol=0.01,
                                 hint=_mse_grad_hint)
"""07a, section 2: ``pred.grad[2]`` of the MSE, a number locked in before ``backward()``
runs (two decimals are enough)."""

FAR_LOGITS = [0.0, -200.0]       # 07b, section 7: z, float32
LOG_CHOICES = {
    "a": "-200, the exact log-probability",
    "b": "-inf",
    "c": "nan",
}


def _log_answer():
    """Which of LOG_CHOICES ``z.softmax(dim=0).log()[1]`` is, measured in float32."""
    value = creation.tensor(FAR_LOGITS).softmax(dim=0).log()[1].item()
    letter = ("c" if value != value else "b" if value == float("-inf")
              else "a" if abs(value + 200) < 1e-3 else None)
    return letter, f"z.softmax(dim=0).log()[1] is {value}"


log_prediction = Prediction(
    "Exercise 4", _log_answer, choices=LOG_CHOICES,
    hint="Hint: what is e^-200 as a probability, and what is the smallest positive float32?")
"""07b, section 7, exercise 4: ``z.softmax(dim=0).log()`` for ``z = [0, -200]`` in float32,
one letter of ``LOG_CHOICES`` locked in before the cell that computes it."""


# ---------------------------------------------------------------- build: log-softmax's op

# The chapter's logits (sections 3 and 7: "Classification" and the stability section), then
# random ones.
_CHAPTER_LOGITS = [
    ([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], 1),
    ([1000.0, -1000.0], 0),
    ([-1000.0, -1000.0], 0),
    ([0.0, -200.0], 0),
    ([[1000.0, -1000.0], [500.0, 501.0]], 1),
]
_N_RANDOM = 200
_OWN_OP = softmax_ops.LogSoftmaxBackward0  # minigrad's own, whatever is plugged in later


@contextlib.contextmanager
def _plug_log_softmax(op_class):
    """``minigrad.ops.softmax.LogSoftmaxBackward0`` is the learner's op inside the block:
    ``Tensor.log_softmax`` looks it up there on every call, and ``F.log_softmax``,
    ``nn.LogSoftmax`` and ``F.cross_entropy`` / ``nn.CrossEntropyLoss`` with class indices
    all go through it (class probabilities have a fused node of their own)."""
    with mock.patch.object(softmax_ops, "LogSoftmaxBackward0", op_class):
        yield


def _attempt(what, function):
    """``function()``, or a Mismatch that says which call of the learner's op raised."""
    return attempt(what, function, hint=_hint)


def _hint(error):
    """What to fix for the two errors a log-softmax op typically raises."""
    if isinstance(error, RecursionError):
        return (" Hint: it never returned: your op calls log_softmax (or cross_entropy), which is "
                "now your op itself. Compute it with numpy on the arrays forward receives.")
    if isinstance(error, AttributeError) and "'dim'" in str(error):
        return (" Hint: backward gets only what forward kept: set self.dim = dim in forward.")
    if "broadcast" in str(error):
        return (" Hint: reduce with keepdims=True, so that the max and the sum broadcast against "
                "the logits.")
    return ""


def _tolerance(values, dtype):
    """What rounding allows at this scale: a log-softmax of logits near ±1000 in float32 is
    exact only to about 1e-4."""
    eps = np.finfo(dtype).eps
    return 64 * eps * (1 + float(np.abs(values).max(initial=0)))


def _describe_logits(values, dim, chapter):
    if chapter:
        return f"the logits {np.round(values.astype(float), 4).tolist()} along dim={dim}"
    top = float(np.abs(values).max(initial=0))
    return (f"random logits of shape {values.shape} ({values.dtype}, up to ±{top:.4g}) "
            f"along dim={dim}")


def _softmax(values, dim):
    shifted = np.exp(values - values.max(axis=dim, keepdims=True))
    return shifted / shifted.sum(axis=dim, keepdims=True)


def _first_difference(got, want, tol):
    bad = ~np.isclose(got, want, rtol=0, atol=tol)
    index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    where = f" at {list(index)}" if index else ""
    return f"{where}: expected {float(want[index]):.6g}, got {float(got[index]):.6g}"


def _forward_hint(got, values, dim, tol):
    """What a wrong forward most likely does, from the numbers it gave."""
    z = values.astype(float)
    top = z.max(axis=dim, keepdims=True)
    right = z - top - np.log(np.exp(z - top).sum(axis=dim, keepdims=True))
    if np.allclose(got, np.exp(right), rtol=0, atol=tol):
        return (" These are the probabilities (softmax): forward returns their log, the "
                "log-probabilities.")
    if np.allclose(got, right - top, rtol=0, atol=tol) or \
            np.allclose(got, right + top, rtol=0, atol=tol):
        return (" Your values are off by each slice's max m: the stable formula subtracts m "
                "in both places, from z_c and inside the exp of the sum (section 7).")
    for other in range(values.ndim):
        if other != dim:
            along = values.astype(float) - np.log(np.exp(
                values.astype(float) - values.max(axis=other, keepdims=True)).sum(
                axis=other, keepdims=True)) - values.max(axis=other, keepdims=True)
            if np.allclose(got, along, rtol=0, atol=tol):
                return (f" These are the log-probabilities along dim={other}: take the max "
                        "and the sum along the dim forward receives.")
    return " Hint: log p = (z - m) - log(sum over the dim of exp(z - m)), with m the max."


def _backward_hint(got, upstream, softmax, dim):
    """What a wrong backward most likely returns, from the numbers it gave."""
    def close(candidate):
        return np.allclose(got, candidate, rtol=1e-4, atol=1e-4 * (1 + np.abs(candidate).max()))
    if close(upstream):
        return (" It is the gradient that arrived, unchanged: each log-probability depends "
                "on every logit of its slice (through the log of the sum), so a second term "
                "is missing. Differentiate log p_c = z_c - log sum_j exp(z_j) by z_k.")
    if close(softmax * (upstream - (upstream * softmax).sum(axis=dim, keepdims=True))):
        return (" This is the backward of softmax (whose output is p), not of log-softmax "
                "(whose output is log p): differentiate log p_c = z_c - log sum_j exp(z_j) "
                "by z_k; the factor p_c of softmax's derivative is not there.")
    n = got.shape[dim] if got.ndim else 1
    if close(1 - softmax) or close(1 - n * softmax) or close(-softmax):
        return (" Your backward ignores the gradient that arrived (its grad argument): what it "
                "returns would be the same whatever arrived. The chain rule multiplies the "
                "derivative of each log-probability by the gradient arriving at it, and adds "
                "those up for each logit.")
    if close(upstream - softmax * (upstream * softmax).sum(axis=dim, keepdims=True)):
        return (" Your second term adds up the arriving gradients of the slice each weighted "
                "by its probability: that weighting belongs to softmax's backward (whose "
                "output is p), not to log-softmax's (whose output is log p). Differentiate "
                "log p_c = z_c - log sum_j exp(z_j) by z_k: the arriving gradients are added "
                "up without any weight.")
    if close(upstream - softmax):
        return (" It is right only when the arriving gradients of a slice add up to 1: the "
                "second term must scale with their sum along dim (keepdims=True).")
    if got.ndim > 1 and close(upstream - softmax * upstream.sum()):
        return (" Your backward sums the arriving gradient over the whole array: sum along "
                "the dim forward received only (keepdims=True).")
    if close(upstream - softmax * upstream):
        return (" The second term must add up the arriving gradients of the whole slice "
                f"along dim={dim} (keepdims=True), not use each element's own.")
    for other in range(got.ndim):
        if other != dim and got.shape[other] > 1:
            if close(upstream - softmax * upstream.sum(axis=other, keepdims=True)):
                return (f" Your backward sums along dim={other}: keep the dim forward "
                        "received (self.dim = dim) and sum along it.")
    if close(upstream + softmax * upstream.sum(axis=dim, keepdims=True)):
        return " Check the sign of the second term."
    return (" Hint: the softmax is exp of the log-probabilities (or of the logits, shifted "
            "and normalized, if you saved those). Differentiate log p_c = z_c - log sum_j "
            "exp(z_j) by z_k.")


def _compare_case(op_class, values, dim, rng, chapter=False):
    """The learner's op and minigrad's on the same logits: values, then gradients for a
    random gradient arriving from above; the input must stay as it was."""
    label = _describe_logits(values, dim, chapter)
    x_own = creation.tensor(values.copy(), requires_grad=True)
    want = x_own.log_softmax(dim)
    x = creation.tensor(values.copy(), requires_grad=True)
    with _plug_log_softmax(op_class):
        out = _attempt(f"log_softmax of {label}", lambda: x.log_softmax(dim))
    if type(out.grad_fn) is not op_class:
        raise Mismatch(f"log_softmax of {label} was not recorded as your op: forward must "
                       "return a numpy array (Op.run makes the tensor and the node).")
    if not np.array_equal(x.detach().numpy(), values):
        raise Mismatch(f"log_softmax of {label} changed its input: forward must not modify "
                       "the array it receives (no -= on it); compute new arrays.")
    got, expected = out.detach().numpy(), want.detach().numpy()
    if got.shape != expected.shape:
        raise Mismatch(f"log_softmax of {label} has shape {got.shape}; expected "
                       f"{expected.shape}. Reduce with keepdims=True so that the max and the "
                       "sum broadcast against the logits.")
    same_dtype(f"log_softmax of {label}", got, expected)
    tol = _tolerance(values, values.dtype)
    if np.isneginf(got).any() and not np.isnan(got).any() and not np.isposinf(got).any():
        raise Mismatch(f"log_softmax of {label} gives "
                       f"{np.round(got.astype(float), 4).tolist()}: -inf "
                       "where minigrad's is finite. That is the log of a probability that "
                       "rounded to 0 (section 7: log(softmax(z)) is not log_softmax(z)): "
                       "compute the log-probabilities from the shifted logits directly, "
                       "without forming the probabilities first.")
    if not np.isfinite(got).all():
        raise Mismatch(f"log_softmax of {label} gives "
                       f"{np.round(got.astype(float), 4).tolist()}: not "
                       "finite. exp of a large logit overflows (exp(1000) is inf) and the log "
                       "of a probability rounded to 0 is -inf: subtract each slice's max "
                       "(along dim, keepdims=True, not the whole array's) before exp (the "
                       "shift changes nothing, as the chapter shows).")
    if not np.allclose(got, expected, rtol=0, atol=tol):
        raise Mismatch(f"log_softmax of {label} differs from minigrad's"
                       f"{_first_difference(got, expected, tol)}."
                       f"{_forward_hint(got, values, dim, tol)}")
    upstream = rng.standard_normal(values.shape).astype(values.dtype)
    _attempt(f"backward through log_softmax of {label}",
             lambda: out.backward(creation.tensor(upstream)))
    want.backward(creation.tensor(upstream))
    if x.grad is None:
        raise Mismatch(f"after backward through log_softmax of {label}, the logits' .grad is "
                       "None: backward must return their gradient.")
    got, expected = x.grad.numpy(), x_own.grad.numpy()
    sums = np.abs(upstream).sum(axis=dim, keepdims=True).max(initial=0)
    tol = _tolerance(values, values.dtype) * (1 + float(sums))
    if not np.isfinite(got).all():
        raise Mismatch(f"backward through log_softmax of {label}: the logits' gradient "
                       f"is not finite ({np.round(got.astype(float), 4).tolist()}). "
                       "exp of a large logit "
                       "overflows in backward too: compute the softmax from what forward "
                       "saved, the log-probabilities (their exp is at most 1).")
    if not np.allclose(got, expected, rtol=0, atol=tol):
        raise Mismatch(f"backward through log_softmax of {label}: the logits' gradient "
                       f"differs from minigrad's{_first_difference(got, expected, tol)}."
                       f"{_backward_hint(got, upstream, _softmax(values, dim), dim)}")
    _check_backward_dtype(op_class, values, dim, upstream, label)


def _check_backward_dtype(op_class, values, dim, upstream, label):
    """What the learner's backward itself returns has the logits' dtype (the engine would
    cast it back and hide a float64 slip)."""
    x = creation.tensor(values.copy(), requires_grad=True)
    with _plug_log_softmax(op_class):
        node = x.log_softmax(dim).grad_fn
    saved = tuple(getattr(node, "saved", None) or ())
    returned = _attempt(f"backward of your op for {label}",
                        lambda: node.backward(upstream.copy(), *saved))
    if isinstance(returned, (tuple, list)) and returned:
        returned = returned[0]
    same_dtype(f"what your backward returns for {label}", returned, upstream)


def _random_logits(rng):
    """Logits of 1 to 3 dims of 1 to 5 each, float32 or float64, spread from 1 to 1000,
    sometimes all shifted by ±1000; and a dim along which to normalise."""
    shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4))))
    scale = float(rng.choice([1.0, 5.0, 30.0, 1000.0]))
    shift = float(rng.choice([0.0, 0.0, 1000.0, -1000.0]))
    dtype = np.float32 if rng.random() < 0.6 else np.float64
    values = (rng.standard_normal(shape) * scale + shift).astype(dtype)
    return values, int(rng.integers(len(shape)))


def _nodes(loss):
    return [type(node) for node in execution_order([loss.grad_fn])]


def _check_cross_entropy(op_class, rng):
    """F.cross_entropy with class indices, through the learner's op: the same loss and
    gradients as minigrad's, on random batches and on the chapter's extreme logits."""
    cases = [(np.array([[1000.0, -1000.0]], np.float32), np.array([1]))]
    for _ in range(10):
        n, c = int(rng.integers(1, 9)), int(rng.integers(2, 6))
        logits = (rng.standard_normal((n, c)) * float(rng.choice([1.0, 100.0]))).astype(
            np.float32)
        cases.append((logits, rng.integers(0, c, size=n)))
    for logits, target in cases:
        label = f"F.cross_entropy of logits of shape {logits.shape} with class indices"
        results = []
        for plugged in (False, True):
            x = creation.tensor(logits.copy(), requires_grad=True)
            t = creation.tensor(target)
            with _plug_log_softmax(op_class) if plugged else contextlib.nullcontext():
                loss = _attempt(label, lambda: F.cross_entropy(x, t))
            if plugged and op_class not in _nodes(loss):
                raise Mismatch(f"{label} did not run your op.")
            _attempt(f"backward of {label}", loss.backward)
            results.append((loss, x))
        (own_loss, own_x), (loss, x) = results
        same_dtype(f"{label}: the loss", loss, own_loss)
        tol = _tolerance(logits, np.float32)
        if not np.isclose(loss.item(), own_loss.item(), rtol=1e-5, atol=tol):
            raise Mismatch(f"{label}: the loss is {loss.item():.6g} with your op, "
                           f"{own_loss.item():.6g} with minigrad's.")
        if not np.allclose(x.grad.numpy(), own_x.grad.numpy(), rtol=1e-4, atol=tol):
            raise Mismatch(f"{label}: the logits' gradient differs from minigrad's"
                           f"{_first_difference(x.grad.numpy(), own_x.grad.numpy(), tol)}.")


def _log_softmax_battery(op_class):
    """The chapter's logits, 200 random ones (values and gradients against minigrad's own
    LogSoftmaxBackward0), and cross-entropy through the op."""
    if not (isinstance(op_class, type) and issubclass(op_class, Op)):
        raise Mismatch(f"expected a class that inherits from Op (from minigrad.ops import "
                       f"Op; class LogSoftmaxBackward0(Op): ...), got {type(op_class).__name__}.")
    rng = np.random.default_rng(7)
    # minigrad's own op for the expected results, even inside a teach.use(...) block
    with warnings.catch_warnings(), np.errstate(all="ignore"), _plug_log_softmax(_OWN_OP):
        warnings.simplefilter("ignore")
        for values, dim in _CHAPTER_LOGITS:
            _compare_case(op_class, np.array(values, dtype=np.float32), dim, rng, chapter=True)
        for _ in range(_N_RANDOM):
            _compare_case(op_class, *_random_logits(rng), rng)
        _check_cross_entropy(op_class, rng)
    return (f"the chapter's {len(_CHAPTER_LOGITS)} logits and {_N_RANDOM} random ones (values "
            "and gradients, float32 and float64, up to ±2000), and F.cross_entropy through it")


register(Piece(name="log_softmax", chapter="07", defines="LogSoftmaxBackward0",
               summary="log-softmax's op: stable forward, and its backward",
               plug=_plug_log_softmax, battery=_log_softmax_battery,
               own={"LogSoftmaxBackward0 (minigrad.ops.softmax)": _OWN_OP,
                    "F.log_softmax": F.log_softmax,
                    "log_softmax (mg.log_softmax, x.log_softmax)": functions.log_softmax,
                    "nn.LogSoftmax": nn.LogSoftmax}))
