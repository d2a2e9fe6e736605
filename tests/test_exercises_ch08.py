"""Chapter 8's exercise checks accept the right answers (in the usual forms) and reject wrong
and missing ones, without raising and without touching the random state."""

import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch08


# ---------------------------------------------------------------- exercise 1: sgd_step

def sgd_step(params, lr):
    with mg.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()


def sgd_step_to_none(params, lr):
    with mg.no_grad():
        for p in params:
            p.sub_(lr * p.grad)
    for p in params:
        p.grad = None


def sgd_step_with_data(params, lr):       # the old-style spelling: also right
    for p in params:
        p.data -= lr * p.grad.data
        p.grad.data.zero_()


def test_sgd_step_right_answers():
    assert ch08.check_sgd_step(sgd_step)
    assert ch08.check_sgd_step(sgd_step_to_none)
    assert ch08.check_sgd_step(sgd_step_with_data)


def test_sgd_step_matches_optim_sgd_on_the_regression():
    mg.manual_seed(0)
    model = nn.Linear(1, 1, bias=False)
    reference = nn.Linear(1, 1, bias=False)
    reference.load_state_dict(model.state_dict())
    optimizer = optim.SGD(reference.parameters(), lr=0.01)
    criterion = nn.MSELoss()
    x = mg.from_numpy(ch08.REGRESSION_X)
    y = mg.from_numpy(ch08.REGRESSION_Y)
    for _ in range(5):
        criterion(model(x), y).backward()
        sgd_step(list(model.parameters()), 0.01)
        optimizer.zero_grad()
        criterion(reference(x), y).backward()
        optimizer.step()
    assert mg.allclose(model.weight, reference.weight)


def no_no_grad(params, lr):
    for p in params:
        p -= lr * p.grad
        p.grad.zero_()


def rebinds(params, lr):
    for p in params:
        p = p - lr * p.grad


def replaces_in_list(params, lr):
    for i, p in enumerate(params):
        params[i] = (p - lr * p.grad).detach().requires_grad_()


def forgets_reset(params, lr):
    with mg.no_grad():
        for p in params:
            p -= lr * p.grad


def wrong_sign(params, lr):
    with mg.no_grad():
        for p in params:
            p += lr * p.grad
            p.grad.zero_()


def forgets_lr(params, lr):
    with mg.no_grad():
        for p in params:
            p -= p.grad
            p.grad.zero_()


def first_parameter_only(params, lr):
    with mg.no_grad():
        params[0] -= lr * params[0].grad
    for p in params:
        p.grad = None


def crashes(params, lr):
    raise ValueError("oops")


@pytest.mark.parametrize("wrong, words", [
    (no_no_grad, "no_grad"),                 # hint, without the code
    (rebinds, "did not change"),
    (replaces_in_list, "other tensors"),
    (forgets_reset, "still holds the old gradient"),
    (wrong_sign, "not those of one SGD step"),
    (forgets_lr, "not those of one SGD step"),
    (first_parameter_only, "not those of one SGD step"),
    (crashes, "ValueError: oops"),
])
def test_sgd_step_wrong(wrong, words):
    result = ch08.check_sgd_step(wrong)
    assert not result
    assert repr(result).startswith("✗")
    assert words in repr(result)


def test_sgd_step_missing():
    for missing in (None, MISSING, ...):
        result = ch08.check_sgd_step(missing)
        assert not result
        assert "no answer yet" in repr(result)
    result = ch08.check_sgd_step(3)
    assert not result
    assert "expected a function" in repr(result)


# ---------------------------------------------------------------- exercise 2

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


# ---------------------------------------------------------------- exercise 3

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
        assert not ch08.check_sgd_step(odd)


def test_checks_leave_the_random_state_alone():
    mg.manual_seed(123)
    expected = mg.randn(3)
    mg.manual_seed(123)
    ch08.check_learning_rate(0.01, 2 / 92)
    ch08.check_two_epochs_without_zero_grad(-15.68, -211.68, 4.0768)
    ch08.check_sgd_step(sgd_step)
    assert mg.equal(mg.randn(3), expected)
