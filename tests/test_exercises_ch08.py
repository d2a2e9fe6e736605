"""Chapter 8's exercise checks accept the right answers (in the usual forms) and reject wrong
and missing ones, without raising and without touching the random state."""

import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch08


# ---------------------------------------------------------------- exercise 1

def test_two_epochs_right_answers():
    # g(w) = 92 w - 196; w0 = 0: g = -196, w1 = 1.96, g(w1) = -15.68
    assert ch08.check_two_epochs_without_zero_grad(-15.68, -211.68, 4.0768)
    assert ch08.check_two_epochs_without_zero_grad([-15.68], mg.tensor([[-211.68]]), 4.0768)
    assert ch08.check_two_epochs_without_zero_grad(-15.68, -211.68, mg.tensor(4.0768))


def test_two_epochs_agrees_with_what_minigrad_prints():
    results = {}
    for zero_grad in (True, False):
        model = nn.Linear(1, 1, bias=False)
        with mg.no_grad():
            model.weight.zero_()
        optimizer = optim.SGD(model.parameters(), lr=0.01)
        for _ in range(2):
            if zero_grad:
                optimizer.zero_grad()
            loss = nn.MSELoss()(model(mg.from_numpy(ch08.REGRESSION_X)),
                                mg.from_numpy(ch08.REGRESSION_Y))
            loss.backward()
            grad = model.weight.grad.item()
            optimizer.step()
        results[zero_grad] = grad, model.weight.item()
    assert ch08.check_two_epochs_without_zero_grad(results[True][0], results[False][0],
                                                   results[False][1])


@pytest.mark.parametrize("answers", [
    (-196, -211.68, 4.0768),          # the first epoch's gradient
    (-15.68, -15.68, 4.0768),         # thinks .grad is overwritten
    (-15.68, -196, 4.0768),           # forgot to add
    (-15.68, -211.68, 2.1168),        # stepped with the fresh gradient only
    (-15.68, -211.68, 1.96),          # forgot the second step
    (15.68, 211.68, 4.0768),          # sign
    (None, None, None),
    (MISSING, MISSING, MISSING),
])
def test_two_epochs_wrong_or_missing(answers):
    result = ch08.check_two_epochs_without_zero_grad(*answers)
    assert not result
    assert repr(result).startswith("✗")


def test_two_epochs_reports_parts_without_giving_away():
    text = repr(ch08.check_two_epochs_without_zero_grad(-15.68, -196, 4.0768))
    assert "2 of 3 parts right" in text
    assert "211" not in text and "15.68" not in text


# ---------------------------------------------------------------- exercise 2

@pytest.mark.parametrize("lr_good", [0.005, 0.01, 0.015, 1 / 92])
def test_learning_rate_right(lr_good):
    assert ch08.check_learning_rate(lr_good, 2 / 92)
    assert ch08.check_learning_rate(lr_good, 0.0217)


def test_learning_rate_too_small_or_too_big():
    slow = repr(ch08.check_learning_rate(0.001, 2 / 92))
    assert "too slowly" in slow and slow.startswith("✗")
    big = repr(ch08.check_learning_rate(0.05, 2 / 92))
    assert "grows" in big and big.startswith("✗")


@pytest.mark.parametrize("lr_limit", [0.01, 1 / 92, 0.02, 0.022, 0.03, 2 / 46, None])
def test_learning_rate_limit_wrong(lr_limit):
    assert not ch08.check_learning_rate(0.01, lr_limit)


@pytest.mark.parametrize("odd", [None, MISSING, ..., "0.01", -0.01, 0, float("nan"), [0.01, 0.02],
                                 True, object()])
def test_learning_rate_odd_answers_never_raise(odd):
    result = ch08.check_learning_rate(odd, odd)
    assert not result
    assert repr(result).startswith("✗")


def test_checks_never_raise_on_odd_answers():
    for odd in ([1, 2], mg.ones(2, 2), object(), "twelve", ...):
        assert not ch08.check_two_epochs_without_zero_grad(odd, odd, odd)


def test_checks_leave_the_random_state_alone():
    mg.manual_seed(123)
    expected = mg.randn(3)
    mg.manual_seed(123)
    ch08.check_learning_rate(0.01, 2 / 92)
    ch08.check_two_epochs_without_zero_grad(-15.68, -211.68, 4.0768)
    assert mg.equal(mg.randn(3), expected)
