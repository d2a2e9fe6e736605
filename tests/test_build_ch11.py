"""Chapter 11's build exercise: the learner's ``Softplus(mg.autograd.Function)``, plugged in
behind ``nn.functional.softplus`` and ``nn.Softplus`` by ``teach.use(softplus=...)`` and
checked by ``teach.check_piece("softplus", ...)`` (gradcheck included)."""

import time

import numpy as np
import pytest

import minigrad as mg
from build_cells import solution
from minigrad import nn, teach
from minigrad.nn import activations_more
from minigrad.nn import functional as F

Softplus = solution("11", "Softplus")
OWN = activations_more.softplus


def message(answer):
    result = teach.check_piece("softplus", answer)
    assert not result, result.message
    return result.message


# ---------------------------------------------------------------- right answers

def test_the_notebooks_softplus_passes_its_check():
    result = teach.check_piece("softplus", Softplus)
    assert result, result.message
    assert "gradcheck" in result.message and "±1000" in result.message


def test_a_softplus_that_saves_its_output_passes_too():
    class SavingTheOutput(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * (1 - (-y).exp())     # sigma(x) = 1 - exp(-softplus(x))

    result = teach.check_piece("softplus", SavingTheOutput)
    assert result, result.message


def test_the_check_is_quick_deterministic_and_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    start = time.perf_counter()
    first = teach.check_piece("softplus", Softplus).message
    assert time.perf_counter() - start < 1.0
    assert mg.default_generator.get_state() == state
    assert teach.check_piece("softplus", Softplus).message == first


# ---------------------------------------------------------------- wrong answers

class Textbook(Softplus):
    """log(1 + e^x) as written: inf at x = 100 in float32."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (1 + x.exp()).log()


class TextbookBackward(Softplus):
    """e^x / (1 + e^x): inf / inf = nan at x = 1000."""

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.exp() / (1 + x.exp())


class SigmoidOfMinusX(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (-x).sigmoid()


class SigmoidOfTheOutput(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y.sigmoid()


class ForgetsGradOutput(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return x.sigmoid()


class ReturnsNone(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        return None


class WrongForward(Softplus):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)


class ChangesItsInput(Softplus):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
        x.mul_(0)
        return y


@pytest.mark.parametrize("answer, words", [
    (Textbook, ["at x = [-1000.0", "not finite", "exp only ever sees numbers ≤ 0"]),
    (TextbookBackward, ["x.grad is [0.0, 0.0, 0.0, 1.0, nan, nan]", "stays finite"]),
    (SigmoidOfMinusX, ["falls where the curve rises"]),
    (SigmoidOfTheOutput, ["your backward gives the slope", "chain rule"]),
    (ForgetsGradOutput, ["multiply it by grad_output"]),
    (ReturnsNone, ["x.grad is None"]),
    (WrongForward, ["which is not log(1 + e^x)"]),
    (ChangesItsInput, ["changed x"]),
    (Softplus.apply, ["a class that inherits from mg.autograd.Function"]),
])
def test_a_wrong_softplus_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text
    assert "sigmoid" not in text  # the derivative is not given away


# ---------------------------------------------------------------- not written yet

def test_none_is_not_written_yet_and_minigrads_own_softplus_runs():
    result = teach.check_piece("softplus", None)
    assert not result and "not written yet" in result.message
    x = mg.tensor([0.0], requires_grad=True)
    with teach.use(softplus=None):
        assert F.softplus is OWN
        assert type(nn.Softplus()(x).grad_fn).__name__ == "SoftplusBackward0"


# ---------------------------------------------------------------- the plug

def test_use_runs_the_learners_function_in_nn_softplus_and_f_softplus():
    calls = []

    class Counting(Softplus):
        @staticmethod
        def forward(ctx, x):
            calls.append(tuple(x.shape))
            return Softplus.forward(ctx, x)

    x = mg.tensor([-2.0, 0.0, 100.0], requires_grad=True)
    with teach.use(softplus=Counting):
        y = nn.Softplus()(x)
        y2 = F.softplus(x, beta=2.0)
        assert mg.nn.functional.softplus is not OWN
    assert calls == [(3,), (3,)]
    assert type(y.grad_fn).__name__ == "CountingBackward"
    (y.sum() + y2.sum()).backward()
    own_x = mg.tensor([-2.0, 0.0, 100.0], requires_grad=True)
    own_y, own_y2 = nn.Softplus()(own_x), F.softplus(own_x, beta=2.0)
    (own_y.sum() + own_y2.sum()).backward()
    np.testing.assert_allclose(y.detach().numpy(), [0.1269, 0.6931, 100.0], atol=1e-4)
    np.testing.assert_allclose(y2.detach().numpy(), own_y2.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), own_x.grad.numpy(), rtol=1e-5)


def test_use_puts_minigrads_softplus_back_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with teach.use(softplus=Softplus):
            assert nn.Softplus._fn is not OWN
            1 / 0
    assert F.softplus is OWN and activations_more.softplus is OWN
    assert nn.Softplus._fn is OWN
    assert type(nn.Softplus()(mg.tensor([1.0], requires_grad=True)).grad_fn).__name__ == \
        "SoftplusBackward0"


def test_the_check_compares_with_minigrads_own_even_inside_a_use_block():
    with teach.use(softplus=ForgetsGradOutput):
        assert teach.check_piece("softplus", Softplus)
        assert not teach.check_piece("softplus", ForgetsGradOutput)
