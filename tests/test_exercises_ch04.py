"""Chapter 4's exercise checks accept the right answers (in every usual form) and reject
wrong ones and missing ones, without raising."""

import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch04


def test_set_to_none():
    assert ch04.check_set_to_none(12, 24)
    assert ch04.check_set_to_none(mg.tensor([12.0]), mg.tensor([24.0]))
    assert not ch04.check_set_to_none(12, 12)   # what zero_() would have given
    assert not ch04.check_set_to_none(12, 0)
    assert not ch04.check_set_to_none(36, 24)   # thinks None keeps adding
    assert not ch04.check_set_to_none(None, None)


def test_set_to_none_matches_what_the_learner_code_does():
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old_grad = x.grad
    x.grad = None
    z.backward(retain_graph=True)
    assert ch04.check_set_to_none(x.grad, old_grad)
    # the same with zero_() instead is the mistake the check must catch
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old_grad = x.grad
    x.grad.zero_()
    z.backward(retain_graph=True)
    assert not ch04.check_set_to_none(x.grad, old_grad)


def test_two_paths():
    assert ch04.check_two_paths(13, 26)
    assert ch04.check_two_paths(13.0, mg.tensor([26.0]))
    assert not ch04.check_two_paths(12, 24)   # forgot the direct path
    assert not ch04.check_two_paths(1, 2)     # forgot the path through y
    assert not ch04.check_two_paths(13, 13)   # thinks the second call overwrites
    assert not ch04.check_two_paths(14, 28)
    assert not ch04.check_two_paths(MISSING, None)


def test_two_paths_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([2.0], requires_grad=True)
    z = (x * x) * 3 + x
    z.backward(retain_graph=True)
    once = x.grad.item()
    z.backward()
    assert ch04.check_two_paths(once, x.grad.item())


def test_checks_never_raise_on_odd_answers():
    for odd in ([1, 2], mg.ones(2, 2), object(), "twelve", ...):
        assert not ch04.check_set_to_none(odd, odd)
        assert not ch04.check_two_paths(odd, odd)
