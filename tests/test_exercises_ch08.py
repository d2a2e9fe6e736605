"""Chapter 8's exercise checks accept the right answers (in the usual forms) and reject wrong
and missing ones, without raising and without touching the random state."""

import numpy as np
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


# ---------------------------------------------------------------- exercise 3: the seed loop, fixed

def _fixed(data, targets, W, b, learning_rate):
    for sample, target in zip(data, targets):
        W.grad = None
        b.grad = None
        loss = ((mg.matmul(sample, W) + b - target) ** 2).sum()
        loss.backward()
        with mg.no_grad():
            W -= learning_rate * W.grad
            b -= learning_rate * b.grad


def _guarded_with_data(data, targets, W, b, learning_rate):
    for sample, target in zip(data, targets):
        if W.grad is not None:
            W.grad.data.zero_()
            b.grad.data.zero_()
        ((mg.matmul(sample, W) + b - target) ** 2).sum().backward()
        W.data -= learning_rate * W.grad.data
        b.data -= learning_rate * b.grad.data


def _seed_loop(bugs=("a", "b", "c"), zero="before", reduce="sum", rebind=False):
    """The source's vanilla loop with some of its bugs left in (and other mistakes)."""
    def loop(data, targets, W, b, learning_rate):
        for sample, target in zip(data, targets):
            if zero == "before":
                if "b" in bugs:
                    W.grad.data.zero_()
                    b.grad.data.zero_()
                else:
                    W.grad, b.grad = None, None
            errors = (mg.matmul(sample, W) + b - target) ** 2
            loss = errors if "a" in bugs else getattr(errors, reduce)()
            loss.backward()
            if "c" in bugs:
                W -= learning_rate * W.grad.data
                b -= learning_rate * b.grad.data
            elif rebind:
                W = (W - learning_rate * W.grad).detach().requires_grad_()
                b = (b - learning_rate * b.grad).detach().requires_grad_()
            else:
                with mg.no_grad():
                    W -= learning_rate * W.grad
                    b -= learning_rate * b.grad
            if zero == "after":
                W.grad.zero_()
                b.grad.zero_()
    return loop


@pytest.mark.parametrize("answer", [_fixed, _guarded_with_data])
def test_fixed_loop_accepts_the_fixes(answer):
    result = ch08.check_fixed_loop(answer)
    assert result, result.message


@pytest.mark.parametrize("bugs, words", [
    (("a", "b", "c"), "'NoneType'"),           # as written: (b) strikes first
    (("b",), "'NoneType'"),
    (("a",), "scalar outputs"),
    (("a", "c"), "scalar outputs"),
    (("c",), "in-place"),
])
def test_fixed_loop_each_bug_left_in_fails(bugs, words):
    result = ch08.check_fixed_loop(_seed_loop(bugs))
    assert not result
    assert words in result.message and "Hint" in result.message


@pytest.mark.parametrize("kwargs, words", [
    (dict(reduce="mean"), "not their mean"),
    (dict(zero=None), "running sum"),
    (dict(zero="after"), "arrived with"),
    (dict(rebind=True), "did not move"),
])
def test_fixed_loop_other_mistakes_fail_with_a_hint(kwargs, words):
    result = ch08.check_fixed_loop(_seed_loop(bugs=(), **kwargs))
    assert not result
    assert words in result.message


def test_fixed_loop_missing_odd_or_crashing():
    for answer in (None, MISSING, ...):
        assert "no answer yet" in ch08.check_fixed_loop(answer).message
    assert "expected a function" in ch08.check_fixed_loop(3).message
    assert "ZeroDivisionError" in ch08.check_fixed_loop(lambda *args: 1 / 0).message


def test_fixed_loop_never_prints_the_numbers():
    text = ch08.check_fixed_loop(_seed_loop(bugs=(), reduce="mean")).message
    assert "[[" not in text


# ---------------------------------------------------------------- exercise 4: the last layer only

def _train(freeze, parameters="all", momentum=0.9):
    def train_last_layer(model, inputs, targets, lr, steps):
        freeze(model)
        params = model.parameters() if parameters == "all" else model[-1].parameters()
        optimizer = optim.SGD(params, lr=lr, momentum=momentum)
        for _ in range(steps):
            optimizer.zero_grad()
            nn.MSELoss()(model(inputs), targets).backward()
            optimizer.step()
    return train_last_layer


def _all_but_last(model):
    model.requires_grad_(False)
    model[-1].requires_grad_(True)


def _by_parameter(model):
    last = set(map(id, model[-1].parameters()))
    for p in model.parameters():
        p.requires_grad = id(p) in last


@pytest.mark.parametrize("answer", [_train(_all_but_last), _train(_by_parameter),
                                    _train(_all_but_last, parameters="last")])
def test_train_last_layer_accepts(answer):
    result = ch08.check_train_last_layer(answer)
    assert result, result.message


@pytest.mark.parametrize("answer, words", [
    (_train(lambda model: model[0].requires_grad_(False)), "2.weight moved"),   # section 8's
    (_train(lambda model: None), "0.weight moved"),
    (_train(lambda model: None, parameters="last"), "still requires grad"),
    (_train(lambda model: model.requires_grad_(False)), "nothing requires grad"),
    (_train(_all_but_last, momentum=0), "not where"),
])
def test_train_last_layer_wrong(answer, words):
    result = ch08.check_train_last_layer(answer)
    assert not result
    assert words in result.message


def test_train_last_layer_missing_or_odd():
    for answer in (None, MISSING, ...):
        assert "no answer yet" in ch08.check_train_last_layer(answer).message
    assert "expected a function" in ch08.check_train_last_layer("model[-1]").message


def test_new_checks_leave_the_random_state_alone():
    mg.manual_seed(7)
    expected = mg.randn(3)
    mg.manual_seed(7)
    ch08.check_fixed_loop(_fixed)
    ch08.check_train_last_layer(_train(_all_but_last))
    assert mg.equal(mg.randn(3), expected)


# ---------------------------------------------------------------- 08c: predict, then run

@pytest.fixture
def fresh_predictions():
    from minigrad.teach import predictions
    predictions.reset_all()
    yield
    predictions.reset_all()


def test_adams_first_step_is_lr_as_torch_computes_it(fresh_predictions):
    """The measured answer of prediction 1 is torch.optim.Adam's first step from the same
    weight: exactly lr (bias correction), not about 3.16 lr."""
    torch = pytest.importorskip("torch")
    answer, shown = ch08.FIRST_ADAM_STEP.measure()
    model = torch.nn.Linear(1, 1, bias=False)
    mg.manual_seed(0)
    start = mg.nn.Linear(1, 1, bias=False).weight.item()
    with torch.no_grad():
        model.weight.fill_(start)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.arange(1.0, 12.0).reshape(-1, 1)
    torch.nn.MSELoss()(model(x), 2 * x + 1).backward()
    optimizer.step()
    assert answer == pytest.approx(abs(model.weight.item() - start), rel=1e-5)
    assert answer == pytest.approx(0.1, rel=1e-5)
    assert "1.0000 lr" in shown


def test_prediction_1_grades_a_number_and_refuses_a_computed_one(fresh_predictions):
    assert not ch08.FIRST_ADAM_STEP.lock(mg.tensor(0.1))
    assert not ch08.FIRST_ADAM_STEP.lock(np.float64(0.1))
    assert ch08.FIRST_ADAM_STEP.lock(0.316)
    result = ch08.FIRST_ADAM_STEP.reveal()
    assert not result and "w moved by 0.1000" in result.message
    assert not ch08.FIRST_ADAM_STEP.lock(0.1)     # the answer is out: too late
    ch08.FIRST_ADAM_STEP.reset()
    assert ch08.FIRST_ADAM_STEP.lock(0.1) and ch08.FIRST_ADAM_STEP.reveal()


def test_prediction_2_the_bowl_is_won_by_momentum_as_in_torch(fresh_predictions):
    torch = pytest.importorskip("torch")
    own, theirs = ch08.bowl_runs(), ch08.bowl_runs(torch)
    for name in own:
        assert np.allclose(own[name], theirs[name], rtol=1e-12, atol=1e-12), name
    a, b = ch08.BOWL["curvatures"]
    final = {name: 0.5 * (a * p[-1][0] ** 2 + b * p[-1][1] ** 2) for name, p in theirs.items()}
    assert min(final, key=final.get) == "SGD + momentum"
    for wrong in ("a", "c"):
        ch08.BOWL_WINNER.reset()
        assert ch08.BOWL_WINNER.lock(wrong)
        result = ch08.BOWL_WINNER.reveal()
        assert not result and "SGD + momentum 0.00017" in result.message
        assert "flat valley" in result.message   # the hint points where to look
    ch08.BOWL_WINNER.reset()
    assert not ch08.BOWL_WINNER.lock("d")
    assert ch08.BOWL_WINNER.lock("(b)") and ch08.BOWL_WINNER.reveal()


def test_the_lecture_runs_the_bowl_the_check_measures():
    """08c's cells define the bowl and the three optimizers themselves (what learners read);
    they must be the runs prediction 2 measures."""
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "notebooks" / "08c_adam.ipynb"
    code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                     if c["cell_type"] == "code")
    a, b = ch08.BOWL["curvatures"]
    assert f"0.5 * (p[0] ** 2 + {b:g} * p[1] ** 2)" in code and a == 1.0
    assert f"start={ch08.BOWL['start']}, steps={ch08.BOWL['steps']}" in code
    for kind, settings in ch08.BOWL["runs"].values():
        call = f"partial(optim.{kind}, " + ", ".join(f"{k}={v}" for k, v in settings.items())
        assert call in code, call


_HINTS = {
    "no correction": "without bias correction",
    "sign": "Right size, wrong sign",
    "SGD": "SGD's step",
    "units": "units of w, not of lr",
    "generic": "what is m̂ / sqrt(v̂)",
}


@pytest.mark.parametrize("predicted, which", [
    (0.316, "no correction"), (0.32, "no correction"), (-0.3162, "no correction"),
    (-0.1, "sign"),
    (17.08, "SGD"), (17, "SGD"), (-17.1, "SGD"),
    (1, "units"), (-1.0, "units"),
    (0.05, "generic"), (0, "generic"), (3.16, "generic"),
])
def test_prediction_1_names_the_mistake_of_each_wrong_answer(fresh_predictions, predicted,
                                                             which):
    """The hint is a function of the wrong prediction: the uncorrected step (0.316), the
    wrong sign (-0.1), SGD's step (lr·|g| = 17.08), the step in units of lr (1); each hint
    only for its own mistake."""
    mg.manual_seed(0)
    start = mg.nn.Linear(1, 1, bias=False).weight.item()
    assert 0.1 * abs(92 * start - 196) == pytest.approx(17.08, abs=0.01)   # SGD's step there
    assert ch08.FIRST_ADAM_STEP.lock(predicted)
    result = ch08.FIRST_ADAM_STEP.reveal()
    assert not result
    for name, words in _HINTS.items():
        assert (words in result.message) == (name == which), (name, result.message)


def test_the_bowls_learning_rates_are_reasonable_not_each_ones_best():
    """What 08c says of section 3's settings: better ones exist (Adam at lr 1.0, momentum 0.7
    with lr 0.03), momentum stays ahead of Adam with them too, and momentum 0.9 falls behind."""
    def final(kind, **settings):
        p = mg.tensor(list(ch08.BOWL["start"]), dtype=mg.float64, requires_grad=True)
        optimizer = getattr(mg.optim, kind)([p], **settings)
        for _ in range(ch08.BOWL["steps"]):
            optimizer.zero_grad()
            (0.5 * (p[0] ** 2 + 40 * p[1] ** 2)).backward()
            optimizer.step()
        return 0.5 * (p[0] ** 2 + 40 * p[1] ** 2).item()

    used = {name: final(kind, **settings) for name, (kind, settings) in ch08.BOWL["runs"].items()}
    better_adam = final("Adam", lr=1.0)
    better_momentum = final("SGD", lr=0.03, momentum=0.7)
    assert better_adam < used["Adam"] / 3 and better_momentum < used["SGD + momentum"] / 100
    assert better_momentum < better_adam and used["SGD + momentum"] < used["Adam"]
    assert round(better_adam, 3) == 0.012 and better_momentum < 1e-6   # 08c's notes quote them
    for lr in (0.02, 0.03):   # momentum 0.9: near plain SGD, behind Adam
        heavy = final("SGD", lr=lr, momentum=0.9)
        assert round(heavy, 1) == round(used["SGD"], 1) == 0.1 and heavy > used["Adam"]
