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
    "an integer mask": lambda lib: lib.zeros(3).masked_fill(lib.tensor([1, 0, 1]), 1.0),
    "a fill value of several numbers": lambda lib: lib.zeros(3).masked_fill(
        lib.tensor([True, False, True]), lib.ones(1)),
    "a mask larger than the tensor filled in place": lambda lib: lib.zeros(3).masked_fill_(
        lib.ones(2, 3, dtype=lib.bool), 1.0),
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
