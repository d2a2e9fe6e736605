"""Second derivatives through the ops written as ``minigrad.ops.Op`` match PyTorch."""

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
ROW = rng.standard_normal((1, 4))


@pytest.mark.parametrize("fn, values", [
    (lambda lib, a, b: a * b * a, (A, B)),
    (lambda lib, a, b: (a + b) * (a - b), (A, B)),
    (lambda lib, a, b: -(a * b) * 3.0 + 2.0, (A, B)),
    (lambda lib, a, r: (a * r).sum(1) * (a - r).sum(), (A, ROW)),  # broadcasting both ways
    (lambda lib, a, b: (a * a).sum(dim=0, keepdim=True) * b, (A, B)),
    (lambda lib, a, b: (a * b).sum(), (A, B)),
])
def test_second_derivatives_match_pytorch(torch, fn, values):
    assert_second_derivatives_match(torch, fn, *values)


def test_only_some_inputs_require_grad(torch):
    assert_second_derivatives_match(torch, lambda lib, a, b: a * a * b, A, B, wanted=[1])
    assert_second_derivatives_match(torch, lambda lib, a, b: a * a * b, A, B, wanted=[0])


def test_backward_create_graph_gives_grad_a_history():
    x = mg.tensor([2.0], requires_grad=True)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    first = x.grad
    (g,) = mg.autograd.grad(first.sum(), x)
    assert g.tolist() == [12.0]  # d/dx 3x^2 at 2
