"""Second derivatives through reductions, softmax and the ops that pick elements (sort, topk,
median, max/min) match PyTorch: dim/keepdim variants, ties, zeros and the edge cases where
the backward formula branches."""

import warnings

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

rng = np.random.default_rng(1)
A = rng.standard_normal((3, 4))
CUBE = rng.standard_normal((2, 3, 4))
VEC = rng.standard_normal(5)
SCALAR = np.array(1.7)
TIES = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 2.0, -1.0, 2.0]])
ONE_ZERO = np.array([[1.5, 0.0, -2.0, 0.7], [0.3, 1.1, -0.4, 2.0], [0.0, 1.0, 3.0, 0.5]])
TWO_ZEROS = np.array([[1.5, 0.0, -2.0, 0.0], [0.3, 1.1, -0.4, 2.0], [0.0, 1.0, 0.0, 0.5]])


def check(torch, fn, *values, **kwargs):
    assert_second_derivatives_match(torch, fn, *values, **kwargs)


# The outputs are multiplied by the input (or squared) so the first derivative depends on the
# input through more than the op's own backward; (x * x).op() checks the op's second derivative
# composed with something that is not linear.

@pytest.mark.parametrize("fn", [
    lambda lib, a: a.mean() * a,
    lambda lib, a: (a * a).mean(),
    lambda lib, a: (a * a).mean(0),
    lambda lib, a: (a * a * a).mean(dim=1, keepdim=True),
    lambda lib, a: (a * a).mean((0, 1)),
    lambda lib, a: (a * a).mean(-1) * a.sum(-1),
    lambda lib, a: (a * a).sum(1, keepdim=True) * a,
], ids=["mean_all", "mean_sq", "mean0", "mean1_keep", "mean01", "mean_neg", "sum_keep"])
def test_mean_and_sum(torch, fn):
    check(torch, fn, A)


@pytest.mark.parametrize("values", [A, TIES, np.array([[np.nan, 1.0], [2.0, np.nan]])],
                         ids=["distinct", "ties", "nan"])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_all_share_among_ties(torch, name, values):
    check(torch, lambda lib, a: getattr(a * a, name)() * a, values)
    check(torch, lambda lib, a: getattr(a, name)() * getattr(a, name)(), values)


@pytest.mark.parametrize("values", [A, TIES], ids=["distinct", "ties"])
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, False), (1, True), (-1, True)])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_along_a_dim_go_to_the_first_of_ties(torch, name, values, dim, keepdim):
    def fn(lib, a):
        values, indices = getattr(a * a * a, name)(dim, keepdim=keepdim)
        return values * values
    check(torch, fn, values)


@pytest.mark.parametrize("values", [A, TIES, CUBE], ids=["distinct", "ties", "cube"])
@pytest.mark.parametrize("dim, keepdim", [((), False), (0, False), (1, True), ((0, 1), False),
                                          (-1, False)])
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_share_among_ties(torch, name, values, dim, keepdim):
    def fn(lib, a):
        out = getattr(a * a, name)(dim, keepdim=keepdim)
        return out * out
    check(torch, fn, values)


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": 1, "keepdim": True},
                                    {"dim": (0, 1)}, {"dim": -1, "correction": 0},
                                    {"correction": 2}, {"dim": 1, "unbiased": False},
                                    {"dim": None, "keepdim": True}])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(torch, name, kwargs):
    check(torch, lambda lib, a: getattr(a * a, name)(**kwargs) * 2.0, A)
    check(torch, lambda lib, a: getattr(a, name)(**kwargs) * a.sum(), A)


def test_std_where_it_is_zero_has_gradient_zero(torch):
    constant_rows = np.array([[2.0, 2.0, 2.0], [1.0, -1.0, 3.0]])
    check(torch, lambda lib, a: a.std(1) * 3.0, constant_rows)
    check(torch, lambda lib, a: (a.var(1) * a.var(1)), constant_rows)


@pytest.mark.parametrize("values", [np.array([1.0, 2.0]), np.array([1.0, 1.0])],
                         ids=["different", "equal"])
@pytest.mark.parametrize("dim", [None, 0])
@pytest.mark.parametrize("correction", [2, 3])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_when_correction_is_at_least_n(torch, name, values, dim, correction):
    """inf, nan and negative 2 / (N - correction): as PyTorch, whatever it says."""
    def fn(lib, a):
        op = getattr(a, name)
        return op(correction=correction) if dim is None else op(dim, correction=correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # degrees of freedom <= 0
        warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf in the harness's sums
        check(torch, fn, values)


@pytest.mark.parametrize("values", [A, ONE_ZERO, TWO_ZEROS, SCALAR],
                         ids=["no_zero", "one_zero", "two_zeros", "scalar"])
def test_prod_of_all(torch, values):
    check(torch, lambda lib, a: a.prod() * 1.5, values)
    check(torch, lambda lib, a: (a * a).prod() + a.sum(), values)


def test_prod_of_all_zeros_in_one_vector(torch):
    for values in ([2.0, 0.0, 3.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0], [0.0, 4.0]):
        check(torch, lambda lib, a: a.prod(), np.array(values))


@pytest.mark.parametrize("values", [A, ONE_ZERO, TWO_ZEROS], ids=["no_zero", "one_zero",
                                                                    "two_zeros"])
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, False), (1, True), (-1, True)])
def test_prod_along_a_dim(torch, values, dim, keepdim):
    check(torch, lambda lib, a: a.prod(dim, keepdim=keepdim) * 2.0, values)
    check(torch, lambda lib, a: (a * a).prod(dim, keepdim=keepdim), values)


def test_prod_of_a_scalar_along_its_dim(torch):
    check(torch, lambda lib, a: (a * a).prod(0) * a, SCALAR)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(torch, dim):
    check(torch, lambda lib, a: (a * a).cumsum(dim) * a, A)
    check(torch, lambda lib, a: a.cumsum(dim) * a.cumsum(dim), CUBE)


def test_cumsum_of_a_scalar(torch):
    check(torch, lambda lib, a: (a * a).cumsum(0), SCALAR)


@pytest.mark.parametrize("values", [A, ONE_ZERO, TWO_ZEROS], ids=["no_zero", "one_zero",
                                                                    "two_zeros"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod(torch, values, dim):
    check(torch, lambda lib, a: lib.cumprod(a, dim) * 2.0, values)
    check(torch, lambda lib, a: (a * a).cumprod(dim), values)


def test_cumprod_of_one_element(torch):
    check(torch, lambda lib, a: lib.cumprod(a * a, 0), SCALAR)
    check(torch, lambda lib, a: lib.cumprod(a * a, 0), np.array([1.3]))


@pytest.mark.parametrize("p", [2, 1, float("inf"), "fro", 3, 1.5, 0.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True),
                                          ((0, 1), False)])
def test_norm(torch, p, dim, keepdim):
    values = np.array([[1.0, -2.0, 0.0, 3.0], [-3.0, 0.5, 2.0, 3.0], [0.25, -1.0, -3.0, 1.0]])
    check(torch, lambda lib, a: a.norm(p, dim, keepdim) * a.sum(), values)
    check(torch, lambda lib, a: (a * a).norm(p, dim, keepdim) + a.sum(), values)


@pytest.mark.parametrize("p", [2, 1, float("inf"), 3, 1.5])
def test_norm_at_a_zero_vector(torch, p):
    zero_row = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])
    check(torch, lambda lib, a: a.norm(p, 1) * a.sum(1), zero_row)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax(torch, name, dim):
    check(torch, lambda lib, a: getattr(a * a, name)(dim) * a, A)
    check(torch, lambda lib, a: getattr(a, name)(dim) * getattr(a, name)(dim), CUBE)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_through_functional(torch, name):
    check(torch, lambda lib, a: getattr(lib.nn.functional, name)(a, dim=1).sum(0) * a.sum(0), A)


@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), ((0, 1), False), (-1, False)])
def test_logsumexp(torch, dim, keepdim):
    check(torch, lambda lib, a: lib.logsumexp(a * a, dim, keepdim) * 2.0, A)
    check(torch, lambda lib, a: a.logsumexp(dim, keepdim) * a.logsumexp(dim, keepdim), CUBE)


@pytest.mark.parametrize("values", [A, TIES], ids=["distinct", "ties"])
@pytest.mark.parametrize("dim, descending, stable", [(-1, False, None), (0, True, None),
                                                     (1, False, True)])
def test_sort(torch, values, dim, descending, stable):
    def fn(lib, a):
        kwargs = {} if stable is None else {"stable": stable}
        out = (a * a).sort(dim=dim, descending=descending, **kwargs).values
        return out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
    check(torch, fn, values)


# PyTorch's topk orders equal elements its own way (minigrad's is stable), so the ties here
# are among the elements left out.
TOPK_TIES = np.array([[5.0, 4.0, -1.0, -1.0], [2.0, 2.5, 0.0, 0.0], [3.0, 1.0, 3.5, 1.0]])


@pytest.mark.parametrize("values, k, dim, largest", [
    (A, 2, -1, True), (A, 1, 0, False), (A, 3, 1, False),
    (TOPK_TIES, 2, -1, True), (TOPK_TIES, 1, 0, False)])
def test_topk(torch, values, k, dim, largest):
    def fn(lib, a):
        out = (a * a * a).topk(k, dim, largest=largest).values
        return out * out
    check(torch, fn, values)


@pytest.mark.parametrize("values", [A, TIES, VEC, np.array([2.0, np.nan, 1.0])],
                         ids=["distinct", "ties", "odd_count", "nan"])
def test_median_of_all_shares_among_ties(torch, values):
    check(torch, lambda lib, a: (a * a).median() * a, values)


@pytest.mark.parametrize("values", [A, TIES], ids=["distinct", "ties"])
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), (-1, False)])
def test_median_along_a_dim(torch, values, dim, keepdim):
    def fn(lib, a):
        out = (a * a * a).median(dim, keepdim=keepdim).values
        return out * out
    check(torch, fn, values)


@pytest.mark.parametrize("fn", [
    lambda lib, a: a.sort(0).values * a,
    lambda lib, a: a.topk(1, 0).values * a,
    lambda lib, a: a.median(0).values * a,
    lambda lib, a: a.max(0).values * a,
    lambda lib, a: a.prod(0) * a,
    lambda lib, a: lib.cumprod(a, 0) * a,
    lambda lib, a: a.cumsum(0) * a,
    lambda lib, a: a.softmax(0) * a,
    lambda lib, a: a.log_softmax(0) * a,
    lambda lib, a: a.logsumexp(0) * a,
], ids=["sort", "topk", "median", "max", "prod", "cumprod", "cumsum", "softmax",
        "log_softmax", "logsumexp"])
def test_scalars(torch, fn):
    check(torch, fn, SCALAR)


def test_std_mean_and_var_mean(torch):
    check(torch, lambda lib, a: lib.std_mean(a, 0)[0] * lib.var_mean(a, 1)[0].sum(), A)


def test_float32_inputs(torch):
    values = A.astype(np.float32)
    for fn in (lambda lib, a: a.log_softmax(1) * a, lambda lib, a: a.var(0) * a,
               lambda lib, a: a.norm() * a, lambda lib, a: a.prod(1) * a.mean()):
        check(torch, fn, values, rtol=1e-5, atol=1e-6)


def test_second_derivative_of_the_ops_is_recorded_as_ops():
    """The first derivative of a reduction has a graph whose nodes are Ops (or the legacy
    nodes of the elementwise ops a formula uses), and a plain backward stays numpy only."""
    x = mg.tensor(A, requires_grad=True)
    (g,) = mg.autograd.grad(x.log_softmax(1).sum() + x.var(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    x.grad = None
    x.log_softmax(1).sum().backward()
    assert type(x.grad._data) is np.ndarray and not x.grad.requires_grad
