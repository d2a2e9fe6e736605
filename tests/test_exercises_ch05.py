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

def test_bias_grad_is_the_row_sums_of_the_weights():
    expected = np.array([[6.0], [15.0]])
    np.testing.assert_allclose(ch05.bias_grad().numpy(), expected)
    w = mg.tensor(ch05.BIAS_WEIGHTS)
    for answer in [w.sum(dim=1, keepdim=True), [[6.0], [15.0]], expected,
                   mg.tensor([[6.0], [15.0]], dtype=mg.float64)]:
        assert ch05.check_bias_grad(answer)


@pytest.mark.parametrize("answer", [
    [6.0, 15.0],                 # right numbers, but not b's shape (2, 1)
    [[5.0], [7.0], [9.0]],       # column sums: the gradient of a per-column bias
    [[3.0], [3.0]],              # counted the uses, forgot the weights
    [[6.0], [14.0]],
])
def test_bias_grad_rejects_wrong_answers(answer):
    result = ch05.check_bias_grad(answer)
    assert not result and "Hint" in result.message


def test_bias_grad_rejects_non_answers_without_raising():
    for answer in [None, MISSING, "6, 15"]:
        assert not ch05.check_bias_grad(answer)


# ------------------------------------------------------------------ exercise 3

def test_matmul_grad_is_ones_times_b_transposed():
    B = np.array(ch05.MATMUL_B)
    expected = np.ones((2, 2)) @ B.T
    np.testing.assert_allclose(ch05.matmul_grad().numpy(), expected)
    for answer in [expected, expected.tolist(), mg.ones(2, 2) @ mg.tensor(ch05.MATMUL_B).T]:
        assert ch05.check_matmul_grad(answer)


def test_matmul_grad_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    A = torch.tensor(ch05.MATMUL_A, requires_grad=True)
    (A @ torch.tensor(ch05.MATMUL_B)).sum().backward()
    assert ch05.check_matmul_grad(A.grad.numpy())


@pytest.mark.parametrize("make", [
    lambda A, B: np.ones((2, 2)) @ B,          # B instead of B.T (shapes do not even fit)
    lambda A, B: A.T @ np.ones((2, 2)),        # dloss/dB's formula
    lambda A, B: np.ones((2, 3)),              # forgot B
    lambda A, B: A,                            # thought of d(A @ B)/dB
])
def test_matmul_grad_rejects_wrong_answers(make):
    A, B = np.array(ch05.MATMUL_A), np.array(ch05.MATMUL_B)
    try:
        answer = make(A, B)
    except ValueError:  # a wrong formula whose shapes do not fit: nothing to check
        return
    assert not ch05.check_matmul_grad(answer)


def test_matmul_grad_rejects_non_answers_without_raising():
    for answer in [None, MISSING, object()]:
        assert not ch05.check_matmul_grad(answer)


# ------------------------------------------------------------------ exercise 4

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
