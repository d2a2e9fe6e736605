"""Chapter 7's exercise checks accept the right answers (in the usual forms) and reject
wrong and missing ones, without raising and without giving the answer away."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch07


# ----------------------------------------------------------------- exercise 1: MSE by hand

def mse_solution():
    predictions = mg.tensor(ch07.MSE_PREDICTIONS)
    targets = mg.tensor(ch07.MSE_TARGETS)
    mse = ((predictions - targets) ** 2).mean()
    grad_pred = 2 * (predictions - targets) / predictions.numel()
    return mse, grad_pred


def test_mse_right_answers_in_several_forms():
    mse, grad_pred = mse_solution()
    assert ch07.check_mse_by_hand(mse, grad_pred)
    assert ch07.check_mse_by_hand(0.375, [-0.25, 0.25, 0.0, 0.5])  # worked out on paper
    assert ch07.check_mse_by_hand(mse.item(), grad_pred.numpy())
    assert ch07.check_mse_by_hand(mg.tensor([0.375]), grad_pred.tolist())


def test_mse_matches_autograd_and_pytorch_formula():
    predictions = mg.tensor(ch07.MSE_PREDICTIONS, requires_grad=True)
    loss = nn.MSELoss()(predictions, mg.tensor(ch07.MSE_TARGETS))
    loss.backward()
    mse, grad_pred = mse_solution()
    assert loss.item() == pytest.approx(mse.item())
    assert np.allclose(predictions.grad.numpy(), grad_pred.numpy())


@pytest.mark.parametrize("mse, grad_pred, hint", [
    (1.5, [-0.25, 0.25, 0.0, 0.5], "sum of the squares"),          # reduction="sum"
    (0.5, [-0.25, 0.25, 0.0, 0.5], "absolute differences"),        # mean absolute error
    (0.375, [-1.0, 1.0, 0.0, 2.0], "gradient of the sum"),          # forgot 1/n
    (0.375, [-0.125, 0.125, 0.0, 0.25], "brings down a factor"),   # forgot the 2
    (0.375, [0.25, -0.25, 0.0, -0.5], "sign"),                     # target - pred
    (0.375, [-0.25, 0.25, 0.0], "shape"),                          # wrong shape
    (None, [-0.25, 0.25, 0.0, 0.5], "no answer yet"),
    (MISSING, MISSING, "no answer yet"),
])
def test_mse_wrong_or_missing(mse, grad_pred, hint):
    result = ch07.check_mse_by_hand(mse, grad_pred)
    assert not result
    text = repr(result)
    assert text.startswith("✗") and hint in text
    assert "0.375" not in text.replace(repr(mse), "")  # the right value is not given away


# ------------------------------------------------------- exercise 2: cross-entropy by hand

def cross_entropy_solution():
    scores = mg.tensor(ch07.CE_SCORES)
    labels = mg.tensor(ch07.CE_LABELS)
    probs = scores.exp() / scores.exp().sum(dim=1, keepdim=True)
    return -probs[mg.arange(3), labels].log().mean()


def test_cross_entropy_right_answer():
    ce = cross_entropy_solution()
    assert ch07.check_cross_entropy_by_hand(ce)
    assert ch07.check_cross_entropy_by_hand(ce.item())
    assert ch07.check_cross_entropy_by_hand(mg.tensor([ce.item()]))


def test_cross_entropy_matches_nll_of_log_softmax():
    scores = mg.tensor(ch07.CE_SCORES)
    labels = mg.tensor(ch07.CE_LABELS)
    nll = nn.NLLLoss()(scores.log_softmax(dim=1), labels)
    assert nll.item() == pytest.approx(cross_entropy_solution().item(), rel=1e-6)


def test_cross_entropy_wrong_or_missing():
    ce = cross_entropy_solution().item()
    per_sample = nn.CrossEntropyLoss(reduction="none")(mg.tensor(ch07.CE_SCORES),
                                                         mg.tensor(ch07.CE_LABELS))
    cases = [(3 * ce, "sum over the samples"), (-ce, "sign"), (per_sample, "per-sample"),
             (ce + 0.1, "softmax each row"), (None, "no answer yet"), (MISSING, "no answer yet")]
    for answer, hint in cases:
        result = ch07.check_cross_entropy_by_hand(answer)
        assert not result, answer
        assert hint in repr(result)
        assert f"{ce:.4f}" not in repr(result).replace(repr(answer), "")


# -------------------------------------------- exercise 3: gradient with a soft target

def test_soft_target_gradient_right_answer():
    logits = mg.tensor(ch07.SOFT_LOGITS)
    target = mg.tensor(ch07.SOFT_TARGET)
    grad_logits = (logits.softmax(dim=1) * target.sum(dim=1, keepdim=True) - target) / 2
    assert ch07.check_soft_target_gradient(grad_logits)
    assert ch07.check_soft_target_gradient(grad_logits.tolist())


def test_soft_target_gradient_is_the_batch_mean_and_rows_sum_to_zero():
    logits = mg.tensor(ch07.SOFT_LOGITS, requires_grad=True)
    nn.CrossEntropyLoss()(logits, mg.tensor(ch07.SOFT_TARGET)).backward()
    assert np.allclose(logits.grad.sum(dim=1).numpy(), 0, atol=1e-6)
    sums = mg.tensor(ch07.SOFT_TARGET).sum(dim=1)
    assert sums[0].item() != 1 and len(ch07.SOFT_LOGITS) == 2   # the division by N shows


def test_the_exercise_is_not_the_formula_the_lecture_prints():
    """07b prints softmax(out) * target.sum() - target for one sample: applied to the
    batch as it is, it fails."""
    logits = mg.tensor(ch07.SOFT_LOGITS)
    target = mg.tensor(ch07.SOFT_TARGET)
    assert not ch07.check_soft_target_gradient(logits.softmax(dim=1) * target.sum() - target)
    assert not ch07.check_soft_target_gradient(
        logits.softmax(dim=1) * target.sum(dim=1, keepdim=True) - target)


def test_soft_target_gradient_wrong_or_missing():
    logits = mg.tensor(ch07.SOFT_LOGITS)
    target = mg.tensor(ch07.SOFT_TARGET)
    p = logits.softmax(dim=1)
    s = target.sum(dim=1, keepdim=True)
    cases = [(p * s - target, "SUM of the two samples' losses"),
             ((p * s - target) / 6, "not over every logit"),
             ((p - target) / 2, "sums to more than 1"),          # the one-hot formula
             (p * target.sum() - target, "sum of ALL the batch's targets"),
             ((target - p * s) / 2, "sign"),
             (p * s / 2, "only the part"),
             (mg.zeros(2, 3), "differentiate"),
             (mg.zeros(3), "shape"),
             (None, "no answer yet")]
    for answer, hint in cases:
        result = ch07.check_soft_target_gradient(answer)
        assert not result
        assert hint in repr(result), (hint, repr(result))


# ---------------------------------------------------------------- predictions, 07a and 07b

@pytest.fixture
def fresh():
    ch07.mse_grad_prediction.reset()
    ch07.log_prediction.reset()
    yield
    ch07.mse_grad_prediction.reset()
    ch07.log_prediction.reset()


def torch_mse_grad():
    torch = pytest.importorskip("torch")
    pred = torch.tensor(ch07.GRAD_PRED, requires_grad=True)
    torch.nn.MSELoss()(pred, torch.tensor(ch07.GRAD_TARGET)).backward()
    return pred.grad[2].item()


def test_mse_grad_prediction_measures_pytorchs_gradient():
    assert abs(ch07.mse_grad_prediction.measure()[0] - torch_mse_grad()) < 1e-6


@pytest.mark.parametrize("written", [2 / 3, 0.67, 0.667])
def test_mse_grad_prediction_accepts_two_decimals(fresh, written):
    assert ch07.mse_grad_prediction.lock(written)
    assert ch07.mse_grad_prediction.reveal()


@pytest.mark.parametrize("wrong, words", [(2, "divided by n"), (1 / 3, "factor 2"),
                                          (-2 / 3, "sign"), (0.5, "third entry")])
def test_mse_grad_prediction_names_the_mistake(fresh, wrong, words):
    assert ch07.mse_grad_prediction.lock(wrong)
    result = ch07.mse_grad_prediction.reveal()
    assert not result and words in result.message


def test_mse_grad_prediction_refuses_the_gradient_itself(fresh):
    pred = mg.tensor(ch07.GRAD_PRED, requires_grad=True)
    nn.MSELoss()(pred, mg.tensor(ch07.GRAD_TARGET)).backward()
    assert not ch07.mse_grad_prediction.lock(pred.grad[2])
    assert not ch07.mse_grad_prediction.lock(pred.grad[2].item() * np.float32(1))


def torch_log_letter():
    torch = pytest.importorskip("torch")
    value = torch.tensor(ch07.FAR_LOGITS).softmax(dim=0).log()[1].item()
    return "c" if value != value else "b" if value == float("-inf") else "a"


def test_log_prediction_measures_what_pytorch_gives(fresh):
    assert ch07.log_prediction.measure()[0] == torch_log_letter()
    assert ch07.log_prediction.lock(torch_log_letter())
    assert ch07.log_prediction.reveal()


def test_log_prediction_wrong_letters_get_the_hint_not_the_answer(fresh):
    answer = torch_log_letter()
    for wrong in set(ch07.LOG_CHOICES) - {answer}:
        ch07.log_prediction.reset()
        assert ch07.log_prediction.lock(wrong)
        result = ch07.log_prediction.reveal()
        assert not result and "smallest positive float32" in result.message
        assert f"({answer})" not in result.message
