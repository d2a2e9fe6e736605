"""Shape ops against PyTorch where numpy would differ: sizes numpy reads differently
(reshape(-2, ...)), arguments PyTorch refuses (flatten(2, 1), chunk(0), mT of a vector),
empty tensors (chunk of an empty dim, cat skipping a [0]-shaped tensor)."""

import warnings

import numpy as np
import pytest

import minigrad as mg

EXPRESSIONS = [
    # results: shapes, values and dtypes as PyTorch's
    "x.reshape(-1, 4)", "x.reshape(()) if x.numel() == 1 else x.reshape(24)", "x.view(4, 6)",
    "x.flatten(1)", "x.flatten(0, -1)", "x.flatten(1, 1)", "x.permute(2, 0, 1)",
    "x.permute([2, 0, -2])", "lib.tensor(1.0).permute(())", "lib.tensor(1.0).T", "x.mT",
    "x.expand(3, 2, 3, 4)", "x.expand(3, -1, -1, -1)", "x[:1].expand(2, -1, 4)",
    "x.chunk(2, 1)", "x.chunk(4, 1)", "lib.zeros(0, 3).chunk(2)", "lib.zeros(0).chunk(3)",
    "lib.zeros(5).chunk(3)", "lib.zeros(6).chunk(4)", "x.split([1, 2], 1)",
    "lib.cat([x, lib.zeros(0)])", "lib.cat([lib.zeros(0, dtype=lib.float64), x])",
    "lib.cat([lib.zeros(0), lib.zeros(0)])", "lib.cat([x, x[:, :1]], dim=1)",
    "lib.cat([lib.zeros(0, dtype=lib.int64), lib.zeros(0, dtype=lib.int64)])",
    # refused, with PyTorch's exception type
    "x.reshape(-2, 12)", "x.reshape(-1, -2)", "x.view(-3, 8)", "x.reshape(-1, -1)",
    "lib.zeros(0, 3).reshape(-1, 0)", "lib.zeros(0, 3).reshape(0, -1)", "x.flatten(2, 1)",
    "x.flatten(-1, 0)", "x.chunk(0)", "x.chunk(-1)", "x.chunk(2.5)", "x[0, 0].mT",
    "x.permute(2, 0, 1, 3)", "x.permute(0, 1)", "x.permute(0, 0, 1)", "x.permute()",
    "x.expand(-1, 2, 3, 4)", "x.expand(3, 4)", "x.expand(2, 3, -2)", "x.expand()",
    "lib.cat([])", "lib.stack([])", "lib.cat([x, x[0]])", "lib.stack([x, x[0]])",
    # split: sizes as PyTorch reads them
    "lib.arange(4.0).split([5, -1])", "lib.arange(4.0).split([3, -1])", "x.split(lib.tensor(1))",
    "lib.zeros(0).split(0)", "lib.zeros(0).split(2)", "x.split(0)", "x.split(2.5)",
    "x.split([1, 1.5])",
    # sizes must be integers
    "x.reshape(4.0, 6)", "x.view(24.0)", "x.expand(2.0, 3, 4)", "lib.zeros(2.0)",
    "x.reshape(lib.tensor(24))",
    # expanding without repeating anything is a plain view: it can be changed in place
    "x.expand(2, 3, 4).add_(1) if True else None", "x.expand(1, 2, 3, 4).mul_(2)",
    # an expand that repeats elements: only zero_ and fill_ may write into it
    "x.expand(2, 2, 3, 4).relu_()", "x[:1].expand(2, 3, 4).mul_(2)",
    "x[:, :1].expand(2, 3, 4).clamp_(0)", "x[:1].expand(2, 3, 4).copy_(lib.ones(2, 3, 4))",
    "x[:, :1].expand(2, 3, 4).zero_()", "x[:1].expand(2, 3, 4).fill_(7)",
    "x[:1].expand(2, 3, 4).masked_fill_(lib.tensor([True, False, False, True]), 7)",
    "x[:0].expand(-1, 3, 4).mul_(2)", "x[:0].expand(3, 0, 3, 4).add_(1)",
    # empty tensors, 0-dim tensors and empty dim lists
    "lib.zeros(0).reshape(-1)", "lib.zeros(0).view(-1)", "lib.zeros(0, 3).reshape(2, -1)",
    "lib.zeros(0).reshape(1, -1, 3)", "lib.tensor(1.0).flatten(-1, 1)",
    "lib.tensor(1.0).flatten(0, -1)", "x[0, 0, :1].squeeze(())", "x[:1].squeeze([])",
    "lib.zeros(0).amax((-1, -1))", "lib.zeros(0, 2).amax((1, 1))", "lib.zeros(0, 2).amin((0, 0))",
    "lib.cat([lib.tensor(1.0), lib.tensor(2.0)])", "lib.cat([lib.tensor(1.0), x], 1)",
    "lib.cat([lib.zeros(0), lib.zeros(0)], 1)", "lib.cat([lib.zeros(0), x[0, 0, :0]], -2)",
]


def _outcome(lib, expression):
    x = lib.arange(24.0).reshape(2, 3, 4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch: T of a 0-dim tensor is deprecated
            result = eval(expression, {"lib": lib, "x": x})
    except Exception as error:
        return type(error)
    results = result if isinstance(result, tuple) else (result,)
    return [(str(r.dtype).split(".")[-1], tuple(r.shape), r.tolist()) for r in results]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_shape_ops_match_pytorch(expression, torch):
    assert _outcome(mg, expression) == _outcome(torch, expression)


def test_cat_skips_an_empty_vector_and_gives_it_an_empty_gradient(torch):
    grads = []
    for lib in (mg, torch):
        a = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        b = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        (lib.cat([a, b, a], dim=1) * 2).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for mine, its in zip(*grads):
        assert mine.shape == its.shape
        np.testing.assert_array_equal(mine, its)


def test_an_expand_that_repeats_nothing_writes_through(torch):
    results = []
    for lib in (mg, torch):
        x = lib.zeros(2, 3)
        x.expand(1, 2, 3)[0, 1].fill_(5)
        x.expand(2, 3).add_(1)
        results.append(x.numpy())
    np.testing.assert_array_equal(*results)


def test_filling_an_expanded_tensor_writes_into_the_tensor_it_views(torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor([[1.0], [2.0]])
        x.expand(2, 3)[1].zero_()
        x[:1].expand(1, 4).fill_(5)
        results.append(x.numpy())
    np.testing.assert_array_equal(*results)
