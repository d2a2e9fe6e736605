"""Chapter 4's build exercise: ``accumulate(tensor, grad)``, AccumulateGrad's ``+=``, plugged
into minigrad in place of ``Tensor.accumulate_grad``."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import teach
from minigrad.teach.exercises import ch04
from minigrad._tensor import Tensor

from build_cells import solution


def overwrite(tensor, grad):
    """Each gradient replaces the one before (12, 12 instead of 12, 24)."""
    tensor.grad = mg.tensor(grad)


def new_tensor(tensor, grad):
    """The right numbers, but a new tensor at every call (old = x.grad never changes)."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(grad)
    else:
        tensor.grad = tensor.grad + mg.tensor(grad)


def no_copy(tensor, grad):
    """The first gradient kept as it is: two leaves given one array share its memory."""
    if tensor.grad is None:
        tensor.grad = mg.from_numpy(grad)
    else:
        tensor.grad += grad


def forgets(tensor, grad):
    """Never stores anything."""


def as_tensor_alias(tensor, grad):
    """mg.as_tensor keeps the engine's array, as from_numpy does."""
    if tensor.grad is None:
        tensor.grad = mg.as_tensor(grad)
    else:
        tensor.grad += grad


def truthy_test(tensor, grad):
    """'No gradient yet' tested by truth: after zero_() a fresh tensor replaces .grad."""
    if not tensor.grad:
        tensor.grad = mg.tensor(grad)
    else:
        tensor.grad += grad


def from_a_list(tensor, grad):
    """mg.tensor(grad.tolist()): float32, the default dtype, for a float64 leaf."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(grad.tolist())
    else:
        tensor.grad += grad


def numpy_zeros_first(tensor, grad):
    """Starts .grad from np.zeros(shape): float64 for a float32 leaf."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(np.zeros(tensor.shape))
    tensor.grad += grad


def minigrad_zeros_first(tensor, grad):
    """Starts .grad from mg.zeros(shape): float32 for a float64 leaf."""
    if tensor.grad is None:
        tensor.grad = mg.zeros(tensor.shape)
    tensor.grad += grad


def behind_the_setter(tensor, grad):
    """Writes ._grad, past the setter's dtype test: float64 zeros for a float32 leaf."""
    if tensor.grad is None:
        tensor._grad = mg.tensor(np.zeros(tensor.shape))
    tensor._grad += grad


def requires_grad_too(tensor, grad):
    """A .grad that requires grad itself."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(grad, requires_grad=True)
    else:
        tensor.grad += grad


def the_raw_array(tensor, grad):
    """The numpy array itself as .grad."""
    if tensor.grad is None:
        tensor.grad = grad
    else:
        tensor.grad += grad


def sum_not_stored(tensor, grad):
    """Adds into a local name: .grad keeps the first gradient."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(grad)
    else:
        total = tensor.grad
        total = total + mg.tensor(grad)


def copies_into(tensor, grad):
    """copy_ writes the new gradient over the old one: the same tensor, no sum."""
    if tensor.grad is None:
        tensor.grad = mg.tensor(grad)
    else:
        tensor.grad.copy_(mg.tensor(grad))


def calls_the_method(tensor, grad):
    """A thin wrapper: minigrad's own, through the tensor."""
    tensor.accumulate_grad(grad)


def calls_the_class_attribute(tensor, grad):
    mg.Tensor.accumulate_grad(tensor, grad)


OWN = mg.Tensor.accumulate_grad


def calls_a_name_for_it(tensor, grad):
    OWN(tensor, grad)


def calls_the_node(tensor, grad):
    mg.graph.AccumulateGrad(tensor).apply(grad)


class EmptySubclass(mg.graph.AccumulateGrad):
    pass


def chapter_example():
    """The chapter's 12, then 24: x.grad after each of two backward() calls."""
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    first = x.grad.item()
    z.backward()
    return first, x.grad.item()


def test_the_notebooks_solution_passes():
    result = teach.check_piece("accumulate", solution("04", "accumulate"))
    assert result, result
    assert "12-then-24" in result.message and "150 random" in result.message


@pytest.mark.parametrize("wrong, words", [
    (overwrite, ["x.grad is [12.0]; expected [24.0]", "replaced", "add up"]),
    (new_tensor, ["new tensor", "old = x.grad", "in place"]),
    (no_copy, ["same memory", "same array", "x + y"]),
    (forgets, ["x.grad is None", "must become .grad"]),
    (as_tensor_alias, ["same memory", "same array", "x + y"]),
    (truthy_test, ["new tensor", "zero_()", "not None", "test for zero or for truth"]),
    (from_a_list, ["another dtype than its leaf", "float32 to a tensor of dtype float64",
                   "grad.tolist()", "default dtype"]),
    (numpy_zeros_first, ["another dtype than its leaf", "float64 to a tensor of dtype float32",
                         "np.zeros(shape)", "float64 constant"]),
    (minigrad_zeros_first, ["another dtype than its leaf", "mg.zeros(shape)"]),
    (behind_the_setter, ["x.grad is float64", "gives float32", "float64 constant"]),
    (requires_grad_too, ["requires grad", "requires_grad=True", "x.grad.requires_grad is False"]),
    (the_raw_array, ["not a tensor", "numpy array", "a leaf's .grad is a Tensor"]),
    (sum_not_stored, ["x.grad is [12.0]; expected [24.0]", "add up"]),
    (copies_into, ["x.grad is [12.0]; expected [24.0]", "replaced"]),
])
def test_a_wrong_accumulate_fails_and_says_why(wrong, words):
    result = teach.check_piece("accumulate", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


@pytest.mark.parametrize("own, words", [
    (mg.Tensor.accumulate_grad, ["this is minigrad's own Tensor.accumulate_grad"]),
    (calls_a_name_for_it, ["uses minigrad's own Tensor.accumulate_grad"]),
    (calls_the_node, ["uses minigrad's own AccumulateGrad"]),
    (EmptySubclass, ["subclass of minigrad's own AccumulateGrad"]),
    (calls_the_method, ["calls minigrad's own Tensor.accumulate_grad"]),
    (calls_the_class_attribute, ["uses minigrad's own Tensor.accumulate_grad"]),
])
def test_minigrads_own_piece_is_refused(own, words):
    """minigrad's own accumulate_grad, a subclass of its AccumulateGrad, and thin wrappers
    (found in the code, or caught calling it while plugged in) are not the learner's."""
    result = teach.check_piece("accumulate", own)
    assert not result
    for word in words + ["minigrad's own"]:
        assert word in result.message, result.message
    assert "minigrad with itself" in result.message or "not yours" in result.message
    assert mg.Tensor.accumulate_grad is OWN


def test_float32_leaves_keep_float32_gradients():
    """The chapter's sequences run in float32: the piece's .grad keeps the leaf's dtype."""
    with teach.use(accumulate=solution("04", "accumulate")):
        x = mg.tensor([2.0], requires_grad=True)
        (x * x * 3).backward()
    assert x.grad.dtype == mg.float32 and not x.grad.requires_grad


def test_the_direct_calls_catch_a_missing_copy_too():
    """The battery also calls accumulate as the engine does, with one array for two leaves
    that changes afterwards (a random graph may not happen to show it)."""
    with pytest.raises(ch04.Mismatch, match="not copies of it"):
        ch04._check_copies(no_copy)
    ch04._check_copies(solution("04", "accumulate"))


def test_an_error_in_the_learners_code_is_reported_not_raised():
    def broken(tensor, grad):
        tensor.grad.add_(grad)  # .grad is None at the first call
    result = teach.check_piece("accumulate", broken)
    assert not result and "raised AttributeError" in result.message


def test_not_written_yet_and_minigrads_own_runs():
    result = teach.check_piece("accumulate", None)
    assert not result and "not written yet" in result.message
    with teach.use(accumulate=None):
        assert chapter_example() == (12.0, 24.0)


def test_use_plugs_the_piece_in_and_puts_minigrads_own_back():
    own = Tensor.accumulate_grad
    calls = []
    reference = solution("04", "accumulate")

    def counting(tensor, grad):
        calls.append(grad.copy())
        reference(tensor, grad)
    with teach.use(accumulate=counting):
        assert Tensor.accumulate_grad is not own
        assert chapter_example() == (12.0, 24.0)
    assert [g.tolist() for g in calls] == [[12.0], [12.0]]
    assert Tensor.accumulate_grad is own
    with pytest.raises(ZeroDivisionError):
        with teach.use(accumulate=counting):
            1 / 0
    assert Tensor.accumulate_grad is own
    assert chapter_example() == (12.0, 24.0) and len(calls) == 2


def test_the_wrong_piece_plugged_in_gives_the_wrong_numbers():
    with teach.use(accumulate=overwrite):
        assert chapter_example() == (12.0, 12.0)


def test_the_plug_hands_over_an_array_of_the_leafs_shape_and_dtype():
    seen = []

    def spy(tensor, grad):
        seen.append((type(grad), grad.shape, grad.dtype, tensor.dtype))
        solution("04", "accumulate")(tensor, grad)
    x = mg.tensor(1.5, requires_grad=True)
    y = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    with teach.use(accumulate=spy):
        (x * y).sum().backward()
    assert sorted(seen, key=str) == [(np.ndarray, (), np.dtype("float32"), mg.float32),
                                      (np.ndarray, (2,), np.dtype("float64"), mg.float64)]
    assert x.grad.item() == 3.0 and y.grad.tolist() == [1.5, 1.5]


def test_create_graph_gradients_go_to_minigrads_own():
    calls = []
    with teach.use(accumulate=lambda tensor, grad: calls.append(grad)):
        x = mg.tensor([2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
    assert calls == []
    assert x.grad.item() == 12.0 and x.grad.grad_fn is not None


def test_the_check_keeps_the_random_state():
    mg.manual_seed(3)
    expected = mg.rand(3).tolist()
    mg.manual_seed(3)
    teach.check_piece("accumulate", solution("04", "accumulate"))
    assert mg.rand(3).tolist() == expected
