"""Second derivatives through the neural-network ops (convolution, pooling, normalisation,
embedding, padding) match PyTorch's."""

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")  # PyTorch's, even kernels

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 4, 5, 6))
W = rng.standard_normal((6, 4, 3, 2))
W_GROUPED = rng.standard_normal((6, 2, 2, 3))
B = rng.standard_normal(6)


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("options", [
    {},
    {"stride": 2},
    {"stride": (2, 1), "padding": 1},
    {"padding": (2, 1), "dilation": 2},
    {"padding": "same"},
    {"dilation": (1, 2), "stride": (1, 2)},
])
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d(torch, options, bias):
    values = (X, W, B) if bias else (X, W)

    def fn(lib, x, w, b=None):
        out = F(lib).conv2d(x, w, b, **options)
        return out * out  # so that the first derivatives depend on everything

    assert_second_derivatives_match(torch, fn, *values)


@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_groups(torch, bias):
    values = (X, W_GROUPED, B) if bias else (X, W_GROUPED)

    def fn(lib, x, w, b=None):
        out = F(lib).conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)
        return out * out

    assert_second_derivatives_match(torch, fn, *values)


def test_conv2d_linear_in_each_input(torch):
    """conv(x, w) alone: each first derivative is linear in the other input."""
    assert_second_derivatives_match(torch, lambda lib, x, w: F(lib).conv2d(x, w, padding=1),
                                    X, W)
    fn = lambda lib, x, w: (lambda out: out * out)(F(lib).conv2d(x, w))  # noqa: E731
    assert_second_derivatives_match(torch, fn, X, W, wanted=[1])
    assert_second_derivatives_match(torch, fn, X, W, wanted=[0])


def test_conv2d_twice(torch):
    w2 = rng.standard_normal((3, 6, 2, 2))

    def fn(lib, x, w, v):
        h = F(lib).conv2d(x, w, padding=1)
        return F(lib).conv2d(h * h, v, stride=2)

    assert_second_derivatives_match(torch, fn, X, W, w2)


TIES = np.array([[[[1.0, 1.0, 2.0, 2.0, 0.5],
                   [1.0, 0.0, 2.0, -1.0, 0.5],
                   [3.0, 3.0, 3.0, 3.0, -2.0],
                   [3.0, 3.0, -1.0, 3.0, 4.0]]]])


@pytest.mark.parametrize("x, options", [
    (X, {"kernel_size": 2}),
    (X, {"kernel_size": 3, "stride": 1, "padding": 1}),
    (X, {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)}),
    (X, {"kernel_size": 2, "ceil_mode": True}),
    (X[0], {"kernel_size": 2, "stride": 1}),  # unbatched
    (TIES, {"kernel_size": 2}),
    (TIES, {"kernel_size": 2, "stride": 1}),  # overlapping windows, ties
    (TIES, {"kernel_size": 3, "stride": 1, "padding": 1}),
])
def test_max_pool2d(torch, x, options):
    # (the pool alone is linear: PyTorch's first derivative then has a graph, as its backward
    # takes the input, but a zero second derivative; minigrad's has none)
    def fn(lib, x):
        out = F(lib).max_pool2d(x, **options)
        return out * out

    assert_second_derivatives_match(torch, fn, x)


@pytest.mark.parametrize("x, options", [
    (X, {"kernel_size": 2}),
    (X, {"kernel_size": 3, "stride": 1, "padding": 1}),
    (X, {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    (X, {"kernel_size": (2, 3), "stride": (1, 2), "ceil_mode": True}),
    (X, {"kernel_size": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    (X, {"kernel_size": 2, "divisor_override": 3}),
    (X[0], {"kernel_size": 2, "stride": 1}),  # unbatched
])
def test_avg_pool2d(torch, x, options):
    def fn(lib, x):
        out = F(lib).avg_pool2d(x, **options)
        return out * out

    assert_second_derivatives_match(torch, fn, x)


@pytest.mark.parametrize("x, size", [(X, (2, 3)), (X, 4), (X, (None, 4)), (X[0], (3, 2))])
def test_adaptive_avg_pool2d(torch, x, size):
    def fn(lib, x):
        out = F(lib).adaptive_avg_pool2d(x, size)
        return out * out

    assert_second_derivatives_match(torch, fn, x)


def test_pool_after_conv(torch):
    def fn(lib, x, w):
        h = F(lib).conv2d(x, w, padding=1)
        return F(lib).avg_pool2d(F(lib).max_pool2d(h * h, 2, stride=1), 2) * h.sum()

    assert_second_derivatives_match(torch, fn, X, W)


SEQ = rng.standard_normal((2, 3, 4))
GAMMA = rng.standard_normal((3, 4))
BETA = rng.standard_normal((3, 4))


@pytest.mark.parametrize("shape, affine", [((4,), "both"), ((3, 4), "both"), ((4,), "weight"),
                                           ((4,), "none"), ((3, 4), "bias")])
def test_layer_norm(torch, shape, affine):
    gamma, beta = (GAMMA[0], BETA[0]) if shape == (4,) else (GAMMA, BETA)
    params = {"both": (gamma, beta), "weight": (gamma,), "bias": (beta,), "none": ()}[affine]

    def fn(lib, x, *p):
        w = p[0] if affine in ("both", "weight") else None
        b = p[-1] if affine in ("both", "bias") else None
        if w is None and b is not None and lib is not mg:
            # PyTorch 2.13's double backward of layer_norm with a bias and no weight fails
            # ("Expected a proper Tensor but got None"): the same with a weight of ones
            w = lib.ones(shape, dtype=lib.float64)
        out = F(lib).layer_norm(x, shape, w, b, eps=1e-3)
        return out * out * x

    assert_second_derivatives_match(torch, fn, SEQ, *params)


@pytest.mark.parametrize("x", [SEQ, SEQ[:, :, 0]])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(torch, x, training):
    gamma, beta = GAMMA[:, 0], BETA[:, 0]
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2.0, 3)

    def fn(lib, x, w, b):
        rm, rv = lib.tensor(mean.copy()), lib.tensor(var.copy())
        out = F(lib).batch_norm(x, rm, rv, w, b, training=training, eps=1e-3)
        return out * out * x

    assert_second_derivatives_match(torch, fn, x, gamma, beta)


def test_batch_norm_without_running_statistics(torch):
    def fn(lib, x, w):
        out = F(lib).batch_norm(x, None, None, w, training=True)
        return out * out

    assert_second_derivatives_match(torch, fn, SEQ, GAMMA[:, 0])


TABLE = rng.standard_normal((5, 3))
IDS = np.array([[0, 2, 2], [4, 1, 2]])  # row 2 three times, row 3 never


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(torch, padding_idx):
    def fn(lib, w, v):
        out = F(lib).embedding(lib.tensor(IDS), w, padding_idx=padding_idx)
        return out * out * v

    assert_second_derivatives_match(torch, fn, TABLE, rng.standard_normal(IDS.shape + (3,)))


def test_embedding_twice(torch):
    """Looked up twice: the gradient of the second lookup depends on the first."""
    def fn(lib, w):
        first = F(lib).embedding(lib.tensor(IDS), w, padding_idx=4)
        return first * F(lib).embedding(lib.tensor(IDS[::-1].copy()), w)

    assert_second_derivatives_match(torch, fn, TABLE)


@pytest.mark.parametrize("pad, value", [
    ((1, 2), 0.0),
    ((0, 1, 2, 0), 1.5),
    ((1, 1, 1, 1, 0, 1), -2.0),
    ((-1, 2), 0.0),  # a negative amount crops
    ((1, -2, -1, 0), 3.0),
])
def test_pad(torch, pad, value):
    def fn(lib, x):
        out = F(lib).pad(x, pad, value=value)
        return out * out

    assert_second_derivatives_match(torch, fn, SEQ)


def test_pad_then_conv(torch):
    def fn(lib, x, w):
        return F(lib).conv2d(F(lib).pad(x * x, (1, 0, 2, 1)), w, stride=2)

    assert_second_derivatives_match(torch, fn, X, W)


def test_float32(torch):
    """float32 stays float32 through the recorded backward of each op."""
    x, w, seq = X.astype(np.float32), W.astype(np.float32), SEQ.astype(np.float32)

    def fn(lib, x, w):
        h = F(lib).conv2d(x, w, padding=1)
        h = F(lib).max_pool2d(h * h, 2, stride=1) + F(lib).avg_pool2d(h, 2, stride=1)
        return F(lib).adaptive_avg_pool2d(F(lib).pad(h, (1, 0)), 2)

    assert_second_derivatives_match(torch, fn, x, w, rtol=1e-4, atol=1e-4)
    assert_second_derivatives_match(
        torch, lambda lib, s, g: (lambda o: o * o)(F(lib).layer_norm(s, (4,), g)), seq,
        GAMMA[0].astype(np.float32), rtol=1e-4, atol=1e-4)
