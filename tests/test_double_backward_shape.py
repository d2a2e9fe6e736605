"""Second derivatives through the shape, view and indexing ops (minigrad/ops/shape.py and
minigrad/ops/indexing.py) match PyTorch.

These ops are linear, so alone their first derivative is a constant. Each test squares the
op's result (``op(a) * op(a)``, or multiplies two inputs through it): the first derivative
then runs the op's backward on Tensors, and the second derivative differentiates that
backward formula, which is what these tests are about."""

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
V = rng.standard_normal(5)
C = rng.standard_normal((2, 3, 4))
Q = rng.standard_normal((4, 4))
COL = rng.standard_normal((3, 1))
S = np.array(1.5)


def squared(op):
    return lambda lib, a: op(lib, a) * op(lib, a)


def index(lib, values, dtype="int64"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype))


VIEWS = [
    ("reshape", lambda lib, a: a.reshape(4, 3), A),
    ("reshape -1", lambda lib, a: a.reshape(-1), A),
    ("view", lambda lib, a: a.view(2, 6), A),
    ("view of a transpose (copies)", lambda lib, a: a.t().reshape(12), A),
    ("flatten", lambda lib, a: a.flatten(1), C),
    ("flatten 0-dim", lambda lib, a: a.flatten(), S),
    ("view_as", lambda lib, a: a.view_as(lib.tensor(np.zeros((4, 3)))), A),
    ("unsqueeze", lambda lib, a: a.unsqueeze(1), A),
    ("unsqueeze -1", lambda lib, a: a.unsqueeze(-1), A),
    ("squeeze", lambda lib, a: a.squeeze(), COL),
    ("squeeze dim", lambda lib, a: a.squeeze(1), COL),
    ("squeeze dim not 1", lambda lib, a: a.squeeze(0), COL),
    ("expand", lambda lib, a: a.expand(3, 5), COL),
    ("expand new dims", lambda lib, a: a.expand(2, 3, 4), A),
    ("expand -1", lambda lib, a: a.expand(2, -1, 6), COL),
    ("expand_as", lambda lib, a: a.expand_as(lib.tensor(np.zeros((3, 4)))), COL),
    ("permute", lambda lib, a: a.permute(2, 0, 1), C),
    ("permute negative", lambda lib, a: a.permute(-1, -3, -2), C),
    ("transpose", lambda lib, a: a.transpose(0, 2), C),
    ("transpose 0-dim", lambda lib, a: a.transpose(0, -1), S),
    ("swapaxes", lambda lib, a: a.swapaxes(1, 2), C),
    ("t", lambda lib, a: a.t(), A),
    ("t of a vector", lambda lib, a: a.t(), V),
    ("T", lambda lib, a: a.T, A),
    ("mT", lambda lib, a: a.mT, C),
    ("movedim", lambda lib, a: lib.movedim(a, 0, 2), C),
    ("split", lambda lib, a: a.split(2, dim=1)[1], A),
    ("split sizes", lambda lib, a: a.split([1, 2], dim=0)[1], A),
    ("chunk", lambda lib, a: a.chunk(3, dim=1)[0], A),
    ("unbind", lambda lib, a: a.unbind(1)[2], A),
    ("select", lambda lib, a: a.select(1, -1), A),
    ("narrow", lambda lib, a: a.narrow(1, 1, 2), A),
    ("diagonal", lambda lib, a: a.diagonal(), Q),
    ("diagonal offset", lambda lib, a: a.diagonal(1), A),
    ("diagonal below, dims", lambda lib, a: a.diagonal(-1, 2, 1), C),
]


@pytest.mark.parametrize("name, op, value", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_ops(torch, name, op, value):
    assert_second_derivatives_match(torch, squared(op), value)


GETITEMS = [
    ("int", lambda lib, a: a[1], A),
    ("negative int", lambda lib, a: a[-1], A),
    ("two ints: one element", lambda lib, a: a[1, 2], A),
    ("slice", lambda lib, a: a[1:], A),
    ("negative slice bounds", lambda lib, a: a[-2:, :-1], A),
    ("slice with step", lambda lib, a: a[::2, 1::2], A),
    ("full slice", lambda lib, a: a[:], A),
    ("None", lambda lib, a: a[None], A),
    ("None between", lambda lib, a: a[:, None, 1], A),
    ("Ellipsis", lambda lib, a: a[...], A),
    ("Ellipsis and int", lambda lib, a: a[..., 1], C),
    ("int, Ellipsis, slice", lambda lib, a: a[0, ..., 1:3], C),
    ("bool mask", lambda lib, a: a[lib.tensor(A > 0)], A),
    ("bool mask of rows", lambda lib, a: a[lib.tensor(np.array([True, False, True]))], A),
    ("True", lambda lib, a: a[True], A),
    ("int array with repeats", lambda lib, a: a[index(lib, [0, 2, 0, 0])], A),
    ("list with repeats", lambda lib, a: a[[1, 1, -1]], A),
    ("two int arrays with repeats",
     lambda lib, a: a[index(lib, [0, 0, 2]), index(lib, [1, 1, 3])], A),
    ("int array after slice", lambda lib, a: a[1:, index(lib, [3, 3, 0])], A),
    ("int then array", lambda lib, a: a[1, index(lib, [2, 2])], C),
    ("arrays separated by a slice", lambda lib, a: a[index(lib, [1, 1]), :, index(lib, [0, 3])], C),
    ("2-D int array", lambda lib, a: a[index(lib, [[0, 1], [1, 1]])], A),
    ("None and array", lambda lib, a: a[None, index(lib, [2, 0, 2])], A),
    ("Ellipsis and array", lambda lib, a: a[..., index(lib, [0, 0])], C),
    ("int32 array", lambda lib, a: a[index(lib, [2, 2, 1], "int32")], A),
]


@pytest.mark.parametrize("name, op, value", GETITEMS, ids=[v[0] for v in GETITEMS])
def test_getitem(torch, name, op, value):
    assert_second_derivatives_match(torch, squared(op), value)


def test_getitem_of_a_getitem_times_another_input(torch):
    # the second derivative mixes both inputs: d2/da db of sum(a[i] * b[j])
    fn = lambda lib, a, b: a[index(lib, [0, 0, 2])][:, 1:] * b[1:][[1, 1, 0]][:, :3]  # noqa: E731
    assert_second_derivatives_match(torch, fn, A, B)


def test_negative_step_is_refused_as_in_pytorch(torch):
    for lib in (mg, torch):
        x = lib.tensor(A, requires_grad=True)
        with pytest.raises(ValueError):
            x[::-1]


PICKS = [
    ("gather", lambda lib, a: a.gather(1, index(lib, [[0, 0, 3], [1, 1, 1], [2, 0, 2]])), A),
    ("gather dim 0", lambda lib, a: a.gather(0, index(lib, [[2, 2, 0, 1]])), A),
    ("gather 0-dim", lambda lib, a: a.gather(0, index(lib, 0)), S),
    ("flip", lambda lib, a: a.flip(0), A),
    ("flip two dims", lambda lib, a: a.flip([0, 2]), C),
    ("repeat", lambda lib, a: a.repeat(2, 1, 3), A),
    ("tile", lambda lib, a: a.tile((2,)), A),
    ("roll", lambda lib, a: a.roll(1, 1), A),
    ("roll flat", lambda lib, a: a.roll(5), A),
    ("index_select with repeats", lambda lib, a: a.index_select(1, index(lib, [3, 3, 0])), A),
    ("take with repeats", lambda lib, a: a.take(index(lib, [[0, 11], [11, -1]])), A),
    ("masked_select", lambda lib, a: a.masked_select(lib.tensor(A > 0)), A),
    ("masked_select broadcast", lambda lib, a: a.masked_select(
        lib.tensor(np.array([True, False, False, True]))), A),
    ("repeat_interleave", lambda lib, a: a.repeat_interleave(2, dim=0), A),
    ("repeat_interleave tensor", lambda lib, a: a.repeat_interleave(index(lib, [1, 0, 3]), dim=0),
     A),
    ("diag of a vector", lambda lib, a: lib.diag(a), V),
    ("diag of a vector, offset", lambda lib, a: lib.diag(a, -2), V),
    ("diag of a matrix", lambda lib, a: lib.diag(a, 1), A),
    ("trace", lambda lib, a: lib.trace(a), A),
    ("tril", lambda lib, a: a.tril(), A),
    ("tril offset", lambda lib, a: a.tril(-1), C),
    ("triu", lambda lib, a: a.triu(1), A),
]


@pytest.mark.parametrize("name, op, value", PICKS, ids=[v[0] for v in PICKS])
def test_picking_ops(torch, name, op, value):
    assert_second_derivatives_match(torch, squared(op), value)


def test_trace_times_input(torch):
    assert_second_derivatives_match(torch, lambda lib, a: lib.trace(a) * a, Q)


SRC = rng.standard_normal((2, 4))
SCATTER_INDEX = [[0, 2, 0, 1], [0, 0, 2, 2]]  # repeats: later writes win, adds add up


@pytest.mark.parametrize("wanted", [[0, 1], [0], [1]])
def test_scatter(torch, wanted):
    def fn(lib, a, s):
        return a.scatter(0, index(lib, [[0, 1, 2, 1], [2, 1, 0, 0]]), s * s) * a
    assert_second_derivatives_match(torch, fn, A, SRC, wanted=wanted)


def test_scatter_value(torch):
    fn = lambda lib, a: a.scatter(1, index(lib, [[0, 0], [3, 3], [1, 2]]), 2.5) * a  # noqa: E731
    assert_second_derivatives_match(torch, fn, A)


@pytest.mark.parametrize("wanted", [[0, 1], [0], [1]])
def test_scatter_add_with_repeated_indices(torch, wanted):
    def fn(lib, a, s):
        return a.scatter_add(0, index(lib, SCATTER_INDEX), s * a[:2]) * a
    assert_second_derivatives_match(torch, fn, A, SRC, wanted=wanted)


def test_gather_of_scatter_add(torch):
    def fn(lib, a, s):
        out = lib.zeros(3, 4, dtype=lib.float64).scatter_add(1, index(lib, [[1, 1], [0, 3]]), s)
        return out.gather(1, index(lib, [[1, 1, 2], [3, 0, 0], [2, 2, 2]])) * out[:, :3]
    assert_second_derivatives_match(torch, fn, A, SRC[:, :2], wanted=[1])


@pytest.mark.parametrize("alpha", [1, -2.5])
def test_index_add_with_repeated_indices(torch, alpha):
    def fn(lib, a, s):
        return a.index_add(1, index(lib, [2, 0, 2]), s * s, alpha=alpha) * a
    assert_second_derivatives_match(torch, fn, A, A[:, :3].copy())
    assert_second_derivatives_match(torch, fn, A, A[:, :3].copy(), wanted=[1])


def test_index_fill(torch):
    fn = lambda lib, a: a.index_fill(1, index(lib, [0, -1, 0]), -3.0) * a  # noqa: E731
    assert_second_derivatives_match(torch, fn, A)


@pytest.mark.parametrize("wanted", [[0, 1], [1]])
def test_index_fill_with_a_value_tensor(torch, wanted):
    fn = lambda lib, a, v: a.index_fill(0, index(lib, [2, 0]), v * v) * a * v  # noqa: E731
    assert_second_derivatives_match(torch, fn, A, S, wanted=wanted)


@pytest.mark.parametrize("wanted", [[0, 1, 2], [0], [2], [0, 2]])
def test_stack_where_only_some_require_grad(torch, wanted):
    fn = lambda lib, a, b, c: lib.stack([a * b, b, c * c * a], dim=1) * lib.stack([a, c, b], 1)  # noqa: E731,E501
    assert_second_derivatives_match(torch, fn, A, B, A * B, wanted=wanted)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("wanted", [[0, 1], [0], [1]])
def test_cat_where_only_some_require_grad(torch, dim, wanted):
    def fn(lib, a, b):
        joined = lib.cat([a * b, b, a], dim=dim)
        return joined * joined
    assert_second_derivatives_match(torch, fn, A, B, wanted=wanted)


def test_cat_skips_a_1d_empty_tensor(torch):
    def fn(lib, a, e):
        joined = lib.cat([e, a, e * 2], dim=1)
        return joined * joined
    assert_second_derivatives_match(torch, fn, A, np.zeros(0))


def test_views_of_views(torch):
    def fn(lib, a):
        v = a.t().unsqueeze(0).expand(2, 4, 3).permute(2, 0, 1)[1:, :, ::2].reshape(2, 2, 2)
        return v * v.flip(0)
    assert_second_derivatives_match(torch, fn, A)


def test_view_nodes_are_named_as_in_pytorch(torch):
    for lib in (mg, torch):
        x = lib.tensor(COL, requires_grad=True)
        names = [type(t.grad_fn).__name__ for t in (
            x.reshape(3), x.unsqueeze(0), x.squeeze(), x.squeeze(1), x.expand(3, 2),
            x.permute(1, 0), x.transpose(0, 1), x.t(), x[None], x[...], x[1], x[1:],
            x[[0, 0]], x.gather(0, lib.tensor([[0]])), lib.stack([x, x]), lib.cat([x, x]))]
        assert names == ["ViewBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
                         "SqueezeBackward1", "ExpandBackward0", "PermuteBackward0",
                         "TransposeBackward0", "TBackward0", "UnsqueezeBackward0",
                         "AliasBackward0", "SelectBackward0", "SliceBackward0",
                         "IndexBackward0", "GatherBackward0", "StackBackward0",
                         "CatBackward0"], lib.__name__


def test_view_ops_are_marked_as_views():
    from minigrad.ops import diagonals, indexing, shape
    views = {shape.ViewBackward0, shape.ExpandBackward0, shape.PermuteBackward0,
             shape.TransposeBackward0, shape.TBackward0, indexing.SliceBackward0,
             indexing.AsStridedBackward0, diagonals.DiagonalBackward0}
    for cls in views:
        assert cls.is_view is True
    x = mg.tensor(A, requires_grad=True)
    for y in (x.reshape(12), x.unsqueeze(0), x.expand(2, 3, 4), x.t(), x[1:], x.diagonal()):
        assert type(y.grad_fn).is_view and np.shares_memory(y._data, x._data)
        assert y._version_counter is x._version_counter
    for y in (x[[0, 1]], x.gather(0, mg.tensor([[0]])), mg.stack([x]), x.flip(0)):
        assert not getattr(type(y.grad_fn), "is_view", False)


def test_plain_backward_makes_no_tensor(monkeypatch):
    # a plain backward hands the formulas arrays: no op runs, no Tensor is made on the way
    from minigrad.ops.op import Op
    x = mg.tensor(C, requires_grad=True)
    s = mg.tensor(SRC[:, :2], requires_grad=True)
    y = mg.cat([x.permute(2, 0, 1)[1:, ::2][mg.tensor([0, 0])].flip(0).reshape(-1),
                mg.stack([x[0].t(), x[1].t()]).diagonal(0, 1, 2).tril().flatten(),
                x.gather(1, mg.tensor([[[0, 0, 1, 2]]])).expand(3, 1, 4).squeeze().take(
                    mg.tensor([3, 3])),
                mg.zeros(3, 4, dtype=mg.float64).scatter_add(
                    1, mg.tensor([[1, 1], [0, 3]]), s).index_fill(0, mg.tensor([1]), 2.0)
                .index_select(1, mg.tensor([1, 1])).flatten()])
    loss = (y * 1.0).sum()
    made = []
    monkeypatch.setattr(Op, "wrap", staticmethod(lambda *a: made.append(a)))
    loss.backward()
    assert made == []
    assert x.grad is not None and s.grad is not None


def test_too_many_indices_is_numpy_s_index_error():
    x = mg.tensor([[1.0, 2.0]], requires_grad=True)
    with pytest.raises(IndexError, match="too many indices"):
        x[0:1, 0:1, 0:1]


def test_as_strided_node_takes_arrays_or_tensors():
    # made by the in-place machinery as AsStridedBackward0((node,), root_shape, positions):
    # the view [1, 1:3] of a (3, 4) tensor is its elements 5 and 6
    from minigrad.ops.indexing import AsStridedBackward0
    x = mg.tensor(np.ones(2), requires_grad=True)
    y = x * 1.0
    node = AsStridedBackward0((y.grad_fn,), (3, 4), np.array([5, 6]))
    expected = np.zeros((3, 4))
    expected[1, 1:3] = [5.0, 6.0]
    (g,) = node.apply(np.array([5.0, 6.0]))
    assert type(g) is np.ndarray and (g == expected).all()
    seed = mg.tensor([5.0, 6.0], dtype=mg.float64, requires_grad=True)
    with mg.enable_grad():
        (g,) = node.apply(seed)
    assert g.requires_grad and (g.detach().numpy() == expected).all()
    (back,) = mg.autograd.grad((g * mg.tensor(np.arange(12.0).reshape(3, 4))).sum(), seed)
    assert back.tolist() == [5.0, 6.0]


def test_a_reshape_that_copies_is_not_a_view(torch):
    x = mg.tensor(A, requires_grad=True)
    copied = x.t().reshape(12)
    assert type(copied.grad_fn).__name__ == "UnsafeViewBackward0"  # PyTorch's name
    assert not type(copied.grad_fn).is_view and not np.shares_memory(copied._data, x._data)
    assert copied._version_counter is not x._version_counter
    assert type(x.t().reshape(4, 3).grad_fn).is_view
    once = x.repeat_interleave(1, dim=0)  # a copy, as PyTorch's (clone, then view)
    assert once.grad_fn.name() == "ViewBackward0" and not type(once.grad_fn).is_view
    assert not np.shares_memory(once._data, x._data)
    assert_second_derivatives_match(torch, squared(lambda lib, a: a.t().reshape(3, 4)), A)
    assert_second_derivatives_match(torch, squared(lambda lib, a: a.repeat_interleave(1, 1)), A)
