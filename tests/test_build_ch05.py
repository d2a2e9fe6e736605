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


def _summed(grad, shape):
    """A right sum_to, as a student writes it (the wrong pieces below start from it)."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def into_new_zeros(grad, shape):
    """The sum written into np.zeros(shape): float64 for a float32 gradient."""
    out = np.zeros(shape)
    out += _summed(grad, shape)
    return out


def as_a_tensor(grad, shape):
    """A minigrad tensor instead of a numpy array."""
    return mg.tensor(_summed(grad, shape))


def zeroes_grad_in_place(grad, shape):
    """Right numbers, but grad itself is overwritten (it may be another input's too)."""
    result = _summed(grad, shape).copy()
    grad[...] = 0
    return result


def sums_the_last_dimensions(grad, shape):
    """Aligns the shapes on the left: sums grad's last dimensions instead of its first."""
    grad = grad.sum(axis=tuple(range(len(shape), grad.ndim)))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


def stretched_axes_first(grad, shape):
    """Sums the size-1 axes first, numbered as in shape, while grad still has the added
    dimensions in front: the wrong axes."""
    grad = grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))


def takes_one_copy(grad, shape):
    """Indexes one copy instead of adding all of them."""
    while grad.ndim > len(shape):
        grad = grad[0]
    return grad[tuple(slice(0, 1) if n == 1 else slice(None) for n in shape)]


def one_added_dimension(grad, shape):
    """Sums away one added dimension, not all of them."""
    if grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad


def one_axis_at_a_time(grad, shape):
    """Sums the size-1 axes one by one without keepdims: the later axes shift."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    for axis, size in enumerate(shape):
        if size == 1:
            grad = grad.sum(axis=axis)
    return grad.reshape(shape)


def sums_added_then_reshapes(grad, shape):
    """Sums the dimensions broadcasting added, then reshapes to the input's shape."""
    return grad.sum(axis=tuple(range(grad.ndim - len(shape)))).reshape(shape)


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


def _batch_sum(g, shape):
    """What a student writes for the batch sum (section 5's two steps)."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def _t(x):
    return np.swapaxes(x, -1, -2)


def lectures_formulas_with_T(grad, a, b):
    """The two formulas of the lecture as they are: .T reverses every axis of a batch."""
    return _batch_sum(grad @ b.T, a.shape), _batch_sum(a.T @ grad, b.shape)


def no_batch_sum(grad, a, b):
    """Transposes right, but the gradients keep the batch dimensions."""
    return grad @ _t(b), _t(a) @ grad


def batch_mean(grad, a, b):
    """A mean over the batch instead of a sum."""
    def mean_to(g, shape):
        while g.ndim > len(shape):
            g = g.mean(axis=0)
        for axis, size in enumerate(shape):
            if size == 1 and g.shape[axis] != 1:
                g = g.mean(axis=axis, keepdims=True)
        return g
    return mean_to(grad @ _t(b), a.shape), mean_to(_t(a) @ grad, b.shape)


def leading_batch_only(grad, a, b):
    """Sums the batch dimensions an operand lacks, not those where it has size 1."""
    def drop(g, shape):
        while g.ndim > len(shape):
            g = g.sum(axis=0)
        return g
    return drop(grad @ _t(b), a.shape), drop(_t(a) @ grad, b.shape)


def every_batch_summed(grad, a, b):
    """Sums over every batch dimension, also an operand's own batch."""
    def matrices(g):
        return g.sum(axis=tuple(range(g.ndim - 2)))
    return matrices(grad @ _t(b)), matrices(_t(a) @ grad)


def three_axes_written_out(grad, a, b):
    """transpose(0, 2, 1) for a batch: fits arrays of three dimensions only."""
    def t(x):
        return x.T if x.ndim == 2 else x.transpose(0, 2, 1)
    return _batch_sum(grad @ t(b), a.shape), _batch_sum(t(a) @ grad, b.shape)


def swaps_axes_0_and_1(grad, a, b):
    """05a's transpose(0, 1) in numpy: right for a matrix, moves a batch dimension."""
    return (_batch_sum(grad @ np.swapaxes(b, 0, 1), a.shape),
            _batch_sum(np.swapaxes(a, 0, 1) @ grad, b.shape))


def flattens_the_batch(grad, a, b):
    """Stacks the batch into rows (right for X @ W only), transposing the last two axes."""
    rows_a, rows_g = a.reshape(-1, a.shape[-1]), grad.reshape(-1, grad.shape[-1])
    return (rows_g @ np.swapaxes(b, -1, -2)).reshape(a.shape), rows_a.T @ rows_g


def flattens_the_batch_with_T(grad, a, b):
    rows_a, rows_g = a.reshape(-1, a.shape[-1]), grad.reshape(-1, grad.shape[-1])
    return (rows_g @ b.T).reshape(a.shape), rows_a.T @ rows_g


def with_np_dot(grad, a, b):
    """np.dot instead of @: not a batch of products on more than two dimensions."""
    return (_batch_sum(np.dot(grad, _t(b)), a.shape),
            _batch_sum(np.dot(_t(a), grad), b.shape))


def into_float64_zeros(grad, a, b):
    """Gradients written into np.zeros(shape): float64 for float32 operands."""
    grad_a, grad_b = np.zeros(a.shape), np.zeros(b.shape)
    grad_a += _batch_sum(grad @ _t(b), a.shape)
    grad_b += _batch_sum(_t(a) @ grad, b.shape)
    return grad_a, grad_b


def as_tensors(grad, a, b):
    return (mg.tensor(_batch_sum(grad @ _t(b), a.shape)),
            mg.tensor(_batch_sum(_t(a) @ grad, b.shape)))


def scales_grad_in_place(grad, a, b):
    """Right numbers, but grad is changed in place on the way."""
    grad *= 2
    return _batch_sum(grad @ _t(b), a.shape) / 2, _batch_sum(_t(a) @ grad, b.shape) / 2


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
    (averages, ["not the numbers", "sum of the gradients of every copy", "a mean"]),
    (into_new_zeros, ["float64 numbers for a float32 gradient", "keep grad's dtype"]),
    (as_a_tensor, ["returned a Tensor; return a numpy array"]),
    (zeroes_grad_in_place, ["changed grad itself", "return a new one"]),
    (sums_the_last_dimensions, ["returned shape (2, 4); expected (4, 3)",
                                "aligns shapes on the RIGHT"]),
    (stretched_axes_first, ["returned shape (1, 3); expected (4, 1)", "size 1"]),
    (takes_one_copy, ["not the numbers", "one copy", "add the gradients of all the copies"]),
    (one_added_dimension, ["returned shape (4, 3); expected (3,)",
                           "added dimensions on the left"]),
    (one_axis_at_a_time, ["raised ValueError", "cannot reshape", "renumbers the axes"]),
    (sums_added_then_reshapes, ["raised ValueError", "cannot reshape array of size 12",
                                "leaves 12 numbers, but the input has 4", "stretched",
                                "summed into that number", "cannot add the copies up"]),
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
    assert "100 random batched ones" in result.message


@pytest.mark.parametrize("wrong, words", [
    (untransposed, ["raised ValueError", "grad_a must have A's shape (2, 3)", "transposed"]),
    (untransposed_when_it_fits, ["grad_a is", "not the numbers", "transpose"]),
    (swapped, ["swapped", "A's first"]),
    (transposed_product, ["grad_b has shape (2, 3); expected (3, 2)", "Line up the shapes"]),
    (lectures_formulas_with_T, ["a batch of inputs times one weight", "raised ValueError",
                                ".T reverses EVERY axis", "last two axes"]),
    (no_batch_sum, ["grad_b has shape (2, 3, 2); expected (3, 2)",
                    "used by every product of the batch", "sum_to"]),
    (batch_mean, ["a mean over the batch", "add them"]),
    (leading_batch_only, ["a batch of one times a batch",
                          "grad_a has shape (2, 4, 3); expected (1, 4, 3)",
                          "used by every product of the batch"]),
    (every_batch_summed, ["grad_a has shape (4, 3); expected (2, 4, 3)",
                          "batch dimensions are not", "keeping the 1"]),
    (three_axes_written_out, ["two batch dimensions", "raised ValueError", "axes don't match",
                              "none, one or two batch dimensions", "last two axes"]),
    (swaps_axes_0_and_1, ["raised ValueError", "transposing axes 0 and 1 moves a batch "
                                               "dimension"]),
    (with_np_dot, ["np.dot does not"]),
    (flattens_the_batch, ["one matrix times a batch", "cannot reshape", "Flattening the "
                          "batch into rows", "batch dimensions of its own", "Keep the batch"]),
    (flattens_the_batch_with_T, ["one matrix times a batch", "raised ValueError",
                                 "Flattening the batch into rows", "Keep the batch"]),
    (into_float64_zeros, ["grad_a is float64", "float32", "np.ones(shape) without dtype"]),
    (as_tensors, ["returned a Tensor for grad_a; return a numpy array"]),
    (scales_grad_in_place, ["changed grad itself"]),
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


# ------------------------------------------------------------------ minigrad's own is refused

def test_minigrads_own_sum_to_a_wrapper_and_a_callable_calling_it_are_refused():
    result = teach.check_piece("unbroadcast", formulas.sum_to)
    assert not result and "this is minigrad's own ops.formulas.sum_to" in result.message

    def wrapper(grad, shape):
        return formulas.sum_to(grad, shape)
    result = teach.check_piece("unbroadcast", wrapper)
    assert not result and "it uses minigrad's own ops.formulas.sum_to" in result.message

    def helper(grad, shape):
        return formulas.sum_to(grad, tuple(shape))

    def through_a_helper(grad, shape):
        return helper(grad, shape)
    result = teach.check_piece("unbroadcast", through_a_helper)
    assert not result and "minigrad's own ops.formulas.sum_to" in result.message

    class Summer:
        def __call__(self, grad, shape):
            return formulas.sum_to(grad, shape)
    result = teach.check_piece("unbroadcast", Summer())
    assert not result and "minigrad's own ops.formulas.sum_to" in result.message


def test_minigrads_own_sum_to_imported_by_name_is_refused():
    from minigrad.ops.formulas import sum_to as summed
    from minigrad.ops.op import _shaped

    def wrapper(grad, shape):
        return summed(grad, shape)
    assert "minigrad's own ops.formulas.sum_to" in teach.check_piece("unbroadcast", wrapper).message
    result = teach.check_piece("unbroadcast", lambda grad, shape: _shaped(grad, 1, shape))
    assert not result and "minigrad's own ops.op._shaped" in result.message


@pytest.mark.parametrize("own, label", [
    (linalg.MmBackward0.backward, "MmBackward0.backward"),
    (linalg.MatmulBackward0.backward, "MatmulBackward0.backward"),
    (linalg.AddmmBackward0.backward, "AddmmBackward0.backward"),
    (linalg.BmmBackward0.backward, "BmmBackward0.backward"),
    (linalg.MmBackward0, "ops.linalg.MmBackward0"),
])
def test_minigrads_own_mm_backward_is_refused(own, label):
    result = teach.check_piece("matmul_backward", own)
    assert not result and f"this is minigrad's own {label}" in result.message


def test_a_subclass_of_minigrads_node_is_refused():
    class Mine(linalg.MatmulBackward0):
        pass
    result = teach.check_piece("matmul_backward", Mine)
    assert not result and "subclass of minigrad's own ops.linalg.MatmulBackward0" in result.message


@pytest.mark.parametrize("body, label", [
    ("return linalg.MmBackward0.backward(None, grad, a, b)", "ops.linalg.MmBackward0"),
    ("return linalg.MatmulBackward0.backward(node(a, b), grad, a, b)",
     "ops.linalg.MatmulBackward0"),
    ("return grad @ np.swapaxes(b, -1, -2), linalg._right_grad(a, grad, True)",
     "ops.linalg._right_grad"),
    ("return (formulas.sum_to(grad @ np.swapaxes(b, -1, -2), a.shape),\n"
     "            formulas.sum_to(np.swapaxes(a, -1, -2) @ grad, b.shape))", "ops.formulas.sum_to"),
    ("return ch05_build._own_mm_gradients(a, b, grad)",
     "teach.exercises.ch05_build._own_mm_gradients"),
])
def test_a_wrapper_of_minigrads_own_mm_backward_is_refused(body, label):
    from minigrad.teach.exercises import ch05_build
    names = {"np": np, "linalg": linalg, "formulas": formulas, "ch05_build": ch05_build,
             "node": None}
    exec(f"def mm_backward(grad, a, b):\n    {body}\n", names)
    result = teach.check_piece("matmul_backward", names["mm_backward"])
    assert not result and "it uses minigrad's own" in result.message and label in result.message
    assert "the very piece you are asked to write" in result.message


def test_minigrads_own_reached_through_its_modules_is_refused():
    """mg.ops.formulas.sum_to (a chain of modules) or minigrad's autograd inside the piece:
    plugged in, the piece calls itself, and the check says so."""
    names = {"mg": mg}  # a notebook that imported minigrad as mg, and nothing else
    exec("def sum_to(grad, shape):\n    return mg.ops.formulas.sum_to(grad, shape)\n", names)
    result = teach.check_piece("unbroadcast", names["sum_to"])
    assert not result and "it uses minigrad's own ops.formulas.sum_to" in result.message

    def autograd_mm(grad, a, b):
        A, B = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
        (A @ B).backward(mg.tensor(grad))
        return A.grad.numpy(), B.grad.numpy()
    result = teach.check_piece("matmul_backward", autograd_mm)
    assert not result and "it uses minigrad's own backward of a matrix product" in result.message
