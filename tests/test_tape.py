"""``teach.tape.GradientTape``: TensorFlow's rules on minigrad's engine (chapter 11). The
numbers are minigrad's gradients; the rules are TensorFlow 2's documented behaviour."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.teach.tape import GradientTape


def test_the_gradient_is_returned_and_nothing_is_stored():
    w = mg.nn.Parameter(mg.tensor([2.0]))
    with GradientTape() as tape:
        z = 3 * w * w
    grad = tape.gradient(z, w)
    assert grad.tolist() == [12.0] and w.grad is None


def test_a_persistent_tape_gives_the_same_gradient_again_instead_of_adding():
    w = mg.nn.Parameter(mg.tensor([2.0]))
    with GradientTape(persistent=True) as tape:
        z = 3 * w * w
    assert tape.gradient(z, w).tolist() == [12.0]
    assert tape.gradient(z, w).tolist() == [12.0]


def test_a_tape_gives_one_set_of_gradients_unless_persistent():
    w = mg.nn.Parameter(mg.tensor([2.0]))
    with GradientTape() as tape:
        z = 3 * w * w
    tape.gradient(z, w)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(z, w)


def test_a_constant_is_watched_only_when_asked_and_stays_a_constant():
    x = mg.tensor([3.0])
    with GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).tolist() == [6.0]
    assert not x.requires_grad and x.grad is None


def test_operations_before_the_block_are_not_on_the_tape():
    w = mg.nn.Parameter(mg.tensor([2.0]))
    u = w * 5              # outside: a constant for the tape
    with GradientTape(persistent=True) as tape:
        z = u * w
    assert tape.gradient(z, w).tolist() == [10.0]   # d(u w)/dw with u held fixed
    assert tape.gradient(u, w) is None


def test_lists_of_sources_unconnected_ones_and_a_summed_target():
    a = mg.nn.Parameter(mg.tensor([1.0, 2.0]))
    b = mg.nn.Parameter(mg.tensor([4.0]))
    with GradientTape() as tape:
        y = a * 3
    grads = tape.gradient(y, [a, b])
    assert grads[0].tolist() == [3.0, 3.0] and grads[1] is None


def test_an_intermediate_result_can_be_a_source():
    w = mg.nn.Parameter(mg.tensor([2.0]))
    with GradientTape() as tape:
        h = w * w
        tape.watch(h)
        z = h * 3
    assert tape.gradient(z, h).tolist() == [3.0]


def test_matches_autograd_grad_on_a_small_network():
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.Tanh(), mg.nn.Linear(4, 1))
    x = mg.randn(5, 3)
    params = list(model.parameters())
    with GradientTape() as tape:
        loss = model(x).pow(2).mean()
    taped = tape.gradient(loss, params)
    loss = model(x).pow(2).mean()
    expected = mg.autograd.grad(loss, params)
    for got, want in zip(taped, expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert all(p.grad is None for p in params)


def test_gradient_without_a_block_says_how_to_use_the_tape():
    with pytest.raises(RuntimeError, match="with GradientTape"):
        GradientTape().gradient(mg.tensor(1.0), mg.tensor(1.0))
