"""Mistakes learners make: the same exception type as PyTorch, raised before anything changes,
with a message that says what to do (the project's rule for bad input)."""

import numpy as np
import pytest

import minigrad as mg


def _in_place_shape_mismatch(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        w -= 0.1 * lib.ones(2)


def _setitem_shape_mismatch(lib):
    a = lib.zeros(2, 3)
    a[0] = lib.ones(2)


def _l1_loss_of_shapes_that_do_not_broadcast(lib):
    with pytest.warns(UserWarning, match="different to the input size"):
        lib.nn.L1Loss()(lib.zeros(3, 4), lib.zeros(3))


def _clip_a_nan_gradient(lib):
    w = lib.ones(3, requires_grad=True)
    w.grad = lib.tensor([1.0, float("nan"), 2.0])
    lib.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)


def _backward_through_a_negative_slope_in_place(lib):
    h = lib.tensor([-1.0, 2.0], requires_grad=True) * 1
    lib.nn.functional.leaky_relu(h, -0.1, inplace=True).sum().backward()


MISTAKES = {
    "float() of several numbers": lambda lib: float(lib.ones(2)),
    "two inferred dimensions": lambda lib: lib.ones(6).reshape(-1, -1),
    "a numpy array into a model": lambda lib: lib.nn.Linear(3, 2)(np.ones((2, 3), np.float32)),
    "a numpy array into a loss": lambda lib: lib.nn.MSELoss()(np.ones(2), lib.ones(2)),
    "a model instead of its state_dict": lambda lib: lib.nn.Linear(2, 2).load_state_dict(
        lib.nn.Linear(2, 2)),
    "class weights of the wrong length": lambda lib: lib.nn.CrossEntropyLoss(
        weight=lib.ones(2))(lib.zeros(2, 3), lib.tensor([0, 1])),
    "targets of shape (N, 1)": lambda lib: lib.nn.CrossEntropyLoss()(
        lib.zeros(4, 3), lib.zeros(4, 1, dtype=lib.int64)),
    "one-hot integer targets": lambda lib: lib.nn.CrossEntropyLoss()(
        lib.zeros(4, 3), lib.zeros(4, 3, dtype=lib.int64)),
    "more targets than samples": lambda lib: lib.nn.CrossEntropyLoss()(
        lib.zeros(4, 3), lib.zeros(5, dtype=lib.int64)),
    "one sample, two targets": lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(3), lib.tensor([1, 2])),
    "a file that is not there": lambda lib: lib.load("/nonexistent/model.pt"),
    "a layer with 3.5 features": lambda lib: lib.nn.Linear(3.5, 2),
    "scores into binary cross-entropy": lambda lib: lib.nn.BCELoss()(
        lib.tensor([2.0, -1.0]), lib.tensor([1.0, 0.0])),
    "binary targets of another shape": lambda lib: lib.nn.BCEWithLogitsLoss()(
        lib.zeros(4, 1), lib.zeros(4)),
    "mean squared error of integers": lambda lib: lib.nn.MSELoss()(
        lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    "an in-place update of the wrong shape": _in_place_shape_mismatch,
    "an assignment of the wrong shape": _setitem_shape_mismatch,
    "a 0-dim input to nll_loss": lambda lib: lib.nn.functional.nll_loss(
        lib.tensor(1.0), lib.tensor(0)),
    "a bad fill value": lambda lib: lib.zeros(2).masked_fill(lib.tensor([True, False]), None),
    "an infinite fill of an integer tensor": lambda lib: lib.tensor([1, 2]).masked_fill(
        lib.tensor([True, False]), float("inf")),
    "a repeated dim": lambda lib: lib.ones(2, 2).sum((0, -2)),
    "an integer tensor filled with a value that requires grad": lambda lib: lib.tensor(
        [1, 2]).masked_fill(lib.tensor([True, False]), lib.tensor(2.5, requires_grad=True)),
    "an integer mask": lambda lib: lib.zeros(3).masked_fill(lib.tensor([1, 0, 1]), 1.0),
    "a fill value of several numbers": lambda lib: lib.zeros(3).masked_fill(
        lib.tensor([True, False, True]), lib.ones(1)),
    "a mask larger than the tensor filled in place": lambda lib: lib.zeros(3).masked_fill_(
        lib.ones(2, 3, dtype=lib.bool), 1.0),
    "a gather index of floats": lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0.0], [1.0]])),
    "a gather index of int16": lambda lib: lib.zeros(2, 3).gather(
        1, lib.tensor([[0], [1]], dtype=lib.int16)),
    "a gather index out of range": lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0], [3]])),
    "a negative gather index": lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0], [-1]])),
    "a gather index with a dimension fewer": lambda lib: lib.zeros(2, 3).gather(
        1, lib.tensor([0, 1])),
    "a gather index larger than the input": lambda lib: lib.zeros(2, 3).gather(
        0, lib.tensor([[0, 1, 1, 0]])),
    "a gather index that is a list": lambda lib: lib.zeros(2, 3).gather(1, [[0], [1]]),
    "a gather dim out of range": lambda lib: lib.zeros(2, 3).gather(2, lib.tensor([[0]])),
    "prod over two dims at once": lambda lib: lib.ones(2, 3).prod(dim=(0, 1)),
    "cumsum over two dims at once": lambda lib: lib.ones(2, 3).cumsum(dim=(0, 1)),
    "cumsum over a dim out of range": lambda lib: lib.ones(2, 3).cumsum(2),
    "the norm of integers": lambda lib: lib.tensor([3, 4]).norm(),
    "an inf norm of nothing": lambda lib: lib.zeros(0).norm(float("inf")),
    "a norm over the same dim twice": lambda lib: lib.ones(2, 3).norm(dim=(0, 0)),
    "a norm of an unknown order": lambda lib: lib.ones(2, 3).norm(p="abc"),
    "a Frobenius norm over three dims": lambda lib: lib.ones(2, 3, 4).norm(p="fro", dim=(0, 1, 2)),
    "leaky_relu of integers": lambda lib: lib.nn.functional.leaky_relu(lib.tensor([1, -2])),
    "leaky_relu of a numpy array": lambda lib: lib.nn.functional.leaky_relu(np.ones(2)),
    "backward through leaky_relu_ with a negative slope":
        _backward_through_a_negative_slope_in_place,
    "l1_loss of shapes that do not broadcast": _l1_loss_of_shapes_that_do_not_broadcast,
    "l1_loss of a numpy target": lambda lib: lib.nn.functional.l1_loss(lib.ones(2), np.ones(2)),
    "l1_loss weights of another shape": lambda lib: lib.nn.functional.l1_loss(
        lib.ones(2, 3), lib.zeros(2, 3), weight=lib.ones(3)),
    "huber_loss weights of another shape": lambda lib: lib.nn.functional.huber_loss(
        lib.ones(2, 3), lib.zeros(2, 3), weight=lib.ones(3)),
    "a mean L1 loss of integers": lambda lib: lib.nn.functional.l1_loss(
        lib.ones(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)),
    "a smooth L1 loss of integers": lambda lib: lib.nn.functional.smooth_l1_loss(
        lib.ones(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)),
    "a negative smooth L1 beta": lambda lib: lib.nn.SmoothL1Loss(beta=-1.0)(
        lib.ones(2), lib.zeros(2)),
    "a Huber delta of 0": lambda lib: lib.nn.functional.huber_loss(
        lib.ones(2), lib.zeros(2), delta=0.0),
    "clipping a nan gradient with error_if_nonfinite": _clip_a_nan_gradient,
    "vector_to_parameters of a numpy array": lambda lib: lib.nn.utils.vector_to_parameters(
        np.ones(3), [lib.ones(3)]),
}


def _raised(lib, mistake):
    with pytest.raises(Exception) as error:
        MISTAKES[mistake](lib)
    return error.value


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_the_same_exception_type_as_pytorch(mistake, torch):
    ours, theirs = _raised(mg, mistake), _raised(torch, mistake)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs), str(ours))
    assert len(str(ours)) > 20


def test_messages_say_what_to_do():
    hints = {
        "a numpy array into a model": "minigrad.tensor(",
        "targets of shape (N, 1)": ".squeeze(1)",
        "one-hot integer targets": "argmax(1)",
        "float() of several numbers": ".tolist()",
        "a model instead of its state_dict": "state_dict()",
        "an integer mask": "mask.bool()",
        "a gather index of floats": "index.long()",
        "prod over two dims at once": ".prod(0).prod(0)",
        "the norm of integers": "t.float()",
    }
    for mistake, hint in hints.items():
        assert hint in str(_raised(mg, mistake)), mistake


def test_a_shuffle_generator_must_be_a_generator():
    with pytest.raises(TypeError, match=r"minigrad.Generator\(\).manual_seed\(0\)"):
        mg.utils.data.DataLoader([1, 2, 3], shuffle=True, generator=0)


def test_a_gradient_of_another_dtype_is_refused(torch):
    for lib in (mg, torch):
        a = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="dtype"):
            a.grad = lib.ones(2, dtype=lib.float64)
        assert a.grad is None


def test_duplicate_parameters_are_warned_about(torch):
    for lib in (mg, torch):
        a = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([a, a], lr=0.1)


def test_a_refused_masked_fill_changes_nothing():
    t = mg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="broadcast shape"):
        t.masked_fill_(mg.ones(2, 3, dtype=mg.bool), 0.0)
    assert t.tolist() == [1.0, 2.0, 3.0]
    leaf = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.masked_fill_(mg.tensor([True, False]), 0.0)
    assert leaf.tolist() == [1.0, 2.0] and leaf.grad_fn is None


def _changed_after_forward(lib, change):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    index = lib.tensor([1, 0])
    if change == "gather index":
        y = x.gather(1, index.unsqueeze(1))
        index.unsqueeze(1)[0, 0] = 0
    else:
        y = lib.nn.functional.cross_entropy(x, index)
        index[0] = 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    return x.grad


@pytest.mark.parametrize("change", ["gather index", "class targets"])
def test_changing_saved_indices_in_place_makes_backward_refuse(torch, change):
    assert _changed_after_forward(mg, change) is None
    assert _changed_after_forward(torch, change) is None


def test_only_ignored_targets_give_a_zero_gradient(torch):
    def gradients(lib, smoothing):
        z = lib.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0]], dtype=lib.float64, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(z, lib.tensor([-100, -100]),
                                               label_smoothing=smoothing)
        loss.backward()
        return np.isnan(loss.item()), z.grad.tolist()

    for smoothing in (0.0, 0.1):
        assert gradients(mg, smoothing) == gradients(torch, smoothing) == (True, [[0.0] * 3] * 2)
