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
