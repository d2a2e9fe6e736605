"""Second derivatives through the one-input ops of ``minigrad/ops/pointwise.py`` and
``minigrad/ops/activations.py`` match PyTorch's, including where their formulas branch
(zeros, negative values, bounds, thresholds) and where the derivative is 0 (rounding)."""

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
POSITIVE = np.abs(A) + 0.1
UNIT = np.tanh(A) * 0.9  # inside (-1, 1), for asin and acos
WITH_ZEROS = A.copy()
WITH_ZEROS[0, :2] = 0.0
WITH_ZEROS[1, 1] = -0.0
NEAR_ZERO = np.array([1e-6, 1e-4, 1e-2, 0.5, 3.0])
SCALAR = np.array(0.7)  # 0-dim: numpy gives scalars, the ops must give tensors


def F(lib):
    if lib is mg:
        return mg.nn.functional
    import torch.nn.functional
    return torch.nn.functional


SMOOTH = {
    "exp": (lambda lib, a: a.exp(), A),
    "log": (lambda lib, a: a.log(), POSITIVE),
    "sqrt": (lambda lib, a: a.sqrt(), POSITIVE),
    "sqrt_near_0": (lambda lib, a: a.sqrt(), NEAR_ZERO),
    "reciprocal": (lambda lib, a: a.reciprocal(), POSITIVE),
    "reciprocal_negative": (lambda lib, a: a.reciprocal(), -POSITIVE),
    "abs": (lambda lib, a: a.abs() * a, WITH_ZEROS),
    "sin": (lambda lib, a: a.sin(), A),
    "cos": (lambda lib, a: a.cos(), A),
    "tanh": (lambda lib, a: a.tanh(), A),
    "sigmoid": (lambda lib, a: a.sigmoid(), A * 3),
    "log10": (lambda lib, a: lib.log10(a), POSITIVE),
    "log2": (lambda lib, a: lib.log2(a), POSITIVE),
    "log1p": (lambda lib, a: lib.log1p(a), POSITIVE - 0.5),
    "expm1": (lambda lib, a: lib.expm1(a), A),
    "rsqrt": (lambda lib, a: a.rsqrt(), POSITIVE),
    "erf": (lambda lib, a: a.erf(), A),
    "sinh": (lambda lib, a: a.sinh(), A),
    "cosh": (lambda lib, a: a.cosh(), A),
    "asin": (lambda lib, a: a.asin(), UNIT),
    "acos": (lambda lib, a: a.acos(), UNIT),
    "atan": (lambda lib, a: a.atan(), A * 2),
    "frac": (lambda lib, a: a.frac() * a, A * 3),
    "clone": (lambda lib, a: a.clone() * a.clone(), A),
    "exp_0dim": (lambda lib, a: a.exp() * a, SCALAR),
    "tanh_0dim": (lambda lib, a: a.tanh() * a, SCALAR),
    "relu_0dim": (lambda lib, a: a.relu() * a, SCALAR),
    "chain": (lambda lib, a: (a.sin() * a.exp()).tanh().sigmoid(), A),
    "nan_to_num": (lambda lib, a: (a * a).nan_to_num(), A),
    "nan_to_num_of_nan_and_inf": (lambda lib, a: (a.log() * 2.0).nan_to_num() * a,
                                  np.array([-1.0, 0.0, 0.5, 2.0])),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_math_functions(torch, name):
    fn, value = SMOOTH[name]
    assert_second_derivatives_match(torch, fn, value)


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_math_functions_in_float32(torch, name):
    """The same in float32: every derivative keeps the dtype."""
    fn, value = SMOOTH[name]
    assert_second_derivatives_match(torch, fn, value.astype(np.float32), rtol=2e-4, atol=1e-5)


def test_two_inputs_mixed_second_derivatives(torch):
    assert_second_derivatives_match(torch, lambda lib, a, b: a.exp() * b.sin() + (a * b).tanh(),
                                    A, B)
    assert_second_derivatives_match(torch, lambda lib, a, b: (a * b).sigmoid() * a.cos(), A, B,
                                    wanted=[1])


# ------------------------------------------------------------------ flat ops: gradient 0

FLAT = {
    "floor": lambda lib, a: a.floor(),
    "ceil": lambda lib, a: a.ceil(),
    "round": lambda lib, a: a.round(),
    "round_decimals": lambda lib, a: a.round(decimals=1),
    "trunc": lambda lib, a: a.trunc(),
    "sign": lambda lib, a: a.sign(),
}


@pytest.mark.parametrize("name", sorted(FLAT))
def test_flat_ops_have_a_constant_zero_gradient(torch, name):
    """Alone: a zero first derivative without a graph, in both; times ``a``: the rounded
    values are the slope, and the second derivative comes from the product alone."""
    values = np.array([-2.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7, -1.2])
    assert_second_derivatives_match(torch, FLAT[name], values)
    assert_second_derivatives_match(torch, lambda lib, a: FLAT[name](lib, a) * a * a, values)


def test_bernoulli_has_a_constant_zero_gradient(torch):
    for lib in (mg, torch):
        p = lib.tensor([0.2, 0.5, 0.9], dtype=lib.float64, requires_grad=True)
        draws = lib.bernoulli(p * 1)
        assert type(draws.grad_fn).__name__ == "BernoulliBackward0"
        (g,) = lib.autograd.grad((draws * p).sum(), p, create_graph=True)
        np.testing.assert_array_equal(g.detach().numpy(), draws.detach().numpy())
        (h,) = lib.autograd.grad(g.sum(), p, allow_unused=True)
        assert h is None or not h.detach().numpy().any()


# ------------------------------------------------------------------ casts

@pytest.mark.parametrize("there, back", [("float", "double"), ("double", "float")])
def test_casts_between_float32_and_float64(torch, there, back):
    value = A if there == "float" else A.astype(np.float32)

    def fn(lib, a):
        b = getattr(a, there)()
        return getattr(b * b * a.sin().to(b.dtype), back)()
    assert_second_derivatives_match(torch, fn, value, rtol=1e-5, atol=1e-6)


def test_a_cast_sends_the_gradient_back_in_its_input_dtype(torch):
    for lib in (mg, torch):
        a = lib.tensor(A, requires_grad=True)
        b = a.float()
        c = b.double()
        (g,) = lib.autograd.grad((c * c).sum(), b, create_graph=True)
        assert g.dtype == lib.float32 and g.requires_grad
        (h,) = lib.autograd.grad(g.sum(), a)
        assert h.dtype == lib.float64
        np.testing.assert_allclose(h.numpy(), np.full(A.shape, 2.0))
        # the gradient of the float64 part, 1e39, is inf in float32 before it goes on
        x = lib.tensor([1.0], dtype=lib.float32, requires_grad=True)
        for create_graph in (False, True):
            (g,) = lib.autograd.grad(((x * 1e-20).double() * 1e39).sum(), x,
                                     create_graph=create_graph)
            assert g.tolist() == [float("inf")]


def test_to_dtype_is_recorded(torch):
    fn = lambda lib, a: (a.to(lib.float32).exp() * a.to(lib.float32)).to(lib.float64)  # noqa: E731
    assert_second_derivatives_match(torch, fn, A, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ activations

RELU_INPUT = np.array([[-2.0, -0.0, 0.0, 0.5], [1.5, -0.3, 2.0, 0.0], [6.0, 7.0, -6.0, 5.9]])

ACTIVATIONS = {
    "relu": lambda lib, a: a.relu() * a,
    "relu_alone": lambda lib, a: a.relu(),
    "F.relu": lambda lib, a: F(lib).relu(a) * a.exp(),
    "relu_in_place": lambda lib, a: F(lib).relu(a * 1, inplace=True) * a,
    "leaky_relu": lambda lib, a: F(lib).leaky_relu(a) * a,
    "leaky_relu_alone": lambda lib, a: F(lib).leaky_relu(a, 0.2),
    "leaky_relu_0.2": lambda lib, a: F(lib).leaky_relu(a, 0.2) * a,
    "leaky_relu_negative_slope": lambda lib, a: F(lib).leaky_relu(a, -0.5) * a,
    "leaky_relu_steep": lambda lib, a: F(lib).leaky_relu(a, 3.0) * a.sin(),
    "leaky_relu_in_place": lambda lib, a: F(lib).leaky_relu(a * 1, 0.2, inplace=True) * a,
    "gelu": lambda lib, a: F(lib).gelu(a),
    "gelu_times_a": lambda lib, a: F(lib).gelu(a) * a,
    "gelu_tanh": lambda lib, a: F(lib).gelu(a, approximate="tanh"),
    "gelu_tanh_times_a": lambda lib, a: F(lib).gelu(a, approximate="tanh") * a,
    "silu": lambda lib, a: F(lib).silu(a),
    "silu_in_place": lambda lib, a: F(lib).silu(a * 1, inplace=True),
    "elu": lambda lib, a: F(lib).elu(a),
    "elu_alpha_0.5": lambda lib, a: F(lib).elu(a, 0.5),
    "elu_alpha_2": lambda lib, a: F(lib).elu(a, 2.0) * a,
    "elu_in_place": lambda lib, a: F(lib).elu(a * 1, 1.5, inplace=True),
    "selu": lambda lib, a: F(lib).selu(a),
    "selu_in_place": lambda lib, a: F(lib).selu(a * 1, inplace=True),
    "softplus": lambda lib, a: F(lib).softplus(a),
    "softplus_beta_2": lambda lib, a: F(lib).softplus(a, beta=2.0),
    "softplus_threshold_1": lambda lib, a: F(lib).softplus(a, beta=1.5, threshold=1.0) * a,
    "hardtanh": lambda lib, a: F(lib).hardtanh(a) * a,
    "hardtanh_alone": lambda lib, a: F(lib).hardtanh(a, -0.3, 2.0),
    "hardtanh_bounds": lambda lib, a: F(lib).hardtanh(a, -0.3, 2.0) * a,
    "hardtanh_in_place": lambda lib, a: F(lib).hardtanh(a * 1, -0.3, 2.0, inplace=True) * a,
    "relu6": lambda lib, a: F(lib).relu6(a) * a,
    "relu6_in_place_alone": lambda lib, a: F(lib).relu6(a * 1, inplace=True),
    "leaky_relu_in_place_alone": lambda lib, a: F(lib).leaky_relu(a * 1, 0.2, inplace=True),
    "relu_in_place_alone": lambda lib, a: F(lib).relu(a * 1, inplace=True),
    "mish": lambda lib, a: F(lib).mish(a),
    "mish_times_a": lambda lib, a: F(lib).mish(a) * a,
    "logsigmoid": lambda lib, a: F(lib).logsigmoid(a),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("values", ["random", "branches"])
def test_activations(torch, name, values):
    """``branches``: zeros (both signs), negatives, values at the bounds of hardtanh (-0.3,
    2.0, -1, 1) and of relu6 (0, 6), past softplus's threshold. In float64, then float32
    (every derivative keeps the dtype)."""
    value = A * 2 if values == "random" else np.concatenate(
        [RELU_INPUT, [[-0.3, 2.0, -1.0, 1.0]]])
    assert_second_derivatives_match(torch, ACTIVATIONS[name], value)
    assert_second_derivatives_match(torch, ACTIVATIONS[name], value.astype(np.float32),
                                    rtol=2e-4, atol=1e-5)


def test_relu_passes_a_nan_gradient_where_positive_also_with_create_graph(torch):
    """PyTorch's threshold_backward: a nan gradient passes where out > 0 and is 0 where
    out <= 0, recorded or not."""
    seeds = np.array([np.nan, np.nan, np.inf, 1.0])
    results = []
    for lib in (mg, torch):
        for create_graph in (False, True):
            a = lib.tensor([1.0, -1.0, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(a.relu(), a, grad_outputs=lib.tensor(seeds),
                                     create_graph=create_graph)
            results.append(g.detach().numpy())
    for got in results:
        np.testing.assert_array_equal(got, np.array([np.nan, 0.0, 0.0, 1.0]))


@pytest.mark.parametrize("lib_name", ["minigrad", "torch"])
def test_in_place_leaky_relu_with_a_negative_slope_refuses_backward(torch, lib_name):
    lib = mg if lib_name == "minigrad" else torch
    a = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
    y = F(lib).leaky_relu(a * 1, -0.5, inplace=True)
    assert type(y.grad_fn).__name__ == "LeakyReluBackward1"
    with pytest.raises(RuntimeError, match="negative slope"):
        lib.autograd.grad(y.sum(), a, create_graph=True)


def test_third_derivative_through_ops_whose_formulas_are_ops(torch):
    """exp, sin, cos, abs and relu have formulas made only of Op classes: a third
    derivative too."""
    for lib in (mg, torch):
        a = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        y = ((a.sin() * a.exp()).cos() * a.abs() * a.relu() * a).sum()
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), a, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), a)
        if lib is mg:
            ours = k.numpy()
        else:
            np.testing.assert_allclose(ours, k.numpy(), rtol=1e-9)


SINGLE_OPS = {
    "exp": lambda a: a.exp(), "log": lambda a: a.abs().log(), "sqrt": lambda a: a.abs().sqrt(),
    "reciprocal": lambda a: a.reciprocal(), "abs": lambda a: a.abs(), "sin": lambda a: a.sin(),
    "cos": lambda a: a.cos(), "tanh": lambda a: a.tanh(), "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(), "sign": lambda a: a.sign(), "clone": lambda a: a.clone(),
    "double": lambda a: a.double(), "log10": lambda a: mg.log10(a.abs()),
    "log2": lambda a: mg.log2(a.abs()), "log1p": lambda a: mg.log1p(a.abs()),
    "expm1": lambda a: mg.expm1(a), "floor": lambda a: a.floor(), "ceil": lambda a: a.ceil(),
    "round": lambda a: a.round(), "round_decimals": lambda a: a.round(decimals=2),
    "trunc": lambda a: a.trunc(), "frac": lambda a: a.frac(),
    "rsqrt": lambda a: a.abs().rsqrt(), "erf": lambda a: a.erf(), "sinh": lambda a: a.sinh(),
    "cosh": lambda a: a.cosh(), "asin": lambda a: (a * 0.1).asin(),
    "acos": lambda a: (a * 0.1).acos(), "atan": lambda a: a.atan(),
    "nan_to_num": lambda a: a.nan_to_num(), "bernoulli": lambda a: mg.bernoulli(a.sigmoid()),
    "leaky_relu": lambda a: mg.nn.functional.leaky_relu(a, 0.2),
    "leaky_relu_in_place": lambda a: mg.nn.functional.leaky_relu(a * 1, 0.2, inplace=True),
    "gelu": lambda a: mg.nn.functional.gelu(a),
    "gelu_tanh": lambda a: mg.nn.functional.gelu(a, approximate="tanh"),
    "silu": lambda a: mg.nn.functional.silu(a), "elu": lambda a: mg.nn.functional.elu(a),
    "selu_in_place": lambda a: mg.nn.functional.selu(a * 1, inplace=True),
    "softplus": lambda a: mg.nn.functional.softplus(a, 2.0, 1.0),
    "hardtanh": lambda a: mg.nn.functional.hardtanh(a), "mish": lambda a: mg.nn.functional.mish(a),
    "logsigmoid": lambda a: mg.nn.functional.logsigmoid(a),
}


@pytest.mark.parametrize("name", sorted(SINGLE_OPS))
def test_each_node_sends_its_gradient_in_its_input_dtype(name):
    """Node by node, not only at the leaves (which cast what they receive): a float32 op
    gives float32 gradients, as arrays and as Tensors (create_graph)."""
    a = mg.tensor(np.concatenate([A[0], [0.0, -0.0]]).astype(np.float32), requires_grad=True)
    out = SINGLE_OPS[name](a)
    node = out.grad_fn
    grad = np.ones(out.shape, out.detach().numpy().dtype)
    with np.errstate(all="ignore"):  # (as backward runs them: log(0) is -inf, silently)
        (g,) = node.apply(grad)
        assert g.dtype == np.float32
        (g,) = node.apply(mg.tensor(grad, requires_grad=True))
    assert g.dtype == mg.float32 and isinstance(g, mg.Tensor)
