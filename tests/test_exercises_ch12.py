"""Chapter 12's exercise checks accept right answers and reject wrong, missing and odd ones,
each with a hint that does not give the solution away, and never raise; the prediction of
exercise 1 counts only when it is locked in before the measurement is revealed."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch12
from minigrad.teach.predictions import Prediction, reset_all


@pytest.fixture(autouse=True)
def fresh_predictions():
    """Each test starts as a fresh kernel does: nothing locked in, nothing revealed."""
    reset_all()
    yield
    reset_all()


# ----------------------------------------------------------- exercise 1: predict, then run

def measured_letter():
    """What the lecture's network does, measured here with plain forward passes."""
    mg.manual_seed(1)
    x = mg.randn(512, 100)
    model = ch12.relu_mlp()
    stds = []
    with mg.no_grad():
        for layer in model:
            x = layer(x)
            if isinstance(layer, nn.ReLU):
                stds.append(x.std().item())
    return "b" if stds[-1] < stds[0] / 3 else "c" if stds[-1] > 3 * stds[0] else "a"


def test_exercise_1_is_a_prediction_of_the_shared_mechanism():
    assert isinstance(ch12.depth_prediction, Prediction)
    assert ch12.depth_prediction.choices == ch12.DEPTH_CHOICES


def test_the_right_prediction_locked_first_is_right():
    answer = measured_letter()
    assert ch12.depth_prediction.lock(answer)
    result = ch12.depth_prediction.reveal()
    assert result and f"({answer}) was right" in result.message


@pytest.mark.parametrize("written", ["B", " (b) ", "b"])
def test_a_letter_may_be_written_loosely(written):
    if measured_letter() != "b":
        pytest.skip("the network's measurement changed")
    assert ch12.depth_prediction.lock(written)
    assert ch12.depth_prediction.reveal()


def test_a_wrong_prediction_is_told_so_without_the_letter():
    answer = measured_letter()
    wrong = next(letter for letter in ch12.DEPTH_CHOICES if letter != answer)
    assert ch12.depth_prediction.lock(wrong)
    result = ch12.depth_prediction.reveal()
    assert not result and "says otherwise" in result.message
    assert f"({answer})" not in result.message and "Look at the chart" in result.message


def test_a_reveal_without_a_locked_prediction_does_not_count():
    result = ch12.depth_prediction.reveal()
    assert not result and "no prediction was locked in" in result.message


def test_a_prediction_changed_after_the_reveal_is_refused_and_the_first_one_stays():
    answer = measured_letter()
    wrong = next(letter for letter in ch12.DEPTH_CHOICES if letter != answer)
    ch12.depth_prediction.lock(wrong)
    ch12.depth_prediction.reveal()
    result = ch12.depth_prediction.lock(answer)
    assert not result and f"stays ({wrong})" in result.message
    assert not ch12.depth_prediction.reveal()


def test_a_prediction_made_only_after_the_reveal_does_not_count():
    ch12.depth_prediction.reveal()
    result = ch12.depth_prediction.lock(measured_letter())
    assert not result and "no prediction counts now" in result.message


def test_relocking_the_same_prediction_after_the_reveal_is_fine():
    answer = measured_letter()
    ch12.depth_prediction.lock(answer)
    ch12.depth_prediction.reveal()
    assert ch12.depth_prediction.lock(answer)


@pytest.mark.parametrize("answer, words", [
    (None, ["no prediction yet"]), (MISSING, ["no prediction yet"]),
    ("d", ["not one of the choices"]), (2, ["not one of the choices"]),
    ("shrinks", ["not one of the choices"]), (mg.tensor(0.03), ["not one of the choices"]),
])
def test_a_prediction_that_is_not_a_letter_is_refused(answer, words):
    result = ch12.depth_prediction.lock(answer)
    assert not result
    for word in words:
        assert word in result.message


def test_the_reveal_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    ch12.depth_prediction.reveal()
    assert mg.default_generator.get_state() == state


# ----------------------------------------------------------- exercise 2: an init for ReLU

def normal_init(std_of, bias=0.0):
    def init(model):
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                fan_out, fan_in = layer.weight.shape
                nn.init.normal_(layer.weight, mean=0.0, std=std_of(fan_in, fan_out))
                nn.init.constant_(layer.bias, bias)
    return init


def test_kaimings_std_worked_out_passes():
    result = ch12.check_relu_init(normal_init(lambda fan_in, fan_out: math.sqrt(2 / fan_in)))
    assert result, result.message


def test_a_uniform_draw_of_the_same_variance_passes_too():
    def init(model):
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                bound = math.sqrt(6 / layer.weight.shape[1])
                nn.init.uniform_(layer.weight, -bound, bound)
                nn.init.zeros_(layer.bias)
    assert ch12.check_relu_init(init)


def kaiming_itself(model):
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)


def only_the_first(model):
    layer = next(m for m in model.modules() if isinstance(m, nn.Linear))
    nn.init.normal_(layer.weight, std=math.sqrt(2 / layer.weight.shape[1]))
    nn.init.zeros_(layer.bias)


def _uneven_copy():
    """A new network initialised right, returned instead of changing the one given."""
    model = nn.Sequential(nn.Linear(40, 120), nn.ReLU())
    nn.init.normal_(model[0].weight, std=math.sqrt(2 / 40))
    return model


def raises(model):
    raise ValueError("oops")


@pytest.mark.parametrize("answer, words", [
    (normal_init(lambda fan_in, fan_out: math.sqrt(1 / fan_in)), ["ReLU sets half", "Linear 1 of 12"]),
    (normal_init(lambda fan_in, fan_out: math.sqrt(2 / fan_out)), ["number of outputs"]),
    (normal_init(lambda fan_in, fan_out: 0.01), ["too small", "shrink"]),
    (normal_init(lambda fan_in, fan_out: 1.0), ["too large", "grow"]),
    (normal_init(lambda fan_in, fan_out: math.sqrt(2 / fan_in), bias=0.1), ["bias"]),
    (kaiming_itself, ["kaiming_normal_", "Work out the std yourself"]),
    (only_the_first, ["default initialisation", "every Linear layer", "Linear 2 of 12"]),
    (raises, ["raised ValueError: oops"]),
    (lambda model: None, ["no weight changed yet"]),
    (lambda model: _uneven_copy(), ["no weight changed yet", "in place"]),
    (None, ["no answer yet"]),
    (3, ["expected a function"]),
])
def test_a_wrong_init_fails_with_a_hint(answer, words):
    result = ch12.check_relu_init(answer)
    assert not result
    for word in words:
        assert word in result.message, result.message
    assert "sqrt(2" not in result.message and "2 / fan_in" not in result.message


def test_a_mean_far_from_zero_is_named():
    def shifted(model):
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                nn.init.normal_(layer.weight, mean=1.0, std=math.sqrt(2 / layer.weight.shape[1]))
                nn.init.zeros_(layer.bias)
    result = ch12.check_relu_init(shifted)
    assert not result and "draw them around 0" in result.message


# ----------------------------------------------------------- exercise 3: make it train

def deep(norm=None, init=None, depth=10):
    def make_model():
        mg.manual_seed(0)
        layers, fan_in = [], 2
        for _ in range(depth):
            linear = nn.Linear(fan_in, 64)
            if init is not None:
                init(linear)
            layers += [linear] + ([norm(64)] if norm is not None else []) + [nn.ReLU()]
            fan_in = 64
        return nn.Sequential(*layers, nn.Linear(64, 2))
    return make_model


def test_a_deep_network_with_batchnorm_trains_and_passes():
    result = ch12.check_deep_model(deep(norm=nn.BatchNorm1d))
    assert result, result.message


def test_the_default_network_stays_stuck_and_is_told_why():
    result = ch12.check_deep_model(deep())
    assert not result and "hardly moved" in result.message


@pytest.mark.parametrize("answer, words", [
    (deep(norm=nn.BatchNorm1d, depth=3), ["4 Linear layers", "at least 10"]),
    (lambda: "a model", ["returned str", "nn.Module"]),
    (lambda: None, ["returned None", "return it"]),
    (lambda: nn.Sequential(*[nn.Linear(3, 3) for _ in range(10)]), ["raised", "2 inputs"]),
    (None, ["no answer yet"]),
])
def test_a_model_that_is_not_what_was_asked_is_refused(answer, words):
    result = ch12.check_deep_model(answer)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_the_data_is_seeded_and_about_half_each():
    x1, y1 = ch12.two_rings()
    x2, y2 = ch12.two_rings()
    assert np.array_equal(x1.numpy(), x2.numpy()) and np.array_equal(y1.numpy(), y2.numpy())
    assert x1.dtype == mg.float32 and y1.dtype == mg.int64
    assert 0.35 < y1.float().mean().item() < 0.65

