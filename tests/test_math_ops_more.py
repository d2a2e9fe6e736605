"""The rarer ops of the op families (floor, erf, sort, einsum, ...) against PyTorch: values, dtypes, shapes, gradients
(float64, rtol 1e-9), node names and exception types."""

import numpy as np
import pytest

import minigrad as mg

RTOL, ATOL = 1e-9, 1e-12
_rng = np.random.default_rng(0)
X = _rng.standard_normal((3, 4))
Y = _rng.standard_normal((3, 4))
UNIT = _rng.uniform(-0.9, 0.9, (3, 4))
POS = _rng.uniform(0.2, 3.0, (3, 4))
HALVES = np.array([[0.5, 1.5, 2.5, -0.5], [-1.5, -2.5, 1.25, 3.7], [-3.7, 0.0, 2.0, -0.2]])
WITH_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5], [2.0, -1.5, 0.7, 0.0]])
TIES = np.array([[1.0, 3.0, 1.0, 2.0], [2.0, 2.0, 2.0, -1.0], [0.5, -0.5, 0.5, 0.5]])
V = _rng.standard_normal(4)
B3 = _rng.standard_normal((2, 3, 4))
B3b = _rng.standard_normal((2, 4, 3))
SQ = _rng.standard_normal((4, 4))


def _first(out):
    return out[0] if isinstance(out, tuple) else out


# name -> (input arrays, fn(lib, *tensors) -> a differentiable output)
DIFFERENTIABLE = {
    "floor": ([X], lambda lib, a: lib.floor(a * 2)),
    "ceil": ([X], lambda lib, a: (a * 2).ceil()),
    "round": ([HALVES], lambda lib, a: a.round()),
    "round_decimals": ([X], lambda lib, a: lib.round(a, decimals=2)),
    "trunc": ([X], lambda lib, a: lib.trunc(a * 3)),
    "frac": ([X], lambda lib, a: (a * 3).frac()),
    "rsqrt": ([POS], lambda lib, a: a.rsqrt()),
    "erf": ([X], lambda lib, a: lib.erf(a)),
    "sinh": ([X], lambda lib, a: a.sinh()),
    "cosh": ([X], lambda lib, a: lib.cosh(a)),
    "asin": ([UNIT], lambda lib, a: a.asin()),
    "acos": ([UNIT], lambda lib, a: lib.acos(a)),
    "atan": ([X], lambda lib, a: a.atan()),
    "atan2": ([X, Y], lambda lib, a, b: lib.atan2(a, b)),
    "atan2_broadcast": ([X, Y[0]], lambda lib, a, b: a.atan2(b)),
    "fmod_number": ([X], lambda lib, a: lib.fmod(a * 3, 1.5)),
    "fmod_tensor": ([X, POS], lambda lib, a, b: (a * 3).fmod(b)),
    "lerp_number": ([X, Y], lambda lib, a, b: lib.lerp(a, b, 0.3)),
    "lerp_tensor": ([X, Y, UNIT], lambda lib, a, b, w: a.lerp(b, w)),
    "nan_to_num": ([X], lambda lib, a: (a.log()).nan_to_num(nan=-1.0)),
    "logsumexp": ([X * 300], lambda lib, a: a.logsumexp(1)),
    "logsumexp_keepdim": ([X], lambda lib, a: lib.logsumexp(a, (0, 1), keepdim=True)),
    "logsumexp_dim0": ([X], lambda lib, a: lib.logsumexp(a, dim=0)),
    "cumprod": ([X], lambda lib, a: a.cumprod(1)),
    "cumprod_zeros": ([WITH_ZEROS], lambda lib, a: lib.cumprod(a, dim=1)),
    "cumprod_zeros_dim0": ([WITH_ZEROS], lambda lib, a: a.cumprod(0)),
    "sort": ([X], lambda lib, a: a.sort()),
    "sort_desc_dim0": ([TIES], lambda lib, a: lib.sort(a, dim=0, descending=True, stable=True)),
    "topk": ([X], lambda lib, a: a.topk(2)),
    "topk_smallest_dim0": ([X], lambda lib, a: lib.topk(a, 2, dim=0, largest=False)),
    "einsum_mm": ([X, Y.T], lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)),
    "einsum_bmm": ([B3, B3b], lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b)),
    "einsum_dot": ([V, V[::-1].copy()], lambda lib, a, b: lib.einsum("i,i->", a, b)),
    "einsum_transpose": ([X], lambda lib, a: lib.einsum("ij->ji", a)),
    "einsum_diagonal": ([SQ], lambda lib, a: lib.einsum("ii->i", a)),
    "einsum_rowdot": ([X, Y], lambda lib, a, b: lib.einsum("bi,bi->b", a, b)),
    "einsum_rowsum": ([X], lambda lib, a: lib.einsum("ij->i", a)),
    "einsum_sum": ([X], lambda lib, a: lib.einsum("ij->", a)),
    "einsum_trace": ([SQ], lambda lib, a: lib.einsum("ii", a)),
    "einsum_outer": ([V, X[0]], lambda lib, a, b: lib.einsum("i,j->ij", a, b)),
    "einsum_elementwise": ([X, Y], lambda lib, a, b: lib.einsum("ij,ij->ij", a, b)),
    "einsum_matvec": ([X, V], lambda lib, a, b: lib.einsum("ij,j->i", a, b)),
    "einsum_attention": ([B3[None], B3[None, :, :2]],
                         lambda lib, a, b: lib.einsum("bhqd,bhkd->bhqk", a, b)),
    "einsum_three": ([X, Y.T, SQ], lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a[:, :3],
                                                                    b[:3], c[:3])),
    "addmm": ([Y[0], X, Y.T[:, :3].copy()], lambda lib, c, a, b: lib.addmm(c, a, b @ b.T)),
    "addmm_scaled": ([X[:, :3].copy(), X, Y.T],
                     lambda lib, c, a, b: c.addmm(a, b, beta=0.5, alpha=-2)),
    "median_dim": ([X], lambda lib, a: a.median(1)),
    "median_keepdim": ([X], lambda lib, a: lib.median(a, 0, keepdim=True)),
}



def _run(lib, fn, arrays):
    tensors = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = _first(fn(lib, *tensors))
    upstream = np.random.default_rng(2).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(upstream))
    return out, [t.grad for t in tensors]


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_values_and_gradients_match_pytorch(name, torch):
    arrays, fn = DIFFERENTIABLE[name]
    ours, our_grads = _run(mg, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _dtype(ours) == _dtype(theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    for mine, other in zip(our_grads, their_grads):
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=RTOL, atol=ATOL)
    assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_median_of_all_elements_is_the_lower_one_with_its_gradient(torch):
    """Also PyTorch's gradient where elements tie with the median or are nan: shared."""
    for array in (X, X[:, :3], V, TIES, np.array([3.0, np.nan, 1.0, np.nan]),
                  np.array([1.0, 2.0, 2.0, 3.0])):
        ours, (our_grad,) = _run(mg, lambda lib, a: a.median(), [array])
        theirs, (their_grad,) = _run(torch, lambda lib, a: lib.median(a), [array])
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
        assert ours.grad_fn.name() == theirs.grad_fn.name()
        np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=RTOL)


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True},
                                    {"dim": 1, "correction": 0}])
def test_std_mean_and_var_mean(name, kwargs, torch):
    def run(lib):
        a = lib.tensor(X.copy(), requires_grad=True)
        spread, mean = getattr(lib, name)(a, **kwargs)
        (spread * 2 + mean * 3).sum().backward()
        return spread, mean, a.grad
    for t in (0, 1):
        assert run(mg)[t].grad_fn.name() == run(torch)[t].grad_fn.name()
    for mine, other in zip(run(mg), run(torch)):
        assert tuple(mine.shape) == tuple(other.shape) and _dtype(mine) == _dtype(other)
        np.testing.assert_allclose(mine.detach().numpy(), other.detach().numpy(), rtol=RTOL)


def _same_result(ours, theirs):
    if isinstance(theirs, tuple):
        assert list(ours._fields) == ["values", "indices"]
        for mine, other in zip(ours, theirs):
            _same_result(mine, other)
        return
    assert _dtype(ours) == _dtype(theirs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# expressions run with lib = minigrad and lib = torch: same values, dtypes and shapes
FORWARD = [
    "lib.floor(lib.tensor([1, -2, 3]))",
    "lib.tensor([1, -2, 3], dtype=lib.int32).ceil()",
    "lib.tensor([5, -7]).round()",
    "lib.tensor([4, -9]).trunc()",
    "lib.tensor([0.5, 1.5, 2.5, -0.5, -1.5]).round()",
    "lib.tensor([1.2345, -2.5551, 0.125]).round(decimals=2)",
    "lib.tensor([1234.5, -2555.1]).round(decimals=-2)",
    "lib.tensor([-2.75, 2.75, float('inf')]).frac()",
    "lib.tensor([4, 9]).rsqrt()",
    "lib.tensor([0.0, -1.0]).rsqrt()",
    "lib.tensor([1, 0, -2]).erf()",
    "lib.tensor([1, 2]).sinh()",
    "lib.tensor([1, 2]).cosh()",
    "lib.tensor([0.5, 2.0]).asin()",
    "lib.tensor([1, 0]).acos()",
    "lib.tensor([1, 0]).atan()",
    "lib.atan2(lib.tensor([1, -1, 0]), lib.tensor([0, -1, -1]))",
    "lib.tensor([1.0, -1.0, 0.0, -0.0]).atan2(lib.tensor([-0.0, -0.0, -1.0, -1.0]))",
    "lib.fmod(lib.tensor([-7, 7, 5]), 3)",
    "lib.fmod(lib.tensor([-7, 7, 5]), 2.5)",
    "lib.tensor([-7.5, 7.5]).fmod(lib.tensor([2.0, -2.0]))",
    "lib.tensor([-7, 7]).fmod(lib.tensor([2.0, -2.0]))",
    "lib.lerp(lib.tensor([0.0, 1.0]), lib.tensor([10.0, 11.0]), 0.25)",
    "lib.isinf(lib.tensor([1.0, float('inf'), -float('inf'), float('nan')]))",
    "lib.tensor([1, 2]).isinf()",
    "lib.tensor([float('nan'), float('inf'), -float('inf'), 1.0]).nan_to_num()",
    "lib.tensor([float('nan'), float('inf'), -float('inf')], dtype=lib.float64).nan_to_num()",
    "lib.nan_to_num(lib.tensor([float('nan'), float('inf'), -float('inf')]), 1.0, 2.0, -3.0)",
    "lib.tensor([1, 2]).nan_to_num()",
    "lib.logical_and(lib.tensor([1, 0, 2]), lib.tensor([True, True, False]))",
    "lib.logical_or(lib.tensor([0.0, 0.0, 2.5]), lib.tensor([0, 3, 0]))",
    "lib.tensor([[1, 0], [0, 0]]).logical_xor(lib.tensor([1, 1]))",
    "lib.count_nonzero(lib.tensor([[1, 0, 3], [0, 0, 2]]))",
    "lib.count_nonzero(lib.tensor([[1, 0, 3], [0, 0, 2]]), dim=1)",
    "lib.tensor([[1.0, 0.0], [0.0, 0.0]]).count_nonzero(0)",
    "lib.count_nonzero(lib.tensor([[1, 0, 3], [0, 0, 2]]), dim=(0, 1))",
    "lib.logsumexp(lib.tensor([1, 2, 3]), 0)",
    "lib.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]]).logsumexp(1)",
    "lib.tensor([[-float('inf'), -float('inf')], [float('inf'), 1.0]]).logsumexp(1)",
    "lib.tensor([[1, 2], [3, 4]]).cumprod(1)",
    "lib.tensor([True, True, False]).cumprod(0)",
    "lib.tensor([1, 2, 3], dtype=lib.int32).cumprod(0)",
    "lib.tensor([1.0, 2.0, 3.0]).cumprod(0, dtype=lib.float64)",
    "lib.tensor([3, 1, 2, 1]).sort()",
    "lib.tensor([3, 1, 2, 1]).sort(descending=True, stable=True)",
    "lib.tensor([[3.0, float('nan'), 2.0], [1.0, 1.0, 0.0]]).sort(dim=1)",
    "lib.tensor([[3.0, float('nan'), 2.0], [1.0, 1.0, 0.0]]).sort(dim=1, descending=True)",
    "lib.tensor([[3, 1], [2, 1], [0, 5]]).sort(dim=0, stable=True)",
    "lib.sort(lib.tensor(2.0))",
    "lib.argsort(lib.tensor([3, 1, 2, 1]), stable=True)",
    "lib.tensor([[3, 1, 2], [0, 5, 4]]).argsort(dim=0, descending=True)",
    "lib.tensor([1, 5, 2, 4]).topk(3)",
    "lib.topk(lib.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]), 2, dim=0, largest=False)",
    "lib.tensor([1, 5, 2, 4]).topk(0)",
    "lib.einsum('ij,jk->ik', lib.tensor([[1, 2]]), lib.tensor([[3], [4]]))",
    "lib.einsum('ii', lib.tensor([[1.0, 2.0], [3.0, 4.0]]))",
    "lib.einsum('ij,jk', lib.tensor([[1.0, 2.0]]), lib.tensor([[3.0], [4.0]]))",
    "lib.einsum('i,j->ij', [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0, 5.0])])",
    "lib.outer(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0, 5.0]))",
    "lib.tensor([1, 2]).outer(lib.tensor([3, 4, 5]))",
    "lib.addmm(lib.tensor([1.0, 2.0]), lib.ones(3, 4), lib.ones(4, 2))",
    "lib.median(lib.tensor([4, 1, 3, 2]))",
    "lib.tensor([[4, 1, 3, 2], [1, 1, 1, 0]]).median(1)",
    "lib.tensor([3.0, float('nan'), 1.0]).median()",
    "lib.tensor([[3.0, float('nan'), 1.0, float('nan')], [1.0, 2.0, 3.0, 4.0]]).median(1)",
    "lib.tensor([[1, 2, 2, 3], [5, 5, 5, 1]]).median(dim=1, keepdim=True)",
    "lib.median(lib.tensor([]))",
]


@pytest.mark.parametrize("expression", FORWARD)
def test_forward_matches_pytorch(expression, torch):
    ours = eval(expression, {"lib": mg})
    theirs = eval(expression, {"lib": torch})
    _same_result(ours, theirs) if isinstance(theirs, tuple) else _close(ours, theirs)


def _close(ours, theirs):
    assert _dtype(ours) == _dtype(theirs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


ERRORS = [
    "lib.tensor([1, 2]).frac()",
    "lib.tensor([1, 2]).round(decimals=1)",
    "lib.tensor([True]).floor()",
    "lib.lerp(lib.tensor([1, 2]), lib.tensor([3, 4]), 0.5)",
    "lib.lerp(lib.tensor([1.0]), lib.tensor([3.0], dtype=lib.float64), 0.5)",
    "lib.std_mean(lib.tensor([1, 2]))",
    "lib.var_mean(lib.tensor([1, 2]))",
    "lib.bernoulli(lib.tensor([1, 0]))",
    "lib.bernoulli(lib.tensor([1.5, 0.5]))",
    "lib.tensor([1.0, 2.0]).topk(3)",
    "lib.tensor([1.0, 2.0]).sort(dim=1)",
    "lib.logsumexp(lib.tensor([1.0, 2.0]), 2)",
    "lib.tensor([1.0, 2.0]).cumprod(1)",
    "lib.einsum('i,i->', lib.ones(2), lib.ones(2, dtype=lib.float64))",
    "lib.einsum('i,i->', lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0]))",
    "lib.einsum('i,i->', lib.tensor([1.0, 2.0]))",
    "lib.addmm(lib.zeros(2, 2), lib.ones(2, 3), lib.ones(2, 2))",
    "lib.addmm(lib.zeros(2, 2), lib.ones(2), lib.ones(2, 2))",
        "lib.floor([1.5])",
    "lib.atan2(lib.tensor([1.0]), 2.0)",
    "lib.logical_and(lib.tensor([1, 0]), lib.tensor([1, 0, 1]))",
    "lib.fmod(lib.tensor([1, 2]), 0)",
]


@pytest.mark.parametrize("expression", ERRORS)
def test_errors_match_pytorch(expression, torch):
    with pytest.raises(Exception) as theirs:
        eval(expression, {"lib": torch})
    with pytest.raises(Exception) as ours:
        eval(expression, {"lib": mg})
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)


def test_integer_rounding_returns_a_copy_of_the_same_dtype(torch):
    x = mg.tensor([1, -2], dtype=mg.int32)
    for op in (mg.floor, mg.ceil, mg.round, mg.trunc):
        out = op(x)
        out[0] = 9
        assert x.tolist() == [1, -2] and out.dtype == mg.int32


def test_logsumexp_gradient_with_infinities_is_pytorchs(torch):
    """A row of only -inf (out = -inf) and an element +inf give nan, as in PyTorch; a -inf
    beside finite elements gets 0."""
    array = np.array([[-np.inf, -np.inf], [0.0, -np.inf], [np.inf, 1.0], [1.0, 2.0]])
    ours, (our_grad,) = _run(mg, lambda lib, a: a.logsumexp(1), [array])
    theirs, (their_grad,) = _run(torch, lambda lib, a: a.logsumexp(1), [array])
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=RTOL)
    assert np.isnan(our_grad.numpy()).sum() == 3


def test_nan_to_num_gradient_is_zero_where_replaced(torch):
    array = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    ours, (our_grad,) = _run(mg, lambda lib, a: (a * 2).nan_to_num(), [array])
    theirs, (their_grad,) = _run(torch, lambda lib, a: (a * 2).nan_to_num(), [array])
    np.testing.assert_array_equal(our_grad.numpy(), their_grad.numpy())
    assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_no_node_without_grad_and_under_no_grad():
    x = mg.tensor([1.5, -2.5])
    assert x.floor().grad_fn is None and mg.logsumexp(x, 0).grad_fn is None
    y = mg.tensor([1.5, -2.5], requires_grad=True)
    with mg.no_grad():
        assert y.sort().values.grad_fn is None and mg.erf(y).grad_fn is None
    assert y.sort().indices.grad_fn is None and not y.sort().indices.requires_grad


def test_sort_result_unpacks_and_names_its_fields(torch):
    values, indices = mg.tensor([3.0, 1.0]).sort()
    result = mg.tensor([3.0, 1.0]).topk(1)
    assert values.tolist() == [1.0, 3.0] and indices.tolist() == [1, 0]
    assert result.values.tolist() == [3.0] and result.indices.tolist() == [0]


def test_bernoulli_draws_zeros_and_ones_with_the_given_probability(torch):
    mg.manual_seed(0)
    probs = mg.tensor([0.0, 1.0, 0.3], dtype=mg.float64, requires_grad=True).expand(20000, 3)
    draws = mg.bernoulli(probs)
    assert draws.dtype == mg.float64 and set(np.unique(draws.detach().numpy())) <= {0.0, 1.0}
    means = draws.detach().numpy().mean(axis=0)
    assert means[0] == 0 and means[1] == 1 and abs(means[2] - 0.3) < 0.02
    assert draws.grad_fn.name() == torch.bernoulli(
        torch.full((2,), 0.5, requires_grad=True)).grad_fn.name()
    draws.sum().backward()
    fifty = mg.full((1000,), 0.5).bernoulli(0.1)
    assert abs(fifty.numpy().mean() - 0.1) < 0.04


def _dtype(t):
    return str(t.dtype).split(".")[-1]


# ------------------------------------------------------------------ nn activations and helpers

LOGP = np.log(np.random.default_rng(3).dirichlet(np.ones(4), 3))
PROBS = np.random.default_rng(4).dirichlet(np.ones(4), 3)
PROBS[0, 1] = 0.0  # a zero probability: 0 * log 0 counts as 0
WIDE = X * 12  # reaches softplus's threshold and hardtanh's bounds

NN_DIFFERENTIABLE = {
    "silu": ([X], lambda lib, a: lib.nn.functional.silu(a)),
    "SiLU": ([X], lambda lib, a: lib.nn.SiLU()(a)),
    "elu": ([X], lambda lib, a: lib.nn.functional.elu(a, alpha=0.7)),
    "ELU": ([X], lambda lib, a: lib.nn.ELU()(a)),
    "SELU": ([X], lambda lib, a: lib.nn.SELU()(a)),
    "softplus": ([WIDE], lambda lib, a: lib.nn.functional.softplus(a, beta=2, threshold=5)),
    "Softplus": ([WIDE], lambda lib, a: lib.nn.Softplus()(a)),
    "hardtanh": ([WIDE], lambda lib, a: lib.nn.functional.hardtanh(a, -2.0, 3.0)),
    "Hardtanh": ([HALVES], lambda lib, a: lib.nn.Hardtanh(-0.5, 1.5)(a)),
    "relu6": ([WIDE], lambda lib, a: lib.nn.functional.relu6(a)),
    "ReLU6": ([WIDE], lambda lib, a: lib.nn.ReLU6()(a)),
    "Mish": ([WIDE], lambda lib, a: lib.nn.Mish()(a)),
    "mish": ([X], lambda lib, a: lib.nn.functional.mish(a)),
    "Softsign": ([X], lambda lib, a: lib.nn.Softsign()(a)),
    "logsigmoid": ([WIDE * 10], lambda lib, a: lib.nn.functional.logsigmoid(a)),
    "LogSigmoid": ([X], lambda lib, a: lib.nn.LogSigmoid()(a)),
    "normalize": ([X], lambda lib, a: lib.nn.functional.normalize(a)),
    "normalize_p1_dim0": ([X], lambda lib, a: lib.nn.functional.normalize(a, p=1, dim=0)),
    "cosine_similarity": ([X, Y], lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b)),
    "CosineSimilarity": ([X, Y[0]], lambda lib, a, b: lib.nn.CosineSimilarity(dim=-1)(a, b)),
    "pad_last": ([X], lambda lib, a: lib.nn.functional.pad(a, (1, 2))),
    "pad_two_dims": ([B3], lambda lib, a: lib.nn.functional.pad(a, (0, 1, 2, 0), value=1.5)),
    "pad_three_dims_crop": ([B3], lambda lib, a: lib.nn.functional.pad(a, (-1, 1, 1, -1, 1, 0))),
    "kl_div_mean": ([LOGP], lambda lib, a: lib.nn.functional.kl_div(a, lib.tensor(PROBS))),
    "kl_div_batchmean": ([LOGP], lambda lib, a: lib.nn.KLDivLoss(reduction="batchmean")(
        a, lib.tensor(PROBS))),
    "kl_div_sum": ([LOGP], lambda lib, a: lib.nn.functional.kl_div(a, lib.tensor(PROBS),
                                                                    reduction="sum")),
    "kl_div_none": ([LOGP], lambda lib, a: lib.nn.functional.kl_div(a, lib.tensor(PROBS),
                                                                     reduction="none")),
    "kl_div_log_target": ([LOGP, LOGP[::-1].copy()], lambda lib, a, t: lib.nn.KLDivLoss(
        reduction="batchmean", log_target=True)(a, t)),
    "Unflatten": ([X], lambda lib, a: lib.nn.Unflatten(1, (2, 2))(a)),
}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("name", sorted(NN_DIFFERENTIABLE))
def test_nn_values_gradients_and_nodes_match_pytorch(name, torch):
    import torch.nn  # noqa: F401  (torch.nn.functional as an attribute)
    arrays, fn = NN_DIFFERENTIABLE[name]
    ours, our_grads = _run(mg, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    assert tuple(ours.shape) == tuple(theirs.shape) and _dtype(ours) == _dtype(theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    for mine, other in zip(our_grads, their_grads):
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=RTOL, atol=ATOL)
    assert ours.grad_fn.name() == theirs.grad_fn.name()


REPRS = ["nn.SiLU()", "nn.ELU()", "nn.ELU(alpha=2.0, inplace=True)", "nn.Softplus()",
         "nn.Softplus(beta=2, threshold=10)", "nn.Hardtanh()", "nn.Hardtanh(-2, 2)",
         "nn.ReLU6()", "nn.SELU()", "nn.Mish()", "nn.Softsign()", "nn.LogSigmoid()",
         "nn.CosineSimilarity()", "nn.KLDivLoss()", "nn.Unflatten(1, (2, 3))",
         "nn.ModuleDict({'act': nn.ReLU(), 'lin': nn.Linear(2, 3)})",
         "nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.ones(2, 3))])"]


@pytest.mark.parametrize("expression", REPRS)
def test_module_reprs_match_pytorch(expression, torch):
    import torch.nn  # noqa: F401
    ours = repr(eval(expression, {"lib": mg, "nn": mg.nn}))
    theirs = repr(eval(expression, {"lib": torch, "nn": torch.nn}))
    assert ours == theirs.replace("torch.", "minigrad.")


def test_module_dict_and_parameter_list_register_their_parameters(torch):
    d = mg.nn.ModuleDict({"a": mg.nn.Linear(2, 3)})
    d["b"] = mg.nn.Linear(3, 1)
    assert list(d.keys()) == ["a", "b"] and "b" in d and len(d) == 2
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]
    p = mg.nn.ParameterList([mg.ones(2)])
    p.append(mg.nn.Parameter(mg.zeros(3)))
    assert len(p) == 2 and all(isinstance(q, mg.nn.Parameter) for q in p)
    assert [n for n, _ in p.named_parameters()] == ["0", "1"] and p[1].shape == (3,)


@pytest.mark.parametrize("expression", [
    "F.pad(lib.ones(2), (1, 1, 1))",
    "F.pad(lib.ones(2), (1, 1, 1, 1))",
    "F.silu(lib.tensor([1, 2]))",
    "F.elu(lib.tensor([1, 2]))",
    "F.hardtanh(lib.ones(2), 2.0, 1.0)",
    "F.kl_div(lib.ones(2), lib.ones(2), reduction='avg')",
])
def test_nn_errors_match_pytorch(expression, torch):
    import torch.nn.functional as torch_F
    with pytest.raises(Exception) as theirs:
        eval(expression, {"lib": torch, "F": torch_F})
    with pytest.raises(Exception) as ours:
        eval(expression, {"lib": mg, "F": mg.nn.functional})
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)


IN_PLACE = {
    "silu": lambda F, y: F.silu(y, inplace=True),
    "elu": lambda F, y: F.elu(y, 0.5, True),
    "selu": lambda F, y: F.selu(y, inplace=True),
    "hardtanh": lambda F, y: F.hardtanh(y, -0.5, 0.5, inplace=True),
    "relu6": lambda F, y: F.relu6(y, inplace=True),
    "mish": lambda F, y: F.mish(y, inplace=True),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_activations_change_the_input_as_pytorch(name, torch):
    import torch.nn.functional as torch_F
    results = []
    for lib, F in ((mg, mg.nn.functional), (torch, torch_F)):
        x = lib.tensor(X.copy(), requires_grad=True)
        y = x * 1
        out = IN_PLACE[name](F, y)
        plain = lib.tensor(X.copy())
        IN_PLACE[name](F, plain)  # no graph: the memory changes all the same
        out.backward(lib.tensor(Y))
        results.append((out, x.grad, plain, out.grad_fn.name()))
    (ours, our_grad, our_plain, our_node), (theirs, their_grad, their_plain, their_node) = results
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(our_plain.numpy(), their_plain.numpy(), rtol=1e-6)
    assert our_node == their_node
    assert not np.allclose(our_plain.numpy(), X.astype(np.float32))


def test_in_place_activation_returns_its_input_and_refuses_a_leaf(torch):
    y = mg.tensor(X.copy(), requires_grad=True) * 1
    assert mg.nn.ELU(inplace=True)(y) is y
    with pytest.raises(RuntimeError):
        mg.nn.functional.silu(mg.tensor([1.0], requires_grad=True), inplace=True)
    with pytest.raises(RuntimeError):
        torch.nn.functional.silu(torch.tensor([1.0], requires_grad=True), inplace=True)


@pytest.mark.parametrize("expression", ["lib.tensor([3.0, 1.0]).sort()",
                                        "lib.tensor([3, 1, 2]).topk(2)",
                                        "lib.tensor([[3.0, 1.0]]).median(1)"])
def test_values_indices_print_as_pytorch(expression, torch):
    ours = repr(eval(expression, {"lib": mg}))
    theirs = repr(eval(expression, {"lib": torch}))
    assert ours == theirs.replace("torch.", "minigrad.")


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE) + sorted(NN_DIFFERENTIABLE))
def test_float32_inputs_keep_float32_values_and_gradients(name, torch):
    import torch.nn  # noqa: F401
    arrays, fn = DIFFERENTIABLE.get(name) or NN_DIFFERENTIABLE[name]
    results = []
    for lib in (mg, torch):
        tensors = [lib.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
        out = _first(fn(lib, *tensors))
        out.sum().backward()
        results.append((out, [t.grad for t in tensors]))
    (ours, our_grads), (theirs, their_grads) = results
    assert _dtype(ours) == _dtype(theirs)  # float32 (float64 where a float64 target joins)
    for mine, other in zip(our_grads, their_grads):
        assert _dtype(mine) == _dtype(other)
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=2e-4, atol=2e-5)


# inputs where a backward formula could meet inf * 0 or 0 / 0: PyTorch's answer each time
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 25.0, -800.0])
AT_SPECIAL_VALUES = {
    "asin": lambda lib, a: a.asin(),
    "acos": lambda lib, a: a.acos(),
    "rsqrt": lambda lib, a: a.rsqrt(),
    "erf": lambda lib, a: a.erf(),
    "sinh": lambda lib, a: a.sinh(),
    "atan": lambda lib, a: a.atan(),
    "atan2_x_zero": lambda lib, a: a.atan2(a * 0),
    "atan2_y_zero": lambda lib, a: (a * 0).atan2(a),
    "fmod": lambda lib, a: a.fmod(a),
    "frac": lambda lib, a: a.frac(),
    "floor": lambda lib, a: a.floor(),
    "lerp": lambda lib, a: a.lerp(a * 2, a),
    "cumprod": lambda lib, a: a.cumprod(0),
    "nan_to_num": lambda lib, a: a.nan_to_num(),
    "sort": lambda lib, a: a.sort()[0],
    "silu": lambda lib, a: lib.nn.functional.silu(a),
    "elu": lambda lib, a: lib.nn.functional.elu(a),
    "selu": lambda lib, a: lib.nn.functional.selu(a),
    "softplus": lambda lib, a: lib.nn.functional.softplus(a),
    "mish": lambda lib, a: lib.nn.functional.mish(a),
    "logsigmoid": lambda lib, a: lib.nn.functional.logsigmoid(a),
    "hardtanh": lambda lib, a: lib.nn.functional.hardtanh(a),
    "relu6": lambda lib, a: lib.nn.functional.relu6(a),
    "softsign": lambda lib, a: lib.nn.functional.softsign(a),
    "normalize_zero_vector": lambda lib, a: lib.nn.functional.normalize(a[None] * 0)[0],
    "cosine_with_zero_vector": lambda lib, a: lib.nn.functional.cosine_similarity(
        a[None] * 0, a[None]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("order", ["forward", "reversed"])
@pytest.mark.parametrize("name", sorted(AT_SPECIAL_VALUES))
def test_gradients_at_zero_inf_and_nan_match_pytorch(name, order, torch):
    import torch.nn.functional  # noqa: F401
    array = SPECIAL if order == "forward" else SPECIAL[::-1].copy()
    results = []
    for lib in (mg, torch):
        t = lib.tensor(array.copy(), requires_grad=True)
        out = AT_SPECIAL_VALUES[name](lib, t)
        out.backward(lib.ones(tuple(out.shape), dtype=lib.float64))
        results.append((out.detach().numpy(), t.grad.numpy()))
    (value, grad), (their_value, their_grad) = results
    np.testing.assert_allclose(value, their_value, rtol=RTOL)
    np.testing.assert_allclose(grad, their_grad, rtol=RTOL)
