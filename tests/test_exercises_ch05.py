"""The chapter 5 checks accept the right answers, in every form a learner may give them, and
reject wrong ones without raising."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch05


# ------------------------------------------------------------------ exercise 1

@pytest.mark.parametrize("answer", [(2, 4, 3), [2, 4, 3], mg.Size([2, 4, 3]),
                                    np.array([2, 4, 3])])
def test_broadcast_shape_accepts_the_shape(answer):
    result = ch05.check_broadcast_shape(answer)
    assert result and repr(result).startswith("✓")


def test_broadcast_shape_is_what_numpy_says():
    assert np.broadcast_shapes(*ch05.BROADCAST_SHAPES) == (2, 4, 3)


@pytest.mark.parametrize("answer", [(2, 1, 3), (4, 3), (2, 3, 4), (8, 3), (4, 2, 3)])
def test_broadcast_shape_rejects_wrong_shapes(answer):
    result = ch05.check_broadcast_shape(answer)
    assert not result and repr(result).startswith("✗") and "Hint" in result.message


@pytest.mark.parametrize("answer", [None, MISSING, ..., "2, 4, 3", 7, mg.ones(2, 4, 3)])
def test_broadcast_shape_rejects_non_answers_without_raising(answer):
    assert not ch05.check_broadcast_shape(answer)


def test_broadcast_shape_hint_does_not_give_the_answer():
    for answer in [(2, 1, 3), (4, 3)]:
        assert "(2, 4, 3)" not in ch05.check_broadcast_shape(answer).message


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
