"""Chapter 11's exercise checks accept right answers and reject wrong, missing and odd ones,
each with a hint that does not give the solution away, and never raise."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import teach
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

@pytest.fixture
def fresh_predictions():
    """Exercise 2 starts as in a fresh kernel: nothing locked in, nothing revealed."""
    for prediction in (ch11.PREDICTED_Y, ch11.PREDICTED_X_GRAD):
        prediction.reset()
    yield
    for prediction in (ch11.PREDICTED_Y, ch11.PREDICTED_X_GRAD):
        prediction.reset()


def torch_doubler():
    """What PyTorch prints for the exercise's snippet: (y, x.grad)."""
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
    return y.item(), x.grad.item()


def test_the_snippet_agrees_with_pytorch():
    assert ch11.doubler_run() == torch_doubler()


def test_prediction_locked_then_revealed(fresh_predictions):
    y_value, x_grad = torch_doubler()          # the right numbers, from PyTorch itself
    locked = ch11.lock_prediction(y_value, x_grad)
    assert locked and "locked in" in repr(locked) and "right" not in repr(locked)
    result = ch11.reveal_prediction()
    assert result and "all parts right" in repr(result)


@pytest.mark.parametrize("y_value, x_grad, wrong, hint", [
    (9, 6, "x.grad", "two paths"),      # the true derivative of x * x
    (9, 12, "x.grad", "two paths"),     # doubled both paths
    (18, 9, "y", "forward pass"),       # thinks forward doubles too
    (6, 9, "y", "forward pass"),
])
def test_wrong_predictions_fail_at_the_reveal_with_a_hint(fresh_predictions, y_value,
                                                          x_grad, wrong, hint):
    assert ch11.lock_prediction(y_value, x_grad)
    result = ch11.reveal_prediction()
    text = repr(result)
    assert not result and "1 of 2 parts right" in text
    assert f"✗ {wrong}: you predicted" in text and hint in text


@pytest.mark.parametrize("y_value, x_grad", [
    (None, 9), (MISSING, MISSING), ("nine", "nine"), ([9, 9], 9),
    (mg.tensor([9.0]), mg.tensor(9.0)), (np.float64(9.0), 9),
])
def test_missing_or_computed_predictions_are_not_locked(fresh_predictions, y_value, x_grad):
    result = ch11.lock_prediction(y_value, x_grad)
    assert not result and repr(result).startswith("✗")


def test_a_reveal_before_any_lock_fails_and_later_predictions_do_not_count(fresh_predictions):
    assert not ch11.reveal_prediction()
    refused = ch11.lock_prediction(9, 9)       # the answer has been shown: too late
    assert not refused and "shown already" in repr(refused)


def test_lock_messages_do_not_give_the_answer(fresh_predictions):
    text = repr(ch11.lock_prediction(1, 1))
    assert "9" not in text


def test_checks_leave_grad_mode_on():
    for cls in (HypotOneGradient, HypotWrongForward, Softplus):
        ch11.check_hypot(cls)
    assert mg.is_grad_enabled()


# ----------------------------------------------------------------------------- exercise 3

def tape_gradient(w, micro_batches):
    """The notebook's answer: a fresh tape per micro-batch, the gradients added by hand."""
    total = None
    for x, y in micro_batches:
        with teach.GradientTape() as tape:
            loss = ((x @ w - y) ** 2).mean()
        grad = tape.gradient(loss, w)
        total = grad if total is None else total + grad
    return total


def one_persistent_tape(w, micro_batches):
    with teach.GradientTape(persistent=True) as tape:
        losses = [((x @ w - y) ** 2).mean() for x, y in micro_batches]
    return sum(tape.gradient(loss, w) for loss in losses)


def one_tape_for_the_sum(w, micro_batches):
    with teach.GradientTape() as tape:
        total = sum(((x @ w - y) ** 2).mean() for x, y in micro_batches)
    return tape.gradient(total, w)


def with_autograd_grad(w, micro_batches):
    """PyTorch's own "return, don't store" is fine too: w.grad stays None."""
    return sum(mg.autograd.grad(((x @ w - y) ** 2).mean(), w)[0] for x, y in micro_batches)


def non_persistent_tape_twice(w, micro_batches):
    with teach.GradientTape() as tape:
        losses = [((x @ w - y) ** 2).mean() for x, y in micro_batches]
    return sum(tape.gradient(loss, w) for loss in losses)


def forgot_to_add(w, micro_batches):
    for x, y in micro_batches:
        with teach.GradientTape() as tape:
            loss = ((x @ w - y) ** 2).mean()
        grad = tape.gradient(loss, w)
    return grad


def first_only(w, micro_batches):
    return forgot_to_add(w, micro_batches[:1])


def averaged(w, micro_batches):
    return tape_gradient(w, micro_batches) / len(micro_batches)


def used_backward(w, micro_batches):
    for x, y in micro_batches:
        ((x @ w - y) ** 2).mean().backward()
    return w.grad


def loss_outside_the_block(w, micro_batches):
    total = 0
    for x, y in micro_batches:
        loss = ((x @ w - y) ** 2).mean()
        with teach.GradientTape() as tape:
            pass
        total = total + tape.gradient(loss, w)
    return total


def only_two_batches(w, micro_batches):
    return tape_gradient(w, micro_batches[:2])


@pytest.mark.parametrize("answer", [tape_gradient, one_persistent_tape, one_tape_for_the_sum,
                                    with_autograd_grad])
def test_tape_accumulation_right_answers(answer):
    result = ch11.check_tape_accumulation(answer)
    assert result and repr(result).startswith("✓")


def test_tape_accumulation_equals_grad_accumulation():
    """What the check compares with: .grad after one backward() per micro-batch."""
    batches = ch11._micro_batches(np.random.default_rng(0), 2)
    w = mg.tensor(ch11.TAPE_W, requires_grad=True)
    np.testing.assert_allclose(tape_gradient(w, batches).numpy(),
                               ch11.accumulated_grad(batches), rtol=1e-6)
    assert w.grad is None


@pytest.mark.parametrize("answer, words", [
    (non_persistent_tape_twice, ["twice", "persistent=True"]),
    (forgot_to_add, ["one micro-batch only", "add them up"]),
    (first_only, ["one micro-batch only"]),
    (averaged, ["average", "without dividing"]),
    (used_backward, ["w.grad", "stay None"]),
    (loss_outside_the_block, ["outside", "with block"]),
    (only_two_batches, ["3 micro-batches"]),
])
def test_tape_accumulation_wrong_answers_get_their_hint(answer, words):
    result = ch11.check_tape_accumulation(answer)
    assert not result and repr(result).startswith("✗")
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize("answer", [None, MISSING, ..., 3, "tape_gradient",
                                    lambda w, batches: [1.0, 2.0],
                                    lambda w, batches: None,
                                    lambda w, batches: 1 / 0])
def test_tape_accumulation_non_answers_without_raising(answer):
    assert not ch11.check_tape_accumulation(answer)


def test_tape_accumulation_hints_do_not_give_the_answer():
    batches = ch11._micro_batches(np.random.default_rng(31), 2)
    right = ch11.accumulated_grad(batches)
    for answer in (forgot_to_add, averaged, used_backward, lambda w, b: w * 0):
        message = ch11.check_tape_accumulation(answer).message
        assert not any(f"{value:.4f}" in message for value in right), message


def test_tape_accumulation_leaves_grad_mode_and_random_state():
    state = mg.default_generator.get_state()
    for answer in (tape_gradient, non_persistent_tape_twice, used_backward):
        ch11.check_tape_accumulation(answer)
    assert mg.is_grad_enabled()
    assert mg.default_generator.get_state() == state
