"""Registry entries of indexing and the ops that pick, place or overwrite elements
(``minigrad/ops/indexing.py``) and of embedding. Corners: repeated indices (their
gradients add up), the first and last positions, index fills over a whole slice."""

from . import WITH_INT, base, grad_of, op

TWO = ((3, 4), (3, 4))


def idx(lib, *values):
    return lib.tensor(list(values))


op("SliceBackward0", lambda lib, x: x[1:, ::2], dtypes=WITH_INT)
op("SelectBackward0", lambda lib, x: x[1], dtypes=WITH_INT)
op("SelectBackward0", lambda lib, x: x.select(1, -1), tag="select")
op("AliasBackward0", lambda lib, x: x[...])
# autograd.functional's own AliasBackward0: its inputs, seen again under create_graph
op("AliasBackward0", lambda lib, x: lib.autograd.functional.jacobian(
    lambda t: t.sin() * t.sum(), x, create_graph=True), args=((3,),), tag="jacobian",
   torch_node=None)
op("UnbindBackward0", lambda lib, x: x.unbind(1)[2])
op("IndexBackward0", lambda lib, x: x[idx(lib, 0, 2, 2)], dtypes=WITH_INT)
op("IndexBackward0", lambda lib, x: x[:, idx(lib, -1, 0, 0)], tag="second_dim")
op("IndexBackward0", lambda lib, x: x[x > 0.5], corners=(0.5,), tag="mask")
op("IndexBackwardBackward0", lambda lib, x, g: grad_of(lib, lambda t: t[idx(lib, 0, 2, 2)], x, g),
   args=((3, 4), (3, 4)), torch_node="IndexPutImplBackward0")
op("SliceBackwardBackward0", lambda lib, x, g: grad_of(lib, lambda t: t[1:], x, g),
   args=((3, 4), (2, 4)))
op("DiagonalBackward0", lambda lib, x: x.diagonal(), dtypes=WITH_INT)
op("DiagonalBackward0", lambda lib, x: x.diagonal(1, 0, 2), args=((3, 2, 4),), tag="offset")
op("DiagonalBackwardBackward0", lambda lib, x, g: grad_of(lib, lambda t: t.diagonal(), x, g),
   args=((3, 4), (3,)))
op("DiagonalBackward0_copy", lambda lib, x: lib.diag(x, 1), dtypes=WITH_INT)
op("DiagEmbedBackward0", lambda lib, v: lib.diag(v), args=((3,),), dtypes=WITH_INT)
op("TraceBackward0", lambda lib, x: x.trace(), dtypes=WITH_INT)
op("TrilBackward0", lambda lib, x: x.tril(), dtypes=WITH_INT,
   inplace=lambda lib, x: x.tril_(), out=lambda lib, x, out: lib.tril(x, out=out),
   out_function="tril")
op("TriuBackward0", lambda lib, x: x.triu(1), inplace=lambda lib, x: x.triu_(1),
   out=lambda lib, x, out: lib.triu(x, 1, out=out), out_function="triu")
op("FlipBackward0", lambda lib, x: x.flip(0, 1), dtypes=WITH_INT)
op("RollBackward0", lambda lib, x: x.roll(1, 0), dtypes=WITH_INT)
op("RollBackward0", lambda lib, x: x.roll(5), tag="flat")
op("RepeatBackward0", lambda lib, x: x.repeat(2, 1, 1), dtypes=WITH_INT)
op("GatherBackward0", lambda lib, x: x.gather(1, lib.tensor([[0, 0], [3, 1], [2, 2]])),
   dtypes=WITH_INT)
op("IndexSelectBackward0", lambda lib, x: x.index_select(1, idx(lib, 3, 0, 3)), dtypes=WITH_INT,
   out=lambda lib, x, out: lib.index_select(x, 1, idx(lib, 3, 0, 3), out=out),
   out_function="index_select")
op("MaskedSelectBackward0", lambda lib, x: x.masked_select(x > 0), corners=(0.0,),
   dtypes=WITH_INT)
op("TakeBackward0", lambda lib, x: x.take(idx(lib, 0, 11, 5, 5)), dtypes=WITH_INT)
op("PutBackward0", lambda lib, x, g: grad_of(lib, lambda t: t.take(idx(lib, 0, 11, 5, 5)), x, g),
   args=((3, 4), (4,)))
op("IndexAddBackward0", lambda lib, x, s: x.index_add(0, idx(lib, 2, 0, 2), s, alpha=2),
   args=((3, 4), (3, 4)), dtypes=WITH_INT,
   inplace=lambda lib, x, s: x.index_add_(0, idx(lib, 2, 0, 2), s, alpha=2))
op("IndexFillBackward0", lambda lib, x: x.index_fill(1, idx(lib, 0, 2), 2.0), dtypes=WITH_INT,
   inplace=lambda lib, x: x.index_fill_(1, idx(lib, 0, 2), 2.0))
op("IndexFillBackward1", lambda lib, x, v: x.index_fill(1, idx(lib, 0, 2), v),
   args=((3, 4), ()), inplace=lambda lib, x, v: x.index_fill_(1, idx(lib, 0, 2), v))
SCATTER_INDEX = [[0, 1], [2, 0]]
op("ScatterBackward0", lambda lib, x, s: x.scatter(0, lib.tensor(SCATTER_INDEX), s),
   args=((3, 4), (2, 2)), dtypes=WITH_INT,
   inplace=lambda lib, x, s: x.scatter_(0, lib.tensor(SCATTER_INDEX), s))
op("ScatterBackward1", lambda lib, x: x.scatter(1, lib.tensor(SCATTER_INDEX), 2.5),
   inplace=lambda lib, x: x.scatter_(1, lib.tensor(SCATTER_INDEX), 2.5))
op("ScatterAddBackward0", lambda lib, x, s: x.scatter_add(0, lib.tensor([[0, 1], [0, 1]]), s),
   args=((3, 4), (2, 2)), dtypes=WITH_INT,
   inplace=lambda lib, x, s: x.scatter_add_(0, lib.tensor([[0, 1], [0, 1]]), s))


def _as_strided(lib, x):
    """A view changed in place, then read again: PyTorch's AsStridedBackward0."""
    y = x.clone()
    v = y[1:]
    v.mul_(2)
    return v


op("AsStridedBackward0", _as_strided)
op("AsStridedBackward0", lambda lib, x: x.as_strided((2, 3), (1, 2), 1), tag="as_strided",
   dtypes=WITH_INT)
op("AsStridedBackward0", lambda lib, x: lib.as_strided(x, (3, 2), (1, 0)), tag="overlapping")

# embedding.py
ROWS = [[0, 2, 2], [4, 1, 0]]
op("EmbeddingBackward0", lambda lib, w: lib.nn.functional.embedding(lib.tensor(ROWS), w),
   args=((5, 3),))
op("EmbeddingDenseBackwardBackward0",
   lambda lib, w, g: grad_of(lib, lambda t: lib.nn.functional.embedding(lib.tensor(ROWS), t),
                             w, g), args=((5, 3), (2, 3, 3)))

base("PickBackward", "the base of the ops whose output elements are input elements "
                     "(flip, roll, repeat, take, ...): each is a node under its own name")
base("_PickBackward", "the base of sort, topk, median(dim), max(dim) and min(dim)")
