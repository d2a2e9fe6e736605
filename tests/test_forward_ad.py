"""Forward-mode AD (``minigrad.autograd.forward_ad``) against ``torch.autograd.forward_ad``:
dual levels, ``make_dual``/``unpack_dual`` and their errors, the tangents the JVP rules of
the common ops give (values and dtypes), custom Functions with ``jvp``, ``gradcheck(...,
check_forward_ad=True)``, and forward mode nested with reverse mode (``jvp`` of ``grad``,
``jacfwd(jacrev(f))``, a gradient through a tangent)."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.func as tf

import minigrad as mg
import minigrad.autograd.forward_ad as mfw
import minigrad.func as mf
from minigrad.ops.op import Op

RNG = np.random.default_rng(26)


def _values(shape, dtype="float32", positive=False):
    v = RNG.standard_normal(shape).astype(dtype)
    return np.abs(v) + 0.5 if positive else v


def _numpy(t):
    return t.detach().numpy()


def _tangent_both(f, primals, tangents):
    """(ours, theirs): the primal and tangent of ``f(lib, *duals)`` in each library."""
    found = []
    for lib, fw in ((mg, mfw), (torch, tfw)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) if t is not None
                     else lib.tensor(p) for p, t in zip(primals, tangents)]
            primal, tangent = fw.unpack_dual(f(lib, *duals))
            found.append((primal, tangent))
    return found


def _same_tangent(ours, theirs, rtol=1e-5, atol=1e-6):
    (p, t), (tp, tt) = ours, theirs
    np.testing.assert_allclose(_numpy(p), _numpy(tp), rtol=rtol, atol=atol)
    assert (t is None) == (tt is None)
    if tt is not None:
        assert t.dtype.name == str(tt.dtype).replace("torch.", "")
        assert tuple(t.shape) == tuple(tt.shape)
        np.testing.assert_allclose(_numpy(t), _numpy(tt), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- the API

def test_levels_and_errors_as_pytorch():
    x, t = mg.randn(3), mg.randn(3)
    with pytest.raises(RuntimeError, match="no level exists"):
        mfw.make_dual(x, t)
    assert mfw.unpack_dual(x) == (x, None)  # outside a level: the tensor itself
    with mfw.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            mfw.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            mfw.make_dual(x, mg.randn(2))
        with pytest.raises(ValueError, match="primal to be floating point"):
            mfw.make_dual(mg.arange(3), mg.arange(3))
        with pytest.raises(ValueError, match="tangent to be floating point"):
            mfw.make_dual(x, mg.arange(3))
        d = mfw.make_dual(x, t)
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            mfw.make_dual(d, t)
        with pytest.raises(RuntimeError, match="Invalid level"):
            mfw.unpack_dual(d, level=3)
        with pytest.raises(RuntimeError, match="Invalid level"):
            mfw.make_dual(x, t, level=3)
        with pytest.raises(RuntimeError, match="not the last one"):
            mfw.exit_dual_level(level=5)
        with pytest.raises(TypeError, match="must be Tensor"):
            mfw.unpack_dual(3)
    with pytest.raises(RuntimeError, match="positive number"):
        mfw.exit_dual_level()
    # torch agrees on each of those exception types
    with tfw.dual_level():
        tx = torch.randn(3)
        for call, kind in ((lambda: tfw.make_dual(tx, torch.randn(2)), RuntimeError),
                           (lambda: tfw.make_dual(torch.arange(3), torch.arange(3)), ValueError),
                           (lambda: tfw.make_dual(tx, torch.arange(3)), ValueError),
                           (lambda: tfw.unpack_dual(3), TypeError)):
            with pytest.raises(kind):
                call()


def test_make_dual_is_a_view_that_shares_the_tangent_and_the_level_drops_it():
    for lib, fw in ((mg, mfw), (torch, tfw)):
        x = lib.tensor([1.0, 2.0, 3.0])
        t = lib.tensor([1.0, 0.0, 0.0])
        xr = lib.tensor([1.0, 2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, t)
            assert d is not x
            primal, tangent = fw.unpack_dual(d)
            assert type(fw.unpack_dual(d)).__name__ == "UnpackedDualTensor"
            t[1] = 7.0  # the tangent is kept, not copied
            assert float(tangent[1]) == 7.0
            x[2] = 50.0  # the dual and its primal are views of x
            assert float(d[2]) == 50.0 and float(primal[2]) == 50.0
            assert fw.unpack_dual(primal).tangent is None
            dr = fw.make_dual(xr, lib.ones(2))
            assert dr.requires_grad and not dr.is_leaf
            assert type(dr.grad_fn).__name__ == "ViewBackward0"
            plain = fw.unpack_dual(x * 2)  # no input carries a tangent: none
            assert plain.tangent is None
            assert fw.unpack_dual(d.detach()).tangent is None
        assert fw.unpack_dual(d).tangent is None  # dropped with the level


def test_float64_tangent_of_a_float32_primal_stays_float64():
    ours, theirs = _tangent_both(lambda lib, a: a * 2, [_values(3)], [_values(3, "float64")])
    _same_tangent(ours, theirs)


# ----------------------------------------------------------------------------- JVP rules

def _linear(lib, x, w, b):
    return lib.nn.functional.linear(x, w, b)


COMMON = [
    # (name, f, shapes, positive inputs)
    ("add_sub_mul_div", lambda lib, a, b: a * b + a / b - a - 2 * b + 1, [(3, 4), (4,)], False),
    ("rsub_neg_pow", lambda lib, a, b: (1 - a) ** 3 - (-b) ** 2, [(3,), (3,)], False),
    ("pow_tensor", lambda lib, a, b: a ** b + 2 ** b, [(3,), (3,)], True),
    ("exp_log", lambda lib, a: a.exp() + a.log() + a.log2() + a.log10() + a.log1p()
     + a.expm1(), [(5,)], True),
    ("sqrt_rsqrt_reciprocal", lambda lib, a: a.sqrt() + a.rsqrt() + a.reciprocal(), [(5,)], True),
    ("trig", lambda lib, a: a.sin() * a.cos() + a.tanh() + a.sigmoid() + a.sinh() + a.cosh()
     + a.atan() + (a / 4).asin() + (a / 4).acos() + a.erf(), [(2, 3)], False),
    ("abs_sign", lambda lib, a: a.abs() + a.sign(), [(6,)], False),
    ("activations", lambda lib, a: lib.relu(a) + lib.nn.functional.leaky_relu(a, 0.1)
     + lib.nn.functional.gelu(a) + lib.nn.functional.silu(a) + lib.nn.functional.elu(a)
     + lib.nn.functional.softplus(a) + lib.nn.functional.hardtanh(a)
     + lib.nn.functional.mish(a) + lib.nn.functional.logsigmoid(a)
     + lib.nn.functional.hardswish(a), [(7,)], False),
    ("matmul_shapes", lambda lib, a, b, v: (a @ b).sum() + (a @ v).sum() + v @ v
     + lib.mm(a, b).mean() + lib.dot(v, v), [(3, 4), (4, 2), (4,)], False),
    ("bmm_einsum", lambda lib, a, b: lib.bmm(a, b).sum(0) + lib.einsum("bij,bjk->ik", a, b),
     [(2, 3, 4), (2, 4, 5)], False),
    ("linear", _linear, [(5, 4), (3, 4), (3,)], False),
    ("softmaxes", lambda lib, a: a.softmax(-1) + a.log_softmax(0)
     + lib.logsumexp(a, 1, keepdim=True), [(3, 4)], False),
    ("sum_mean", lambda lib, a: a.sum() + a.sum(0) + a.mean(1, keepdim=True) + a.mean(),
     [(3, 4)], False),
    ("shapes", lambda lib, a: a.reshape(4, 3).T.unsqueeze(0).permute(2, 0, 1).squeeze(1)
     .transpose(0, 1).flatten().view(2, 6)[1:, ::2], [(3, 4)], False),
    ("cat_stack_expand", lambda lib, a, b: lib.cat([a, b.expand(2, 4)]).sum(0)
     + lib.stack([a[0], b[0]]).sum(0), [(3, 4), (1, 4)], False),
    ("indexing", lambda lib, a: a[1] + a[:, 2].sum() + a[[0, 2]].sum(0) + a[..., 0].sum()
     + a.clone().to(lib.float64).float().sum(), [(3, 4)], False),
    ("cumsum", lambda lib, a: a.cumsum(1), [(3, 4)], False),
]


@pytest.mark.parametrize("name,f,shapes,positive", COMMON, ids=[c[0] for c in COMMON])
def test_common_ops_give_pytorchs_tangents(name, f, shapes, positive):
    primals = [_values(s, positive=positive) for s in shapes]
    tangents = [_values(s) for s in shapes]
    _same_tangent(*_tangent_both(f, primals, tangents))
    # one input without a tangent: its term drops out
    if len(shapes) > 1:
        _same_tangent(*_tangent_both(f, primals, [None] + tangents[1:]))


def test_a_number_operand_has_no_tangent():
    _same_tangent(*_tangent_both(lambda lib, a: (a + 3) * 2 - 1 / (a - 9) + 2 ** a,
                                 [_values(4)], [_values(4)]))


def test_an_op_without_a_rule_raises_pytorchs_error():
    class CubeBackward0(Op):  # an op that wrote no jvp
        def forward(self, a):
            return a ** 3

    x = mg.randn(3)
    CubeBackward0.run((x,))  # fine without tangents
    with mfw.dual_level():
        d = mfw.make_dual(x, mg.ones(3))
        with pytest.raises(NotImplementedError,
                           match="Trying to use forward AD with cube that does not support it"):
            CubeBackward0.run((d,))
    with tfw.dual_level(), pytest.raises(NotImplementedError, match="Trying to use forward AD"):
        torch.special.zeta(tfw.make_dual(torch.ones(2), torch.ones(2)), torch.ones(2))


def test_integer_results_carry_no_tangent():
    for lib, fw in ((mg, mfw), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, -2.0]), lib.tensor([1.0, 1.0]))
            assert fw.unpack_dual(d.argmax()).tangent is None
            assert fw.unpack_dual(d > 0).tangent is None


# ----------------------------------------------------------------------------- Function

def _functions(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            ctx.seen = lib.autograd.forward_ad.unpack_dual(x).tangent
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            assert tk is None
            x, y = ctx.saved_tensors
            return (tx * y + x * ty) * ctx.k

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    return Scale, NoJvp


def test_custom_function_jvp_and_save_for_forward():
    results = []
    for lib, fw in ((mg, mfw), (torch, tfw)):
        Scale, NoJvp = _functions(lib)
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0]))
            y = lib.tensor([3.0, 4.0])  # no tangent: jvp gets zeros for it
            out = Scale.apply(x, y, 2)
            results.append(fw.unpack_dual(out))
            with pytest.raises(NotImplementedError, match="must implement the jvp function"):
                NoJvp.apply(x)
            assert fw.unpack_dual(NoJvp.apply(y)).tangent is None
    _same_tangent(*results)


def test_gradcheck_checks_forward_mode():
    x = mg.tensor(_values(3, "float64"), requires_grad=True)
    w = mg.tensor(_values((2, 3), "float64"), requires_grad=True)
    assert mg.autograd.gradcheck(lambda x, w: (w @ x).tanh().exp(), (x, w),
                                 check_forward_ad=True)

    class Wrong(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            return g  # wrong too, but only forward mode is checked below

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * t * x.exp()

    with pytest.raises(mg.autograd.GradcheckError, match="forward mode mismatch"):
        mg.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert not mg.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                                     check_backward_ad=False, raise_exception=False)
    with pytest.raises(NotImplementedError, match="check_batched_forward_grad"):
        mg.autograd.gradcheck(Wrong.apply, (x,), check_batched_forward_grad=True)


# ----------------------------------------------------------------------------- nesting

def _f(lib, a):
    return (a.sin() * a ** 2).sum() + (a.exp() * a.tanh()).mean()


def test_jvp_of_grad_is_a_hessian_vector_product():
    x, v = _values(4, "float64"), _values(4, "float64")
    ours = mf.jvp(mf.grad(lambda a: _f(mg, a)), (mg.tensor(x),), (mg.tensor(v),))
    theirs = tf.jvp(tf.grad(lambda a: _f(torch, a)), (torch.tensor(x),), (torch.tensor(v),))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(_numpy(o), _numpy(t), rtol=1e-10)


def test_forward_over_reverse_with_dual_tensors_and_autograd_grad():
    x, v = _values(4, "float64"), _values(4, "float64")
    found = []
    for lib, fw in ((mg, mfw), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x, requires_grad=True), lib.tensor(v))
            (g,) = lib.autograd.grad(_f(lib, d), d, create_graph=True)
            found.append(fw.unpack_dual(g))
    _same_tangent(*found, rtol=1e-10, atol=1e-12)


def test_hessian_every_way_and_reverse_over_forward():
    x = _values(3, "float64")
    expected = tf.hessian(lambda a: _f(torch, a))(torch.tensor(x))
    f = lambda a: _f(mg, a)
    for ours in (mf.hessian(f)(mg.tensor(x)), mf.jacfwd(mf.jacrev(f))(mg.tensor(x)),
                 mf.jacrev(mf.jacfwd(f))(mg.tensor(x))):
        np.testing.assert_allclose(_numpy(ours), _numpy(expected), rtol=1e-10)


def test_a_gradient_flows_through_a_tangent():
    x, v = _values(3, "float64"), _values(3, "float64")
    found = []
    for lib, fw in ((mg, mfw), (torch, tfw)):
        xt = lib.tensor(x, requires_grad=True)
        vt = lib.tensor(v, requires_grad=True)
        with fw.dual_level():
            tangent = fw.unpack_dual(_f(lib, fw.make_dual(xt, vt))).tangent
            tangent.backward()
        found.append((xt.grad, vt.grad))
    for o, t in zip(*found):
        np.testing.assert_allclose(_numpy(o), _numpy(t), rtol=1e-10)


def test_custom_function_with_setup_context_and_jvp():
    found = []
    for lib, fw in ((mg, mfw), (torch, tfw)):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(output)

            @staticmethod
            def backward(ctx, g):
                raise AssertionError("forward mode only")

            @staticmethod
            def jvp(ctx, t):
                (y,) = ctx.saved_tensors
                return t * y

        with fw.dual_level():
            x = fw.make_dual(lib.tensor([0.5, -1.0]), lib.tensor([2.0, 3.0]))
            found.append(fw.unpack_dual(Exp.apply(x) * 2))
    _same_tangent(*found)


def test_what_jvp_of_grad_hands_back_requires_grad_as_in_torch_func():
    """A tangent recorded through grad's own leaf stays inside; one that depends on a tensor
    outside (closed over, or a primal that requires grad) stays differentiable."""
    def flags(lib):
        x = lib.ones(3, requires_grad=True)
        cases = [
            (lib.func.grad(lambda y: (y ** 3).sum()), (lib.ones(3),)),
            (lambda y: y * x, (lib.ones(3),)),
            (lambda y: y ** 2, (x,)),
            (lib.func.grad(lambda y: (y ** 2 * x).sum()), (lib.ones(3),)),
        ]
        out = []
        for fn, primals in cases:
            p, t = lib.func.jvp(fn, primals, (lib.ones(3),))
            out.append((p.requires_grad, t.requires_grad, round(float(t.sum().detach()), 6)))
        return out
    assert flags(mg) == flags(torch)


def test_a_functions_jvp_sees_only_what_save_for_forward_kept():
    def saved_in_jvp(lib, fa):
        seen = []

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                seen.append(len(ctx.saved_tensors))
                return t * 2

        with fa.dual_level():
            Double.apply(fa.make_dual(lib.ones(2), lib.ones(2)))
        return seen
    assert saved_in_jvp(mg, mfw) == saved_in_jvp(torch, tfw) == [0]
