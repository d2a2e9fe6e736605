"""Every op against PyTorch: forward values, gradients (float64, 1e-9 relative) and grad_fn names.

Each case is ``(inputs, function)``: the function is written once and called with
``minigrad`` and with ``torch`` as ``lib``, so the two sides run the very same code.
"""

import numpy as np
import pytest

import minigrad as mg

RTOL, ATOL = 1e-9, 1e-12
R = np.random.default_rng(1234)


def normal(*shape):
    return R.standard_normal(shape)


def positive(*shape):
    return R.uniform(0.5, 2.0, shape)


def distinct(*shape):
    """Values without ties, so max/min/relu/abs have one well-defined gradient."""
    n = int(np.prod(shape))
    return (R.permutation(n) - n / 2 + 0.25).reshape(shape) / n


BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
                    ((), (3,)), ((5,), ()), ((4, 1, 2), (3, 1))]

CASES = {}


def case(name, inputs, fn, name_differs=False):
    CASES[name] = (inputs, fn, name_differs)


for sa, sb in BROADCAST_SHAPES:
    tag = f"{sa}{sb}"
    case(f"add{tag}", [normal(*sa), normal(*sb)], lambda lib, a, b: a + b)
    case(f"sub{tag}", [normal(*sa), normal(*sb)], lambda lib, a, b: a - b)
    case(f"mul{tag}", [normal(*sa), normal(*sb)], lambda lib, a, b: a * b)
    case(f"div{tag}", [normal(*sa), positive(*sb)], lambda lib, a, b: a / b)
    case(f"pow{tag}", [positive(*sa), normal(*sb)], lambda lib, a, b: a ** b)
    case(f"maximum{tag}", [distinct(*sa), distinct(*sb) + 0.001], lambda lib, a, b: lib.maximum(a, b))
    case(f"minimum{tag}", [distinct(*sa), distinct(*sb) + 0.001], lambda lib, a, b: lib.minimum(a, b))
    case(f"where{tag}", [normal(*sa), normal(*sb)],
         lambda lib, a, b: lib.where(a > 0, a, b))

case("masked_fill", [normal(3, 4)], lambda lib, a: a.masked_fill(a > 0.5, -1.0))
case("masked_fill_broadcast_mask", [normal(3, 4)],
     lambda lib, a: a.masked_fill(lib.tensor([True, False, True, False]), 2.0))
case("masked_fill_broadcast_input", [normal(4)],
     lambda lib, a: a.masked_fill(lib.tensor([[True], [False]]), 0.0))
case("masked_fill_tensor_value", [normal(3, 4), normal()],
     lambda lib, a, v: a.masked_fill(a < 0, v))
case("masked_fill_in_place", [normal(3, 4)],
     lambda lib, a: (a * 1).masked_fill_(a > 0, 0.5) * a)
case("addcmul", [normal(3), normal(2, 1), normal(3)],
     lambda lib, a, b, c: a.addcmul(b, c, value=0.5))
case("addcdiv", [normal(3), normal(2, 1), positive(3)],
     lambda lib, a, b, c: a.addcdiv(b, c, value=-2))
case("addcmul_in_place", [normal(3), normal(3), normal(3)],
     lambda lib, a, b, c: (a * 1).addcmul_(b, c) * a)
case("addcdiv_in_place", [normal(2, 3), normal(3), positive(2, 1)],
     lambda lib, a, b, c: (a * 2).addcdiv_(b, c.expand(2, 3), value=3) * a)

case("amax_all", [distinct(3, 4)], lambda lib, a: a.amax())
case("amax_dims", [distinct(2, 3, 4)], lambda lib, a: a.amax((0, -1)))
case("amax_keepdim", [distinct(3, 4)], lambda lib, a: a.amax(1, keepdim=True))
case("amin_dim", [distinct(3, 4)], lambda lib, a: a.amin(-2))
case("amax_ties_share", [normal(3, 4)], lambda lib, a: (a * 0).amax(1) + a.amax())
case("amin_no_dims_is_all", [distinct(3, 4)], lambda lib, a: a.amin(()))
case("sum_no_dims_is_all", [normal(3, 4)], lambda lib, a: a.sum(()) + a.mean([]))

# dim 0 (or -1) of a 0-dim tensor is the tensor itself
case("sum_dim_of_0d", [normal()], lambda lib, a: a.sum(0) * a.mean(-1, keepdim=True))
case("transpose_of_0d", [normal()], lambda lib, a: a.transpose(0, -1))

case("mean_of_nothing", [normal(0, 3)], lambda lib, a: a.mean(0))

# Python numbers on either side
case("add_scalar", [normal(3, 4)], lambda lib, a: a + 2)
case("radd_scalar", [normal(3, 4)], lambda lib, a: 2 + a)
case("sub_scalar", [normal(3, 4)], lambda lib, a: a - 2)
case("rsub_scalar", [normal(3, 4)], lambda lib, a: 2 - a)
case("mul_scalar", [normal(3, 4)], lambda lib, a: a * 2.5)
case("rmul_scalar", [normal(3, 4)], lambda lib, a: 2.5 * a)
case("div_scalar", [normal(3, 4)], lambda lib, a: a / 3)
case("rdiv_scalar", [positive(3, 4)], lambda lib, a: 3 / a, name_differs=False)
case("pow_2", [normal(3, 4)], lambda lib, a: a ** 2)
case("pow_3", [normal(3, 4)], lambda lib, a: a ** 3)
case("pow_half", [positive(3, 4)], lambda lib, a: a ** 0.5)
case("pow_neg", [positive(3, 4)], lambda lib, a: a ** -1.5)
case("pow_0", [normal(3, 4)], lambda lib, a: a ** 0)
case("rpow", [normal(3, 4)], lambda lib, a: 2 ** a)
case("neg", [normal(3, 4)], lambda lib, a: -a)

# elementwise functions
case("exp", [normal(3, 4)], lambda lib, a: a.exp())
case("log", [positive(3, 4)], lambda lib, a: a.log())
case("sqrt", [positive(3, 4)], lambda lib, a: a.sqrt())
case("abs", [distinct(3, 4)], lambda lib, a: a.abs())
case("sin", [normal(3, 4)], lambda lib, a: a.sin())
case("cos", [normal(3, 4)], lambda lib, a: a.cos())
case("tanh", [normal(3, 4)], lambda lib, a: a.tanh())
case("sigmoid", [normal(3, 4) * 5], lambda lib, a: a.sigmoid())
case("relu", [distinct(3, 4)], lambda lib, a: a.relu())
case("clamp", [distinct(3, 4)], lambda lib, a: a.clamp(-0.2, 0.3))
case("clamp_min", [distinct(3, 4)], lambda lib, a: a.clamp(min=0.1))
case("reciprocal", [positive(3, 4)], lambda lib, a: a.reciprocal())
case("square", [normal(3, 4)], lambda lib, a: a.square())
for dim in (0, 1, -1):
    case(f"softmax_dim{dim}", [normal(3, 4)], lambda lib, a, dim=dim: a.softmax(dim))
    case(f"log_softmax_dim{dim}", [normal(3, 4)], lambda lib, a, dim=dim: a.log_softmax(dim))
case("exp_of_lib", [normal(3)], lambda lib, a: lib.exp(a) + lib.tanh(a) * lib.sigmoid(a))

# reductions over every dim, with and without keepdim
case("sum_all", [normal(2, 3, 4)], lambda lib, a: a.sum())
case("mean_all", [normal(2, 3, 4)], lambda lib, a: a.mean())
case("max_all", [distinct(2, 3, 4)], lambda lib, a: a.max())
case("min_all", [distinct(2, 3, 4)], lambda lib, a: a.min())
case("max_ties", [np.array([[1.0, 3.0, 3.0], [0.0, 3.0, -1.0]])], lambda lib, a: a.max())
for dim in (0, 1, 2, -1, -2):
    for keep in (False, True):
        tag = f"dim{dim}_keep{keep}"
        case(f"sum_{tag}", [normal(2, 3, 4)], lambda lib, a, d=dim, k=keep: a.sum(dim=d, keepdim=k))
        case(f"mean_{tag}", [normal(2, 3, 4)], lambda lib, a, d=dim, k=keep: a.mean(dim=d, keepdim=k))
        case(f"max_{tag}", [distinct(2, 3, 4)], lambda lib, a, d=dim, k=keep: a.max(dim=d, keepdim=k).values)
        case(f"min_{tag}", [distinct(2, 3, 4)], lambda lib, a, d=dim, k=keep: a.min(d, k)[0])
case("sum_dims_tuple", [normal(2, 3, 4)], lambda lib, a: a.sum(dim=(0, 2)))
case("mean_dims_tuple_keep", [normal(2, 3, 4)], lambda lib, a: a.mean(dim=(0, -1), keepdim=True))
case("var", [normal(3, 5)], lambda lib, a: a.var(dim=1))
case("std", [normal(3, 5)], lambda lib, a: a.std())

# prod: without zeros, with one zero, with several (in one slice, in several slices)
ONE_ZERO = np.array([[1.5, -2.0, 0.5, 3.0], [0.7, 0.0, -1.2, 2.0], [1.1, 0.9, -0.8, 1.3]])
ZEROS = np.array([[1.5, 0.0, 0.5, 0.0], [0.7, 0.0, -1.2, 2.0], [1.1, 0.9, -0.8, 1.3]])
case("prod_all", [positive(2, 3, 4) * np.sign(normal(2, 3, 4))], lambda lib, a: a.prod())
case("prod_all_one_zero", [ONE_ZERO], lambda lib, a: a.prod())
case("prod_all_zeros", [ZEROS], lambda lib, a: a.prod())
case("prod_0d", [normal()], lambda lib, a: a.prod())
case("prod_0d_dim", [normal()], lambda lib, a: a.prod(-1, keepdim=True))
case("prod_of_lib", [ZEROS], lambda lib, a: lib.prod(a, 1) * lib.prod(a.exp(), -1))
for dim in (0, 1, -1):
    for keep in (False, True):
        tag = f"dim{dim}_keep{keep}"
        case(f"prod_{tag}", [normal(3, 4)], lambda lib, a, d=dim, k=keep: a.prod(d, keepdim=k))
        case(f"prod_one_zero_{tag}", [ONE_ZERO], lambda lib, a, d=dim, k=keep: a.prod(d, k))
        case(f"prod_zeros_{tag}", [ZEROS], lambda lib, a, d=dim, k=keep: a.prod(dim=d, keepdim=k))
for dim in (0, 2, -2):
    case(f"prod_3d_dim{dim}", [normal(2, 3, 4)], lambda lib, a, d=dim: a.prod(d))

case("prod_numpy_names", [normal(3, 4)], lambda lib, a: a.prod(axis=1, keepdims=True))

# cumsum
for dim in (0, 1, 2, -1, -3):
    case(f"cumsum_dim{dim}", [normal(2, 3, 4)], lambda lib, a, d=dim: a.cumsum(d))
case("cumsum_1d", [normal(5)], lambda lib, a: lib.cumsum(a, 0) * a)
case("cumsum_0d", [normal()], lambda lib, a: a.cumsum(0))
case("cumsum_numpy_names", [normal(3, 4)], lambda lib, a: a.cumsum(axis=0) + lib.cumsum(a, axis=-1))

# norm: p = 2 ('fro'), 1, inf and other p > 0; gradient 0 where the norm is 0
ZERO_ROW = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.0], [0.5, 0.0, 3.0]])
INF_TIES = np.array([[2.0, -2.0, 1.0], [0.0, 3.0, -3.0], [0.0, 0.0, 0.0]])
for p in (2, "fro", 1, float("inf"), 3, 1.5, 0.5):
    case(f"norm_p{p}_all", [normal(2, 3, 4)], lambda lib, a, p=p: a.norm(p))
    case(f"norm_p{p}_zero_row_dim1", [ZERO_ROW], lambda lib, a, p=p: a.norm(p, dim=1))
    case(f"norm_p{p}_zeros_all", [np.zeros((2, 3))], lambda lib, a, p=p: a.norm(p))
    for dim in (0, -1, (0, 2), (-1, 0)):
        for keep in (False, True):
            case(f"norm_p{p}_dim{dim}_keep{keep}", [normal(2, 3, 4)],
                 lambda lib, a, p=p, d=dim, k=keep: a.norm(p, dim=d, keepdim=k))
case("norm_default", [normal(3, 4)], lambda lib, a: a.norm())
case("norm_dim_keyword", [normal(3, 4)], lambda lib, a: a.norm(dim=1, keepdim=True))
case("norm_0d", [normal()], lambda lib, a: a.norm())
case("norm_inf_ties", [INF_TIES], lambda lib, a: a.norm(float("inf"), dim=1))
case("norm_inf_ties_all", [INF_TIES], lambda lib, a: a.norm(float("inf")))
case("norm_of_lib", [normal(3, 4)], lambda lib, a: lib.norm(a, 1, 0) + lib.norm(a, dim=0))
case("normalize_rows", [normal(3, 4)], lambda lib, a: a / a.norm(dim=1, keepdim=True))

# gather: index int64 (or int32), smaller than the input off ``dim``, repeats add up
GATHER_2D = [[0, 2, 2], [1, 0, 3], [3, 3, 3]]
case("gather_dim1", [normal(3, 4)], lambda lib, a: a.gather(1, lib.tensor(GATHER_2D)))
case("gather_dim_neg1", [normal(3, 4)], lambda lib, a: a.gather(-1, lib.tensor(GATHER_2D)))
case("gather_dim0", [normal(4, 3)], lambda lib, a: a.gather(0, lib.tensor(GATHER_2D)))
case("gather_dim0_smaller", [normal(4, 5)],
     lambda lib, a: a.gather(0, lib.tensor([[3, 1], [3, 3]])))
case("gather_dim_neg2_int32", [normal(4, 3)],
     lambda lib, a: a.gather(-2, lib.tensor(GATHER_2D, dtype=lib.int32)))
case("gather_3d", [normal(2, 3, 4)],
     lambda lib, a: a.gather(2, lib.tensor([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])))
case("gather_3d_dim1", [normal(2, 3, 4)], lambda lib, a: a.gather(1, lib.tensor([[[2, 0, 1, 2]]])))
case("gather_1d", [normal(5)], lambda lib, a: a.gather(0, lib.tensor([4, 0, 4, 1])))
case("gather_0d", [normal()], lambda lib, a: a.gather(0, lib.tensor([0, 0])))
case("gather_0d_index", [normal(3)], lambda lib, a: a.gather(0, lib.tensor(2)))
case("gather_of_lib_numpy_names", [normal(3, 4)],
     lambda lib, a: lib.gather(a, axis=1, index=lib.tensor([[1], [0], [3]])))
case("gather_labels", [normal(5, 3)],  # the score of each sample's label, as in a loss
     lambda lib, a: a.log_softmax(1).gather(1, lib.tensor([[0], [2], [1], [1], [0]])).mean())

# leaky_relu (PyTorch has it in nn.functional only); the gradient at 0 is the slope
LEAKY = np.array([[-1.5, 0.0, 2.0], [0.3, -0.2, 0.0]])
case("leaky_relu", [LEAKY], lambda lib, a: lib.nn.functional.leaky_relu(a))
case("leaky_relu_slope", [LEAKY], lambda lib, a: lib.nn.functional.leaky_relu(a, 0.2))
case("leaky_relu_slope_above_1", [LEAKY], lambda lib, a: lib.nn.functional.leaky_relu(a, 3))
case("leaky_relu_negative_slope", [LEAKY], lambda lib, a: lib.nn.functional.leaky_relu(a, -0.5))
case("leaky_relu_in_place", [LEAKY],
     lambda lib, a: lib.nn.functional.leaky_relu(a * 2, 0.1, inplace=True))
case("leaky_relu_module_in_place", [LEAKY],
     lambda lib, a: lib.nn.LeakyReLU(0.3, inplace=True)(a - 0.1) * a)

# shapes
case("reshape", [normal(2, 3, 4)], lambda lib, a: a.reshape(4, 6))
case("view_minus1", [normal(2, 3, 4)], lambda lib, a: a.view(-1))
case("flatten", [normal(2, 3, 4)], lambda lib, a: a.flatten(1))
case("unsqueeze", [normal(2, 3)], lambda lib, a: a.unsqueeze(1))
case("squeeze", [normal(2, 1, 3)], lambda lib, a: a.squeeze())
case("squeeze_dim", [normal(2, 1, 3)], lambda lib, a: a.squeeze(1))
case("transpose", [normal(2, 3, 4)], lambda lib, a: a.transpose(0, 2))
case("permute", [normal(2, 3, 4)], lambda lib, a: a.permute(2, 0, 1))
case("T", [normal(3, 4)], lambda lib, a: a.T)
case("t", [normal(3, 4)], lambda lib, a: a.t())
case("expand", [normal(3, 1)], lambda lib, a: a.expand(2, 3, 4))
case("clone", [normal(3, 4)], lambda lib, a: a.clone())

# indexing: basic and integer arrays (repeated indices add up)
case("index_int", [normal(4, 3)], lambda lib, a: a[1])
case("index_slice", [normal(4, 5)], lambda lib, a: a[:, 1:4])
case("index_step", [normal(6, 5)], lambda lib, a: a[::2, -1])
case("index_ellipsis", [normal(2, 3, 4)], lambda lib, a: a[..., 0])
case("index_none", [normal(3, 4)], lambda lib, a: a[None, 1])
case("index_list", [normal(4, 3)], lambda lib, a: a[[0, 2, 2]])
case("index_tensor", [normal(4, 3)], lambda lib, a: a[lib.tensor([3, 0, 3])])
case("index_pairs", [normal(4, 3)], lambda lib, a: a[lib.tensor([0, 1, 1]), lib.tensor([2, 0, 0])])
case("index_mixed", [normal(4, 3)], lambda lib, a: a[1:, [0, 2]])
case("index_mask", [normal(4, 3)], lambda lib, a: a[a > 0])

# matrix products
case("mm", [normal(3, 4), normal(4, 5)], lambda lib, a, b: a @ b)
case("dot", [normal(4), normal(4)], lambda lib, a, b: a @ b)
case("mv", [normal(3, 4), normal(4)], lambda lib, a, b: a @ b)
case("vm", [normal(4), normal(4, 5)], lambda lib, a, b: lib.matmul(a, b), name_differs=True)
case("bmm", [normal(2, 3, 4), normal(2, 4, 5)], lambda lib, a, b: a @ b, name_differs=True)
case("batch_broadcast", [normal(2, 3, 4), normal(4, 5)], lambda lib, a, b: a @ b, name_differs=True)
case("batch_vec", [normal(2, 3, 4), normal(4)], lambda lib, a, b: a @ b, name_differs=True)

# joining
case("stack0", [normal(3, 4), normal(3, 4)], lambda lib, a, b: lib.stack([a, b]))
case("stack_last", [normal(3, 4), normal(3, 4)], lambda lib, a, b: lib.stack([a, b], dim=-1))
case("cat0", [normal(2, 4), normal(3, 4)], lambda lib, a, b: lib.cat([a, b]))
case("cat1", [normal(3, 2), normal(3, 4)], lambda lib, a, b: lib.cat([a, b], dim=1))

# a tensor used several times in one graph
case("reuse", [normal(3, 4)], lambda lib, a: a * a + a.exp() * a - a.sum(0))
case("reuse_two", [normal(3), normal(3)],
     lambda lib, a, b: (a * b).sum() * a + (a - b).tanh() * b)
case("float_cast", [normal(3)], lambda lib, a: a.float().double() * 2, name_differs=True)


def _run(lib, inputs, fn, upstream):
    tensors = [lib.tensor(x.copy(), dtype=lib.float64, requires_grad=True) for x in inputs]
    out = fn(lib, *tensors)
    out.backward(lib.tensor(upstream))
    return out, [t.grad for t in tensors]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name, torch):
    inputs, fn, name_differs = CASES[name]
    with torch.no_grad():
        shape = fn(torch, *[torch.tensor(x) for x in inputs]).shape
    upstream = np.random.default_rng(len(name)).standard_normal(tuple(shape))
    ours, our_grads = _run(mg, inputs, fn, upstream)
    theirs, their_grads = _run(torch, inputs, fn, upstream)

    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL, atol=ATOL)
    for i, (g, h) in enumerate(zip(our_grads, their_grads)):
        assert (g is None) == (h is None), f"input {i}"
        if h is not None:
            np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=RTOL, atol=ATOL,
                                       err_msg=f"gradient of input {i}")
    if not name_differs:
        assert ours.grad_fn.name() == theirs.grad_fn.name()


@pytest.mark.parametrize("expression", [
    "lib.tensor([[1, 2], [3, 4]], dtype=lib.int32).prod()",
    "lib.tensor([[1, 2], [3, 4]]).prod(1)",
    "lib.tensor([True, False]).prod()",
    "lib.tensor([[1, 2], [3, 4]], dtype=lib.int32).cumsum(0)",
    "lib.tensor([True, True, False]).cumsum(0)",
    "lib.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(0, dtype=lib.float64)",
    "lib.tensor([[1.0, 2.0], [3.0, 4.0]]).cumsum(-1, dtype=lib.float64)",
    "lib.tensor([[3.0, 4.0]]).norm(dim=1, keepdim=True)",
    "lib.tensor([[3.0, 4.0]]).norm(dtype=lib.float64)",
    "lib.tensor([[3.0, 4.0]], dtype=lib.float64).norm(float('inf'))",
    "lib.tensor([[3.0, 4.0]]).norm(keepdim=True)",
    "lib.tensor(-2.0).norm(1, keepdim=True)",
    "lib.tensor([1.0, 2.0, 3.0]).norm(p=None, dim=())",
    "lib.tensor([[1, 2], [3, 4]]).gather(1, lib.tensor([[1], [0]], dtype=lib.int32))",
    "lib.zeros(2, 3).gather(0, lib.zeros(0, 7, dtype=lib.int64))",
    "lib.tensor([[1.0, 2.0], [3.0, 4.0]]).gather(1, lib.tensor([[1, 1, 0], [0, 0, 0]]))",
    "lib.ones(0, 3).prod(0)",
    "lib.ones(0, 3).norm(float('inf'), dim=1)",
])
def test_results_have_pytorchs_values_shapes_and_dtypes(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_the_mean_of_nothing_is_nan_without_a_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "Mean of empty slice" would raise here
        assert np.isnan(mg.zeros(0).mean().item())
        assert mg.zeros(0, 3).mean(0).isnan().all().item()
