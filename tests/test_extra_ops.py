"""log10, log2, log1p, expm1, dot, multinomial, histc and histogram against PyTorch."""

import numpy as np
import pytest

import minigrad as mg
from parity import errors_of_both

RTOL, ATOL = 1e-9, 1e-12


def _run(lib, fn, arrays):
    tensors = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *tensors)
    upstream = np.random.default_rng(2).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(upstream))
    return out, [t.grad for t in tensors]


POSITIVE = np.random.default_rng(0).uniform(0.1, 5.0, (3, 4))
SMALL = np.random.default_rng(1).uniform(-0.9, 2.0, (3, 4)) * np.array([1, 1e-9, 1e-3, 1])

ELEMENTWISE = {
    "log10": (POSITIVE, lambda lib, a: a.log10()),
    "log2": (POSITIVE, lambda lib, a: lib.log2(a)),
    "log1p": (SMALL, lambda lib, a: lib.log1p(input=a)),
    "expm1": (SMALL, lambda lib, a: a.expm1()),
    "log10_then_expm1": (POSITIVE, lambda lib, a: lib.expm1(lib.log10(a) * a.log2())),
    "dot": (POSITIVE[0], lambda lib, a: lib.dot(a, a.log1p())),
    "dot_method": (POSITIVE[1], lambda lib, a: a.dot(a * 2)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_matches_pytorch_with_gradients(name, torch):
    array, fn = ELEMENTWISE[name]
    ours, (our_grad,) = _run(mg, fn, [array])
    theirs, (their_grad,) = _run(torch, fn, [array])
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == mg.float64
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=RTOL, atol=ATOL)
    assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_log1p_and_expm1_keep_tiny_values(torch):
    """The reason they exist: (1 + 1e-10).log() is off by 1e-7 in float64; log1p is exact."""
    tiny = mg.tensor([1e-10, -1e-12], dtype=mg.float64)
    np.testing.assert_allclose(tiny.log1p().numpy(), [1e-10, -1e-12], rtol=1e-9)
    np.testing.assert_allclose(mg.expm1(tiny).numpy(), [1e-10, -1e-12], rtol=1e-9)


@pytest.mark.parametrize("expression", [
    "lib.log10(lib.tensor([1, 10, 1000]))",
    "lib.log2(lib.tensor([1, 2, 8], dtype=lib.int32))",
    "lib.log1p(lib.tensor([True, False]))",
    "lib.expm1(lib.tensor([0.5, -1.0]))",
    "lib.tensor([0.0, -1.0, float('inf')]).log10()",
    "lib.tensor([-1.0, -2.0]).log1p()",
    "lib.tensor([1000.0]).expm1()",
    "lib.dot(lib.tensor([1, 2]), lib.tensor([3, 4]))",
    "lib.dot(lib.tensor([1.5, 2.0]), lib.tensor([3.0, 4.0]))",
    "lib.dot(lib.zeros(0), lib.zeros(0))",
])
def test_values_and_dtypes_match_pytorch(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


MISTAKES = {
    "dot of a matrix": lambda lib: lib.dot(lib.ones(2, 2), lib.ones(2)),
    "dot of two dtypes": lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "dot of two lengths": lambda lib: lib.dot(lib.ones(3), lib.ones(2)),
    "dot with a list": lambda lib: lib.dot(lib.ones(2), [1.0, 2.0]),
    "multinomial of a 0-dim tensor": lambda lib: lib.multinomial(lib.tensor(1.0), 1),
    "multinomial of a 3-D tensor": lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    "multinomial of integers": lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    "multinomial of no samples": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    "multinomial of a negative weight": lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    "multinomial of nan": lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 1),
    "multinomial of inf": lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 1),
    "multinomial of zeros": lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    "multinomial of a zero row": lambda lib: lib.multinomial(lib.tensor([[1.0, 0], [0, 0]]), 1),
    "more samples than categories": lambda lib: lib.multinomial(lib.ones(3), 4),
    "histc of integers": lambda lib: lib.histc(lib.tensor([1, 2, 3]), bins=3),
    "histc with no bins": lambda lib: lib.histc(lib.tensor([1.0, 2.0]), bins=0),
    "histc with max below min": lambda lib: lib.histc(lib.tensor([1.0]), 3, min=3, max=1),
    "histc of inf": lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), bins=3),
    "histc of nan": lambda lib: lib.histc(lib.tensor([1.0, float("nan")]), bins=3),
    "histogram of integers": lambda lib: lib.histogram(lib.tensor([1, 2]), bins=4),
    "histogram with no bins": lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), bins=0),
    "histogram of a reversed range": lambda lib: lib.histogram(lib.tensor([1.0]), 4,
                                                               range=(3.0, 0.0)),
    "histogram with integer edges": lambda lib: lib.histogram(lib.tensor([1.0]),
                                                              bins=lib.tensor([1, 2])),
    "histogram with 2-D edges": lambda lib: lib.histogram(lib.tensor([1.0]),
                                                          bins=lib.tensor([[1.0, 2.0]])),
    "histogram with integer weights": lambda lib: lib.histogram(
        lib.tensor([1.0, 2.0]), bins=2, weight=lib.tensor([1, 2])),
    "histogram of nan": lambda lib: lib.histogram(lib.tensor([1.0, float("nan")]), bins=3),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_mistakes_raise_pytorchs_exception(mistake, torch):
    ours, theirs = errors_of_both(MISTAKES[mistake], torch)
    assert type(ours) is type(theirs), (ours, theirs)


# --------------------------------------------------------------------------- multinomial

@pytest.mark.parametrize("shape,num_samples,replacement", [
    ((5,), 3, False), ((5,), 5, False), ((5,), 12, True), ((4, 6), 2, False), ((4, 6), 9, True),
    ((0, 3), 2, False), ((1, 1), 1, False)])
def test_multinomial_shapes_and_dtype(shape, num_samples, replacement, torch):
    weights = np.random.default_rng(0).uniform(0.1, 1.0, shape)
    ours = mg.multinomial(mg.tensor(weights), num_samples, replacement)
    theirs = torch.multinomial(torch.tensor(weights), num_samples, replacement)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == mg.int64
    values = ours.numpy().reshape(-1, num_samples)
    assert ((values >= 0) & (values < shape[-1])).all()
    if not replacement:  # every row draws different categories
        assert all(len(set(row)) == num_samples for row in values.tolist())


def test_multinomial_with_replacement_has_pytorchs_frequencies(torch):
    weights = [0.1, 0.0, 2.0, 0.9, 1.0]
    n = 200_000
    mg.manual_seed(0)
    torch.manual_seed(0)
    ours = np.bincount(mg.tensor(weights).multinomial(n, True).numpy(), minlength=5) / n
    theirs = np.bincount(torch.tensor(weights).multinomial(n, True).numpy(), minlength=5) / n
    expected = np.array(weights) / sum(weights)
    assert ours[1] == 0 and theirs[1] == 0  # weight 0: never drawn
    sigma = np.sqrt(expected * (1 - expected) / n)
    assert (np.abs(ours - expected) < 5 * sigma + 1e-12).all(), (ours, expected)
    assert (np.abs(theirs - expected) < 5 * sigma + 1e-12).all()


def test_multinomial_without_replacement_draws_as_pytorch(torch):
    """Drawing 2 of [0.5, 0.3, 0.2] without replacement: the pair (i, j) comes with
    probability p_i p_j / (1 - p_i), in minigrad as in PyTorch."""
    p = np.array([0.5, 0.3, 0.2])
    n = 100_000
    rows = np.tile(p, (n, 1))
    gen = mg.Generator().manual_seed(3)
    ours = mg.multinomial(mg.tensor(rows), 2, generator=gen).numpy()
    theirs = torch.multinomial(torch.tensor(rows), 2).numpy()
    for draws in (ours, theirs):
        pairs = np.bincount(draws[:, 0] * 3 + draws[:, 1], minlength=9).reshape(3, 3) / n
        expected = p[:, None] * p[None, :] / (1 - p[:, None])
        np.fill_diagonal(expected, 0)
        sigma = np.sqrt(expected * (1 - expected) / n)
        assert (np.abs(pairs - expected) <= 5 * sigma + 1e-12).all(), (pairs, expected)


def test_multinomial_one_draw_per_row_has_the_row_probabilities(torch):
    p = np.array([0.1, 0.6, 0.0, 0.3])
    n = 100_000
    for lib in (mg, torch):
        draws = lib.multinomial(lib.tensor(np.tile(p, (n, 1))), 1).numpy()
        assert draws.shape == (n, 1)
        frequencies = np.bincount(draws[:, 0], minlength=4) / n
        sigma = np.sqrt(p * (1 - p) / n)
        assert (np.abs(frequencies - p) <= 5 * sigma + 1e-12).all(), (lib.__name__, frequencies)


def test_multinomial_zero_weights_come_last_without_replacement(torch):
    for lib in (mg, torch):
        draws = lib.multinomial(lib.tensor([[0.0, 1.0, 0.0, 3.0]] * 50), 4).numpy()
        assert (np.sort(draws[:, :2], axis=1) == [1, 3]).all()
        assert (np.sort(draws[:, 2:], axis=1) == [0, 2]).all()


def test_multinomial_follows_the_generator():
    weights = mg.tensor([1.0, 2.0, 3.0, 4.0])
    a = weights.multinomial(20, True, generator=mg.Generator().manual_seed(7))
    b = mg.multinomial(weights, 20, replacement=True, generator=mg.Generator().manual_seed(7))
    assert a.equal(b)
    mg.manual_seed(1)
    c = weights.multinomial(3)
    mg.manual_seed(1)
    assert c.equal(weights.multinomial(3))


# --------------------------------------------------------------------------- histograms

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins,low,high", [(10, 0, 0), (7, -1.0, 1.5), (1, 0, 0), (33, -3, 3),
                                           (5, 0.25, 0.75)])
def test_histc_matches_pytorch(dtype, bins, low, high, torch):
    x = np.random.default_rng(bins).standard_normal(1000).astype(dtype)
    x[:5] = [low, high, 0.0, -0.5, 0.5]  # values on the edges
    ours = mg.histc(mg.tensor(x), bins=bins, min=low, max=high)
    theirs = torch.histc(torch.tensor(x), bins=bins, min=low, max=high)
    assert ours.dtype.name == dtype and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(mg.tensor(x).histc(bins, low, high).numpy(), theirs.numpy())


@pytest.mark.parametrize("expression", [
    "lib.histc(lib.tensor([2.0, 2.0]), bins=4)",
    "lib.histc(lib.tensor([]), bins=3)",
    "lib.histc(lib.tensor([1.0, 2.0, 1.0], requires_grad=True), 2)",
    "lib.histc(lib.arange(10.0), bins=3, min=2, max=5)",
])
def test_histc_edge_cases_match_pytorch(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    assert ours.dtype.name == str(theirs.dtype).split(".")[1] and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [
    dict(bins=10), dict(bins=4, range=(-1.0, 1.0)), dict(bins=6, density=True),
    dict(bins=5, weight=True), dict(bins=3, range=(0.0, 3.0), density=True, weight=True),
    dict(bins=[-2.0, -0.5, 0.0, 0.1, 3.0]), dict(bins=[-1.0, 1.0], density=True),
])
def test_histogram_matches_pytorch(dtype, kwargs, torch):
    r = np.random.default_rng(len(str(kwargs)))
    x = r.standard_normal((40, 25)).astype(dtype)
    weights = r.uniform(0, 2, x.shape).astype(dtype)
    results = []
    for lib in (mg, torch):
        args = dict(kwargs)
        if isinstance(args["bins"], list):
            args["bins"] = lib.tensor(np.array(args["bins"], dtype=dtype))
        if args.get("weight"):
            args["weight"] = lib.tensor(weights)
        results.append(lib.histogram(lib.tensor(x), **args))
    ours, theirs = results
    for a, b in ((ours.hist, theirs.hist), (ours.bin_edges, theirs.bin_edges)):
        assert a.dtype.name == dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-6)
    # PyTorch's linspace rounds some inner edges by one ulp more or less, depending on the
    # CPU's vector width: the edges agree to the rounding of the range's scale
    scale = np.abs(theirs.bin_edges.numpy()).max()
    np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy(), rtol=0,
                               atol=4 * np.finfo(dtype).eps * scale)
    if not isinstance(kwargs["bins"], list) and "weight" not in kwargs:  # the method too
        np.testing.assert_array_equal(mg.tensor(x).histogram(**kwargs).hist.numpy(),
                                      ours.hist.numpy())


@pytest.mark.parametrize("expression", [
    "lib.histogram(lib.tensor([2.0, 2.0]), bins=4)",
    "lib.histogram(lib.tensor([]), bins=3)",
    "lib.histogram(lib.tensor([1.0, 2.0, 1.0]), bins=lib.tensor([3.0, 0.0]))",
    "lib.histogram(lib.tensor([1.0, 2.0, 1.0], dtype=lib.float64), 2)",
    "lib.histogram(lib.linspace(0, 1, 11), 10)",
])
def test_histogram_edge_cases_match_pytorch(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    for a, b in zip(ours, theirs):
        assert a.dtype.name == str(b.dtype).split(".")[1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
