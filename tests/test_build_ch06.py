"""Chapter 6's build exercise: the learner's ``class Linear(nn.Module)``, plugged in as
``minigrad.nn.Linear`` by ``teach.use(linear=...)`` and checked by
``teach.check_piece("linear", ...)`` against minigrad's own Linear."""

import math
import time

import numpy as np
import pytest

import minigrad as mg
from build_cells import solution
from minigrad import nn, teach
from minigrad.nn import layers

Linear = solution("06", "Linear")
OWN = layers.Linear


def message(answer):
    result = teach.check_piece("linear", answer)
    assert not result, result.message
    return result.message


# ---------------------------------------------------------------- right answers

def test_the_notebooks_linear_passes_its_check():
    result = teach.check_piece("linear", Linear)
    assert result, result.message
    assert "section 6's MLP" in result.message


def test_a_linear_drawn_with_rand_passes_too():
    class RandLinear(nn.Module):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__()
            bound = 1 / math.sqrt(in_features)
            self.weight = nn.Parameter((mg.rand(out_features, in_features) * 2 - 1) * bound)
            self.bias = nn.Parameter((mg.rand(out_features) * 2 - 1) * bound) if bias else None

        def forward(self, x):
            out = x @ self.weight.T
            return out if self.bias is None else out + self.bias

    assert teach.check_piece("linear", RandLinear)


def test_the_check_is_quick_deterministic_and_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    start = time.perf_counter()
    first = teach.check_piece("linear", Linear).message
    assert time.perf_counter() - start < 1.0
    assert mg.default_generator.get_state() == state
    assert teach.check_piece("linear", Linear).message == first


# ---------------------------------------------------------------- wrong answers

class WeightInOut(nn.Module):
    """weight of shape (in, out), used without a transpose."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(in_features, out_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound)) if bias else None

    def forward(self, x):
        return x @ self.weight + (0 if self.bias is None else self.bias)


class PlainTensors(nn.Module):
    """Tensors that require grad, but not Parameters: parameters() does not see them."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = mg.empty(out_features, in_features).uniform_(-bound, bound)
        self.weight.requires_grad_()
        self.bias = mg.empty(out_features).uniform_(-bound, bound).requires_grad_() \
            if bias else None

    def forward(self, x):
        return x @ self.weight.T + (0 if self.bias is None else self.bias)


class ForgetsTheBias(Linear):
    def forward(self, x):
        return x @ self.weight.T


class NoBiasAtAll(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T


class BiasFirst(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound)) if bias else None
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))

    def forward(self, x):
        return x @ self.weight.T + (0 if self.bias is None else self.bias)


class NormalStart(Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.weight = nn.Parameter(mg.randn(out_features, in_features))


class TransposedDraw(Linear):
    """The right bound and shape, but drawn as (in, out) and transposed: other numbers."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias=False)
        bound = 1 / math.sqrt(in_features)
        with mg.no_grad():
            drawn = mg.empty(in_features, out_features).uniform_(-bound, bound).T
        self.weight = nn.Parameter(drawn.contiguous())
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound)) if bias else None


class AlwaysABias(Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias=True)


class NoSuperInit(Linear):
    def __init__(self, in_features, out_features, bias=True):
        self.weight = nn.Parameter(mg.empty(out_features, in_features))


@pytest.mark.parametrize("answer, words", [
    (WeightInOut, ["weight has shape (5, 2)", "(out_features, in_features)"]),
    (PlainTensors, ["finds none of its tensors", "weight, bias", "nn.Parameter"]),
    (ForgetsTheBias, ["lacks exactly the bias"]),
    (NoBiasAtAll, ["['weight']", "with bias=True the layer also has a bias"]),
    (BiasFirst, ["['bias', 'weight']", "the weight first"]),
    (NormalStart, ["beyond ±1/sqrt(in_features)"]),
    (TransposedDraw, ["not what nn.Linear draws", "the weight first, then the bias"]),
    (AlwaysABias, ["with bias=False there is no bias parameter"]),
    (NoSuperInit, ["raised AttributeError", "super().__init__()"]),
    (Linear(2, 3), ["a class that inherits from nn.Module"]),
])
def test_a_wrong_linear_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text


def test_messages_do_not_show_the_forward():
    for answer in (WeightInOut, ForgetsTheBias, PlainTensors):
        assert "input @ self.weight.T + self.bias" not in message(answer)


# ---------------------------------------------------------------- not written yet

def test_none_is_not_written_yet_and_minigrads_own_linear_runs():
    result = teach.check_piece("linear", None)
    assert not result and "not written yet" in result.message
    with teach.use(linear=None):
        assert nn.Linear is OWN
        assert type(nn.Linear(2, 3)) is OWN


# ---------------------------------------------------------------- the plug

def test_use_plugs_the_learners_class_into_nn_linear_and_gives_section_1s_numbers():
    built, calls = [], []

    class Counting(Linear):
        def __init__(self, *args, **kwargs):
            built.append(args)
            super().__init__(*args, **kwargs)

        def forward(self, input):
            calls.append(tuple(input.shape))
            return super().forward(input)

    with teach.use(linear=Counting):
        mg.manual_seed(0)
        inputs = mg.randn(5)
        layer = mg.nn.Linear(5, 2)
        out = layer(inputs)
        mlp = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        mlp(mg.randn(8, 2))
    assert built == [(5, 2), (2, 16), (16, 2)]
    assert calls == [(5,), (8, 2), (8, 16)]
    assert [name for name, _ in mlp.named_parameters()] == ["0.weight", "0.bias", "2.weight",
                                                            "2.bias"]
    mg.manual_seed(0)
    own_inputs = mg.randn(5)
    own = nn.Linear(5, 2)
    assert type(own) is OWN
    np.testing.assert_allclose(layer.weight.detach().numpy(), own.weight.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), own(own_inputs).detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), [-0.3292, 0.4700], atol=1e-4)


def test_use_puts_minigrads_linear_back_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with teach.use(linear=Linear):
            assert nn.Linear is Linear
            1 / 0
    assert nn.Linear is OWN and layers.Linear is OWN


def test_the_check_compares_with_minigrads_own_even_inside_a_use_block():
    with teach.use(linear=ForgetsTheBias):
        assert teach.check_piece("linear", Linear)
        assert not teach.check_piece("linear", ForgetsTheBias)
