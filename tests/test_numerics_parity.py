"""Derivatives at the edges, dtype rules and empty shapes, against PyTorch.

The places where a formula that is right in the middle of its domain gives a silently wrong
number at the edge: a mask multiplied into an infinite gradient (inf * 0 = nan), the
gradient of std where std is 0, a nan inside max(), a float32 running sum that drifts; the
dtype a Python number gives an integer tensor; and the empty tensors PyTorch accepts or
refuses. Each case runs the same code with ``minigrad`` and ``torch`` as ``lib``.
"""

import math
import operator

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops.formulas import keep_where, zero_where

NAN, INF = float("nan"), float("inf")


def _same_numbers(ours, theirs, what):
    """Equal values (nan where PyTorch has nan), same shape and dtype."""
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert ours.shape == theirs.shape, what
    assert ours.dtype == theirs.dtype, what
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=what)


# ------------------------------------------------------------------ gradients at the edges

# (inputs, function): each input a list of float32 values that requires grad.
GRADIENT_CASES = {
    # a masked-out element whose local derivative further up is infinite: 0, not inf * 0
    "relu then sqrt": ([[-1.0, 4.0, 0.0]], lambda lib, x: x.relu().sqrt()),
    "relu of a 0-dim tensor": ([-2.0], lambda lib, x: x.relu().sqrt()),
    "clamp of a 0-dim tensor": ([0.5], lambda lib, x: x.clamp(0, 1).sqrt()),
    "relu of nan passes the gradient": ([[NAN, -1.0, 2.0]], lambda lib, x: x.relu() * 3),
    "clamp(min=0) then sqrt": ([[-1.0, 4.0]], lambda lib, x: x.clamp(min=0).sqrt()),
    "clamp_min then sqrt": ([[-1.0, 4.0]], lambda lib, x: x.clamp_min(0.0).sqrt()),
    "clamp_max then sqrt": ([[1.0, -4.0]], lambda lib, x: (-x.clamp_max(0.0)).sqrt()),
    "clamp(0, 1) then log": ([[-1.0, 0.5, 2.0]], lambda lib, x: x.clamp(0, 1).log()),
    "clamp of nan": ([[NAN, 0.5, 3.0]], lambda lib, x: x.clamp(0.0, 1.0)),
    "clamp with min above max": ([[0.0, 1.5, 3.0]], lambda lib, x: x.clamp(min=2.0, max=1.0)),
    "maximum then sqrt": ([[-1.0, 4.0]], lambda lib, x: lib.maximum(x, lib.tensor(0.0)).sqrt()),
    "minimum then sqrt": ([[1.0, -4.0]],
                          lambda lib, x: (-lib.minimum(x, lib.tensor(0.0))).sqrt()),
    "maximum with nan on either side": ([[1.0, NAN, 2.0], [NAN, 3.0, 2.0]],
                                        lambda lib, x, y: lib.maximum(x, y)),
    "minimum broadcast with ties": ([[[1.0], [2.0]], [2.0, 1.0, 0.0]],
                                    lambda lib, x, y: lib.minimum(x, y) * 3),
    "where then sqrt": ([[-1.0, 4.0]],
                        lambda lib, x: lib.where(x > 0, x, lib.tensor(0.0)).sqrt()),
    "masked_fill then sqrt": ([[-1.0, 4.0]], lambda lib, x: x.masked_fill(x < 0, 0.0).sqrt()),
    # PyTorch multiplies here too: nan where the derivative is 0 and the gradient infinite
    "abs at 0 then 1/x": ([[0.0, 4.0]], lambda lib, x: 1 / x.abs()),
    "leaky_relu(slope 0) then sqrt": ([[-1.0, 4.0]],
                                      lambda lib, x: lib.nn.functional.leaky_relu(x, 0.0).sqrt()),
    "amax with an infinite gradient": ([[1.0, 2.0]], lambda lib, x: 1 / (x.amax(0) - 2)),
    # max(): ties share, a nan wins, the others get 0 even for an infinite gradient
    "max() with a nan": ([[1.0, NAN, 3.0]], lambda lib, x: x.max()),
    "max() with two nans": ([[NAN, NAN, 3.0]], lambda lib, x: x.max()),
    "min() with a nan": ([[1.0, NAN, -3.0]], lambda lib, x: x.min()),
    "max() with ties": ([[3.0, 1.0, 3.0]], lambda lib, x: x.max() * 2),
    "max() with an infinite gradient": ([[1.0, 2.0]], lambda lib, x: 1 / (x.max() - 2)),
    "max(dim) with a nan": ([[[1.0, NAN], [3.0, 2.0]]], lambda lib, x: x.max(1).values),
    "amax with a nan": ([[1.0, NAN, 3.0]], lambda lib, x: x.amax()),
    # % has a gradient: 1 for the dividend, -floor(a / b) for a tensor divisor
    "x % 1.0": ([[1.5, -2.3, 7.25]], lambda lib, x: 2 * x + x % 1.0),
    "x % y": ([[5.5, -2.3, 7.0], [2.0, 1.5, -3.0]], lambda lib, x, y: x % y),
    "x % a 0-dim tensor": ([[5.5, -2.3], 2.5], lambda lib, x, y: x % y),
    # std and var of equal values: 0 with gradient 0; of one value (N - 1 = 0): nan
    "std of constants": ([[1.0, 1.0, 1.0]], lambda lib, x: x.std()),
    "var of constants": ([[1.0, 1.0, 1.0]], lambda lib, x: x.var()),
    "std over a dim, one row constant": ([[[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]],
                                         lambda lib, x: x.std(1)),
    "std keepdim, one row constant": ([[[2.0, 2.0], [1.0, 4.0]]],
                                      lambda lib, x: x.std(0, keepdim=True)),
    "std of one value": ([[1.5]], lambda lib, x: x.std()),
    "prod of a 0-dim -inf": ([0.0], lambda lib, x: x.log().prod()),
    "prod of a 0-dim inf over dim 0": ([0.0], lambda lib, x: (-x.log()).prod(0)),
    "var of one value": ([[1.5]], lambda lib, x: x.var()),
    "std of one value, correction 0": ([[1.5]], lambda lib, x: x.std(correction=0)),
    # clamp with tensor bounds: the bounds get the gradient where they win
    "clamp(min=tensor)": ([[1.0, -2.0, 3.0], [0.0, 0.0, 4.0]],
                          lambda lib, x, lo: x.clamp(min=lo)),
    "clamp(max=tensor)": ([[1.0, -2.0, 3.0], [0.0, 0.0, 4.0]],
                          lambda lib, x, hi: x.clamp(max=hi)),
    "clamp(min=tensor, max=tensor)": ([[1.0, -2.0, 3.0], [0.0, 0.0, 0.0], [2.0, 2.0, 2.0]],
                                      lambda lib, x, lo, hi: x.clamp(lo, hi)),
    "clamp ties with tensor bounds": ([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]],
                                      lambda lib, x, lo, hi: x.clamp(lo, hi)),
    "clamp with crossed tensor bounds": ([[0.0, 1.5, 3.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]],
                                         lambda lib, x, lo, hi: x.clamp(lo, hi)),
    "clamp(min=0-dim tensor)": ([[1.0, -2.0, 3.0], 0.5], lambda lib, x, lo: x.clamp(min=lo)),
    "clamp with a broadcast bound": ([[1.0, -2.0], [[0.0], [1.5]]],
                                     lambda lib, x, lo: x.clamp(min=lo)),
    "prod() with two zeros and an inf": ([[0.0, INF, 0.0, 2.0]], lambda lib, x: x.prod()),
    "prod() with one zero": ([[0.0, 3.0, -1.0, 2.0]], lambda lib, x: x.prod()),
    "prod(dim) with zeros and an inf": ([[[0.0, INF, 0.0], [1.0, 0.0, 2.0]]],
                                        lambda lib, x: x.prod(1)),
    "sign has gradient 0": ([[NAN, -2.0, 0.0, 3.0]], lambda lib, x: x.sign() * 2 + x),
    "x ** a constant 0-dim tensor": ([[0.5, 2.0]], lambda lib, x: x ** lib.tensor(3.0)),
    "cumsum": ([[0.1, 0.2, 0.3, 0.4]], lambda lib, x: x.cumsum(0) * lib.tensor([1., 2, 3, 4])),
    # the slope of |x| and of the 1- and inf-norms is 0 at a nan (numpy's sign says nan)
    "abs of nan": ([[NAN, 1.0, -0.5]], lambda lib, x: x.abs()),
    "1-norm with a nan": ([[NAN, 1.0, -0.5]], lambda lib, x: x.norm(1)),
    "inf-norm with a nan": ([[NAN, 1.0, -0.5]], lambda lib, x: x.norm(float("inf"))),
    # no overflow or underflow in between that the result does not have
    "1 / x of a huge x, infinite gradient": ([[1e30, 1.0]], lambda lib, x: 1 / x,
                                             [INF, 1.0]),
    "x / y of a tiny y": ([[1e-30, 1.0], [1e-30, 2.0]], lambda lib, x, y: x / y),
    "std of huge values": ([[1e30, 1.0, -0.5]], lambda lib, x: x.std()),
    "var over a dim of huge values": ([[[1e25, -1e25], [1.0, 2.0]]], lambda lib, x: x.var(1)),
    "x ** 0 with an infinite gradient": ([[2.0, 0.0, -1.5], [0.0, 0.0, 0.0]],
                                         lambda lib, x, y: x ** y, [INF, INF, 1.0]),
    "x % y with infinite operands": ([[1.0, INF, -1.5], [-INF, 1.0, INF]],
                                     lambda lib, x, y: x % y),
}


def _run_gradient_case(lib, inputs, fn, upstream=None):
    """``fn`` of the inputs, and their gradients for an upstream gradient of ones (or of
    ``upstream``)."""
    leaves = [lib.tensor(x, dtype=lib.float32, requires_grad=True) for x in inputs]
    out = fn(lib, *leaves)
    if upstream is None:
        out.sum().backward()
    else:
        out.backward(lib.tensor(upstream))
    return out, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
def test_gradients_at_the_edges_match_pytorch(name, torch):
    ours, our_grads = _run_gradient_case(mg, *GRADIENT_CASES[name])
    theirs, their_grads = _run_gradient_case(torch, *GRADIENT_CASES[name])
    _same_numbers(ours, theirs, f"{name}: value")
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    for i, (g, h) in enumerate(zip(our_grads, their_grads)):
        assert (g is None) == (h is None), f"{name}: input {i}"
        if h is not None:
            _same_numbers(g, h, f"{name}: gradient of input {i}")


@pytest.mark.parametrize("expression", ["x.std()", "x.var(0)", "x.std(correction=2)",
                                        "lib.zeros(0).var()"])
def test_std_and_var_without_degrees_of_freedom_warn_as_pytorch(expression, torch):
    for lib in (mg, torch):
        x = lib.tensor([1.5, 2.0])[:1] if "correction" not in expression else lib.ones(2)
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            assert math.isnan(eval(expression).item())


@pytest.mark.parametrize("op", ["relu", "clamp_min", "hardtanh-like clamp", "maximum"])
def test_an_infinite_gradient_is_masked_to_zero_as_in_pytorch(op, torch):
    apply = {"relu": lambda lib, x: x.relu(), "clamp_min": lambda lib, x: x.clamp_min(0.0),
             "hardtanh-like clamp": lambda lib, x: x.clamp(-1.0, 1.0),
             "maximum": lambda lib, x: lib.maximum(x, lib.zeros(4))}[op]
    grads = []
    for lib in (mg, torch):
        x = lib.tensor([-2.0, 0.5, -3.0, 2.0], requires_grad=True)
        apply(lib, x).backward(lib.tensor([INF, -INF, NAN, -INF]))
        grads.append(x.grad)
    _same_numbers(*grads, op)


def test_relu_gives_a_positive_zero_gradient_as_pytorch(torch):
    """``grad * mask`` gives -0.0 where a negative gradient is masked out, which prints as
    ``-0.``; PyTorch's gradient there is +0."""
    for lib in (mg, torch):
        x = lib.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        (x.relu() * -1).sum().backward()
        assert not np.signbit(x.grad.numpy()[0]) and not np.signbit(x.grad.numpy()[2]), lib


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_keep_where_and_zero_where_are_np_where_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    grad = rng.standard_normal((7, 5)).astype(dtype)
    grad[0, :3] = [np.inf, -np.inf, np.nan]
    grad[1, :3] = [np.inf, -np.inf, np.nan]
    mask = rng.random((7, 5)) > 0.5
    mask[0, :3], mask[1, :3] = False, True
    expected = np.where(mask, grad, np.zeros((), dtype))
    got = keep_where(mask, grad)
    assert got.dtype == dtype
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(got.view(bits), expected.view(bits))
    np.testing.assert_array_equal(zero_where(~mask, grad).view(bits), expected.view(bits))
    # not contiguous, and a mask that broadcasts
    np.testing.assert_array_equal(keep_where(mask.T, grad.T), expected.T)
    np.testing.assert_array_equal(keep_where(mask[:1], grad), np.where(mask[:1], grad, 0))


# ------------------------------------------------------------------ ops without a derivative

@pytest.mark.parametrize("expression", ["x // 2.0", "x // y", "7.0 // x", "7.0 % x",
                                        "x.floor_divide(y)"])
def test_backward_through_an_op_without_derivative_raises_as_in_pytorch(expression, torch):
    for lib in (mg, torch):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        out = eval(expression)
        # PyTorch's node calls itself torch::autograd::NotImplemented
        assert out.requires_grad and out.grad_fn.name().endswith("NotImplemented"), lib
        with pytest.raises(RuntimeError, match=r"derivative for aten::\w+ is not implemented"):
            out.sum().backward()
        assert x.grad is None and y.grad is None


@pytest.mark.parametrize("expression", ["x // y", "x % y", "x // 2", "x % 3", "2.5 // x",
                                        "7 % x", "-7 % x", "x // -2.5"])
def test_floor_division_and_remainder_values_match_pytorch(expression, torch):
    values = np.random.default_rng(1).uniform(-10, 10, 50).astype(np.float32)
    divisors = np.random.default_rng(2).uniform(-3, 3, 50).astype(np.float32)
    results = []
    for lib in (mg, torch):
        x, y = lib.tensor(values), lib.tensor(divisors)
        results.append(eval(expression))
    _same_numbers(*results, expression)


# ------------------------------------------------------------------ dtypes

def _outcome(lib, expression):
    """What ``expression`` gives with ``lib``: (dtype name, shape, values) or the exception
    type it raises."""
    try:
        value = eval(expression, {"lib": lib, "F": lib.nn.functional, "math": math})
    except Exception as error:  # noqa: BLE001  (the type is what is compared)
        return type(error)
    if isinstance(value, tuple):
        return tuple(_outcome_of(v) for v in value)
    return _outcome_of(value)


def _outcome_of(value):
    array = value.detach().numpy()
    return str(value.dtype).split(".")[-1], tuple(value.shape), array


def _same_outcome(expression, torch):
    ours, theirs = _outcome(mg, expression), _outcome(torch, expression)
    if isinstance(theirs, type):
        assert ours is theirs, f"{expression}: PyTorch raises {theirs.__name__}, we {ours}"
        return
    assert not isinstance(ours, type), f"{expression}: PyTorch gives {theirs}, we raise {ours}"
    if not isinstance(theirs, tuple) or not isinstance(theirs[0], tuple):
        ours, theirs = (ours,), (theirs,)
    for (our_dtype, our_shape, our_values), (dtype, shape, values) in zip(ours, theirs):
        assert (our_dtype, our_shape) == (dtype, shape), expression
        np.testing.assert_allclose(our_values, values, rtol=1e-6, equal_nan=True,
                                   err_msg=expression)


DTYPE_EXPRESSIONS = [
    # clamp: a float bound makes an integer tensor float, as any op with a float does
    "lib.tensor([1, 2, 3]).clamp(min=0.5)",
    "lib.tensor([1, 2, 3]).clamp(0.5, 2.5)",
    "lib.tensor([1, 2, 3]).clamp(max=2)",
    "lib.tensor([True, False]).clamp(min=0)",
    "lib.tensor([1, 2, 3], dtype=lib.int32).clamp(min=lib.tensor(0.5))",
    "lib.tensor([1, 2, 3], dtype=lib.int32).clamp(min=lib.tensor([0, 1, 5]))",
    "lib.tensor([1., 2, 3]).clamp(min=lib.tensor([0., 1, 5], dtype=lib.float64))",
    "lib.tensor([1., 2, 3]).clamp(min=lib.tensor([0, 1, 5]), max=lib.tensor(4))",
    "lib.tensor([1., 2, 3]).clamp(min=lib.tensor([0., 1, 5]), max=2.0)",
    "lib.tensor([1., 2, 3]).clamp(min=lib.tensor(0.5), max=2.0)",
    "lib.tensor([1., 2, 3]).clamp(min=lib.tensor(0.5, requires_grad=True), max=2.0)",
    "lib.tensor([1., 2, 3]).clamp(lib.tensor(0.5), lib.tensor(2.0, requires_grad=True))",
    "lib.tensor([1., 2, 3]).clamp(min=lib.ones(2))",
    # where with numbers: promoted as ``tensor + number``
    "lib.where(lib.tensor([True, False]), 1.5, lib.tensor([1, 2]))",
    "lib.where(lib.tensor([True, False]), lib.tensor([1, 2]), 1.5)",
    "lib.where(lib.tensor([True, False]), 1, lib.tensor([1., 2]))",
    "lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int32), 5)",
    "lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int16), lib.tensor(5))",
    "lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.uint8), 7)",
    "lib.where(lib.tensor([True, False]), 1.5, 2)",
    "lib.where(lib.tensor([True, False]), 1, 2)",
    "lib.where(lib.tensor([True, False]), True, False)",
    # integer and bool reductions add up in int64
    "lib.tensor([200, 100], dtype=lib.uint8).sum()",
    "lib.tensor([2**30, 2**30], dtype=lib.int32).sum()",
    "lib.tensor([[1, 2], [3, 4]], dtype=lib.int16).sum(0)",
    "lib.tensor([100, 100], dtype=lib.int8).sum(0, keepdim=True)",
    "lib.tensor([True, True]).sum()",
    "lib.tensor([1, 2], dtype=lib.int32).sum(dtype=lib.int32)",
    "lib.tensor([1., 2], dtype=lib.float16).sum()",
    "lib.tensor([200, 2], dtype=lib.uint8).prod()",
    "lib.tensor([200, 100], dtype=lib.uint8).cumsum(0)",
    "lib.tensor([1, 2], dtype=lib.int32).mean()",
    "lib.tensor([True]).mean()",
    "lib.tensor([1, 2], dtype=lib.uint8).std()",
    "lib.tensor([1, 2]).var()",
    # // and % of integers and bools
    "lib.tensor([5, 7]) // 0",
    "lib.tensor([5, 7]) % 0",
    "lib.tensor([5, 7]) // lib.tensor([0, 1])",
    "7 // lib.tensor([0, 1])",
    "lib.tensor([5, 7], dtype=lib.uint8) % lib.tensor([3, 2], dtype=lib.uint8)",
    "lib.tensor([-5, 7]) // lib.tensor([2, -2])",
    "lib.tensor([-5, 7]) % lib.tensor([2, -2])",
    "lib.tensor([5., -7, 0]) // 0",
    "lib.tensor([5., -7, 0]) % 0",
    "lib.tensor([True]) // True",
    "lib.tensor([True]) % lib.tensor([True])",
    "lib.tensor([True, False]) % 2",
    "2.5 % lib.tensor([True])",
    "lib.tensor([True]) - lib.tensor([True])",
    "lib.tensor([True]) - 1",
    "lib.tensor([1]) - True",
    "1.5 - lib.tensor([True])",
    "lib.tensor([True]) ** True",
    "True ** lib.tensor([True])",
    "lib.tensor([2, 3, 1, -1, -1, 0, 5]) ** lib.tensor([-1, -2, -5, -3, -2, -1, 2])",
    "lib.tensor([[2], [-1]], dtype=lib.int16) ** lib.tensor([-1, 3], dtype=lib.int16)",
    "lib.tensor([True]) ** lib.tensor(2, dtype=lib.int8)",
    "lib.tensor([True]) ** lib.tensor(True)",
    "lib.tensor([2], dtype=lib.int8) ** lib.tensor(2)",
    "lib.tensor(2, dtype=lib.uint8) ** lib.tensor(2, dtype=lib.int8)",
    "lib.tensor([2.0], dtype=lib.float16) ** lib.tensor(2.0)",
    "lib.tensor([2.0]) ** lib.tensor(2.0, dtype=lib.float64)",
    "-lib.tensor([True, False])",
    "lib.tensor([True, False]).sign()",
    "lib.tensor([float('nan'), -0.0, -2.0, 3.0]).sign()",
    "lib.tensor([-3, 0, 2], dtype=lib.int16).sign()",
    "lib.tensor([1, 0], dtype=lib.uint8).all()",
    "lib.tensor([[1, 0]], dtype=lib.uint8).any(1, keepdim=True)",
    "lib.tensor([[1, 0]], dtype=lib.int32).any(1)",
    # a Python int with an integer tensor is converted to its dtype with wrap-around
    "lib.tensor([1, 2], dtype=lib.uint8) + (-1)",
    "lib.tensor([1, 2], dtype=lib.uint8) - (-1)",
    "lib.tensor([1, 2], dtype=lib.uint8) * (-1)",
    "lib.tensor([1, 2], dtype=lib.uint8) % (-1)",
    "lib.tensor([1, 2], dtype=lib.uint8) // (-1)",
    "lib.tensor([1, 2], dtype=lib.uint8) + 300",
    "-1 + lib.tensor([1, 2], dtype=lib.uint8)",
    "lib.tensor(0, dtype=lib.uint8) < -1",
    "lib.tensor([1, 2], dtype=lib.uint8) == 257",
    "lib.tensor([1, 2], dtype=lib.int32) + 2**40",
    "lib.tensor([1, 2], dtype=lib.int8) * 200",
    "lib.tensor([1, 2], dtype=lib.uint8) + 2**70",
    "lib.tensor([1, 2], dtype=lib.uint8).add_(-1)",
    "lib.tensor([1, 2], dtype=lib.int16).mul_(70000)",
    # ... and checked, as a fill value: an unsigned dtype takes ints down to -max
    "lib.tensor([1, 2], dtype=lib.uint8).fill_(-1)",
    "lib.tensor([1, 2], dtype=lib.uint8).fill_(300)",
    "lib.tensor([1, 2], dtype=lib.uint8).fill_(-256)",
    "lib.tensor([1, 2], dtype=lib.uint8).fill_(-1.5)",
    "lib.tensor([1, 2], dtype=lib.int8).fill_(-128)",
    "lib.tensor([1, 2], dtype=lib.int8).fill_(-129)",
    "lib.tensor(1).fill_(math.inf)",
    "lib.tensor([1, 2], dtype=lib.uint8).masked_fill_(lib.tensor([True, False]), -1)",
    "lib.tensor([0, 3], dtype=lib.uint8).clamp_min(-2)",
    "lib.tensor([1, 2], dtype=lib.uint8).clamp(-3, 5)",
    "lib.tensor([1, 2], dtype=lib.uint8).clamp(0, 300)",
    "lib.tensor([1, 2], dtype=lib.uint8).clamp_(-3)",
    "lib.tensor([1, 2], dtype=lib.int32).clamp_(max=2**40)",
    # integer powers, bools that PyTorch refuses
    "2 ** lib.tensor([-1, 2, 0])",
    "(-1) ** lib.tensor([-1, -2, 3])",
    "lib.tensor([True]).relu()",
    "lib.tensor([True]).abs()",
    "lib.tensor([True, False]).argmax()",
    "lib.tensor([True, False]).argmin(0)",
    # x ** 0.5 and x ** -0.5 are sqrt and 1 / sqrt in PyTorch, at -0, -inf and nan too
    "lib.tensor([-0.0, -math.inf, math.inf, math.nan, 0.0, -1.0, 4.0]) ** 0.5",
    "lib.tensor([-0.0, -math.inf, math.inf, math.nan, 0.0, -1.0, 4.0]) ** -0.5",
    "lib.tensor([-0.0, -math.inf, 0.0], dtype=lib.float64) ** -0.5",
    "lib.tensor([4, 0]) ** 0.5",
    # ... but not where the op works in float, and not for an exponent, which is checked
    "lib.tensor([6, 1, 2], dtype=lib.uint8) / -1",
    "lib.tensor([6, 1, 2], dtype=lib.int8) / 300",
    "lib.tensor([1, 2], dtype=lib.uint8) ** -1",
    "lib.tensor([1, 2], dtype=lib.uint8) ** 300",
    "lib.tensor([1, 2], dtype=lib.uint8) ** 255",
    "lib.tensor([1, 2], dtype=lib.int8) ** 200",
    "lib.zeros(0, dtype=lib.int32) // 0",
    "lib.zeros(0, 2, dtype=lib.int64) % lib.zeros(2, dtype=lib.int64)",
    "1 / (lib.tensor([0.0, -0.0, 3.0, -3.0, 2.5]) % -2)",
    "1 / (lib.tensor([0.0, -0.0, 4.0, -4.0, -2.5]) % lib.tensor(2.0, dtype=lib.float64))",
    "1 / (0.0 % lib.tensor([-2.0, 2.0]))",
    "lib.tensor([5.5, -5.5, math.inf, 1.0]) % lib.tensor([2.0, 2.0, 2.0, math.inf])",
    "lib.zeros(0, 2, dtype=lib.bool).log_softmax(0)",
    # clamp of bools, softmax of an empty integer tensor
    "lib.tensor([True, True]).clamp(lib.tensor(False), lib.tensor(False))",
    "lib.tensor([True]).clamp(True)",
    "lib.zeros(1, 0, dtype=lib.uint8).softmax(1)",
    "lib.zeros(0, dtype=lib.int32).log_softmax(0)",
    "lib.zeros(2, dtype=lib.int32).log_softmax(0)",
    # in-place subtraction with bools, fill_ of an empty tensor
    "lib.tensor(4, dtype=lib.int32).sub_(lib.tensor(False))",
    "lib.tensor([1.0]).sub_(True)",
    "lib.tensor(False).sub_(lib.tensor(False))",
    "lib.zeros(0, dtype=lib.int32).fill_(math.inf)",
    "lib.zeros(0, dtype=lib.int32).fill_(lib.tensor(math.inf))",
    "lib.zeros(1, dtype=lib.int32).fill_(lib.tensor(math.inf))",
    "lib.zeros(1, dtype=lib.uint8).fill_(lib.tensor(300))",
    "lib.zeros(1, dtype=lib.uint8).fill_(lib.tensor(-1))",
    # stack and cat promote 0-dim tensors as any others
    "lib.stack([lib.tensor(0.0), lib.tensor(1.0, dtype=lib.float64)])",
    "lib.stack([lib.tensor(1), lib.tensor(1.5)])",
    "lib.cat([lib.tensor([1.0]), lib.tensor([2.0], dtype=lib.float64)])",
]


@pytest.mark.parametrize("expression", DTYPE_EXPRESSIONS)
def test_dtypes_match_pytorch(expression, torch):
    _same_outcome(expression, torch)


TENSOR_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                 "float64"]
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
             "/": operator.truediv, "**": operator.pow, "//": operator.floordiv,
             "%": operator.mod}


@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
def test_python_numbers_promote_like_pytorch(dtype, torch):
    """Every operator with a bool, int or float number on either side: the result dtype (or
    the refusal) of PyTorch; for + and *, also ``torch.result_type``."""
    def result(lib, number, op, reflected):
        x = lib.tensor([1, 2] if dtype != "bool" else [True, False], dtype=getattr(lib, dtype))
        try:
            out = op(number, x) if reflected else op(x, number)
        except Exception as error:  # noqa: BLE001
            return type(error)
        return str(out.dtype).split(".")[-1]

    for number in (True, 3, 2.5):
        for name, op in OPERATORS.items():
            for reflected in (False, True):
                theirs = result(torch, number, op, reflected)
                assert result(mg, number, op, reflected) == theirs, (number, name, reflected)
                if name in "+*" and not isinstance(theirs, type):
                    example = torch.tensor([1], dtype=getattr(torch, dtype))
                    assert theirs == str(torch.result_type(example, number)).split(".")[-1]


# ------------------------------------------------------------------ empty shapes and refusals

SHAPE_EXPRESSIONS = [
    "lib.zeros(2, 0).softmax(1)",
    "lib.zeros(2, 0).log_softmax(1)",
    "lib.zeros(0, 3).softmax(1)",
    "lib.zeros(0, 3).log_softmax(-1)",
    "lib.zeros(2, 0, 3).softmax(1)",
    "F.softmax(lib.zeros(0, 3), dim=1)",
    "lib.tensor([1, 2]).softmax(0, dtype=lib.float64)",
    "lib.tensor([1, 2]).softmax(0)",
    "lib.tensor([1, 2], dtype=lib.int32).log_softmax(0)",
    "lib.tensor([True]).softmax(0)",
    "F.log_softmax(lib.tensor([1, 2]), 0)",
    "lib.zeros(0, 3).max(dim=1)",
    "lib.zeros(0, 3).min(1, keepdim=True)",
    "lib.zeros(3, 0).max(dim=1)",
    "lib.zeros(0, 3).max()",
    "lib.zeros(0, 3).argmax(dim=1)",
    "lib.zeros(3, 0).argmin(dim=1)",
    "lib.zeros(0, 3).argmax()",
    "lib.zeros(2, 3).argmax(1, keepdim=True)",
    "lib.tensor(2.0).argmax(0)",
    "F.linear(lib.zeros(2, 0), lib.zeros(3, 0))",
    "F.linear(lib.zeros(2, 0), lib.zeros(3, 0), lib.ones(3))",
    "F.linear(lib.zeros(0, 4), lib.zeros(3, 4), lib.ones(3))",
    "lib.zeros(2, 0).sum(1)",
    "lib.zeros(2, 0).sum()",
    "lib.zeros(0, 3).sum(0)",
    "lib.zeros(2, 0).mean(1)",
    "lib.zeros(0, 3).mean()",
    "lib.zeros(2, 0).prod(1)",
    "lib.zeros(0, 3).cumsum(0)",
    "lib.zeros(0, 3).amax(1)",
    "lib.zeros(0, 3).std(1)",
    "lib.randn(2.5)",
    "lib.randn(2, 2.5)",
    "lib.randn((2, 3.0))",
    "lib.zeros(2.0)",
    "lib.ones(-1)",
    "lib.rand(2, lib.tensor(3)).shape",
    "F.cross_entropy(lib.zeros(2, 3), lib.tensor([0, 1]), weight=lib.ones(3, dtype=lib.float64))",
    "F.cross_entropy(lib.zeros(2, 3, dtype=lib.float64), lib.tensor([0, 1]), weight=lib.ones(3))",
    "F.cross_entropy(lib.zeros(2, 3), lib.tensor([0, 1]), weight=lib.ones(3, dtype=lib.float64),"
    " label_smoothing=0.1)",
    "F.nll_loss(lib.zeros(2, 3, 4), lib.zeros(2, 4, dtype=lib.int64),"
    " weight=lib.ones(3, dtype=lib.float64))",
    "F.cross_entropy(lib.zeros(2, 3, dtype=lib.int64), lib.tensor([0, 1]))",
    "F.cross_entropy(lib.zeros(2, 3), lib.full((2, 3), 0.5),"
    " weight=lib.ones(3, dtype=lib.float64))",
    "F.cross_entropy(lib.zeros(2, 3, dtype=lib.float64), lib.full((2, 3), 0.5),"
    " weight=lib.ones(3))",
    "F.cross_entropy(lib.zeros(0, 3), lib.zeros(0, dtype=lib.int64), reduction='sum')",
    "F.one_hot(lib.tensor([0, -1]))",
    "F.one_hot(lib.tensor([0, 2]), 2)",
    "F.one_hot(lib.tensor([0, 2]), 4)",
    "F.one_hot(lib.tensor([0., 2]))",
    "F.one_hot(lib.tensor([], dtype=lib.int64))",
    "F.one_hot(lib.tensor([], dtype=lib.int64), 3)",
    "F.one_hot(lib.tensor([[1], [0]]))",
    "lib.unique(lib.tensor([[1, 2], [1, 2], [0, 5]]), dim=0)",
    "lib.unique(lib.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True,"
    " return_counts=True)",
    "lib.tensor([[1, 2, 1], [3, 4, 3]]).unique(dim=-1, return_inverse=True)",
    "lib.tensor([[1, 2], [1, 2]]).unique(dim=2)",
    "lib.tensor(3).unique(dim=0)",
    "lib.tensor([[3, 1], [1, 3]]).unique(return_counts=True)",
]


@pytest.mark.parametrize("expression", SHAPE_EXPRESSIONS)
@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
def test_empty_shapes_and_refusals_match_pytorch(expression, torch):
    if expression.endswith(".shape"):
        assert tuple(eval(expression, {"lib": mg})) == tuple(eval(expression, {"lib": torch}))
        return
    _same_outcome(expression, torch)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((2, 0), 1), ((0, 3), 1), ((0, 3), 0), ((2, 0, 3), 2)])
def test_softmax_of_empty_tensors_has_an_empty_gradient(op, shape, dim, torch):
    grads = []
    for lib in (mg, torch):
        x = lib.zeros(*shape, requires_grad=True)
        getattr(x, op)(dim).sum().backward()
        grads.append(x.grad)
    _same_numbers(*grads, f"{op} of {shape}")


def test_float64_class_weights_with_probabilities_make_a_float64_loss(torch):
    results = []
    for lib in (mg, torch):
        logits = lib.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], requires_grad=True)
        targets = lib.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], requires_grad=True)
        weight = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64)
        loss = lib.nn.functional.cross_entropy(logits, targets, weight=weight)
        loss.backward()
        results.append((loss, logits.grad, targets.grad))
    for ours, theirs, what in zip(*results, ("loss", "logits' gradient", "targets' gradient")):
        _same_numbers(ours, theirs, what)


def test_max_over_dim_of_an_empty_batch_backpropagates(torch):
    grads = []
    for lib in (mg, torch):
        x = lib.zeros(0, 3, requires_grad=True)
        x.max(dim=1).values.sum().backward()
        grads.append(x.grad)
    _same_numbers(*grads, "max(dim=1) of (0, 3)")


# ------------------------------------------------------------------ running sums

def test_a_float32_running_sum_does_not_drift(torch):
    """A million 0.1s: PyTorch adds float32 up in float64 and ends at 100000.0; numpy's
    float32 cumsum drifts to 100958.3."""
    ours = mg.full((10**6,), 0.1).cumsum(0)
    theirs = torch.full((10**6,), 0.1).cumsum(0)
    assert ours[-1].item() == theirs[-1].item() == 100000.0
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_running_sums_and_their_gradients_equal_pytorchs_bit_for_bit(dtype, torch):
    # made in the dtype first: PyTorch rounds float64 to float16 through float32
    values = np.random.default_rng(3).standard_normal((40, 300)).astype(dtype)
    upstream = np.random.default_rng(4).standard_normal((40, 300)).astype(dtype)
    results = []
    for lib in (mg, torch):
        x = lib.tensor(values, requires_grad=True)
        out = x.cumsum(1)
        out.backward(lib.tensor(upstream))
        results.append((out.detach().numpy(), x.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_grad, their_grad)


@pytest.mark.parametrize("method", ["std", "var"])
def test_std_and_var_over_an_empty_dim_list_have_the_gradient_of_every_dim(method, torch):
    """A deliberate difference: x.std(dim=()) reduces over every dim in both libraries, but
    PyTorch's backward then gives +-inf; minigrad gives the gradient of x.std()."""
    def grad(lib, dim):
        x = lib.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        out = getattr(x, method)() if dim is None else getattr(x, method)(dim=dim)
        out.backward()
        return out.item(), x.grad.numpy()
    ours, reference = grad(mg, ()), grad(torch, None)
    assert ours[0] == pytest.approx(reference[0])
    np.testing.assert_allclose(ours[1], reference[1], rtol=1e-12)
    assert ours[0] == pytest.approx(grad(torch, ())[0])  # the same value in PyTorch
