"""The promise of minigrad/ops/__init__.py: an op added from outside the package, forward and
backward in one class of a few lines, gets first and second derivatives that match PyTorch."""

import numpy as np

import minigrad as mg
from double_backward import assert_second_derivatives_match
from minigrad.ops import Op, formulas


class SoftsignBackward0(Op):  # softsign(a) = a / (1 + |a|), written from outside the package
    def forward(self, a):
        self.save_for_backward(a)
        return a / (1 + np.abs(a))

    def backward(self, grad, a):
        denominator = 1 + a * formulas.sign(a)  # 1 + |a|, on arrays and on tensors alike
        return grad / (denominator * denominator)


def softsign(lib, x):
    return SoftsignBackward0.run((x,)) if lib is mg else lib.nn.functional.softsign(x)


def test_a_new_op_matches_pytorch_to_the_second_derivative(torch):
    x = np.random.default_rng(0).standard_normal((3, 4))
    assert_second_derivatives_match(torch, softsign, x)
    assert_second_derivatives_match(torch, lambda lib, a: softsign(lib, a * a).sum() * a, x)


def test_a_new_op_is_recorded_under_its_name():
    x = mg.tensor([0.5, -2.0], requires_grad=True)
    y = SoftsignBackward0.run((x,))
    assert type(y.grad_fn).__name__ == "SoftsignBackward0"
    assert y.grad_fn.next_functions[0][0] is mg.autograd.graph.get_gradient_edge(x).node
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.abs([0.5, -2.0])) ** 2, rtol=1e-6)
