"""The shape and indexing ops of ops/indexing.py, ops/diagonals.py and ops/scatter.py against PyTorch: values, dtypes,
shapes, grad_fn names, gradients (float64) and the exception types of common mistakes."""

import numpy as np
import pytest

import minigrad as mg

RTOL, ATOL = 1e-9, 1e-12

A = np.random.default_rng(0).standard_normal((3, 4))
B = np.random.default_rng(1).standard_normal((2, 3, 4))
V = np.random.default_rng(2).standard_normal(4)
W = np.random.default_rng(3).standard_normal(3)
S = np.random.default_rng(4).standard_normal((2, 4))


def _long(lib, values):
    return lib.tensor(values, dtype=lib.int64)


def _run(lib, fn, arrays):
    """fn's output(s) and the gradients of its inputs for a random upstream gradient."""
    tensors = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *tensors)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(5)
    loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
    loss.backward()
    return outs, [t.grad for t in tensors]


# name -> (input arrays, op); every input requires grad and is float64
DIFFERENTIABLE = {
    "flip": ([A], lambda lib, a: a.flip(0)),
    "flip_dims": ([B], lambda lib, a: lib.flip(a, [0, -1])),
    "flip_varargs": ([B], lambda lib, a: a.flip(1, 2)),
    "repeat": ([A], lambda lib, a: a.repeat(2, 1)),
    "repeat_more_dims": ([A], lambda lib, a: a.repeat(2, 1, 3)),
    "index_select": ([A], lambda lib, a: a.index_select(1, _long(lib, [3, 0, 3]))),
    "index_select_fn": ([A], lambda lib, a: lib.index_select(a, 0, _long(lib, [2, 2]))),
    "unbind": ([A], lambda lib, a: a.unbind(1)),
    "unbind_fn": ([B], lambda lib, a: lib.unbind(a)),
    "select": ([B], lambda lib, a: a.select(1, -1)),
    "narrow": ([A], lambda lib, a: a.narrow(1, 1, 2)),
    "narrow_whole": ([A], lambda lib, a: lib.narrow(a, 1, 0, 4)),
    "narrow_negative_start": ([A], lambda lib, a: a.narrow(0, -2, 2)),
    "tril": ([A], lambda lib, a: a.tril()),
    "tril_diagonal": ([B], lambda lib, a: a.tril(diagonal=-1)),
    "triu": ([A], lambda lib, a: lib.triu(a, 1)),
    "triu_negative": ([B], lambda lib, a: a.triu(-1)),
    "masked_select": ([A], lambda lib, a: a.masked_select(a > 0)),
    "masked_select_broadcast": ([A], lambda lib, a: lib.masked_select(
        a, lib.tensor([True, False, True, True]))),
    "movedim": ([B], lambda lib, a: a.movedim(0, -1)),
    "movedim_many": ([B], lambda lib, a: lib.movedim(a, (0, 1), (2, 0))),
    "moveaxis": ([B], lambda lib, a: a.moveaxis(2, 0)),
    "roll": ([A], lambda lib, a: a.roll(1, 0)),
    "roll_flat": ([A], lambda lib, a: lib.roll(a, -5)),
    "roll_many": ([B], lambda lib, a: a.roll((1, -2), (0, 2))),
    "tile": ([A], lambda lib, a: a.tile((2,))),
    "tile_more": ([V], lambda lib, a: lib.tile(a, (2, 3))),
    "repeat_interleave": ([A], lambda lib, a: a.repeat_interleave(2)),
    "repeat_interleave_dim": ([A], lambda lib, a: a.repeat_interleave(3, dim=1)),
    "repeat_interleave_counts": ([A], lambda lib, a: lib.repeat_interleave(
        a, _long(lib, [1, 0, 2]), dim=0)),
    "diag_of_matrix": ([A], lambda lib, a: a.diag()),
    "diag_of_matrix_offset": ([A], lambda lib, a: lib.diag(a, -1)),
    "diag_of_vector": ([V], lambda lib, a: a.diag()),
    "diag_of_vector_offset": ([V], lambda lib, a: lib.diag(a, 2)),
    "diagonal": ([A], lambda lib, a: a.diagonal()),
    "diagonal_offset_dims": ([B], lambda lib, a: lib.diagonal(a, 1, 1, 2)),
    "diagonal_negative": ([B], lambda lib, a: a.diagonal(offset=-1, dim1=2, dim2=0)),
    "trace": ([A], lambda lib, a: a.trace()),
    "take": ([A], lambda lib, a: a.take(_long(lib, [[0, 11], [-1, 5]]))),
    "scatter_src": ([A, S], lambda lib, a, s: a.scatter(
        0, _long(lib, [[0, 1, 2, 0], [2, 0, 1, 1]]), s)),
    "scatter_small_index": ([A, S], lambda lib, a, s: lib.scatter(
        a, 1, _long(lib, [[3], [0]]), s[:, :1])),
    "scatter_value": ([A], lambda lib, a: a.scatter(1, _long(lib, [[0, 2], [1, 1], [3, 0]]),
                                                    1.5)),
    "scatter_add": ([A, S], lambda lib, a, s: a.scatter_add(
        0, _long(lib, [[0, 1, 2, 0], [0, 0, 1, 1]]), s)),
    "scatter_add_fn": ([A, S], lambda lib, a, s: lib.scatter_add(
        a, 1, _long(lib, [[0, 0, 3], [1, 1, 1]]), s[:, :3])),
    "index_add": ([A, S], lambda lib, a, s: a.index_add(0, _long(lib, [2, 0]), s)),
    "index_add_repeated_alpha": ([A, S], lambda lib, a, s: lib.index_add(
        a, 0, _long(lib, [1, 1]), s, alpha=-2.5)),
    "index_fill": ([A], lambda lib, a: a.index_fill(1, _long(lib, [0, -1]), -3.0)),
    "index_fill_tensor": ([A, np.array(2.5)], lambda lib, a, v: a.index_fill(
        0, _long(lib, [1]), v)),
    "meshgrid_ij": ([V, W], lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")),
    "meshgrid_xy": ([V, W], lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")),
    "meshgrid_three_xy": ([V, W, W], lambda lib, a, b, c: lib.meshgrid([a, b, c],
                                                                      indexing="xy")),
    "cartesian_prod": ([V, W], lambda lib, a, b: lib.cartesian_prod(a, b)),
    "type_as": ([A], lambda lib, a: a.type_as(lib.zeros(1, dtype=lib.float64)) * 2),
    "in_place_ops_on_a_result": ([A, S], lambda lib, a, s: (a * 1).tril_(1).triu_(-1)
                                 .scatter_(0, _long(lib, [[1, 2, 0, 1]]), s[:1])
                                 .scatter_add_(1, _long(lib, [[3, 3, 0, 1], [0, 1, 2, 2]]), s * s)
                                 .index_add_(0, _long(lib, [0, 2]), s, alpha=2)
                                 .index_fill_(1, _long(lib, [2]), 7.0)),
    "scatter_value_in_place_on_a_view": ([A], lambda lib, a: _scatter_row(lib, a * 1)),
}


def test_scatter_from_part_of_src_gives_src_a_zero_gradient_elsewhere(torch):
    """PyTorch's backward needs index and src of one shape (its docs say so; otherwise it
    fails); minigrad gives the rest of src a zero gradient: the same as scattering the part."""
    index = mg.tensor([[3], [0]])
    ours, (_, our_grad) = _run(mg, lambda lib, a, s: a.scatter(1, index, s), [A, S])
    _, (_, their_grad) = _run(torch, lambda lib, a, s: a.scatter(
        1, torch.tensor([[3], [0]]), s[:, :1]), [A, S])
    expected = np.zeros_like(S)
    expected[:, :1] = their_grad.numpy()[:, :1]
    np.testing.assert_allclose(our_grad.numpy(), expected, rtol=RTOL, atol=ATOL)
    assert their_grad.numpy()[:, 1:].any() == 0 and our_grad.numpy()[:, :1].all()


def _scatter_row(lib, t):
    t[1].scatter_(0, _long(lib, [3, 0]), -1.0)
    return t


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_matches_pytorch_with_gradients(name, torch):
    arrays, fn = DIFFERENTIABLE[name]
    ours, our_grads = _run(mg, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and o.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)
        assert o.grad_fn.name() == type(t.grad_fn).__name__
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("expression", [
    "lib.tensor([1, 2], dtype=lib.int32).new_zeros(2, 3)",
    "lib.tensor([1.0]).new_ones((2,), dtype=lib.float64)",
    "lib.tensor([1.0], dtype=lib.float64).new_full((2, 2), 3)",
    "lib.tensor([1, 2]).new_full([3], 2)",
    "lib.tensor([1.0], dtype=lib.float64).new_tensor([1, 2])",
    "lib.tensor([1.0]).new_tensor([[True]], dtype=lib.bool)",
    "lib.tensor([1, 2]).new_empty(2, 3).fill_(4)",
    "lib.tensor([1.5, 2.5]).type_as(lib.tensor([1]))",
    "lib.tensor([[1, 2], [3, 4]]).flip(1)",
    "lib.tensor([True, False]).repeat(3)",
    "lib.arange(6).reshape(2, 3).tril()",
    "lib.arange(6).reshape(2, 3).triu(1)",
    "lib.tensor([[1, 2], [3, 4]], dtype=lib.int32).trace()",
    "lib.ones(2, 2, dtype=lib.float32).trace()",
    "lib.arange(3).tile((2,))",
    "lib.arange(3).index_fill(0, lib.tensor([0]), 2.5)",
    "lib.arange(3).repeat_interleave(2)",
    "lib.repeat_interleave(lib.tensor([1, 0, 3]))",
    "lib.arange(4).take(lib.tensor([3, -4]))",
    "lib.arange(12).reshape(3, 4).index_select(0, lib.tensor([1], dtype=lib.int32))",
    "lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5]))",
    "lib.meshgrid(lib.tensor(1), lib.tensor([1, 2]), indexing='ij')[1]",
    "lib.cartesian_prod(lib.zeros(0), lib.tensor([1.0, 2.0]))",
    "lib.meshgrid(lib.zeros(0), lib.tensor([1.0, 2.0]), indexing='xy')[0]",
    "lib.zeros(0, 3).flip(0)",
    "lib.zeros(2, 0).roll(1, 1)",
    "lib.ones(2, 3).masked_select(lib.zeros(2, 3, dtype=lib.bool))",
    "lib.tensor(5.0).flip(0)",
    "lib.tensor(5.0).repeat(2, 2)",
    "lib.tensor(5.0).index_select(0, lib.tensor([0]))",
    "lib.zeros(3, 4, dtype=lib.int64).scatter_(0, lib.tensor([[2, 1]]), lib.tensor([[7, 8]]))",
    "lib.zeros(3, dtype=lib.float64).scatter_add_(0, lib.tensor([1, 1, 0]), "
    "lib.ones(3, dtype=lib.float64))",
    "lib.zeros(2, 2, dtype=lib.int32).index_add_(1, lib.tensor([0, 0]), "
    "lib.ones(2, 2, dtype=lib.int32), alpha=3)",
])
def test_values_and_dtypes_match_pytorch(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_views_share_memory_as_in_pytorch(torch):
    """select, narrow, unbind, movedim and diagonal are views: writing into one writes into
    the tensor; flip, repeat and index_select give copies."""
    def writes(lib):
        t = lib.zeros(3, 3)
        t.select(0, 1).fill_(1)
        t.narrow(1, 2, 1).add_(2)
        t.unbind(1)[0].mul_(3)
        t.diagonal().add_(10)
        t.movedim(0, 1)[0, 2] = 5
        t.flip(0).fill_(-1)
        t.repeat(1, 1).fill_(-1)
        t.index_select(0, lib.tensor([0])).fill_(-1)
        return t
    np.testing.assert_array_equal(writes(mg).numpy(), writes(torch).numpy())


def test_in_place_on_a_leaf_that_requires_grad_is_refused(torch):
    for lib in (mg, torch):
        leaf = lib.zeros(2, 2, requires_grad=True)
        for op in (lambda: leaf.tril_(), lambda: leaf.scatter_(0, lib.tensor([[0]]), 1.0),
                   lambda: leaf.index_add_(0, lib.tensor([0]), lib.ones(1, 2))):
            with pytest.raises(RuntimeError, match="leaf Variable"):
                op()
        assert leaf.grad_fn is None and not leaf.detach().numpy().any()


def test_changed_index_or_saved_values_make_backward_refuse(torch):
    """A node that saved what an in-place change overwrote refuses backward, as PyTorch."""
    for lib in (mg, torch):
        x = lib.ones(3, requires_grad=True)
        index = lib.tensor([0, 2])
        y = x.index_select(0, index)
        index.add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


MISTAKES = {
    "flip of a repeated dim": lambda lib: lib.ones(2, 2).flip(0, 0),
    "flip of a dim out of range": lambda lib: lib.ones(2, 2).flip(2),
    "repeat with fewer sizes than dims": lambda lib: lib.ones(2, 2).repeat(2),
    "index_select out of range": lambda lib: lib.ones(3).index_select(0, lib.tensor([3])),
    "index_select of a negative index": lambda lib: lib.ones(3).index_select(0, lib.tensor([-1])),
    "index_select of a 2-D index": lambda lib: lib.ones(3).index_select(0, lib.tensor([[0]])),
    "index_select of a 0-dim tensor at two indices": lambda lib: lib.tensor(1.).index_select(
        0, lib.tensor([0, 0])),
    "index_select of a float index": lambda lib: lib.ones(3).index_select(0, lib.tensor([0.])),
    "select out of range": lambda lib: lib.ones(3, 4).select(0, 3),
    "select of a dim out of range": lambda lib: lib.ones(3, 4).select(2, 0),
    "narrow past the end": lambda lib: lib.ones(3, 4).narrow(1, 2, 3),
    "narrow with a start out of range": lambda lib: lib.ones(3, 4).narrow(1, 5, 0),
    "narrow of a negative length": lambda lib: lib.ones(3, 4).narrow(1, 2, -1),
    "tril of a vector": lambda lib: lib.ones(3).tril(),
    "triu of a 0-dim tensor": lambda lib: lib.tensor(1.0).triu(),
    "masked_select with a float mask": lambda lib: lib.ones(2).masked_select(lib.ones(2)),
    "movedim with repeated dims": lambda lib: lib.ones(2, 3).movedim((0, 1), (0, 0)),
    "movedim with unequal lists": lambda lib: lib.ones(2, 3).movedim((0, 1), (1,)),
    "roll with more shifts than dims": lambda lib: lib.ones(2, 3).roll((1, 2), 0),
    "diag of a 3-D tensor": lambda lib: lib.ones(2, 2, 2).diag(),
    "diagonal of one dim twice": lambda lib: lib.ones(2, 2).diagonal(0, 1, 1),
    "trace of a vector": lambda lib: lib.ones(3).trace(),
    "trace of booleans": lambda lib: lib.ones(2, 2, dtype=lib.bool).trace(),
    "take out of range": lambda lib: lib.ones(2, 2).take(lib.tensor([4])),
    "take of a float index": lambda lib: lib.ones(2, 2).take(lib.tensor([1.0])),
    "scatter out of range": lambda lib: lib.ones(3, 4).scatter(0, lib.tensor([[3]]), 1.0),
    "scatter of a negative index": lambda lib: lib.ones(3, 4).scatter(0, lib.tensor([[-1]]), 1.0),
    "scatter of another dtype": lambda lib: lib.ones(3, 4, dtype=lib.float64).scatter(
        0, lib.tensor([[0]]), lib.ones(1, 1)),
    "scatter of a float index": lambda lib: lib.ones(3, 4).scatter(0, lib.tensor([[0.]]), 1.0),
    "scatter_add out of range": lambda lib: lib.ones(3).scatter_add(
        0, lib.tensor([5]), lib.ones(1)),
    "index_add of another dtype": lambda lib: lib.ones(3, 4, dtype=lib.float64).index_add(
        0, lib.tensor([0]), lib.ones(1, 4)),
    "index_add of too many rows": lambda lib: lib.ones(3, 4).index_add(
        0, lib.tensor([0]), lib.ones(2, 4)),
    "index_add out of range": lambda lib: lib.ones(3, 4).index_add(
        0, lib.tensor([5]), lib.ones(1, 4)),
    "index_add of a negative index": lambda lib: lib.ones(3).index_add(
        0, lib.tensor([-1]), lib.ones(1)),
    "index_fill of a negative index out of range": lambda lib: lib.ones(3).index_fill(
        0, lib.tensor([-4]), 1.0),
    "index_fill out of range": lambda lib: lib.ones(3, 4).index_fill(0, lib.tensor([5]), 1.0),
    "index_fill of a 1-D value": lambda lib: lib.ones(3, 4).index_fill(
        0, lib.tensor([0]), lib.ones(1)),
    "meshgrid of a matrix": lambda lib: lib.meshgrid(lib.ones(2, 2), indexing="ij"),
    "meshgrid of a bad indexing": lambda lib: lib.meshgrid(lib.ones(2), indexing="ji"),
    "cartesian_prod of a matrix": lambda lib: lib.cartesian_prod(lib.ones(2, 2)),
}


IN_PLACE_MISTAKES = {
    "scatter_ out of range": lambda lib, t: t.scatter_(0, lib.tensor([[0, 3]]), 1.0),
    "scatter_add_ of another dtype": lambda lib, t: t.scatter_add_(
        1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float32)),
    "index_add_ of too many rows": lambda lib, t: t.index_add_(
        0, lib.tensor([0]), lib.ones(2, 3, dtype=lib.float64)),
    "index_fill_ out of range": lambda lib, t: t.index_fill_(1, lib.tensor([0, 3]), 1.0),
    "tril_ of a row": lambda lib, t: t[0].tril_(),
}


@pytest.mark.parametrize("in_graph", [False, True])
@pytest.mark.parametrize("name", sorted(IN_PLACE_MISTAKES))
def test_in_place_mistakes_raise_pytorch_types_and_leave_the_tensor_as_it_was(name, in_graph,
                                                                              torch):
    """minigrad checks before it writes (PyTorch may have written part of it by then)."""
    error_types = []
    for lib in (mg, torch):
        t = lib.tensor(A[:, :3].copy(), requires_grad=in_graph) * 1
        with pytest.raises(Exception) as caught:
            IN_PLACE_MISTAKES[name](lib, t)
        error_types.append(caught.type)
        if lib is mg:
            np.testing.assert_array_equal(t.detach().numpy(), A[:, :3])
    assert error_types[0] is error_types[1], error_types


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_mistakes_raise_pytorch_exception_types(name, torch):
    error_types = []
    for lib in (mg, torch):
        with pytest.raises(Exception) as caught:
            MISTAKES[name](lib)
        error_types.append(caught.type)
    assert error_types[0] is error_types[1], error_types
