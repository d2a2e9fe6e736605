"""``autograd.Function`` with several outputs, ``mark_non_differentiable``,
``set_materialize_grads``, ``setup_context``, and ``gradgradcheck``, against PyTorch; and
PyTorch's tutorial "Double Backward with Custom Functions" with the import changed."""

import importlib

import numpy as np
import pytest
import torch

import minigrad as mg

TorchGradcheckError = importlib.import_module("torch.autograd.gradcheck").GradcheckError


def _pair(values, dtype="float64", requires_grad=True):
    values = np.asarray(values, dtype=dtype)
    return (mg.tensor(values, requires_grad=requires_grad),
            torch.tensor(values, requires_grad=requires_grad))


def _close(ours, theirs):
    assert ours is not None and theirs is not None
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def _both(make):
    """The same Function class written against each library (``make(lib)``)."""
    return make(mg), make(torch)


# ----------------------------------------------------------------------------- several outputs

def _two_outputs(lib):
    seen = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k, x.exp(), "label"

        @staticmethod
        def backward(ctx, g_scaled, g_exp, g_label):
            (x,) = ctx.saved_tensors
            seen.append((g_scaled, g_exp, g_label))
            return g_scaled * ctx.k + g_exp * x.exp(), None

    return Two, seen


def test_backward_gets_one_gradient_per_output_zeros_for_an_unused_one():
    (Ours, ours_seen), (Theirs, theirs_seen) = _both(_two_outputs)
    x, tx = _pair([0.5, -1.0, 2.0])
    a, b, label = Ours.apply(x, 3.0)
    ta, tb, tlabel = Theirs.apply(tx, 3.0)
    assert label == tlabel == "label"
    _close(a, ta)
    _close(b, tb)
    assert a.grad_fn.name() == ta.grad_fn.name() == "TwoBackward"
    (a * a).sum().backward()
    (ta * ta).sum().backward()
    _close(x.grad, tx.grad)
    (g1, g2, g3), (t1, t2, t3) = ours_seen[0], theirs_seen[0]
    _close(g1, t1)
    _close(g2, t2)  # zeros: b was not used
    assert float(abs(g2).sum()) == 0.0
    assert g3 is None and t3 is None


def test_both_outputs_used_gradients_add_up():
    (Ours, _), (Theirs, _) = _both(_two_outputs)
    x, tx = _pair([[0.1, 0.2], [0.3, -0.4]])
    a, b, _ = Ours.apply(x, 2.0)
    ta, tb, _ = Theirs.apply(tx, 2.0)
    (a.sum() * b.sum() + b.max()).backward()
    (ta.sum() * tb.sum() + tb.max()).backward()
    _close(x.grad, tx.grad)


def test_autograd_grad_of_one_output_and_retain_grad_on_an_output():
    (Ours, _), (Theirs, _) = _both(_two_outputs)
    x, tx = _pair([1.0, 2.0])
    a, b, _ = Ours.apply(x, 4.0)
    ta, tb, _ = Theirs.apply(tx, 4.0)
    b.retain_grad()
    tb.retain_grad()
    (b * b).sum().backward(retain_graph=True)
    (tb * tb).sum().backward(retain_graph=True)
    _close(b.grad, tb.grad)
    (g,) = mg.autograd.grad(a.sum(), x)
    (tg,) = torch.autograd.grad(ta.sum(), tx)
    _close(g, tg)


def _materialize_off(lib):
    seen = []

    class Lazy(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            total = None
            for g, k in ((g1, 2), (g2, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    return Lazy, seen


def test_set_materialize_grads_false_gives_none_for_an_unused_output():
    (Ours, ours_seen), (Theirs, theirs_seen) = _both(_materialize_off)
    x, tx = _pair([1.0, 2.0, 3.0])
    Ours.apply(x)[1].sum().backward()
    Theirs.apply(tx)[1].sum().backward()
    assert ours_seen == theirs_seen == [(True, False)]
    _close(x.grad, tx.grad)


def _non_differentiable(lib):
    seen = []

    class SortWithIndices(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, order = x.sort()
            mask = values > 0
            ctx.mark_non_differentiable(order, mask)
            ctx.save_for_backward(order)
            return values, order, mask

        @staticmethod
        def backward(ctx, g_values, g_order, g_mask):
            (order,) = ctx.saved_tensors
            seen.append(g_order)
            grad = lib.zeros_like(g_values)
            grad[order] = g_values
            return grad

    return SortWithIndices, seen


def test_mark_non_differentiable_outputs_have_no_grad_fn_and_get_zeros():
    (Ours, ours_seen), (Theirs, theirs_seen) = _both(_non_differentiable)
    x, tx = _pair([0.3, -2.0, 1.5, 0.1])
    values, order, mask = Ours.apply(x)
    tvalues, torder, tmask = Theirs.apply(tx)
    assert (order.requires_grad, mask.requires_grad) == (torder.requires_grad,
                                                          tmask.requires_grad) == (False, False)
    assert order.grad_fn is None and values.grad_fn is not None
    (values * mg.arange(4.0, dtype=mg.float64)).sum().backward()
    (tvalues * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    _close(x.grad, tx.grad)
    _close(ours_seen[0], theirs_seen[0])  # int64 zeros, as PyTorch


def test_a_float_output_marked_non_differentiable():
    def make(lib):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_non_differentiable(y)
                return y, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + g2 * 3

        return Half

    Ours, Theirs = _both(make)
    x, tx = _pair([1.0, -1.0])
    y, z = Ours.apply(x)
    ty, tz = Theirs.apply(tx)
    assert (y.requires_grad, z.requires_grad) == (ty.requires_grad, tz.requires_grad)
    (y.sum() + z.sum()).backward()
    (ty.sum() + tz.sum()).backward()
    _close(x.grad, tx.grad)


def test_setup_context_style():
    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k, x + k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * ctx.k + g2, None

        return Scale

    Ours, Theirs = _both(make)
    x, tx = _pair([1.0, 2.0])
    a, b = Ours.apply(x, 5.0)
    ta, tb = Theirs.apply(tx, 5.0)
    (a * b).sum().backward()
    (ta * tb).sum().backward()
    _close(x.grad, tx.grad)


def test_wrong_number_of_gradients_raises_runtime_error_like_torch():
    def make(lib):
        class BadCount(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1, g2

        return BadCount

    Ours, Theirs = _both(make)
    x, tx = _pair([1.0])
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        torch_a, _ = Theirs.apply(tx)
        torch_a.sum().backward()
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        a, _ = Ours.apply(x)
        a.sum().backward()


def test_second_derivative_through_a_saved_output():
    """A saved output comes back with its node under create_graph, so the second derivative
    includes the path through it (exp's saved result)."""
    def make(lib):
        class ExpAndSquare(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                e = x.exp()
                ctx.save_for_backward(x, e)
                return e, x * x

            @staticmethod
            def backward(ctx, g_e, g_sq):
                x, e = ctx.saved_tensors
                return g_e * e + g_sq * 2 * x

        return ExpAndSquare

    Ours, Theirs = _both(make)
    x, tx = _pair([0.2, -0.7])
    e, sq = Ours.apply(x)
    te, tsq = Theirs.apply(tx)
    (g,) = mg.autograd.grad((e * sq).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad((te * tsq).sum(), tx, create_graph=True)
    _close(g, tg)
    (gg,) = mg.autograd.grad((g * g).sum(), x)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
    _close(gg, tgg)


# ----------------------------------------------------------------------------- gradgradcheck

def test_gradgradcheck_passes_and_fails_as_torch():
    x, tx = _pair(np.linspace(-1, 1, 6).reshape(2, 3))
    assert mg.autograd.gradgradcheck(lambda t: (t ** 3).sum(dim=1), x)
    assert torch.autograd.gradgradcheck(lambda t: (t ** 3).sum(dim=1), tx)

    def make(lib):
        class Bad(lib.autograd.Function):  # backward uses a constant: no second derivative
            @staticmethod
            def forward(ctx, t):
                ctx.cube = t * t * 3
                return t ** 3

            @staticmethod
            def backward(ctx, g):
                return g * ctx.cube

        return Bad

    Ours, Theirs = _both(make)
    assert mg.autograd.gradcheck(Ours.apply, x)
    assert torch.autograd.gradcheck(Theirs.apply, tx)
    assert mg.autograd.gradgradcheck(Ours.apply, x, raise_exception=False) is False
    assert torch.autograd.gradgradcheck(Theirs.apply, tx, raise_exception=False) is False
    with pytest.raises(mg.autograd.GradcheckError, match="Jacobian mismatch"):
        mg.autograd.gradgradcheck(Ours.apply, x)
    with pytest.raises(TorchGradcheckError, match="Jacobian mismatch"):
        torch.autograd.gradgradcheck(Theirs.apply, tx)


def test_gradgradcheck_with_given_grad_outputs_and_several_inputs():
    x, tx = _pair([0.5, 1.5])
    y, ty = _pair([2.0, -1.0])
    v, tv = _pair([1.0, 3.0])
    assert mg.autograd.gradgradcheck(lambda a, b: a * b.sin(), (x, y), (v,))
    assert torch.autograd.gradgradcheck(lambda a, b: a * b.sin(), (tx, ty), (tv,))


def test_gradcheck_names_the_output_that_disagrees():
    def make(lib):
        class WrongSecond(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2, t * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2  # should be g2 * 3

        return WrongSecond

    Ours, Theirs = _both(make)
    x, tx = _pair([1.0, 2.0])
    with pytest.raises(TorchGradcheckError, match="output 1 with respect"):
        torch.autograd.gradcheck(Theirs.apply, tx)
    with pytest.raises(mg.autograd.GradcheckError, match="output 1 with respect"):
        mg.autograd.gradcheck(Ours.apply, x)


def test_gradgradcheck_checks_forward_mode_too():
    x, tx = _pair([1.0, -0.5])
    for lib, value in ((mg, x), (torch, tx)):
        assert lib.autograd.gradgradcheck(lambda t: t * t * t, value, check_fwd_over_rev=True)
        assert lib.autograd.gradcheck(lambda t: t * t, value, check_forward_ad=True)


# ----------------------------------------------------------------------------- the tutorial

def _tutorial(torch):
    """PyTorch's "Double Backward with Custom Functions", written against ``torch`` (the
    module given: PyTorch or minigrad). Returns what it computed, to compare."""
    results = {}

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    x = torch.tensor(np.linspace(0.1, 0.9, 9).reshape(3, 3), requires_grad=True,
                     dtype=torch.double)
    results["square"] = (torch.autograd.gradcheck(Square.apply, x),
                         torch.autograd.gradgradcheck(Square.apply, x))

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return result * grad_out

    x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
    results["exp"] = (torch.autograd.gradcheck(Exp.apply, x),
                      torch.autograd.gradgradcheck(Exp.apply, x))

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    x = torch.tensor(np.linspace(-0.8, 0.8, 9).reshape(3, 3), requires_grad=True,
                     dtype=torch.double)
    results["sinh"] = (torch.autograd.gradcheck(sinh, x), torch.autograd.gradgradcheck(sinh, x))
    out = sinh(x)
    grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
    grad_grad_x, = torch.autograd.grad(grad_x.sum(), x)
    results["sinh values"] = (out.detach().numpy(), grad_x.detach().numpy(),
                              grad_grad_x.numpy())

    class SinhBad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.expx = expx
            ctx.expnegx = expnegx
            return (expx - expnegx) / 2

        @staticmethod
        def backward(ctx, grad_out):
            expx = ctx.expx
            expnegx = ctx.expnegx
            grad_input = grad_out * (expx + expnegx) / 2
            return grad_input

    results["sinh bad"] = (torch.autograd.gradcheck(SinhBad.apply, x),
                           torch.autograd.gradgradcheck(SinhBad.apply, x,
                                                        raise_exception=False))

    def cube_forward(x):
        return x ** 3

    def cube_backward(grad_out, x):
        return grad_out * 3 * x ** 2

    def cube_backward_backward(grad_out, sav_grad_out, x):
        return grad_out * sav_grad_out * 6 * x

    def cube_backward_backward_grad_out(grad_out, x):
        return grad_out * 3 * x ** 2

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return cube_forward(x)

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    class CubeBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return cube_backward(grad_out, x)

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            dx = cube_backward_backward(grad_out, sav_grad_out, x)
            dgrad_out = cube_backward_backward_grad_out(grad_out, x)
            return dgrad_out, dx

    x = torch.tensor(2., requires_grad=True, dtype=torch.double)
    results["cube"] = (torch.autograd.gradcheck(Cube.apply, x),
                       torch.autograd.gradgradcheck(Cube.apply, x))
    return results


def test_the_double_backward_tutorial_runs_with_the_import_changed():
    ours, theirs = _tutorial(mg), _tutorial(torch)
    assert ours.keys() == theirs.keys()
    for key in ours:
        for a, b in zip(ours[key], theirs[key]):
            if isinstance(b, bool):
                assert a is b, key
            else:
                np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=key)
    assert theirs["sinh bad"] == (True, False)  # the tutorial's point: gradgradcheck fails
