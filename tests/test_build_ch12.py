"""Chapter 12's build exercise: the learner's ``clip_grad_norm_``, PyTorch's
``torch.nn.utils.clip_grad_norm_``, plugged in behind ``nn.utils.clip_grad_norm_`` by
``teach.use(clip_grad_norm=...)`` and checked by ``teach.check_piece("clip_grad_norm", ...)``."""

import math

import numpy as np
import pytest
import torch
from build_checks import deterministic, passes, refused
from build_cells import solution

import minigrad as mg
from minigrad import nn, teach
from minigrad.teach.exercises import ch12  # noqa: F401  (registers the piece)

clip_grad_norm_ = solution("12", "clip_grad_norm_")
OWN = nn.utils.clip_grad_norm_


def message(answer):
    return refused("clip_grad_norm", answer)


# ---------------------------------------------------------------- right answers

def test_the_notebooks_clip_grad_norm_passes_its_check():
    passes("clip_grad_norm", clip_grad_norm_, "13 cases", "training steps")


def test_the_check_is_deterministic_and_leaves_the_random_stream_alone():
    deterministic("clip_grad_norm", clip_grad_norm_)


def _pair(shapes, seed, dtype=np.float32, scale=3.0, none_at=()):
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for i, shape in enumerate(shapes):
        value = rng.standard_normal(shape).astype(dtype)
        p, q = mg.tensor(value, requires_grad=True), torch.tensor(value, requires_grad=True)
        if i not in none_at:
            g = (rng.standard_normal(shape) * scale).astype(dtype)
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        ours.append(p)
        theirs.append(q)
    return ours, theirs


@pytest.mark.parametrize("kwargs, max_norm, dtype, none_at", [
    ({}, 1.0, np.float32, ()),
    ({}, 100.0, np.float32, ()),
    ({"norm_type": 1}, 2.0, np.float64, (1,)),
    ({"norm_type": math.inf}, 0.5, np.float64, ()),
    ({"norm_type": "inf"}, 0.5, np.float32, (0,)),
    ({"norm_type": 3.0}, 1.0, np.float64, ()),
])
def test_the_notebooks_answer_is_pytorchs(kwargs, max_norm, dtype, none_at):
    ours, theirs = _pair([(3, 4), (5,), (2, 2, 2)], seed=7, dtype=dtype, none_at=none_at)
    got = clip_grad_norm_(ours, max_norm, **kwargs)
    want = torch.nn.utils.clip_grad_norm_(theirs, max_norm, **kwargs)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert np.allclose(got.item(), want.item(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert np.allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_the_notebooks_answer_raises_what_pytorch_raises_on_a_nonfinite_norm():
    ours, theirs = _pair([(3,)], seed=8)
    ours[0].grad = mg.tensor([1.0, math.inf, 2.0])
    theirs[0].grad = torch.tensor([1.0, math.inf, 2.0])
    with pytest.raises(RuntimeError):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError):
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)


def test_use_plugs_the_piece_in_behind_nn_utils_and_puts_minigrads_back():
    calls = []

    def spy(parameters, max_norm, **kwargs):
        calls.append(max_norm)
        return clip_grad_norm_(parameters, max_norm, **kwargs)

    w = mg.tensor([3.0, 4.0], requires_grad=True)
    w.grad = mg.tensor([3.0, 4.0])
    with teach.use(clip_grad_norm=spy):
        total = nn.utils.clip_grad_norm_([w], 1.0)
    assert calls == [1.0] and math.isclose(total.item(), 5.0)
    assert nn.utils.clip_grad_norm_ is OWN


# ---------------------------------------------------------------- wrong answers

def returns_nothing(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def returns_a_float(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite).item()


def norm_after(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    return mg.stack([g.norm(float(norm_type)) for g in grads]).norm(float(norm_type))


def squared(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite) ** 2


def per_parameter(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Each gradient clipped alone; returns the largest of their norms."""
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    norms = [clip_grad_norm_([p], max_norm, norm_type, error_if_nonfinite)
             for p in parameters if p.grad is not None]
    return mg.stack(norms).max() if norms else mg.tensor(0.0)


def sum_of_norms(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    total = mg.stack([g.norm(float(norm_type)) for g in grads]).sum()
    with mg.no_grad():
        for g in grads:
            g.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def scales_up(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    total = mg.stack([g.norm(float(norm_type)) for g in grads]).norm(float(norm_type))
    with mg.no_grad():
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return total


def without_epsilon(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    total = mg.stack([g.norm(float(norm_type)) for g in grads]).norm(float(norm_type))
    with mg.no_grad():
        for g in grads:
            g.mul_((max_norm / total).clamp(max=1.0))
    return total


def new_gradients(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    with_grad = [p for p in parameters if p.grad is not None]
    if not with_grad:
        return mg.tensor(0.0)
    total = mg.stack([p.grad.norm(float(norm_type)) for p in with_grad]).norm(float(norm_type))
    factor = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for p in with_grad:
        p.grad = p.grad * factor
    return total


def crashes_on_no_grad(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = list(parameters) if not isinstance(parameters, mg.Tensor) else [parameters]
    total = mg.stack([p.grad.norm(float(norm_type)) for p in parameters]).norm(float(norm_type))
    with mg.no_grad():
        for p in parameters:
            p.grad.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def reads_twice(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, mg.Tensor):
        parameters = [parameters]
    norms = [p.grad.norm(float(norm_type)) for p in parameters if p.grad is not None]
    if not norms:
        return mg.tensor(0.0)
    total = mg.stack(norms).norm(float(norm_type))
    with mg.no_grad():
        for p in parameters:                       # a generator is empty by now
            if p.grad is not None:
                p.grad.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def no_single_tensor(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = list(parameters)          # one tensor becomes its rows, which have no .grad
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def always_two(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return clip_grad_norm_(parameters, max_norm, 2.0, error_if_nonfinite)


def power_sum_for_inf(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """(sum |g|^p)^(1/p) written out, which breaks for p = inf."""
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    p = float(norm_type)
    total = mg.stack([(g.abs() ** p).sum() for g in grads]).sum() ** (1 / p)
    with mg.no_grad():
        for g in grads:
            g.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def value_clip(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return mg.tensor(0.0)
    total = mg.stack([g.norm(float(norm_type)) for g in grads]).norm(float(norm_type))
    for g in grads:
        g.clamp_(-max_norm, max_norm)
    return total


def stacks_nothing(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = mg.stack([g.norm(float(norm_type)) for g in grads]).norm(float(norm_type))
    with mg.no_grad():
        for g in grads:
            g.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def float64_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    total = clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    return mg.tensor(float(total), dtype=mg.float64)


def python_float_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm made into a new default-dtype tensor: float32 also for float64 gradients."""
    total = clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    return mg.tensor(total.item())


def ignores_error_flag(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return clip_grad_norm_(parameters, max_norm, norm_type, False)


def raises_value_error(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    total = clip_grad_norm_(parameters, max_norm, norm_type, False)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise ValueError("non-finite norm")
    return total


def clips_the_weights(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    total = clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    with mg.no_grad():
        for p in parameters:
            p.mul_(0.5)
    return total


def recorded_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
    total = clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    return total + mg.zeros((), requires_grad=True, dtype=total.dtype)


def calls_minigrads_own(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return nn.utils.clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def calls_it_by_full_path(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return mg.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def calls_it_through_the_module_dict(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                                     foreach=None):
    return vars(nn.utils)["clip_grad_norm_"](parameters, max_norm, norm_type, error_if_nonfinite)


@pytest.mark.parametrize("answer, words", [
    (returns_nothing, ["returned None", "return the total norm", "as a tensor"]),
    (returns_a_float, ["returned float", "not a Python number"]),
    (norm_after, ["the norm after clipping", "before the gradients are scaled"]),
    (squared, ["the square of the norm", "square root"]),
    (per_parameter, ["one long vector"]),
    (sum_of_norms, ["sum of the gradients' norms", "norm of the norms"]),
    (scales_up, ["never scales gradients up", "at most 1"]),
    (without_epsilon, ["max_norm / total_norm exactly", "total_norm + 1e-6"]),
    (new_gradients, ["replaced p.grad by a new tensor", "in place"]),
    (crashes_on_no_grad, ["a parameter without a gradient", "p.grad is None", "leave it out"]),
    (reads_twice, ["a generator", "not changed at all", "read only once"]),
    (no_single_tensor, ["one tensor, not a list", "single tensor", "a list of one"]),
    (always_two, ["norm_type=1", "That is the 2-norm"]),
    (power_sum_for_inf, ["norm_type=inf", "largest |g|"]),
    (value_clip, ["clamped on its own", "direction", "one factor"]),
    (stacks_nothing, ["no gradient at all", "mg.tensor(0.0)"]),
    (float64_norm, ["the total norm", "is float64, where minigrad's own gives float32"]),
    (python_float_norm, ["float64 gradients", "is float32, where minigrad's own gives float64"]),
    (ignores_error_flag, ["error_if_nonfinite=True", "did not raise", "RuntimeError"]),
    (raises_value_error, ["raised ValueError", "PyTorch raises RuntimeError"]),
    (clips_the_weights, ["changed the parameters themselves", "p.grad"]),
    (recorded_norm, ["requires grad", "no_grad"]),
    (calls_minigrads_own, ["minigrad's own nn.utils.clip_grad_norm_", "compare minigrad with itself"]),
    (calls_it_by_full_path, ["minigrad's own nn.utils.clip_grad_norm_"]),
    (calls_it_through_the_module_dict, ["minigrad's own nn.utils.clip_grad_norm_",
                                        "mg.nn.utils.clip_grad_norm_"]),
    (OWN, ["this is minigrad's own nn.utils.clip_grad_norm_"]),
    ("clip", ["expected a function"]),
])
def test_a_wrong_clip_grad_norm_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text
    assert "g.mul_(" not in text and ".clamp(max=1.0)" not in text  # no code given away


def test_an_unwritten_piece_says_not_written_yet():
    result = teach.check_piece("clip_grad_norm", None)
    assert not result and "not written yet" in result.message
