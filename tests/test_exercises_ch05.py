"""The chapter 5 checks accept the right answers, in every form a learner may give them, and
reject wrong ones without raising."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch05


# ------------------------------------------------------------------ exercise 1

@pytest.fixture
def prediction():
    """Exercise 1 as a fresh kernel finds it: nothing locked, nothing revealed."""
    ch05.broadcast_prediction.reset()
    yield ch05.broadcast_prediction
    ch05.broadcast_prediction.reset()


def test_broadcast_shape_is_what_numpy_and_torch_say():
    expected = np.broadcast_shapes(*ch05.BROADCAST_SHAPES)
    assert ch05.broadcast_prediction.measure()[0] == expected
    torch = pytest.importorskip("torch")
    assert tuple((torch.ones(2, 1, 3) + torch.ones(4, 1)).shape) == expected


@pytest.mark.parametrize("answer", [(2, 4, 3), [2, 4, 3]])
def test_the_right_shape_locked_first_is_right(prediction, answer):
    assert prediction.lock(answer)
    result = prediction.reveal()
    assert result and repr(result).startswith("✓")


@pytest.mark.parametrize("answer, words", [
    ((2, 1, 3), ["aligned on the right"]), ((2, 3, 4), ["aligned on the right"]),
    ((4, 2, 3), ["aligned on the right"]), ((4, 3), ["2 dimensions", "longer"]),
    ((8, 3), ["2 dimensions"]), ((2, 4, 1, 3), ["4 dimensions"]),
])
def test_a_wrong_shape_gets_the_hint_of_its_mistake_and_not_the_answer_before_the_lock(
        prediction, answer, words):
    locked = prediction.lock(answer)
    assert locked and "(2, 4, 3)" not in locked.message
    result = prediction.reveal()
    assert not result and repr(result).startswith("✗")
    for word in words:
        assert word in result.message


@pytest.mark.parametrize("answer", [None, MISSING, ..., "2, 4, 3", 7, mg.ones(2, 4, 3),
                                    mg.Size([2, 4, 3]), np.array([2, 4, 3]),
                                    (mg.ones(2, 1, 3) + mg.ones(4, 1)).shape])
def test_computed_shapes_and_non_answers_are_refused_without_raising(prediction, answer):
    result = prediction.lock(answer)
    assert not result and prediction.locked is None


def test_a_shape_changed_after_the_sum_was_revealed_does_not_count(prediction):
    assert prediction.lock((4, 3))
    assert not prediction.reveal()
    assert not prediction.lock((2, 4, 3))
    assert not prediction.reveal()


# ------------------------------------------------------------------ exercise 2

def test_gradients_add_accepts_three_w_squared_plus_four():
    w = np.array(ch05.REUSED)
    expected = 3 * w ** 2 + 4
    np.testing.assert_allclose(ch05.reused_grad().numpy(), [16.0, 7.0])
    for answer in [expected, [16.0, 7.0], mg.tensor([16.0, 7.0])]:
        assert ch05.check_gradients_add(answer)


@pytest.mark.parametrize("answer", [
    [12.0, 3.0],   # 3 w² only: forgot the branch 4 * w
    [8.0, 5.0],    # w² + 4: counted one use of w in w * w * w
    [4.0, 4.0],    # the second branch only
    [16.0],        # wrong shape
])
def test_gradients_add_rejects_wrong_answers(answer):
    result = ch05.check_gradients_add(answer)
    assert not result and "Hint" in result.message


def test_gradients_add_rejects_non_answers_without_raising():
    for answer in [None, MISSING]:
        assert not ch05.check_gradients_add(answer)


# ------------------------------------------------------------------ exercise 3

def _exercise_y():
    """The exercise's x and y = (M @ x) * x, as the notebook builds them."""
    x = mg.tensor(ch05.VJP_X, requires_grad=True)
    return x, ch05.vjp_function(x)


def test_vjp_accepts_backward_with_gradient():
    x, y = _exercise_y()
    y.backward(gradient=mg.tensor(ch05.VJP_V))
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -2.0, 9.0])
    for answer in [x.grad, x.grad.numpy(), x.grad.tolist()]:
        result = ch05.check_vjp(answer)
        assert result and repr(result).startswith("✓")


def test_vjp_is_the_gradient_of_the_weighted_number_and_v_times_the_jacobian():
    x, y = _exercise_y()
    (y[0] - 2 * y[2]).backward()
    assert ch05.check_vjp(x.grad)
    J = mg.autograd.functional.jacobian(ch05.vjp_function, mg.tensor(ch05.VJP_X))
    assert ch05.check_vjp(mg.tensor(ch05.VJP_V) @ J)


def test_vjp_rejects_jacobian_times_v_with_its_hint():
    J = mg.autograd.functional.jacobian(ch05.vjp_function, mg.tensor(ch05.VJP_X))
    result = ch05.check_vjp(J @ mg.tensor(ch05.VJP_V))
    assert not result and "J v" in result.message and "vᵀ J" in result.message


def test_vjp_rejects_forgetting_gradient_by_summing():
    x, y = _exercise_y()
    y.sum().backward()
    result = ch05.check_vjp(x.grad)
    assert not result and "y.sum()" in result.message


def test_vjp_rejects_v_multiplied_into_the_summed_gradient():
    x, y = _exercise_y()
    y.sum().backward()
    result = ch05.check_vjp(mg.tensor(ch05.VJP_V) * x.grad)
    assert not result and "diagonal" in result.message


@pytest.mark.parametrize("answer", [[3.0, 2.0, 9.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
def test_vjp_rejects_other_wrong_vectors_with_a_hint(answer):
    result = ch05.check_vjp(answer)
    assert not result and "Hint" in result.message and "gradient=" in result.message


@pytest.mark.parametrize("answer", [None, MISSING, ..., "3, -2, 9", [[3.0, -2.0, 9.0]],
                                    [3.0, -2.0]])
def test_vjp_rejects_non_answers_without_raising(answer):
    assert not ch05.check_vjp(answer)


def test_vjp_wrong_shape_says_one_entry_per_input():
    result = ch05.check_vjp(mg.autograd.functional.jacobian(ch05.vjp_function,
                                                            mg.tensor(ch05.VJP_X)))
    assert not result and "one entry per input" in result.message


def test_vjp_hints_do_not_give_the_answer():
    for answer in ([1.0, 2.0, 8.0], [5.0, 14.0, -3.0], [5.0, 0.0, 6.0], [1.0, 1.0, 1.0]):
        message = ch05.check_vjp(answer).message
        assert "9" not in message.replace(str(answer), "") and "-2" not in message


def test_vjp_cannot_be_copied_from_the_chapter():
    """The chapter prints the VJPs [2, 2, 12], [-1, -1, 4] and [5, 4, 4]: none passes."""
    for printed in ([2.0, 2.0, 12.0], [-1.0, -1.0, 4.0], [5.0, 4.0, 4.0]):
        assert not ch05.check_vjp(printed)


def test_vjp_notebook_states_the_checked_numbers():
    """The exercise's text in the notebook gives the M, x and v the check uses."""
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "notebooks" / "05c_reuse_and_vjp.ipynb"
    cells = json.loads(path.read_text())["cells"]
    text = next("".join(c["source"]) for c in cells
                if "".join(c["source"]).startswith("### Exercise 3"))
    assert "[[2., 0., 1.], [1., 3., 0.], [0., -1., 1.]]" in text
    assert ch05.VJP_M == [[2.0, 0.0, 1.0], [1.0, 3.0, 0.0], [0.0, -1.0, 1.0]]
    assert "[1., 2., -1.]" in text and ch05.VJP_X == [1.0, 2.0, -1.0]
    assert "y[0] - 2 * y[2]" in text and ch05.VJP_V == [1.0, 0.0, -2.0]


# ------------------------------------------------------------------ 05b's prediction: b.grad[0]

@pytest.fixture
def bias_grad():
    ch05.bias_grad_prediction.reset()
    yield ch05.bias_grad_prediction
    ch05.bias_grad_prediction.reset()


def torch_bias_grad():
    torch = pytest.importorskip("torch")
    b = torch.tensor([1., 2., 3.], requires_grad=True)
    (torch.tensor(ch05.BIAS_WEIGHTS) * (torch.tensor(ch05.BIAS_X) + b)).sum().backward()
    return b.grad[0].item()


def test_bias_grad_prediction_measures_pytorchs_gradient(bias_grad):
    assert bias_grad.measure()[0] == torch_bias_grad()
    assert bias_grad.lock(torch_bias_grad())
    assert bias_grad.reveal()


@pytest.mark.parametrize("wrong, words", [(4, "passes back its weight"), (3, "down that column"),
                                          (1, "used once in every row")])
def test_bias_grad_prediction_names_the_mistake(bias_grad, wrong, words):
    assert bias_grad.lock(wrong)
    result = bias_grad.reveal()
    assert not result and words in result.message


def test_bias_grad_prediction_refuses_the_gradient_itself(bias_grad):
    b = mg.tensor([1., 2., 3.], requires_grad=True)
    (mg.tensor(ch05.BIAS_WEIGHTS) * (mg.tensor(ch05.BIAS_X) + b)).sum().backward()
    assert not bias_grad.lock(b.grad[0])
    assert not bias_grad.lock(b.grad.numpy()[0])
    assert bias_grad.locked is None
