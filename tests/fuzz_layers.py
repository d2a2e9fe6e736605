"""More steps for the fuzz programs of ``fuzz_programs.py`` (used by test_fuzz_parity.py):
the layers' functions (``F.linear``, convolutions, pooling, normalisations), reductions that
make a 0-dim result, and in-place ops handed operands of any shape (a higher rank, a side
that clashes, one that would grow the target), each written once for both libraries.

Each layer op draws its weights for the current tensor's shape and dtype (so most calls are
valid, and the rest fail in both libraries with the same exception type); the tensor may
be empty, 0-dim or of any rank up to 4.
"""

import math

import numpy as np
from hypothesis import strategies as st

from fuzz_programs import (IN_PLACE, OPS, PYTHON_SCALARS, STATEMENTS, Leaf, _in_place, arrays,
                           dtype_name, leaves, op)


def _dtype(x):
    return np.dtype(dtype_name(x.dtype))


def _leaf(shape, x, ctx, grad=None):
    """A float Leaf of ``shape`` with x's dtype (weights must match the input's)."""
    requires_grad = (st.booleans() if ctx.grad else st.just(False)) if grad is None else grad
    return leaves(tuple(shape), (_dtype(x),), ctx.special, requires_grad)


def _side(x, axis, default=1):
    return x.shape[axis] if x.ndim >= abs(axis) else default


def _maybe(strategy):
    return st.none() | strategy


def _off_by_one(n):
    """``n``, or rarely a wrong size (an error expected in both)."""
    return st.sampled_from([n] * 9 + [n + 1])


# ----------------------------------------------------------------- layers

@st.composite
def linear_args(draw, x, ctx):
    n = draw(_off_by_one(_side(x, -1)))
    k = draw(st.integers(0, 3))
    return draw(_leaf((k, n), x, ctx)), draw(_maybe(_leaf((k,), x, ctx)))


op("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), linear_args,
   "lib.nn.functional.linear(x, {0}, {1})")


@st.composite
def conv_args(draw, x, ctx, dims):
    c = draw(_off_by_one(_side(x, -1 - dims)))
    groups = draw(st.sampled_from([1, 1, c])) if c > 0 else 1
    out = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    stride = draw(st.integers(1, 2))
    padding = draw(st.sampled_from([0, 1, "same", "valid"] if stride == 1 else [0, 1]))
    dilation = draw(st.integers(1, 2))
    weight = draw(_leaf((out, c // groups if groups else c) + kernel, x, ctx))
    bias = draw(_maybe(_leaf((out,), x, ctx)))
    return weight, bias, stride, padding, dilation, groups


for _dims in (1, 2):
    op(f"conv{_dims}d", lambda lib, x, w, b, s, p, d, g, _dims=_dims: getattr(
        lib.nn.functional, f"conv{_dims}d")(x, w, b, s, p, d, g),
       lambda x, ctx, _dims=_dims: conv_args(x, ctx, _dims),
       f"lib.nn.functional.conv{_dims}d(x, {{0}}, {{1}}, {{2}}, {{3}}, {{4}}, {{5}})")


def _padding_only_window(length, kernel, stride, padding, dilation, ceil_mode):
    """Does a max pooling window over a side of ``length`` see padding only? PyTorch 2.13
    then gives -inf and its backward writes outside the gradient's memory (the process
    dies: "double free or corruption", e.g. max_pool1d(x of length 1, 2, None, 1, 2, True)),
    so such configurations are not drawn; minigrad's gradient there is 0."""
    stride = stride or kernel
    span = length + 2 * padding - dilation * (kernel - 1) - 1
    if span < 0:
        return False  # (an error in both)
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= length + padding:
        out -= 1
    return any(all(not 0 <= o * stride - padding + j * dilation < length for j in range(kernel))
               for o in range(out))


@st.composite
def pool_args(draw, x, ctx, dilation=True):
    kernel = draw(st.integers(1, 3))
    stride = draw(st.sampled_from([None, 1, 2]))
    padding = draw(st.integers(0, kernel // 2 + (1 if draw(st.integers(0, 19)) == 0 else 0)))
    spread = draw(st.integers(1, 2)) if dilation else 1
    ceil_mode = draw(st.booleans())
    if dilation and any(_padding_only_window(n, kernel, stride, padding, spread, ceil_mode)
                        for n in x.shape[-2:]):
        padding = 0
    return kernel, stride, padding, spread, ceil_mode


for _name in ("max_pool1d", "max_pool2d"):
    op(_name, lambda lib, x, k, s, p, d, c, _name=_name: getattr(lib.nn.functional, _name)(
        x, k, s, p, d, c), pool_args, f"lib.nn.functional.{_name}(x, {{0}}, {{1}}, {{2}}, {{3}}, {{4}})")
for _name in ("avg_pool1d", "avg_pool2d"):
    op(_name, lambda lib, x, k, s, p, d, c, _name=_name: getattr(lib.nn.functional, _name)(
        x, k, s, p, c), lambda x, ctx: pool_args(x, ctx, dilation=False),
       f"lib.nn.functional.{_name}(x, {{0}}, {{1}}, {{2}}, ceil_mode={{4}})")
op("adaptive_avg_pool2d", lambda lib, x, size: lib.nn.functional.adaptive_avg_pool2d(x, size),
   lambda x, ctx: st.tuples(st.sampled_from([1, 2, 3, (1, 2), (2, None)])),
   "lib.nn.functional.adaptive_avg_pool2d(x, {0})")


@st.composite
def norm_params(draw, x, ctx, shape):
    return draw(_maybe(_leaf(shape, x, ctx))), draw(_maybe(_leaf(shape, x, ctx)))


op("batch_norm", lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, True),
   lambda x, ctx: norm_params(x, ctx, (draw_channels(x),)),
   "lib.nn.functional.batch_norm(x, None, None, {0}, {1}, training=True)")


def draw_channels(x):
    return _side(x, 1) if x.ndim >= 2 else 1


@st.composite
def batch_norm_eval_args(draw, x, ctx):
    c = draw_channels(x)
    # running means off the values' grid: an input equal to its mean normalises to exactly
    # 0 in minigrad, to a rounding residue in PyTorch (fused multiply-add), at relu's kink
    mean = draw(arrays((c,), _dtype(x))) + 0.125
    var = np.abs(draw(arrays((c,), _dtype(x)))) + 0.5
    return (Leaf(mean), Leaf(var.astype(_dtype(x)))) + draw(norm_params(x, ctx, (c,)))


op("batch_norm_eval", lambda lib, x, m, v, w, b: lib.nn.functional.batch_norm(
    x, m, v, w, b, False), batch_norm_eval_args,
   "lib.nn.functional.batch_norm(x, {0}, {1}, {2}, {3}, training=False)")


@st.composite
def layer_norm_args(draw, x, ctx):
    k = draw(st.integers(1, max(x.ndim, 1)))
    shape = tuple(x.shape[x.ndim - k:]) if x.ndim else (1,)
    return (shape,) + draw(norm_params(x, ctx, shape))


op("layer_norm", lambda lib, x, s, w, b: lib.nn.functional.layer_norm(x, s, w, b),
   layer_norm_args, "lib.nn.functional.layer_norm(x, {0}, {1}, {2})")


@st.composite
def group_norm_args(draw, x, ctx):
    c = draw_channels(x)
    # groups of 2 values or more where possible: a group of one normalises to exactly 0 in
    # minigrad, to rounding noise in PyTorch (which a reciprocal then blows up)
    size = math.prod(x.shape[2:]) if x.ndim >= 2 else 1
    divisors = [g for g in range(1, c + 1) if c % g == 0 and (c // g * size > 1 or g == 1)]
    divisors = divisors or [1]
    groups = draw(st.sampled_from(divisors * 5 + [2]))
    return (groups,) + draw(norm_params(x, ctx, (c,)))


op("group_norm", lambda lib, x, g, w, b: lib.nn.functional.group_norm(x, g, w, b),
   group_norm_args, "lib.nn.functional.group_norm(x, {0}, {1}, {2})")

LAYERS = ["linear", "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
          "adaptive_avg_pool2d", "batch_norm", "batch_norm_eval", "layer_norm", "group_norm"]


# ----------------------------------------------------------------- to a 0-dim result

TO_0_DIM = {
    "max0": "x.max(dim=-1)[0]", "min0": "x.min(0).values", "sum0": "x.sum(-1)",
    "mean0": "x.mean(0)", "prod0": "x.prod(0)", "amax0": "x.amax(0)", "item0": "x[-1]",
    "std0": "x.std(0)", "logsumexp0": "x.logsumexp(0)", "norm0": "x.norm()",
    "dot0": "x.dot(x)", "matmul0": "x @ x", "select0": "x.select(0, 0)",
}
for _name, _code in TO_0_DIM.items():
    op(_name, lambda lib, x, _code=_code: eval(_code, {"x": x}), None, _code)  # noqa: S307


# ----------------------------------------------------------------- in-place ops, any operand

@st.composite
def near_shapes(draw, shape):
    """A shape close to ``shape``: itself, broadcastable, one more leading dim (1 or 2), a
    side changed, or a dim dropped: in place, only those that broadcast to ``shape`` fit."""
    shape = list(shape)
    kind = draw(st.sampled_from(["same", "broadcast", "lead1", "lead2", "side", "drop"]))
    if kind == "broadcast":
        shape = [1 if draw(st.booleans()) else n for n in shape]
    elif kind == "lead1":
        shape = [1] + shape
    elif kind == "lead2":
        shape = [2] + shape
    elif kind == "side" and shape:
        i = draw(st.integers(0, len(shape) - 1))
        shape[i] = draw(st.sampled_from([0, 1, 2, 3, 4]))
    elif kind == "drop" and shape:
        shape = shape[1:]
    return tuple(shape)


def near_operand(x, ctx):
    requires_grad = st.booleans() if ctx.grad else st.just(False)
    return near_shapes(tuple(x.shape)).flatmap(
        lambda s: leaves(s, ctx.dtypes, ctx.special, requires_grad))


IN_PLACE_ANY_SHAPE = []
for _name in ["add_", "sub_", "mul_", "div_", "copy_", "+=", "*=", "-=", "/="]:
    _any = f"{_name} (any shape)"
    _code = f"x {_name} {{0}}" if _name in STATEMENTS else f"x.{_name}({{0}})"
    _fn = _in_place(_name) if _name in STATEMENTS else (
        lambda lib, x, o, _name=_name: getattr(x, _name)(o))
    op(_any, _fn, lambda x, ctx: st.tuples(near_operand(x, ctx)), _code)
    IN_PLACE_ANY_SHAPE.append(_any)
    if _name in STATEMENTS:
        STATEMENTS.add(_any)
op("masked_fill_ (any shape)", lambda lib, x, m, v: x.masked_fill_(m, v),
   lambda x, ctx: st.tuples(near_shapes(tuple(x.shape)).flatmap(
       lambda s: arrays(s, np.bool_)).map(Leaf), st.sampled_from(PYTHON_SCALARS)),
   "x.masked_fill_({0}, {1})")
op("fill_ (any shape)", lambda lib, x, v: x.fill_(v),
   lambda x, ctx: st.tuples(near_operand(x, ctx)), "x.fill_({0})")
IN_PLACE_ANY_SHAPE += ["masked_fill_ (any shape)", "fill_ (any shape)"]
# Not x.clamp_(tensor, tensor): minigrad's clamp_ takes numbers only (a tensor bound raises
# "cannot be converted to Scalar"; PyTorch broadcasts it), an in-place form yet to add.

assert all(name in OPS for name in LAYERS + list(TO_0_DIM) + IN_PLACE_ANY_SHAPE + IN_PLACE)
