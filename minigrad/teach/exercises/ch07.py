"""Chapter 7 exercises: losses.

Each check builds the exercise's tensors itself, lets minigrad compute the right answer
(with ``nn.MSELoss``, ``nn.CrossEntropyLoss``, ``backward()`` and ``Tensor.log_softmax``)
and compares the learner's answer with it. Answers may be numbers, lists, arrays or
tensors (with or without a graph). Hints name the idea, never the number.
"""

import numpy as np

from ... import creation, nn
from ...tensor import Tensor
from ..checks import MISSING, check, check_function
from ..checks import all_parts as _together

__all__ = ["check_mse_by_hand", "check_cross_entropy_by_hand", "check_soft_target_gradient",
           "check_stable_log_softmax",
           "MSE_PREDICTIONS", "MSE_TARGETS", "CE_SCORES", "CE_LABELS",
           "SOFT_LOGITS", "SOFT_TARGET"]

# The data each exercise prints in its prompt (the notebook builds the same tensors).
MSE_PREDICTIONS = [2.5, 0.0, 2.0, 8.0]
MSE_TARGETS = [3.0, -0.5, 2.0, 7.0]
CE_SCORES = [[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]]
CE_LABELS = [1, 2, 0]
SOFT_LOGITS = [0.5, -1.0, 2.0]
SOFT_TARGET = [1.0, 0.0, 2.0]


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
    return _together("Exercise 1", [
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
    to the logits, for one sample whose class-probability target does not sum to 1."""
    logits = creation.tensor(SOFT_LOGITS, requires_grad=True)
    target = creation.tensor(SOFT_TARGET)
    nn.CrossEntropyLoss()(logits, target).backward()
    z, t = np.array(SOFT_LOGITS), np.array(SOFT_TARGET)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    hint = ("write the loss as -sum_c t_c z_c + (sum_c t_c) log sum_j exp(z_j) and "
            "differentiate with respect to z_k.")
    if _given(grad_logits) and _matches(grad_logits, p - t):
        hint = "this target sums to more than 1: where does sum(target) enter the formula?"
    elif _given(grad_logits) and _matches(grad_logits, t - p * t.sum()):
        hint = "check the sign: a class with a big target must get a negative gradient."
    elif _given(grad_logits) and _matches(grad_logits, p * t.sum()):
        hint = "that is only the part from the log-sum-exp: the -t_c z_c terms add more."
    return check("grad_logits", grad_logits, logits.grad, tol=1e-5, hint=hint)


def _reference_log_softmax(logits):
    return logits.log_softmax(dim=-1)


def _log_softmax_cases():
    return [
        (creation.tensor([1.0, 2.0, 3.0]),),
        (creation.tensor([[0.5, -0.5], [2.0, 1.0]]),),
        (creation.tensor([0.0, -200.0]),),
        (creation.tensor([1000.0, -1000.0, 0.0]),),
        (creation.tensor([[-1000.0, -1000.0], [500.0, 501.0]]),),
    ]


def _refusing_softmax(function):
    """``function``, run with ``Tensor.softmax`` and ``Tensor.log_softmax`` switched off
    (``F.softmax``, ``F.log_softmax`` and ``nn.Softmax`` go through them): the exercise is to
    build log-softmax by hand, so an answer that calls the built-in one must not pass."""
    if not callable(function):
        return function

    def refuse(self, *args, **kwargs):
        raise RuntimeError("this exercise builds log-softmax by hand: use max, exp, sum and "
                           "log, not softmax or log_softmax")

    def guarded(*args):
        built_in = Tensor.softmax, Tensor.log_softmax
        Tensor.softmax = Tensor.log_softmax = refuse
        try:
            return function(*args)
        finally:
            Tensor.softmax, Tensor.log_softmax = built_in
    return guarded


def check_stable_log_softmax(stable_log_softmax):
    """Exercise 4: a log-softmax over the last dimension that gives finite, right values
    for any logits, including ±1000, without calling softmax or log_softmax."""
    return check_function(
        "stable_log_softmax", _refusing_softmax(stable_log_softmax), _reference_log_softmax,
        _log_softmax_cases(), tol=1e-5,
        hint="exp of a big logit overflows and a tiny probability's log is -inf: shift each "
             "row before exp (keepdim=True keeps the shapes broadcastable), and take the log "
             "of a sum that is at least 1.")
