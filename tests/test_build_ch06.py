"""Chapter 6's build exercise: the learner's ``class Linear(nn.Module)``, plugged in as
``minigrad.nn.Linear`` by ``teach.use(linear=...)`` and checked by
``teach.check_piece("linear", ...)`` against minigrad's own Linear."""

import inspect
import math

import numpy as np
import pytest

import minigrad as mg
from build_cells import solution
from minigrad import nn, teach
from minigrad.nn import functional as F
from minigrad.nn import layers
from minigrad.teach.exercises import ch06

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
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__()
            bound = 1 / math.sqrt(in_features)
            self.weight = nn.Parameter((mg.rand(out_features, in_features, dtype=dtype) * 2 - 1)
                                       * bound)
            self.bias = nn.Parameter((mg.rand(out_features, dtype=dtype) * 2 - 1) * bound) \
                if bias else None

        def forward(self, x):
            out = x @ self.weight.T
            return out if self.bias is None else out + self.bias

    assert teach.check_piece("linear", RandLinear)


def test_the_check_is_deterministic_and_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    first = teach.check_piece("linear", Linear).message
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
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias)
        self.weight = nn.Parameter(mg.randn(out_features, in_features))


class NormalWithTheBound(Linear):
    """normal_(0, bound) for uniform_(-bound, bound): the bound of in_features, not uniform."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=False)
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).normal_(0, bound))
        self.bias = nn.Parameter(mg.empty(out_features).normal_(0, bound)) if bias else None


class OutFeaturesBound(Linear):
    """uniform_ in ±1/sqrt(out_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=False)
        bound = 1 / math.sqrt(out_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features).uniform_(-bound, bound)) if bias else None


class TransposedDraw(Linear):
    """The right bound and shape, but drawn as (in, out) and transposed: other numbers."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
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
    (PlainTensors, ["weight and .bias are plain tensors, not nn.Parameters",
                    "does not register them"]),
    (ForgetsTheBias, ["lacks exactly the bias"]),
    (NoBiasAtAll, ["['weight']", "with bias=True the layer also has a bias"]),
    (BiasFirst, ["['bias', 'weight']", "the weight first"]),
    (NormalStart, ["beyond ±1/sqrt(in_features)"]),
    (NormalWithTheBound, ["beyond ±1/sqrt(in_features)", "not uniform within ±bound",
                          "draws uniform"]),
    (OutFeaturesBound, ["1/sqrt(out_features)", "nn.Linear's is 1/sqrt(in_features)"]),
    (TransposedDraw, ["not what nn.Linear draws", "the weight first, then the bias"]),
    (AlwaysABias, ["with bias=False there is no bias parameter"]),
    (NoSuperInit, ["raised AttributeError", "super().__init__()"]),
    (Linear(2, 3), ["a class that inherits from nn.Module"]),
])
def test_a_wrong_linear_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text


# ---------------------------------------------------------------- more wrong answers: what
# students write from 06a and 06b's text (issue 24)

class _Drawn(nn.Module):
    """The right layer, to vary one thing at a time."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features, dtype=dtype)
                                   .uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features, dtype=dtype).uniform_(-bound, bound)) \
            if bias else None

    def forward(self, input):
        out = input @ self.weight.T
        return out if self.bias is None else out + self.bias


class EmptySubclass(layers.Linear):
    pass


class WrapsOwnLinear(nn.Module):
    """A thin wrapper: minigrad's own layer inside."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.inner = nn.Linear(in_features, out_features, bias, device, dtype)

    def forward(self, input):
        return self.inner(input)


class ForwardWithFLinear(_Drawn):
    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


def linear_factory(in_features, out_features, bias=True, device=None, dtype=None):
    return layers.Linear(in_features, out_features, bias=bias)


class PlainWeight(_Drawn):
    """The weight a plain tensor that requires grad, the bias a Parameter."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        bound = 1 / math.sqrt(in_features)
        del self.weight
        self.weight = mg.empty(out_features, in_features).uniform_(-bound, bound)
        self.weight.requires_grad = True


class PlainBias(_Drawn):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        if bias:
            bound = 1 / math.sqrt(in_features)
            del self.bias
            self.bias = mg.empty(out_features).uniform_(-bound, bound).requires_grad_()


class NumpyWeights(_Drawn):
    """Drawn with numpy: float64 parameters (and not minigrad's generator)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=False)
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.tensor(np.random.uniform(-bound, bound,
                                                               (out_features, in_features))))
        self.bias = nn.Parameter(mg.tensor(np.random.uniform(-bound, bound, out_features))) \
            if bias else None


class NoDeviceNoDtype(_Drawn):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)


class BiasOffByDefault(_Drawn):
    def __init__(self, in_features, out_features, bias=False, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)


class IgnoresDtype(_Drawn):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias)


class ZeroBias(_Drawn):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, False, device, dtype)
        self.bias = nn.Parameter(mg.zeros(out_features, dtype=dtype)) if bias else None


class FromZero(_Drawn):
    """uniform_(0, bound): only positive weights."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, False, device, dtype)
        bound = 1 / math.sqrt(in_features)
        with mg.no_grad():
            self.weight.uniform_(0, bound)
        self.bias = nn.Parameter(mg.empty(out_features, dtype=dtype).uniform_(0, bound)) \
            if bias else None


class BoundFromOutputs(_Drawn):
    """1/sqrt(out_features): the wrong size in the bound."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, False, device, dtype)
        bound = 1 / math.sqrt(out_features)
        with mg.no_grad():
            self.weight.uniform_(-bound, bound)
        self.bias = nn.Parameter(mg.empty(out_features, dtype=dtype).uniform_(-bound, bound)) \
            if bias else None


class BiasDrawnFirst(nn.Module):
    """Both drawn right, but the bias first (assigned in the right order)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        b = mg.empty(out_features, dtype=dtype).uniform_(-bound, bound) if bias else None
        self.weight = nn.Parameter(mg.empty(out_features, in_features, dtype=dtype)
                                   .uniform_(-bound, bound))
        self.bias = nn.Parameter(b) if bias else None

    def forward(self, input):
        out = input @ self.weight.T
        return out if self.bias is None else out + self.bias


class DrawnTransposed(nn.Module):
    """The weight drawn as (in, out), then transposed to the right shape."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        drawn = mg.empty(in_features, out_features, dtype=dtype).uniform_(-bound, bound)
        self.weight = nn.Parameter(drawn.T.contiguous())
        self.bias = nn.Parameter(mg.empty(out_features, dtype=dtype).uniform_(-bound, bound)) \
            if bias else None

    def forward(self, input):
        out = input @ self.weight.T
        return out if self.bias is None else out + self.bias


class TruthyBias(_Drawn):
    def forward(self, input):
        out = input @ self.weight.T
        if self.bias:
            out = out + self.bias
        return out


class WeightTimesInput(_Drawn):
    """weight @ input: right for one sample, wrong for a batch."""

    def forward(self, input):
        out = self.weight @ input
        return out if self.bias is None else out + self.bias


class ThroughNumpy(_Drawn):
    def forward(self, input):
        out = input.detach().numpy() @ self.weight.detach().numpy().T
        if self.bias is not None:
            out = out + self.bias.detach().numpy()
        return mg.tensor(out)


class Float64WithoutBias(_Drawn):
    """A float64 zero bias when there is none: a float32 input gives a float64 output."""

    def forward(self, input):
        bias = self.bias if self.bias is not None else mg.tensor(np.zeros(self.weight.shape[0]))
        return input @ self.weight.T + bias


class BiasZeroWhenFalse(_Drawn):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        if not bias:
            self.bias = 0


@pytest.mark.parametrize("answer, words", [
    (OWN, ["minigrad's own nn.Linear, not a piece you wrote"]),
    (EmptySubclass, ["subclass of minigrad's own nn.Linear"]),
    (WrapsOwnLinear, ["uses minigrad's own nn.Linear", "Write that part yourself"]),
    (ForwardWithFLinear, ["uses minigrad's own F.linear"]),
    (PlainWeight, ["Linear(5, 2).weight is a plain tensor, not an nn.Parameter",
                   "does not register it", "optimizer would never update it"]),
    (PlainBias, ["Linear(5, 2).bias is a plain tensor, not an nn.Parameter",
                 "does not register it"]),
    (NumpyWeights, ["Linear(5, 2).weight is float64", "float32"]),
    (NoDeviceNoDtype, ["has no keyword device", "bias=True, device=None, dtype=None"]),
    (BiasOffByDefault, ["bias has the default False", "bias=True"]),
    (IgnoresDtype, ["weight is float32: with dtype=mg.float64", "Pass dtype on"]),
    (ZeroBias, ["Linear(5, 2).bias is not what nn.Linear draws", "all zeros",
                "draws its bias too"]),
    (FromZero, ["not what nn.Linear draws", "≥ 0", "between -bound and +bound"]),
    (BoundFromOutputs, ["beyond ±1/sqrt(in_features)", "The bound is 1/sqrt(out_features)"]),
    (BiasDrawnFirst, ["draws the bias before the weight"]),
    (DrawnTransposed, ["as (in_features, out_features) and transposes it"]),
    (TruthyBias, ["raised RuntimeError", "neither true nor false", "is not None"]),
    (WeightTimesInput, ["input of shape (4, 5) raised", "last dimension is in_features"]),
    (ThroughNumpy, ["does not require grad", "no .detach(), no numpy"]),
    (Float64WithoutBias, ["bias=False)'s output on a float32 input", "is float64",
                          "float32 into float64"]),
    (BiasZeroWhenFalse, ["bias should be None"]),
])
def test_a_typical_wrong_linear_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text


def test_a_function_that_returns_minigrads_layer_is_no_class_of_yours():
    assert "minigrad's own nn.Linear" in message(linear_factory)


def test_a_plain_weight_is_not_told_to_be_renamed():
    for answer in (PlainWeight, PlainBias):
        assert "name them weight and bias" not in message(answer)


def test_the_right_layer_to_vary_passes():
    result = teach.check_piece("linear", _Drawn)
    assert result, result.message


def test_minigrads_own_objects_are_listed_for_the_refusal():
    own = teach.build._piece("linear").own
    assert own["nn.Linear"] is OWN and own["F.linear"] is F.linear


def test_the_defaults_written_down_are_pytorchs():
    torch = pytest.importorskip("torch")
    params = inspect.signature(torch.nn.Linear.__init__).parameters
    assert tuple(params)[1:3] == ch06.PYTORCH_LINEAR_ARGUMENTS
    assert {name: params[name].default for name in ch06.PYTORCH_LINEAR_DEFAULTS} == \
        ch06.PYTORCH_LINEAR_DEFAULTS
    assert ch06.PYTORCH_LINEAR_SIGNATURE == \
        "__init__(self, in_features, out_features, bias=True, device=None, dtype=None)"
    own = inspect.signature(OWN.__init__).parameters
    assert {name: own[name].default for name in ch06.PYTORCH_LINEAR_DEFAULTS} == \
        ch06.PYTORCH_LINEAR_DEFAULTS


def test_pytorchs_init_bound_is_the_one_checked():
    """PyTorch's Linear draws weight and bias within ±1/sqrt(in_features), as the check asks."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.Linear(64, 1000)
    bound = 1 / math.sqrt(64)
    for p in (layer.weight, layer.bias):
        top = p.detach().abs().max().item()
        assert 0.95 * bound < top <= bound


def test_old_style_super_as_in_06a_is_not_taken_for_minigrads_own():
    """06a's LinearRegressionModel calls super(LinearRegressionModel, self).__init__(); a
    learner who writes super(Linear, self) in a notebook cell is still writing their own."""
    source = """
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super(Linear, self).__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(mg.empty(out_features, in_features, dtype=dtype).uniform_(-bound, bound))
        self.bias = nn.Parameter(mg.empty(out_features, dtype=dtype).uniform_(-bound, bound)) if bias else None

    def forward(self, input):
        out = input @ self.weight.T
        return out if self.bias is None else out + self.bias
"""
    names = {"__name__": "__main__"}
    exec(compile(teach.build.PRELUDE + source, "<cell>", "exec"), names)
    result = teach.check_piece("linear", names["Linear"])
    assert result, result.message


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
