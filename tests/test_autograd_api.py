"""autograd.Function, autograd.grad and autograd.gradcheck, against PyTorch's behaviour."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError, grad, gradcheck


def make_exp(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * y
    return MyExp


def make_scale(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, factor):
            ctx.factor = factor
            ctx.save_for_backward(x, w)
            return x * w * factor

        @staticmethod
        def backward(ctx, grad_output):
            x, w = ctx.saved_tensors
            return grad_output * w * ctx.factor, grad_output * x * ctx.factor, None
    return Scale


def test_custom_function_matches_pytorch(torch):
    data = np.array([0.5, -1.0, 2.0])
    results = []
    for lib in (mg, torch):
        x = lib.tensor(data, requires_grad=True)
        w = lib.tensor(data[::-1].copy(), requires_grad=True)
        y = make_exp(lib).apply(x)
        z = make_scale(lib).apply(y, w, 3.0)
        z.sum().backward()
        results.append((z.detach().numpy(), x.grad.numpy(), w.grad.numpy(),
                        y.grad_fn.name(), z.grad_fn.name()))
    for ours, theirs in zip(*results):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_custom_function_saved_tensors_are_freed():
    x = mg.tensor([1.0], requires_grad=True)
    y = make_exp(mg).apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        y.grad_fn.ctx.saved_tensors


def test_custom_function_wrong_gradient_count_is_reported():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = mg.tensor([1.0], requires_grad=True)
    b = mg.tensor([2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(a, b).sum().backward()
    assert a.grad is None and b.grad is None  # nothing accumulated


def test_custom_function_wrong_gradient_shape_is_reported():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return mg.ones(5)

    a = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        Bad.apply(a).sum().backward()


def test_function_without_grad_records_nothing():
    x = mg.tensor([1.0])
    assert make_exp(mg).apply(x).grad_fn is None


def test_grad_returns_gradients_without_touching_dot_grad(torch):
    values = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, -1.0], requires_grad=True)
        h = x * y
        out = (h * h).sum()
        gx, gh = lib.autograd.grad(out, [x, h])
        assert x.grad is None and y.grad is None
        values.append((gx.tolist(), gh.tolist()))
    assert values[0] == values[1]


def test_grad_unused_input():
    x = mg.tensor([1.0], requires_grad=True)
    y = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        grad((x * 2).sum(), [x, y])
    assert grad((x * 2).sum(), [x, y], allow_unused=True)[1] is None


def test_gradcheck_accepts_correct_and_rejects_wrong_backward():
    x = mg.randn(3, dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda t: (t.sin() * t).sum(dim=0), (x,))

    class WrongExp(Function):
        @staticmethod
        def forward(ctx, t):
            return t.exp()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongExp.apply, (x,))
    assert gradcheck(WrongExp.apply, (x,), raise_exception=False) is False


def _scaled_pair_function(lib):
    """x in R^3 -> (x0 x1, x2^3), with a backward that is 1.5 times too big."""
    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return lib.stack([x[0] * x[1], x[2] ** 3])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return lib.stack([g[0] * x[1], g[0] * x[0], g[1] * 3 * x[2] ** 2]) * 1.5
    return Scaled.apply


def test_gradcheck_reports_the_jacobian_as_pytorch_does(torch):
    """One row per input element, one column per output element, printed as tensors."""
    messages = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        with pytest.raises(Exception, match="Jacobian mismatch") as error:
            lib.autograd.gradcheck(_scaled_pair_function(lib), (x,))
        messages.append(str(error.value).replace(lib.__name__ + ".", ""))
    assert messages[0] == messages[1]


def test_gradcheck_restores_inputs():
    x = mg.randn(4, dtype=mg.float64, requires_grad=True)
    before = x.detach().numpy().copy()
    gradcheck(lambda t: t.tanh(), (x,))
    assert np.array_equal(x.detach().numpy(), before) and x.grad is None


def test_function_must_return_a_gradient_per_forward_argument(torch):
    def make(lib, extra_none):
        class Clamp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, low, high):
                return x.clamp(low, high)

            @staticmethod
            def backward(ctx, g):
                return (g, None, None, None) if extra_none else g
        return Clamp

    for lib in (mg, torch):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            make(lib, False).apply(x, 0.0, 1.0).sum().backward()
        make(lib, True).apply(x, 0.0, 1.0).sum().backward()  # extra trailing None is fine
        assert x.grad.tolist() == [1.0, 1.0]


def test_backward_through_inf_is_silent_like_pytorch():
    import warnings
    x = mg.tensor([100.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (1 + x.exp()).log().sum().backward()
    assert np.isnan(x.grad.item())
