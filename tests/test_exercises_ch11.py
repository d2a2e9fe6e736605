"""Chapter 11's exercise checks accept right answers and reject wrong, missing and odd ones,
each with a hint that does not give the solution away, and never raise."""

import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch11


class Softplus(mg.autograd.Function):
    """A Function of one input (the build exercise's): not a Hypot."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.sigmoid()


# ----------------------------------------------------------------------------- exercise 1

class Hypot(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r


class HypotOneGradient(Hypot):
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r


class HypotSwapped(Hypot):
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * y / r, grad_output * x / r


class HypotNoGradOutput(Hypot):
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return x / r, y / r


class HypotWrongY(Hypot):
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * 2 * y


class HypotNoneForY(Hypot):
    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, None


class HypotWrongForward(Hypot):
    @staticmethod
    def forward(ctx, x, y):
        r = x * x + y * y
        ctx.save_for_backward(x, y, r)
        return r


def test_hypot_right_answer():
    result = ch11.check_hypot(Hypot)
    assert result, repr(result)


@pytest.mark.parametrize("cls, words", [
    (HypotOneGradient, "two gradients"),
    (HypotSwapped, "swapped"),
    (HypotNoGradOutput, "grad_output"),
    (HypotWrongY, "for y"),
    (HypotNoneForY, "y.grad is None"),
    (HypotWrongForward, "forward"),
])
def test_hypot_wrong_answers_get_their_hint(cls, words):
    result = ch11.check_hypot(cls)
    assert not result
    text = repr(result)
    assert words in text
    assert "x / r" not in text and "x/r" not in text


@pytest.mark.parametrize("answer", [None, MISSING, 5, Softplus.apply])
def test_hypot_missing_or_not_a_function(answer):
    assert not ch11.check_hypot(answer)


def test_hypot_with_one_input_is_reported_without_raising():
    assert not ch11.check_hypot(Softplus)


# ----------------------------------------------------------------------------- exercise 2

def test_prediction_right_in_several_forms():
    assert ch11.check_prediction(9, 9)
    assert ch11.check_prediction(9.0, [9.0])
    assert ch11.check_prediction(mg.tensor([9.0]), mg.tensor(9.0))


@pytest.mark.parametrize("y_value, x_grad", [
    (9, 6),      # the true derivative of x * x
    (9, 12),     # doubled both paths
    (18, 9),     # thinks forward doubles too
    (6, 9),
    (None, 9),
    (MISSING, MISSING),
    ("nine", "nine"),
    ([9, 9], mg.ones(2)),
])
def test_prediction_wrong_or_missing(y_value, x_grad):
    result = ch11.check_prediction(y_value, x_grad)
    assert not result
    assert repr(result).startswith("✗")


def test_prediction_hints_do_not_give_the_answer():
    text = repr(ch11.check_prediction(1, 1))
    assert "0 of 2 parts right" in text
    assert "9" not in text


def test_prediction_agrees_with_pytorch():
    torch = pytest.importorskip("torch")

    class Doubler(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad_output):
            return 2 * grad_output

    x = torch.tensor([3.0], requires_grad=True)
    y = Doubler.apply(x) * x
    y.backward()
    assert ch11.check_prediction(y.item(), x.grad.item())


def test_checks_leave_grad_mode_on():
    for cls in (HypotOneGradient, HypotWrongForward, Softplus):
        ch11.check_hypot(cls)
    assert mg.is_grad_enabled()
