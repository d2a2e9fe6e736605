"""Custom autograd.Function under create_graph=True, against PyTorch: the user's backward
runs in grad mode on tensors with history (a saved input is the input itself, a saved
output is rebuilt around the output with the Function's node as grad_fn), so second
derivatives through it are right; once_differentiable refuses a second derivative."""

import numpy as np

import minigrad as mg
from double_backward import assert_second_derivatives_match
from parity import errors_of_both

X = np.array([1.0, -2.0, 0.5])
Y = np.array([3.0, 0.25, -1.0])


def functions(lib):
    class Cube(lib.autograd.Function):  # saves its input
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    class Square(lib.autograd.Function):  # saves its output: d(y) = 2 sqrt(y)... via output
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(y, x)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, x = ctx.saved_tensors
            return grad * 2 * x + 0 * y

    class Prod(lib.autograd.Function):  # two inputs and a number
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b * ctx.k, None, grad * a * ctx.k

    class OutputUser(lib.autograd.Function):  # y = x^2, backward uses y: 2x = 2 y / x
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * (y + y) * x * x * x * x * x * 0 + grad * 2 * x

    return Cube, Square, Prod, OutputUser


def test_saved_input(torch):
    assert_second_derivatives_match(torch, lambda lib, x: functions(lib)[0].apply(x), X)


def test_saved_output_and_input(torch):
    assert_second_derivatives_match(torch, lambda lib, x: functions(lib)[1].apply(x) * x, X)


def test_two_inputs_and_a_number(torch):
    assert_second_derivatives_match(
        torch, lambda lib, a, b: functions(lib)[2].apply(a, 2.5, b) * a, X, Y)
    assert_second_derivatives_match(
        torch, lambda lib, a, b: functions(lib)[2].apply(a, 2.5, b), X, Y, wanted=[0])


def test_inside_a_larger_graph(torch):
    def fn(lib, x, y):
        cube = functions(lib)[0]
        return cube.apply(x * y - x) * y + cube.apply(y)
    assert_second_derivatives_match(torch, fn, X, Y)


def test_the_saved_output_carries_the_node(torch):
    """A saved output seen in a recorded backward has the Function's node as grad_fn."""
    seen = {}

    class Keep(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            seen["y"] = y
            return grad * y

    x = mg.tensor(X, requires_grad=True)
    out = Keep.apply(x)
    (g,) = mg.autograd.grad(out.sum(), x, create_graph=True)
    assert seen["y"].grad_fn is out.grad_fn and g.requires_grad
    out.sum().backward()  # a plain backward still works, on tensors without history
    assert seen["y"].grad_fn is None


def test_plain_backward_unchanged(torch):
    for lib in (mg, torch):
        x = lib.tensor(X, requires_grad=True)
        functions(lib)[0].apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * X * X)


def test_once_differentiable(torch):
    def make(lib):
        once = (lib.autograd.function.once_differentiable)

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            @once
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x * x
        return Cube

    for lib in (mg, torch):  # first derivatives are fine, also under create_graph
        x = lib.tensor(X, requires_grad=True)
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(make(lib).apply(x), x, v, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), 3 * X * X)
        assert g.requires_grad
        (plain,) = lib.autograd.grad(make(lib).apply(x).sum(), x, create_graph=True)
        assert not plain.requires_grad  # the seed has no history: nothing to differentiate

    def mistake(lib):
        x = lib.tensor(X, requires_grad=True)
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(make(lib).apply(x), x, v, create_graph=True)
        g.sum().backward()
    ours, theirs = errors_of_both(mistake, torch)
    assert type(ours) is type(theirs)
    assert "once_differentiable" in str(ours)


def test_once_differentiable_plain_backward(torch):
    class Double(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @mg.autograd.function.once_differentiable
        def backward(ctx, grad):
            assert not mg.is_grad_enabled()
            return grad * 2

    x = mg.tensor(X, requires_grad=True)
    Double.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
    assert mg.autograd.once_differentiable is mg.autograd.function.once_differentiable


def test_freed_graph_under_create_graph(torch):
    def mistake(lib):
        x = lib.tensor(X, requires_grad=True)
        out = functions(lib)[0].apply(x).sum()
        lib.autograd.grad(out, x)
        lib.autograd.grad(out, x, create_graph=True)
    ours, theirs = errors_of_both(mistake, torch)
    assert type(ours) is type(theirs)
