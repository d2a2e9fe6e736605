"""A custom Function that saves its OUTPUT for backward, differentiated forward-over-reverse
(``jvp(grad(f))``, ``jacfwd(jacrev(f))``): backward's use of the saved output must carry the
output's tangent, as PyTorch's saved output does. Found silently wrong (a zero tangent)."""

import numpy as np
import pytest
import torch

import minigrad as mg


def exp_function(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

        @staticmethod
        def jvp(ctx, tangent):
            (y,) = ctx.saved_tensors
            return tangent * y
    return Exp


def exp_and_square(lib):
    """Two outputs, both saved: (exp(x), x * x)."""
    class ExpSquare(lib.autograd.Function):
        generate_vmap_rule = True  # torch.func.jacfwd vmaps the Function

        @staticmethod
        def forward(x):
            return x.exp(), x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x, output[0])
            ctx.save_for_forward(x, output[0])

        @staticmethod
        def backward(ctx, grad_exp, grad_square):
            x, e = ctx.saved_tensors
            return grad_exp * e + grad_square * 2 * x

        @staticmethod
        def jvp(ctx, tangent):
            x, e = ctx.saved_tensors
            return tangent * e, 2 * x * tangent
    return ExpSquare


def both(values):
    return (torch.tensor(values, dtype=torch.float64),
            mg.tensor(values, dtype=mg.float64))


@pytest.mark.parametrize("point, direction", [([0.5, 1.0], [1.0, 2.0]),
                                              ([-1.0, 0.0, 2.0], [0.5, -1.0, 3.0])])
def test_jvp_of_grad_through_a_saved_output(point, direction):
    got = {}
    for lib, a, t in zip((torch, mg), both(point), both(direction)):
        Exp = exp_function(lib)
        value, tangent = lib.func.jvp(lib.func.grad(lambda x: (Exp.apply(x) ** 2).sum()),
                                      (a,), (t,))
        got[lib.__name__] = (np.asarray(value.tolist()), np.asarray(tangent.tolist()))
    for k in range(2):
        np.testing.assert_allclose(got["minigrad"][k], got["torch"][k], rtol=1e-12)
    assert np.abs(got["minigrad"][1]).min() > 0  # not the zero tangent of the old defect


def test_hessian_through_two_saved_outputs():
    got = {}
    for lib, a in zip((torch, mg), both([0.3, -0.7, 1.1])):
        ExpSquare = exp_and_square(lib)

        def f(x):
            e, s = ExpSquare.apply(x)
            return (e * s).sum() + (e ** 2).sum()
        got[lib.__name__] = np.asarray(lib.func.jacfwd(lib.func.jacrev(f))(a).tolist())
    np.testing.assert_allclose(got["minigrad"], got["torch"], rtol=1e-12)


def test_a_tangent_does_not_outlive_its_level():
    """Backward recorded after the dual level exited: the rebuilt output carries nothing."""
    Exp = exp_function(mg)
    fwd = mg.autograd.forward_ad
    x = mg.tensor([0.5, 1.0], dtype=mg.float64, requires_grad=True)
    with fwd.dual_level():
        dual = fwd.make_dual(x, mg.tensor([1.0, 2.0], dtype=mg.float64))
        y = Exp.apply(dual)
    (grad,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    with fwd.dual_level():
        assert fwd.unpack_dual(grad).tangent is None
    np.testing.assert_allclose(grad.tolist(), np.exp([0.5, 1.0]), rtol=1e-12)
