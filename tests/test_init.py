"""nn.init against PyTorch. The two libraries draw from different random streams, so the
values cannot match: what is compared is the distribution each function draws from (its
bound, standard deviation or truncation), measured on large tensors filled from fixed seeds
(deterministic), with tolerances that follow from the sample size."""

import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import init


def _gen(lib, seed):
    return lib.Generator().manual_seed(seed)


def _fill(lib, name, shape, kwargs, seed=0, dtype="float32"):
    t = lib.empty(*shape, dtype=getattr(lib, dtype))
    out = getattr(lib.nn.init, name)(t, **kwargs, generator=_gen(lib, seed))
    assert out is t
    return t.numpy().astype(np.float64)


# ------------------------------------------------------------------ uniform: the bound

# (function, shape, kwargs, the bound PyTorch documents: gain * sqrt(3 / fan) for kaiming,
#  gain * sqrt(6 / (fan_in + fan_out)) for xavier). The shapes make fan_in and fan_out differ
#  by a factor >= 4/3, so a bound computed from the wrong fan is 15% off or more.
UNIFORM = [
    ("kaiming_uniform_", (300, 400), {}, math.sqrt(2) * math.sqrt(3 / 400)),  # a=0: slope 0
    ("kaiming_uniform_", (300, 400), dict(a=math.sqrt(5)), 1 / math.sqrt(400)),
    ("kaiming_uniform_", (300, 400), dict(mode="fan_out", nonlinearity="relu"),
     math.sqrt(2) * math.sqrt(3 / 300)),
    ("kaiming_uniform_", (300, 400), dict(mode="FAN_OUT", nonlinearity="tanh"),
     5 / 3 * math.sqrt(3 / 300)),
    ("kaiming_uniform_", (64, 32, 5, 5), dict(a=0.2), math.sqrt(2 / 1.04) * math.sqrt(3 / 800)),
    ("kaiming_uniform_", (64, 32, 5, 5), dict(mode="fan_out", nonlinearity="conv2d"),
     math.sqrt(3 / 1600)),
    ("xavier_uniform_", (300, 400), {}, math.sqrt(6 / 700)),
    ("xavier_uniform_", (64, 32, 5, 5), dict(gain=init.calculate_gain("selu")),
     0.75 * math.sqrt(6 / 2400)),
]


@pytest.mark.parametrize("name,shape,kwargs,bound", UNIFORM,
                         ids=[f"{n}-{'x'.join(map(str, s))}-{k}" for n, s, k, _ in UNIFORM])
def test_uniform_inits_have_pytorchs_bound(name, shape, kwargs, bound, torch):
    """Every value within ±bound (float32 rounding aside), and the largest |value| within 0.1%
    of it: for n >= 51,200 uniform draws, P(max |v| < (1 - 1e-3) bound) = 0.999^n < e^-51."""
    for lib in (mg, torch):
        values = _fill(lib, name, shape, kwargs)
        assert np.abs(values).max() <= bound * (1 + 1e-6), lib.__name__
        assert np.abs(values).max() >= bound * (1 - 1e-3), lib.__name__


# ------------------------------------------------------------------ normal: the std

# (function, shape, kwargs, the std PyTorch documents: gain / sqrt(fan) for kaiming,
#  gain * sqrt(2 / (fan_in + fan_out)) for xavier)
NORMAL = [
    ("kaiming_normal_", (300, 400), {}, math.sqrt(2) / math.sqrt(400)),  # a=0: slope 0
    ("kaiming_normal_", (300, 400), dict(nonlinearity="relu"), math.sqrt(2) / math.sqrt(400)),
    ("kaiming_normal_", (300, 400), dict(mode="fan_out", nonlinearity="relu"),
     math.sqrt(2) / math.sqrt(300)),
    ("kaiming_normal_", (300, 400), dict(a=0.2, mode="fan_out"),
     math.sqrt(2 / 1.04) / math.sqrt(300)),
    ("kaiming_normal_", (64, 32, 4, 4, 4), dict(nonlinearity="selu"), 0.75 / math.sqrt(2048)),
    ("kaiming_normal_", (64, 32, 4, 4, 4), dict(mode="fan_out", nonlinearity="conv3d"),
     1 / math.sqrt(4096)),
    ("kaiming_normal_", (64, 32, 8, 8), dict(nonlinearity="conv_transpose2d"),
     1 / math.sqrt(2048)),
    ("xavier_normal_", (300, 400), {}, math.sqrt(2 / 700)),
    ("xavier_normal_", (64, 32, 8, 8), dict(gain=init.calculate_gain("tanh")),
     5 / 3 * math.sqrt(2 / (2048 + 4096))),
]


@pytest.mark.parametrize("name,shape,kwargs,std", NORMAL,
                         ids=[f"{n}-{'x'.join(map(str, s))}-{k}" for n, s, k, _ in NORMAL])
def test_normal_inits_have_pytorchs_std(name, shape, kwargs, std, torch):
    """The sample std of n >= 120,000 normal draws has a relative standard error of
    1/sqrt(2n) <= 0.21%: 1.5% is seven of them, while a wrong fan or gain is 15% off or more.
    The mean's standard error is std/sqrt(n): allowed, seven of them."""
    for lib in (mg, torch):
        values = _fill(lib, name, shape, kwargs)
        n = values.size
        assert n >= 120_000
        assert values.std() == pytest.approx(std, rel=0.015), lib.__name__
        assert abs(values.mean()) < 7 * std / math.sqrt(n), lib.__name__


# ------------------------------------------------------------------ trunc_normal_

def _trunc_normal_cdf(x, mean, std, a, b):
    phi = np.vectorize(lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2))))
    lo, hi = phi((a - mean) / std), phi((b - mean) / std)
    return (phi((x - mean) / std) - lo) / (hi - lo)


TRUNC = [
    dict(),                                    # N(0, 1) in [-2, 2]: values outside redrawn
    dict(mean=0.5, std=0.2, a=0.0, b=1.0),     # redrawn
    dict(std=0.02, a=-0.04, b=0.04),           # the usual transformer init: ±2 std, redrawn
    dict(mean=0.0, std=1.0, a=1.0, b=3.0),     # 16% of the normal in [a, b]: rejection
    dict(mean=0.0, std=1.0, a=2.0, b=4.0),     # 2.3%, mean 2 std below a: rejection
    dict(mean=1.0, std=3.0, a=-0.5, b=0.5),    # 13%, a narrow window: rejection
]


@pytest.mark.parametrize("kwargs", TRUNC, ids=[str(k) for k in TRUNC])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_draws_pytorchs_truncated_normal(kwargs, dtype, torch):
    """Every value in [a, b], and the Kolmogorov-Smirnov distance between the n = 100,000
    values and the truncated normal's exact CDF below 2.69 / sqrt(n) = 0.0085 (the critical
    value at significance 1e-6). Drawing the plain normal, or truncating at the wrong place,
    gives distances of 0.05 and more."""
    full = {**dict(mean=0.0, std=1.0, a=-2.0, b=2.0), **kwargs}
    n = 100_000
    for lib in (mg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none of these is more than 2 std away
            values = np.sort(_fill(lib, "trunc_normal_", (n,), kwargs, dtype=dtype))
        a, b = np.array([full["a"], full["b"]], dtype=dtype)
        assert values[0] >= a and values[-1] <= b, lib.__name__
        cdf = _trunc_normal_cdf(values, full["mean"], full["std"], full["a"], full["b"])
        ks = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
        assert ks < 2.69 / math.sqrt(n), (lib.__name__, ks)


def test_trunc_normal_warns_and_refuses_as_pytorch(torch):
    for lib in (mg, torch):
        t = lib.empty(1000, dtype=lib.float64)
        with pytest.warns(UserWarning, match="mean is more than 2 std from"):
            lib.nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=2.5, b=3.0)
        assert float(t.min()) >= 2.5 and float(t.max()) <= 3.0
        with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range"):
            lib.nn.init.trunc_normal_(t, a=2.0, b=1.0)


# ------------------------------------------------------------------ eye_ and orthogonal_

@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye_is_pytorchs(shape, torch):
    ours = nn.Parameter(mg.empty(*shape))
    theirs = torch.nn.Parameter(torch.empty(*shape))
    assert init.eye_(ours) is ours
    torch.nn.init.eye_(theirs)
    assert np.array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert ours.dtype == mg.float32 and ours.requires_grad and ours.is_leaf


@pytest.mark.parametrize("name,shape", [("eye_", (4,)), ("eye_", (2, 3, 4)),
                                        ("orthogonal_", (4,)),
                                        ("xavier_normal_", (4,)), ("kaiming_normal_", (4,))])
def test_shapes_without_a_meaning_are_refused_as_pytorch(name, shape, torch):
    messages = []
    for lib in (mg, torch):
        with pytest.raises(ValueError) as error:
            getattr(lib.nn.init, name)(lib.empty(*shape))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (6, 2, 3), (4, 3, 2)])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_gain(shape, torch):
    for lib in (mg, torch):
        t = lib.empty(*shape)
        lib.nn.init.orthogonal_(t, gain=2.0, generator=_gen(lib, 1))
        w = t.numpy().astype(np.float64).reshape(shape[0], -1)
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-5)


def test_orthogonal_is_uniform_over_orthogonal_matrices(torch):
    """QR alone returns a first column whose sign follows the algorithm (Householder gives
    w[0, 0] <= 0 every time); PyTorch multiplies by sign(diag(R)) so every orthogonal matrix
    is as likely. For a uniform 4x4 one, w[0, 0] has mean 0 and std 1/2: over 2,000 matrices
    the average has standard error 0.011, so |mean| < 0.06 (5.4 of them)."""
    for lib in (mg, torch):
        gen = _gen(lib, 2)
        firsts = []
        for _ in range(2000):
            t = lib.empty(4, 4, dtype=lib.float64)
            lib.nn.init.orthogonal_(t, generator=gen)
            firsts.append(float(t[0, 0]))
        assert abs(np.mean(firsts)) < 0.06, lib.__name__
        assert np.std(firsts) == pytest.approx(0.5, rel=0.05), lib.__name__


# ------------------------------------------------------------------ calculate_gain, modes

GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
         ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
         ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
         ("leaky_relu", 0.2), ("leaky_relu", 0), ("leaky_relu", math.sqrt(5)), ("selu", None)]


def test_calculate_gain_is_pytorchs(torch):
    for name, param in GAINS:
        ours = init.calculate_gain(name, param)
        theirs = torch.nn.init.calculate_gain(name, param)
        assert ours == theirs and type(ours) is type(theirs), (name, param)
    assert init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("conv_transpose3d") == 1


@pytest.mark.parametrize("name,param", [("softmax", None), ("Relu", None),
                                        ("leaky_relu", True), ("leaky_relu", "0.2")])
def test_calculate_gain_refuses_as_pytorch(name, param, torch):
    messages = []
    for lib in (mg, torch):
        with pytest.raises(ValueError) as error:
            lib.nn.init.calculate_gain(name, param)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_a_bad_mode_is_refused_as_pytorch(name, torch):
    messages = []
    for lib in (mg, torch):
        with pytest.raises(ValueError) as error:
            getattr(lib.nn.init, name)(lib.empty(3, 4), mode="fan_avg")
        messages.append(str(error.value))
    assert messages[0] == messages[1] == (
        "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']")


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0, 2), (0,)])
def test_kaiming_leaves_a_tensor_without_elements_alone_as_pytorch(name, shape, torch):
    for lib in (mg, torch):
        t = lib.empty(*shape)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert getattr(lib.nn.init, name)(t) is t


# ------------------------------------------------------------------ what stays as it was

def test_kaiming_uniform_draws_the_values_it_always_drew():
    """Notebooks print initial weights: kaiming_uniform_ must keep its bound, computed as
    sqrt(3) * gain / sqrt(fan), and its single uniform draw from the generator."""
    w = mg.empty(5, 7)
    init.kaiming_uniform_(w, a=math.sqrt(5), generator=_gen(mg, 3))
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + 5)) / math.sqrt(7)
    expected = np.random.Generator(np.random.PCG64(3)).uniform(-bound, bound, (5, 7))
    assert np.array_equal(w.numpy(), expected.astype(np.float32))
    mg.manual_seed(0)
    first = nn.Linear(3, 2).weight.detach().numpy()
    mg.manual_seed(0)
    expected = np.random.Generator(np.random.PCG64(0)).uniform(-1 / math.sqrt(3), 1 / math.sqrt(3),
                                                               (2, 3))
    assert np.array_equal(first, expected.astype(np.float32))


NEW = [("xavier_normal_", (6, 5), {}), ("kaiming_normal_", (6, 5), {}),
       ("trunc_normal_", (6, 5), {}), ("trunc_normal_", (6, 5), dict(a=1.0, b=3.0)),
       ("orthogonal_", (6, 5), {})]


@pytest.mark.parametrize("name,shape,kwargs", NEW, ids=[f"{n}-{k}" for n, _, k in NEW])
def test_new_inits_follow_their_generator_and_leave_parameters_leaves(name, shape, kwargs):
    """The same seed gives the same values; the default generator is not touched; a Parameter
    stays a leaf that requires grad, with its dtype (nothing is recorded)."""
    state = mg.default_generator.get_state()
    a = _fill(mg, name, shape, kwargs, seed=7)
    b = _fill(mg, name, shape, kwargs, seed=7)
    c = _fill(mg, name, shape, kwargs, seed=8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert mg.default_generator.get_state() == state
    p = nn.Parameter(mg.zeros(*shape, dtype=mg.float64))
    assert getattr(init, name)(p, **kwargs) is p
    assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.dtype == mg.float64
    assert np.all(p.detach().numpy() != 0)


def test_init_names_are_pytorchs(torch):
    for name in init.__all__:
        assert callable(getattr(torch.nn.init, name)), name
    for name in ["xavier_normal_", "kaiming_normal_", "trunc_normal_", "eye_", "orthogonal_"]:
        assert name in init.__all__
    w = mg.empty(4, 6, 2)
    assert init._calculate_fan_in_and_fan_out(w) == torch.nn.init._calculate_fan_in_and_fan_out(
        torch.empty(4, 6, 2)) == (12, 8)
