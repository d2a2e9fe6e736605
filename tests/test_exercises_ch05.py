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
