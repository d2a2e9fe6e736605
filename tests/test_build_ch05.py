"""Chapter 5's build exercises: ``sum_to(grad, shape)`` (the backward of broadcasting, in
place of ``formulas.sum_to``) and ``mm_backward(grad, a, b)`` (the gradients of ``A @ B``,
in place of the backward of ``MmBackward0`` and ``AddmmBackward0``)."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import teach
from minigrad.ops import formulas, linalg

from build_cells import solution


# ------------------------------------------------------------------ wrong pieces

def returns_grad(grad, shape):
    """No unbroadcast at all."""
    return grad


def leading_only(grad, shape):
    """Sums the dimensions added on the left, not the stretched ones."""
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))


def no_keepdims(grad, shape):
    """Sums the stretched dimensions away instead of keeping them with size 1."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1))


def averages(grad, shape):
    """The right shape, but a mean instead of a sum."""
    grad = grad.mean(axis=tuple(range(grad.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.mean(axis=stretched, keepdims=True)


def untransposed(grad, a, b):
    """grad @ b instead of grad @ b.T."""
    return grad @ b, a.T @ grad


def untransposed_when_it_fits(grad, a, b):
    """grad @ b where the shapes allow it (square b): only the numbers can tell."""
    return (grad @ b if b.shape[0] == b.shape[1] else grad @ b.T), a.T @ grad


def swapped(grad, a, b):
    return a.T @ grad, grad @ b.T


def transposed_product(grad, a, b):
    """grad.T @ a for B: B's shape transposed."""
    return grad @ b.T, grad.T @ a


def linear_layer():
    """The chapter's linear layer by hand (X @ W + b) and an nn.Linear; their gradients."""
    rng = np.random.default_rng(0)
    X = mg.tensor(rng.normal(size=(4, 3)).astype(np.float32))
    W = mg.tensor(rng.normal(size=(3, 2)).astype(np.float32), requires_grad=True)
    b = mg.zeros(2, requires_grad=True)
    ((X @ W + b) ** 2).sum().backward()
    weight = mg.tensor(rng.normal(size=(2, 3)).astype(np.float32), requires_grad=True)
    bias = mg.tensor(rng.normal(size=2).astype(np.float32), requires_grad=True)
    (mg.nn.functional.linear(X, weight, bias) ** 2).sum().backward()
    return [t.grad.numpy().copy() for t in (W, b, weight, bias)]


# ------------------------------------------------------------------ sum_to

def test_the_notebooks_sum_to_passes():
    result = teach.check_piece("unbroadcast", solution("05", "sum_to"))
    assert result, result
    assert "200 random shapes" in result.message


@pytest.mark.parametrize("wrong, words", [
    (returns_grad, ["returned shape (2, 4, 3); expected (4, 3)", "added dimensions on the left"]),
    (leading_only, ["returned shape (4, 3); expected (4, 1)", "size 1", "summed"]),
    (no_keepdims, ["returned shape (4,); expected (4, 1)", "size 1", "keepdims"]),
    (averages, ["not the numbers", "sum of the gradients of every copy"]),
])
def test_a_wrong_sum_to_fails_and_says_why(wrong, words):
    result = teach.check_piece("unbroadcast", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_a_sum_to_that_changes_grad_in_place_fails():
    def in_place(grad, shape):
        result = solution("05", "sum_to")(grad, shape)
        grad[...] = 0
        return result
    result = teach.check_piece("unbroadcast", in_place)
    assert not result and "changed grad itself" in result.message


def test_sum_to_not_written_yet_and_minigrads_own_runs():
    result = teach.check_piece("unbroadcast", None)
    assert not result and "not written yet" in result.message
    own, want = formulas.sum_to, linear_layer()
    with teach.use(unbroadcast=None):
        assert formulas.sum_to is own
        got = linear_layer()
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_use_plugs_sum_to_in_and_puts_minigrads_own_back():
    own = formulas.sum_to
    reference = solution("05", "sum_to")
    calls = []

    def counting(grad, shape):
        calls.append((grad.shape, shape))
        return reference(grad, shape)
    want = linear_layer()
    with teach.use(unbroadcast=counting):
        assert formulas.sum_to is not own
        got = linear_layer()
    assert ((4, 2), (2,)) in calls  # the bias of X @ W + b and of the linear layer
    assert all(np.allclose(g, w) for g, w in zip(got, want))
    assert formulas.sum_to is own
    with pytest.raises(KeyError):
        with teach.use(unbroadcast=counting):
            {}["missing"]
    assert formulas.sum_to is own


def test_a_wrong_shape_stops_backward_with_a_clear_error():
    with teach.use(unbroadcast=returns_grad):
        with pytest.raises(ValueError, match="your sum_to turned a gradient of shape"):
            linear_layer()


def test_sum_to_leaves_create_graph_to_minigrads_own():
    calls = []
    with teach.use(unbroadcast=lambda grad, shape: calls.append(shape)):
        b = mg.tensor([1.0, 2.0], requires_grad=True)
        loss = ((mg.ones(3, 2) + b) ** 2).sum()
        (grad,) = mg.autograd.grad(loss, b, create_graph=True)
    assert calls == [] and grad.tolist() == [12.0, 18.0] and grad.grad_fn is not None


# ------------------------------------------------------------------ mm_backward

def test_the_notebooks_mm_backward_passes():
    result = teach.check_piece("matmul_backward", solution("05", "mm_backward"))
    assert result, result
    assert "150 random ones" in result.message and "linear layers" in result.message


@pytest.mark.parametrize("wrong, words", [
    (untransposed, ["raised ValueError", "grad_a must have A's shape (2, 3)", "transposed"]),
    (untransposed_when_it_fits, ["grad_a is", "not the numbers", "transpose"]),
    (swapped, ["swapped", "A's first"]),
    (transposed_product, ["grad_b has shape (2, 3); expected (3, 2)", "Line up the shapes"]),
])
def test_a_wrong_mm_backward_fails_and_says_why(wrong, words):
    result = teach.check_piece("matmul_backward", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_mm_backward_must_return_two_gradients():
    result = teach.check_piece("matmul_backward", lambda grad, a, b: grad @ b.T)
    assert not result and "return two gradients" in result.message


def test_mm_backward_not_written_yet_and_minigrads_own_runs():
    result = teach.check_piece("matmul_backward", None)
    assert not result and "not written yet" in result.message
    want = linear_layer()
    with teach.use(matmul_backward=None, unbroadcast=None):
        got = linear_layer()
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_use_plugs_mm_backward_into_both_nodes_and_puts_them_back():
    own = linalg.MmBackward0.backward, linalg.AddmmBackward0.backward
    reference = solution("05", "mm_backward")
    calls = []

    def counting(grad, a, b):
        calls.append((a.shape, b.shape))
        return reference(grad, a, b)
    want = linear_layer()
    with teach.use(matmul_backward=counting):
        got = linear_layer()
    assert calls == [((4, 3), (3, 2)), ((4, 3), (3, 2))]  # X @ W (Mm), then linear (Addmm)
    assert all(np.allclose(g, w) for g, w in zip(got, want))
    assert (linalg.MmBackward0.backward, linalg.AddmmBackward0.backward) == own
    with pytest.raises(RuntimeError):
        with teach.use(matmul_backward=counting):
            raise RuntimeError("inside the block")
    assert (linalg.MmBackward0.backward, linalg.AddmmBackward0.backward) == own


def test_the_wrong_piece_plugged_in_gives_the_wrong_numbers():
    want = linear_layer()
    with teach.use(matmul_backward=lambda grad, a, b: (grad @ b.T, 2 * a.T @ grad)):
        got = linear_layer()
    assert np.allclose(got[0], 2 * want[0]) and np.allclose(got[1], want[1])


def test_mm_backward_leaves_create_graph_to_minigrads_own():
    calls = []
    with teach.use(matmul_backward=lambda grad, a, b: calls.append(a)):
        A = mg.tensor([[1.0, 2.0]], requires_grad=True)
        B = mg.tensor([[3.0], [4.0]], requires_grad=True)
        (grad,) = mg.autograd.grad((A @ B).sum() ** 2, A, create_graph=True)
    assert calls == [] and grad.tolist() == [[66.0, 88.0]] and grad.grad_fn is not None


def test_the_checks_keep_the_random_state():
    mg.manual_seed(3)
    expected = mg.rand(3).tolist()
    mg.manual_seed(3)
    teach.check_piece("unbroadcast", solution("05", "sum_to"))
    teach.check_piece("matmul_backward", solution("05", "mm_backward"))
    assert mg.rand(3).tolist() == expected


def test_a_sum_to_that_changes_the_dtype_or_returns_a_tensor_is_told_so():
    def in_float64(grad, shape):
        out = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
        for axis, size in enumerate(shape):
            if size == 1 and out.shape[axis] != 1:
                out = out.sum(axis=axis, keepdims=True)
        return out.astype(np.float64)

    result = teach.check_piece("unbroadcast", in_float64)
    assert not result and "float64 numbers for a float32 gradient" in result.message
    result = teach.check_piece("unbroadcast", lambda grad, shape: mg.tensor(grad))
    assert not result and "returned a Tensor; return a numpy array" in result.message
