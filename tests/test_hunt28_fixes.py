"""The differences the fuzz hunt of issue 28 found, each fixed to PyTorch 2.13's behaviour.

Every case runs the same code with ``lib`` = minigrad and ``lib`` = torch and compares what
both give: values (with the sign of zeros and the place of nans), dtypes, shapes,
requires_grad, gradients, or the exception type and the start of its message.

* pow with a tensor exponent is the C library's pow (``(-inf) ** 0.5`` is inf), whatever
  the exponent's shape; a number exponent of 0.5 is sqrt (nan there), as PyTorch has it;
* clamp keeps the input where it ties with a bound (``clamp(-0.0, min=0.0)`` is -0.0);
* softmax of an empty bool tensor; the order of complaints about a dim list;
* writing into a view with no element; a view made in no_grad mode of a tensor that
  requires grad; ``as_strided``; Tensor methods refuse ``out=`` as PyTorch's do;
* var's gradient with no degrees of freedom left, at an inf or nan element.
"""

import math
import re

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch", reason="parity tests need PyTorch")

INF, NAN = math.inf, math.nan


def outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as error:  # noqa: BLE001  (comparing exceptions is the point)
        return error


def builtin_type(error):
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


def assert_same(ours, theirs, what="", words=True):
    """``ours`` (minigrad) is what ``theirs`` (torch) is: tensors to the bit pattern of
    zeros and nans, tuples item by item, exceptions by type and (``words``) first words."""
    if isinstance(theirs, Exception):
        assert isinstance(ours, builtin_type(theirs)), f"{what}: {ours!r} vs {theirs!r}"
        if not words:
            return
        def first_words(error):  # (PyTorch says "permute(sparse_coo):" for dense tensors too)
            return re.sub(r"\(\w*\)", "()", str(error)).split(":")[0].split()[:4]
        assert first_words(ours) == first_words(theirs), f"{what}: {ours} vs {theirs}"
        return
    assert not isinstance(ours, Exception), f"{what}: minigrad raised {ours!r}"
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs), what
        for a, b in zip(ours, theirs):
            assert_same(a, b, what, words)
        return
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor), f"{what}: {ours!r}"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
        assert ours.requires_grad == theirs.requires_grad, what
        a, b = ours.detach().numpy(), theirs.detach().numpy()
        assert a.shape == b.shape, what
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True, err_msg=what)
        if a.dtype.kind == "f":
            zeros = b == 0
            assert (np.signbit(a[zeros]) == np.signbit(b[zeros])).all(), f"{what}: -0.0"
        return
    assert ours == theirs or (ours != ours and theirs != theirs), f"{what}: {ours} vs {theirs}"


def check(fn, what="", words=True):
    assert_same(outcome(fn, mg), outcome(fn, torch), what, words)


# ------------------------------------------------------------------ pow

SPECIAL = [-INF, -0.0, 0.0, INF, -1.0, NAN, -2.0, 2.0, 0.5]
FRACTIONS = [0.5, 1.5, 2.5, -0.5, 0.25, -1.5, 2.0, 3.0, -1.0, 0.0, INF, -INF, NAN]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["number", "0-dim", "vector"])
def test_pow_values_and_gradients_at_special_points(kind, dtype):
    """(-inf) ** 0.5 is inf and (-0.0) ** 0.5 is +0.0 with a tensor exponent (C's pow),
    nan and -0.0 with a number exponent (PyTorch takes sqrt); the gradients follow."""
    for exponent in FRACTIONS:
        def run(lib):
            x = lib.tensor(SPECIAL, dtype=getattr(lib, dtype), requires_grad=True)
            if kind == "number":
                e = exponent
            else:
                e = lib.tensor(exponent if kind == "0-dim" else [exponent] * len(SPECIAL),
                               dtype=getattr(lib, dtype), requires_grad=True)
            y = x ** e
            y.backward(lib.ones(y.shape, dtype=y.dtype))
            return y.detach(), x.grad, (None if kind == "number" else e.grad)
        check(run, f"x ** {exponent} ({kind})")


def test_pow_in_place_and_function_with_a_0_dim_exponent():
    for fn in (lambda lib, x, e: x.pow_(e), lambda lib, x, e: lib.pow(x, e),
               lambda lib, x, e: x.pow(e)):
        check(lambda lib: fn(lib, lib.tensor([-INF, -0.0, 4.0]), lib.tensor(0.5)), "pow")


# ------------------------------------------------------------------ clamp and -0.0

BOUNDS = [None, 0.0, -0.0, 0, -1.0, 1.0, NAN, INF, -INF]


@pytest.mark.parametrize("form", ["clamp", "clip", "clamp_", "function"])
def test_clamp_keeps_the_input_where_it_ties_with_a_bound(form):
    values = [-0.0, 0.0, -1.0, 2.0, NAN, -INF]
    for low in BOUNDS:
        for high in BOUNDS:
            if low is None and high is None:
                continue
            def run(lib):
                x = lib.tensor(values, dtype=lib.float64)
                if form == "function":
                    return lib.clamp(x, low, high)
                return getattr(x, form)(low, high)
            check(run, f"{form}({low}, {high})")


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max", "clamp_min_", "clamp_max_"])
def test_clamp_min_and_max_keep_the_sign_of_a_tied_zero(name):
    for bound in [0.0, -0.0, 1.0, NAN]:
        for tensor_bound in (False, True):
            def run(lib):
                x = lib.tensor([-0.0, 0.0, -2.0, 3.0])
                b = lib.tensor(bound) if tensor_bound else bound
                return getattr(x, name)(b)
            check(run, f"{name}({bound})")
    check(lambda lib: getattr(lib, name.rstrip("_"))(lib.tensor([-0.0, 2.0]), 0.0))


def test_clamp_with_tensor_bounds_and_its_gradients():
    """Two tensor bounds: a tie keeps the input (on PyTorch's short-tensor path), crossed
    bounds give max, a nan bound nan; gradients go to whichever value was picked."""
    lows = [0.0, -0.0, 1.0, NAN, 0.0, 0.5]
    highs = [0.0, 0.0, -0.0, 1.0, NAN, 0.25]
    for x_values in ([-0.0] * 6, [0.0] * 6, [-1.0, 2.0, 0.5, 0.0, -0.0, 0.3]):
        def run(lib):
            x = lib.tensor(x_values, dtype=lib.float64, requires_grad=True)
            lo = lib.tensor(lows, dtype=lib.float64, requires_grad=True)
            hi = lib.tensor(highs, dtype=lib.float64, requires_grad=True)
            y = x.clamp(lo, hi)
            y.backward(lib.arange(1.0, 7.0, dtype=lib.float64))
            return y.detach(), x.grad, lo.grad, hi.grad
        check(run, str(x_values))


def test_clamp_min_and_max_are_functions_of_minigrad_with_out():
    for name in ("clamp_min", "clamp_max"):
        check(lambda lib: getattr(lib, name)(lib.tensor([-1.0, 2.0]), 0.5,
                                             out=lib.zeros(2)), name)


# ------------------------------------------------------------------ softmax of nothing

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float32"])
def test_softmax_of_an_empty_tensor_keeps_its_dtype_and_of_a_full_one_refuses_integers(
        name, dtype):
    for shape in [(0,), (2, 0), (0, 3), (2,), ()]:
        for dim in (0, -1, 1):
            check(lambda lib: getattr(lib.zeros(shape, dtype=getattr(lib, dtype)), name)(dim),
                  f"{name} {shape} dim={dim}")
            check(lambda lib: getattr(lib.nn.functional, name)(
                lib.zeros(shape, dtype=getattr(lib, dtype)), dim, dtype=lib.float64),
                f"F.{name} {shape} dim={dim} dtype=float64")


# ------------------------------------------------------------------ dim lists

DIM_LISTS = [(1, 1, 5), (0, 0, 3), (5, 1, 1), (0, 5), (5, 0), (0, -3), (2, 3), (1, -2)]


@pytest.mark.parametrize("call", [
    lambda x, d: x.var(d), lambda x, d: x.std(d, correction=0), lambda x, d: x.norm(2, d),
    lambda x, d: x.flip(d), lambda x, d: x.squeeze(d), lambda x, d: x.permute(*d),
    lambda x, d: x.sum(d), lambda x, d: x.mean(d), lambda x, d: x.amax(d),
    lambda x, d: x.logsumexp(d), lambda x, d: x.any(d), lambda x, d: x.all(d),
], ids=["var", "std", "norm", "flip", "squeeze", "permute", "sum", "mean", "amax",
        "logsumexp", "any", "all"])
def test_which_complaint_about_a_dim_list_wins(call):
    """var, std, norm, flip, squeeze and permute check the dims one after the other (a
    repeat before a later dim out of range); sum, mean, amax, logsumexp, any and all check
    every range first: PyTorch's two orders."""
    for dims in DIM_LISTS:
        check(lambda lib: call(lib.ones(2, 3, 4), dims), str(dims))
        check(lambda lib: lib.var_mean(lib.ones(2, 3, 4), dims), f"var_mean {dims}")


def test_any_and_all_over_several_dims():
    for dims in [(0, 1), (1,), (), [0], (-1, 0)]:
        for keepdim in (False, True):
            for name in ("any", "all"):
                check(lambda lib: getattr(lib.tensor([[0, 1, 0], [1, 1, 1]], dtype=lib.uint8),
                                          name)(dims, keepdim=keepdim), f"{name} {dims}")


# ------------------------------------------------------------------ var with no dof left

@pytest.mark.parametrize("data", [[1.0], [-INF], [INF], [NAN], [NAN, 1.0], [INF, 1.0],
                                  [-INF, 1.0], [1.0, 3.0], [1.0, 1.0], [INF, -INF]])
def test_var_and_std_gradients_with_no_degrees_of_freedom_left(data):
    for name in ("var", "std"):
        for correction in (len(data), len(data) + 1):
            def run(lib):
                x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
                y = getattr(x, name)(correction=correction)
                y.backward(lib.tensor(-1.5, dtype=lib.float64))
                return y.detach(), x.grad
            with pytest.warns(UserWarning):
                check(run, f"{name} correction={correction}")


# ------------------------------------------------------------------ int / int

INTS = ["bool", "uint8", "int32", "int64"]


def test_true_division_of_integer_tensors_casts_each_from_its_own_dtype():
    """int64 -2 (0-dim) / a uint8 tensor: the common dtype is uint8, but PyTorch casts
    each operand to float32 from its own dtype (-2.0, not 254.0)."""
    for left in INTS:
        for right in INTS:
            for shapes in [((), (3,)), ((3,), ()), ((3,), (3,)), ((), ())]:
                def run(lib):
                    a = lib.tensor(-2 if left in ("int32", "int64") else 1,
                                   dtype=getattr(lib, left)).expand(shapes[0])
                    b = lib.tensor(200 if right == "uint8" else -3 if right != "bool" else True,
                                   dtype=getattr(lib, right)).expand(shapes[1])
                    return a / b, b / a
                check(run, f"{left}{shapes[0]} / {right}{shapes[1]}")


# ------------------------------------------------------------------ a window of padding only

def test_max_pool_with_a_window_of_padding_only():
    """max_pool1d(x of length 1, 2, None, 1, 2, True): the one window sees padding only.
    The forward is PyTorch's (-inf); PyTorch's backward there writes outside its gradient's
    memory (the process dies), so the gradient is checked alone: no input element was
    picked, every gradient is 0."""
    check(lambda lib: lib.nn.functional.max_pool1d(
        lib.tensor([[[0.1], [1.0], [-0.0]]], dtype=lib.float64), 2, None, 1, 2, True))
    x = mg.tensor([[[0.1], [1.0], [-0.0]]], dtype=mg.float64, requires_grad=True)
    mg.nn.functional.max_pool1d(x, 2, None, 1, 2, True).sum().backward()
    assert x.grad.tolist() == [[[0.0], [0.0], [0.0]]]


# ------------------------------------------------------------------ pooling and norms

@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float64"])
def test_average_pooling_takes_floats_and_int64_only(dtype):
    for name in ("avg_pool1d", "avg_pool2d"):
        check(lambda lib: getattr(lib.nn.functional, name)(
            lib.ones(1, 2, 4, dtype=getattr(lib, dtype)), 2), f"{name} {dtype}")


NORM_INPUT = [[[[2.0, -3.0], [2.0, -1.0]], [[-2.0, -2.25], [0.01, -3.8]]]]


@pytest.mark.parametrize("weight", [[-INF, INF], [-1.75, 1.9], [0.0, 1.0]])
@pytest.mark.parametrize("bias", [None, [0.0, 0.0], [1.0, -1.0]])
def test_norms_compute_as_pytorch_with_infinite_or_zero_weights(weight, bias):
    """group norm and batch norm are x * alpha + beta per channel (an infinite weight gives
    PyTorch's nan), layer norm xhat * weight + bias; a missing bias is a bias of 0 (a -0.0
    product becomes +0.0, which ``2.0 // y`` tells apart)."""
    def args(lib):
        return (lib.tensor(weight, dtype=lib.float64),
                None if bias is None else lib.tensor(bias, dtype=lib.float64))

    def x(lib):
        return lib.tensor(NORM_INPUT, dtype=lib.float64)

    check(lambda lib: lib.nn.functional.group_norm(x(lib), 1, *args(lib)), "group_norm")
    check(lambda lib: lib.nn.functional.batch_norm(x(lib), None, None, *args(lib), True),
          "batch_norm")
    check(lambda lib: lib.nn.functional.layer_norm(x(lib).permute(0, 2, 3, 1), (2,),
                                                   *args(lib)), "layer_norm")
    check(lambda lib: 2.0 // lib.nn.functional.layer_norm(
        lib.tensor([[1.2, 1.2]], dtype=lib.float64), (2,), *args(lib)), "layer_norm of equals")


@pytest.mark.parametrize("exponent", [False, True, 0, 0.0, 1, 2])
def test_pow_gradient_with_a_bool_exponent(exponent):
    """x ** False: PyTorch's backward takes the general way, 0 * x^-1 (nan at 0, -0.0 where
    x < 0), where x ** 0 gives zeros."""
    for dtype in ("float32", "float64"):
        def run(lib):
            x = lib.tensor([0.0, -0.0, 2.0, -1.5, INF, NAN], dtype=getattr(lib, dtype),
                           requires_grad=True)
            y = x ** exponent
            y.backward(lib.full((6,), 3.0, dtype=getattr(lib, dtype)))
            return y.detach(), x.grad
        check(run, f"x ** {exponent!r} ({dtype})")


def test_layer_norm_input_gradient_with_an_infinite_weight_is_pytorchs():
    """PyTorch's layer-norm kernel computes the input's gradient as a g + b x + c per row;
    with an infinite weight that order gives nan where the textbook form gives ±inf."""
    rng = np.random.default_rng(0)
    for trial in range(100):
        shape = [(2, 4), (3, 5)][trial % 2]
        x, w, dy = (rng.normal(size=s).round(2).astype(np.float32)
                    for s in (shape, shape[-1:], shape))
        w[rng.integers(shape[-1])] = [np.inf, -np.inf][trial // 2 % 2]
        grads = []
        for lib in (torch, mg):
            X = lib.tensor(x.tolist(), requires_grad=True)
            lib.nn.functional.layer_norm(X, shape[-1:], lib.tensor(w.tolist())).backward(
                lib.tensor(dy.tolist()))
            grads.append(np.asarray(X.grad.tolist()))
        want, got = grads
        assert np.array_equal(np.isnan(got), np.isnan(want)), (trial, got, want)
        assert np.array_equal(np.where(np.isinf(got), got, 0), np.where(np.isinf(want), want, 0))


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 6, 2), (1, 6, 2, 2)])
def test_group_norm_input_gradient_with_an_infinite_weight_is_pytorchs(shape):
    """PyTorch's group-norm kernel computes the input's gradient as (invstd w) dy + c2 x + c3
    per sample and group; with an infinite weight that gives nan where the textbook form
    gives ±inf."""
    rng = np.random.default_rng(1)
    for trial in range(30):
        x, w, dy = (rng.normal(size=s).round(2).astype(np.float32)
                    for s in (shape, shape[1:2], shape))
        w[rng.integers(shape[1])] = [np.inf, -np.inf][trial % 2]
        grads = []
        for lib in (torch, mg):
            X = lib.tensor(x.tolist(), requires_grad=True)
            lib.nn.functional.group_norm(X, 2, lib.tensor(w.tolist())).backward(
                lib.tensor(dy.tolist()))
            grads.append(np.asarray(X.grad.tolist()))
        want, got = grads
        assert np.array_equal(np.isnan(got), np.isnan(want)), (trial, got, want)
        assert np.array_equal(np.where(np.isinf(got), got, 0), np.where(np.isinf(want), want, 0))


def test_batch_norm_input_gradient_with_an_infinite_weight_is_pytorchs():
    """PyTorch's batch-norm kernel scales by the weight last: an infinite weight gives ±inf
    (where the rest is not exactly 0), not the nan of scaling the gradient first."""
    rng = np.random.default_rng(2)
    for trial in range(30):
        x, dy = (rng.normal(size=(4, 3)).round(2) for _ in range(2))
        w = rng.normal(size=3).round(2)
        w[trial % 3] = [np.inf, -np.inf][trial % 2]
        grads = []
        for lib in (torch, mg):
            X = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
            lib.nn.functional.batch_norm(X, None, None, lib.tensor(w.tolist(), dtype=lib.float64),
                                         training=True).backward(lib.tensor(dy.tolist(),
                                                                            dtype=lib.float64))
            grads.append(np.asarray(X.grad.tolist()))
        want, got = grads
        assert np.array_equal(np.isnan(got), np.isnan(want)), (trial, got, want)
        assert np.array_equal(np.where(np.isinf(got), got, 0), np.where(np.isinf(want), want, 0))


def test_adaptive_avg_pool2d_backward_keeps_inf_and_nan_in_their_windows():
    """A non-finite gradient reaches only its own window's inputs (the averaging-matrix
    product would turn inf * 0 into nan outside it), as in PyTorch."""
    rng = np.random.default_rng(3)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(1, 5, size=2))
        oh, ow = (int(v) for v in rng.integers(1, 6, size=2))
        x, g = rng.normal(size=(2, 2, h, w)), rng.normal(size=(2, 2, oh, ow))
        g.flat[rng.integers(g.size, size=2)] = [math.inf, math.nan][trial % 2], -math.inf
        grads = []
        for lib in (torch, mg):
            X = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
            lib.nn.functional.adaptive_avg_pool2d(X, (oh, ow)).backward(
                lib.tensor(g.tolist(), dtype=lib.float64))
            grads.append(np.asarray(X.grad.tolist()))
        want, got = grads
        assert np.array_equal(np.isnan(got), np.isnan(want)), (trial, got, want)
        np.testing.assert_allclose(np.where(np.isnan(got), 0, got), np.where(np.isnan(want), 0, want),
                                   rtol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape", [((0, 2), (3, 2)), ((2, 2), (0, 2)), ((2, 0), (3, 0)),
                                              ((0, 0), (0, 0)), ((1, 2, 0), (3, 0))])
def test_linear_of_bool_tensors_with_no_features_is_pytorchs(x_shape, w_shape):
    """PyTorch adds a bool bias to a product over no features as integers and refuses the
    cast back to bool; other empty bool products come out empty."""
    outcomes = []
    for lib in (torch, mg):
        x, w = lib.ones(*x_shape, dtype=lib.bool), lib.ones(*w_shape, dtype=lib.bool)
        try:
            outcomes.append(tuple(lib.nn.functional.linear(x, w, lib.ones(w_shape[0],
                                                                          dtype=lib.bool)).shape))
        except RuntimeError as error:
            outcomes.append(str(error).split(":")[0])
    assert outcomes[1] == outcomes[0]
