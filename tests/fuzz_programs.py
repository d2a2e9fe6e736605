"""Random op programs run side by side in minigrad and PyTorch (used by test_fuzz_parity.py).

A program starts from a leaf tensor made in both libraries from the same numpy array and
applies a few steps. A step is an op of ``OPS``: a function written once, ``fn(lib, x, *args)``,
called with ``lib`` = minigrad and with ``lib`` = torch, and a hypothesis strategy that draws
its arguments for the current tensor (its shape and dtype). This module draws programs;
``fuzz_interpreter.py``'s ``Program`` runs them in both libraries and compares.
"""

import math
import warnings
from typing import Callable, NamedTuple

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


FLOATS = (np.float64, np.float32)
ALL_DTYPES = (np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_)

# (rtol, atol): float64 leaves room for another summation order, float32 for its 24 bits.
TOLERANCE = {"float64": (1e-7, 1e-9), "float32": (2e-4, 1e-5), "float16": (1e-2, 1e-3)}

# ----------------------------------------------------------------- tensors of both libraries

class Leaf:
    """A tensor that each library makes from the same numpy array; its .grad is compared."""

    def __init__(self, array, requires_grad=False):
        self.array = array
        self.requires_grad = requires_grad

    def make(self, lib):
        dtype = getattr(lib, dtype_name(self.array.dtype))
        return lib.tensor(self.array.copy(), dtype=dtype, requires_grad=self.requires_grad)

    def __repr__(self):
        grad = ", requires_grad=True" if self.requires_grad else ""
        dtype = dtype_name(self.array.dtype)
        if self.array.size == 0 and self.array.ndim > 1:  # tolist() would lose the shape
            return (f"T([], dtype={dtype}).reshape{self.array.shape}"
                    + (".requires_grad_()" if grad else ""))
        return f"T({self.array.tolist()!r}, dtype={dtype}{grad})"


def dtype_name(dtype):
    """'float32', 'bool', ... for a numpy, torch or minigrad dtype."""
    return str(dtype).rpartition(".")[2]


def materialize(arg, lib, leaves):
    """``arg`` with every Leaf in it made as a ``lib`` tensor (and added to ``leaves``)."""
    if isinstance(arg, Leaf):
        tensor = arg.make(lib)
        leaves.append(tensor)
        return tensor
    if isinstance(arg, (list, tuple)):
        return type(arg)(materialize(a, lib, leaves) for a in arg)
    return arg


# ----------------------------------------------------------------- values and shapes

SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
PYTHON_SCALARS = [0, 1, -1, 2, 3, 0.0, 0.5, -1.5, 2.0, True, False, math.inf, -math.inf, math.nan]


def elements(dtype, special=False):
    """Values of ``dtype``: floats on a grid of quarters (exact in float32, so ties and
    zeros happen) or any float32 in [-4, 4]; with ``special`` also -0, inf and nan."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return st.booleans()
    if kind == "u":
        return st.integers(0, 6)
    if kind == "i":
        return st.integers(-4, 4)
    finite = (st.integers(-12, 12).map(lambda k: k / 4)
              | st.floats(-4, 4, width=32, allow_subnormal=False))
    return finite | st.sampled_from(SPECIAL_FLOATS) if special else finite


def arrays(shape, dtype, special=False):
    return hnp.arrays(np.dtype(dtype), tuple(shape), elements=elements(dtype, special))


def shapes(min_dims=0, max_dims=3, empty=True):
    """Shapes with sides 1..3 (and, rarely, 0: an empty tensor)."""
    sides = st.sampled_from([1, 2, 3, 2, 3, 0] if empty else [1, 2, 3])
    return st.lists(sides, min_size=min_dims, max_size=max_dims).map(tuple)


def leaves(shape, dtypes, special=False, requires_grad=False):
    """A Leaf of one of ``dtypes``; ``requires_grad`` may be a strategy, and only
    floating-point leaves can require grad."""
    grad = requires_grad if isinstance(requires_grad, st.SearchStrategy) else st.just(requires_grad)

    def build(dtype, grad_flag):
        floating = np.dtype(dtype).kind == "f"
        return arrays(shape, dtype, special).map(lambda a: Leaf(a, grad_flag and floating))

    return st.tuples(st.sampled_from(dtypes), grad).flatmap(lambda dg: build(*dg))


@st.composite
def broadcastable(draw, shape, grow=True, break_it=True):
    """A shape that broadcasts with ``shape``: leading dims dropped, some sides set to 1;
    rarely one more leading dim (the result grows) or a clash (an error is expected)."""
    shape = list(shape)
    out = [1 if draw(st.booleans()) else n for n in shape[draw(st.integers(0, len(shape))):]]
    if grow and draw(st.integers(0, 9)) == 0:
        out.insert(0, 2)
    if break_it and out and draw(st.integers(0, 19)) == 0:
        out[-1] += 2
    return tuple(out)


class Context(NamedTuple):
    """What a program's arguments may be: dtypes of tensor operands, inf/nan values, and
    whether operand leaves may require grad."""
    dtypes: tuple = FLOATS
    special: bool = False
    grad: bool = True


def operand_leaf(shape, ctx, grow=True):
    requires_grad = st.booleans() if ctx.grad else False
    return broadcastable(shape, grow).flatmap(
        lambda s: leaves(s, ctx.dtypes, ctx.special, requires_grad))


def operand(x, ctx, grow=True):
    """The other operand of a binary op: a Python number or a broadcastable tensor."""
    return st.sampled_from(PYTHON_SCALARS) | operand_leaf(x.shape, ctx, grow)


def dim(x, extra=0):
    """A dim of ``x`` (``extra`` = 1 for unsqueeze/stack); rarely one out of range."""
    n = max(x.ndim, 1) + extra
    return st.sampled_from(list(range(-n, n)) * 2 + [n])


def dims(x):
    """``None``, one dim, or a tuple of dims (repeats are an error in both)."""
    return st.none() | dim(x) | st.lists(dim(x), max_size=max(x.ndim, 1)).map(tuple)


# ----------------------------------------------------------------- indexes

@st.composite
def indexes(draw, shape):
    """An index for a tensor of ``shape``: basic items (int, slice, None, ...), advanced
    ones (list, int tensor, bool mask) or a mix, consuming dims from the left; after an
    Ellipsis the remaining items consume the last dims."""
    items, pos, ndim = [], 0, len(shape)
    ellipsis_done = False
    while True:
        left = ndim - pos
        kinds = ["int", "slice", "none", "list", "tensor", "mask"] if left else ["none"]
        if not ellipsis_done:
            kinds.append("ellipsis")
        if items and draw(st.integers(0, 2)) == 0:
            break
        kind = draw(st.sampled_from(kinds))
        n = shape[pos] if left else 0
        if kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            ellipsis_done = True
            items.append(Ellipsis)
            pos = ndim - draw(st.integers(0, left))
        elif kind == "int":
            items.append(draw(int_index(n)))
            pos += 1
        elif kind == "slice":
            items.append(draw(slices(n)))
            pos += 1
        elif kind == "list":
            items.append(draw(st.lists(int_index(n), max_size=3)))
            pos += 1
        elif kind == "tensor":
            index_shape = draw(st.sampled_from([(), (2,), (1,), (2, 2), (3,)]))
            values = hnp.arrays(np.int64, index_shape, elements=int_index(n))
            items.append(Leaf(draw(values)))
            pos += 1
        else:
            k = draw(st.integers(1, left))
            items.append(Leaf(draw(arrays(shape[pos:pos + k], np.bool_))))
            pos += k
        if len(items) > 4:
            break
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # x[i] rather than x[(i,)]
    return tuple(items)


def int_index(n):
    """An index into a side of ``n``: in range, and rarely ``n`` (IndexError in both)."""
    return st.sampled_from(list(range(-n, n)) * 2 + [n])


def slices(n):
    bound = st.none() | st.integers(-n - 1, n + 1)
    step = st.sampled_from([None, 1, 2, 3, None, 1, 2, 3, -1])  # -1: ValueError in PyTorch
    return st.builds(slice, bound, bound, step)


def format_index(key):
    """An index as it is written inside brackets: ``0, :, [1, 0]``."""
    def item(k):
        if isinstance(k, slice):
            text = ":".join("" if v is None else str(v) for v in (k.start, k.stop))
            return text + (f":{k.step}" if k.step is not None else "")
        return "..." if k is Ellipsis else repr(k)
    if isinstance(key, tuple):
        return ", ".join(map(item, key)) + ("," if len(key) == 1 else "")
    return item(key)


def advanced_repeats(key, shape):
    """True when the advanced items of ``key`` could name one element twice (then a
    tensor assigned there has no single right answer, in PyTorch too)."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        values = k.array if isinstance(k, Leaf) else k if isinstance(k, list) else None
        if values is not None and np.asarray(values).dtype != np.bool_ and np.size(values) > 1:
            return True
    return False


# ----------------------------------------------------------------- the ops

class Op(NamedTuple):
    fn: Callable    # fn(lib, x, *args): the step, the same code for both libraries
    args: Callable  # args(x, ctx): a strategy of the argument tuple (x: the torch tensor)
    code: object    # the step in a reproducer: "x.clamp({0}, {1})", or args -> str


OPS = {}


def op(name, fn, args=None, code=None):
    OPS[name] = Op(fn, args or (lambda x, ctx: st.just(())), code or f"x.{name}()")


def one(strategy):
    """An argument tuple of one drawn value."""
    return strategy.map(lambda v: (v,))


# unary elementwise
UNARY = ["relu", "sqrt", "log", "exp", "abs", "tanh", "sigmoid", "neg", "square",
         "reciprocal", "sin", "sign"]
for _name in UNARY:
    op(_name, lambda lib, x, _name=_name: getattr(x, _name)())

BOUND = st.none() | st.sampled_from([0.0, -1.0, 1.0, 0.5, 2, -2, math.inf, math.nan])
op("clamp", lambda lib, x, lo, hi: x.clamp(lo, hi),
   lambda x, ctx: st.tuples(BOUND, BOUND), "x.clamp({0}, {1})")
op("clamp_tensors", lambda lib, x, lo, hi: x.clamp(lo, hi),
   lambda x, ctx: st.tuples(st.none() | operand_leaf(x.shape, ctx),
                            st.none() | operand_leaf(x.shape, ctx)),
   "x.clamp({0}, {1})")
op("clamp_min", lambda lib, x, lo: x.clamp_min(lo), lambda x, ctx: one(BOUND.filter(
    lambda b: b is not None)), "x.clamp_min({0})")
op("clamp_max", lambda lib, x, hi: x.clamp_max(hi), lambda x, ctx: one(BOUND.filter(
    lambda b: b is not None)), "x.clamp_max({0})")
EXPONENTS = st.sampled_from([0, 1, 2, 3, -1, -2, 0.5, 2.5, -0.5, 0.0, 2.0])
op("pow_scalar", lambda lib, x, p: x ** p, lambda x, ctx: one(EXPONENTS), "x ** {0}")
op("rpow", lambda lib, x, b: b ** x, lambda x, ctx: one(st.sampled_from([2, 0.5, 0, -1, 2.0])),
   "{0} ** x")

# binary elementwise: the other operand is a Python number or a broadcastable tensor
BINARY = {
    "add": (lambda a, b: a + b, "x + {0}"), "sub": (lambda a, b: a - b, "x - {0}"),
    "mul": (lambda a, b: a * b, "x * {0}"), "truediv": (lambda a, b: a / b, "x / {0}"),
    "pow": (lambda a, b: a ** b, "x ** {0}"), "floordiv": (lambda a, b: a // b, "x // {0}"),
    "mod": (lambda a, b: a % b, "x % {0}"),
    "radd": (lambda a, b: b + a, "{0} + x"), "rsub": (lambda a, b: b - a, "{0} - x"),
    "rmul": (lambda a, b: b * a, "{0} * x"), "rtruediv": (lambda a, b: b / a, "{0} / x"),
    "rpow_any": (lambda a, b: b ** a, "{0} ** x"), "rfloordiv": (lambda a, b: b // a, "{0} // x"),
    "rmod": (lambda a, b: b % a, "{0} % x"),
    "eq": (lambda a, b: a == b, "x == {0}"), "lt": (lambda a, b: a < b, "x < {0}"),
    "ge": (lambda a, b: a >= b, "x >= {0}"),
}
for _name, (_f, _code) in BINARY.items():
    op(_name, lambda lib, x, o, _f=_f: _f(x, o), lambda x, ctx: one(operand(x, ctx)), _code)
op("maximum", lambda lib, x, o: lib.maximum(x, o), lambda x, ctx: one(operand_leaf(x.shape, ctx)),
   "lib.maximum(x, {0})")
op("minimum", lambda lib, x, o: lib.minimum(x, o), lambda x, ctx: one(operand_leaf(x.shape, ctx)),
   "lib.minimum(x, {0})")
op("where", lambda lib, x, o: lib.where(x > 0, x, o), lambda x, ctx: one(operand(x, ctx)),
   "lib.where(x > 0, x, {0})")
op("where_mask", lambda lib, x, m, o: lib.where(m, o, x),
   lambda x, ctx: st.tuples(broadcastable(x.shape).flatmap(lambda s: arrays(s, np.bool_)).map(Leaf),
                            operand(x, ctx)),
   "lib.where({0}, {1}, x)")
op("masked_fill", lambda lib, x, m, v: x.masked_fill(m, v),
   lambda x, ctx: st.tuples(broadcastable(x.shape, grow=False).flatmap(
       lambda s: arrays(s, np.bool_)).map(Leaf), st.sampled_from(PYTHON_SCALARS)),
   "x.masked_fill({0}, {1})")


# reductions
def _reduce(method):
    def fn(lib, x, d, keepdim):
        return getattr(x, method)() if d is None else getattr(x, method)(d, keepdim=keepdim)
    return fn


def _reduce_code(method):
    return lambda a: f"x.{method}()" if a[0] is None else f"x.{method}({a[0]!r}, keepdim={a[1]})"


for _name in ["sum", "mean"]:
    op(_name, _reduce(_name), lambda x, ctx: st.tuples(dims(x), st.booleans()), _reduce_code(_name))
for _name in ["max", "min", "prod", "argmax"]:
    op(_name, _reduce(_name), lambda x, ctx: st.tuples(st.none() | dim(x), st.booleans()),
       _reduce_code(_name))
for _name in ["amax", "amin"]:
    op(_name, lambda lib, x, d, k, _name=_name: getattr(x, _name)(d, keepdim=k),
       lambda x, ctx: st.tuples(dim(x) | st.lists(dim(x), max_size=3).map(tuple), st.booleans()),
       f"x.{_name}({{0}}, keepdim={{1}})")
def _corrections(x):
    """std/var corrections, any of them (no degrees of freedom left too, with inf and nan:
    minigrad gives PyTorch's gradients there)."""
    return st.sampled_from([1, 0, 2])


# Not dim=(): PyTorch 2.13's std and var backward read an empty dim list as "no dims"
# while the forward reduces over every dim, which gives +-inf (or nan) gradients; minigrad
# gives the gradient of dim=None (a deliberate difference, tested in test_numerics_parity).
for _name in ["std", "var"]:
    op(_name, lambda lib, x, d, c, k, _name=_name: getattr(x, _name)(dim=d, correction=c, keepdim=k),
       lambda x, ctx: st.tuples(dims(x).filter(lambda d: d != ()), _corrections(x),
                                st.booleans()),
       f"x.{_name}(dim={{0}}, correction={{1}}, keepdim={{2}})")
    op(f"{_name}_unbiased", lambda lib, x, u, _name=_name: getattr(x, _name)(unbiased=u),
       lambda x, ctx: one(st.booleans()), f"x.{_name}(unbiased={{0}})")
REDUCE_ALL = ["sum", "mean", "max", "min", "amax", "amin", "std", "var", "prod"]
op("reduce_all", lambda lib, x, name: getattr(x, name)(),
   lambda x, ctx: one(st.sampled_from(REDUCE_ALL)), lambda a: f"x.{a[0]}()")
for _name in ["softmax", "log_softmax", "cumsum"]:
    op(_name, lambda lib, x, d, _name=_name: getattr(x, _name)(d), lambda x, ctx: one(dim(x)),
       f"x.{_name}({{0}})")


# shapes
@st.composite
def new_shapes(draw, shape):
    """Another shape with as many elements: sides shuffled, two merged, a 1 added, or a -1."""
    sides = list(draw(st.permutations(shape))) if shape else []
    if len(sides) >= 2 and draw(st.booleans()):
        sides[:2] = [sides[0] * sides[1]]
    if draw(st.booleans()):
        sides.insert(draw(st.integers(0, len(sides))), 1)
    if sides and draw(st.booleans()):
        sides[draw(st.integers(0, len(sides) - 1))] = -1
    return tuple(sides)


@st.composite
def expand_sizes(draw, shape):
    sizes = [draw(st.sampled_from([1, 2, 3, -1])) if n == 1 else draw(st.sampled_from([n, -1]))
             for n in shape]
    return tuple([2] * draw(st.integers(0, 1)) + sizes)


@st.composite
def matmul_shapes(draw, shape):
    k = draw(st.integers(1, 3))
    n = shape[-1] if shape else 1
    if len(shape) == 1:
        return draw(st.sampled_from([(n,), (n, k), (2, n, k)]))
    return draw(st.sampled_from([(n,), (n, k), (2, n, k), (1, n, k)]))


op("reshape", lambda lib, x, s: x.reshape(s), lambda x, ctx: one(new_shapes(x.shape)),
   "x.reshape({0})")
op("view", lambda lib, x, s: x.view(s), lambda x, ctx: one(new_shapes(x.shape)), "x.view({0})")
op("transpose", lambda lib, x, a, b: x.transpose(a, b),
   lambda x, ctx: st.tuples(dim(x), dim(x)), "x.transpose({0}, {1})")
op("permute", lambda lib, x, p: x.permute(*p),
   lambda x, ctx: one(st.permutations(range(x.ndim)).map(tuple)),
   lambda a: f"x.permute({', '.join(map(str, a[0]))})")
op("unsqueeze", lambda lib, x, d: x.unsqueeze(d), lambda x, ctx: one(dim(x, extra=1)),
   "x.unsqueeze({0})")
op("squeeze", lambda lib, x, d: x.squeeze() if d is None else x.squeeze(d),
   lambda x, ctx: one(st.none() | dim(x) | st.lists(dim(x), max_size=2).map(tuple)),
   lambda a: "x.squeeze()" if a[0] is None else f"x.squeeze({a[0]!r})")
op("flatten", lambda lib, x, a, b: x.flatten(a, b),
   lambda x, ctx: st.tuples(dim(x), dim(x)), "x.flatten({0}, {1})")
op("expand", lambda lib, x, s: x.expand(*s), lambda x, ctx: one(expand_sizes(x.shape)),
   lambda a: f"x.expand({', '.join(map(str, a[0]))})")
op("t", lambda lib, x: x.t())
op("cat", lambda lib, x, o, d, first: lib.cat([x, o] if first else [o, x], d),
   lambda x, ctx: st.tuples(dim(x), st.booleans()).flatmap(lambda db: st.tuples(
       leaves(_resized(x.shape, db[0]), ctx.dtypes, ctx.special, st.booleans() if ctx.grad
              else False), st.just(db[0]), st.just(db[1]))),
   lambda a: f"lib.cat([x, {a[0]!r}] if {a[2]} else [{a[0]!r}, x], {a[1]})")
op("stack", lambda lib, x, o, d: lib.stack([x, o], d),
   lambda x, ctx: st.tuples(leaves(x.shape, ctx.dtypes, ctx.special, ctx.grad), dim(x, 1)),
   "lib.stack([x, {0}], {1})")
op("matmul", lambda lib, x, o: x @ o,
   lambda x, ctx: one(matmul_shapes(x.shape).flatmap(
       lambda s: leaves(s, ctx.dtypes, ctx.special, st.booleans() if ctx.grad else False))),
   "x @ {0}")
op("getitem", lambda lib, x, key: x[key], lambda x, ctx: one(indexes(x.shape)),
   lambda a: f"x[{format_index(a[0])}]")


def _resized(shape, d):
    """``shape`` with a side 0..2 along ``d`` (for cat); as is when ``d`` is out of range."""
    shape = list(shape)
    if -len(shape) <= d < len(shape):
        shape[d] = 2
    return tuple(shape)


# in-place ops on the current tensor
def _in_place(statement):
    def fn(lib, x, o):
        if statement == "+=":
            x += o
        elif statement == "-=":
            x -= o
        elif statement == "*=":
            x *= o
        else:
            x /= o
        return x
    return fn


for _name in ["add_", "sub_", "mul_", "div_"]:
    op(_name, lambda lib, x, o, _name=_name: getattr(x, _name)(o),
       lambda x, ctx: one(operand(x, ctx, grow=False)), f"x.{_name}({{0}})")
for _statement in ["+=", "-=", "*=", "/="]:
    op(_statement, _in_place(_statement), lambda x, ctx: one(operand(x, ctx, grow=False)),
       f"x {_statement} {{0}}")
op("relu_", lambda lib, x: x.relu_())
op("zero_", lambda lib, x: x.zero_())
op("clamp_", lambda lib, x, lo, hi: x.clamp_(lo, hi), lambda x, ctx: st.tuples(BOUND, BOUND),
   "x.clamp_({0}, {1})")
op("fill_", lambda lib, x, v: x.fill_(v),
   lambda x, ctx: one(st.sampled_from(PYTHON_SCALARS) | leaves((), ctx.dtypes, ctx.special,
                                                              st.booleans() if ctx.grad else False)),
   "x.fill_({0})")
op("copy_", lambda lib, x, src: x.copy_(src),
   lambda x, ctx: one(operand_leaf(x.shape, ctx, grow=False)), "x.copy_({0})")
op("masked_fill_", lambda lib, x, m, v: x.masked_fill_(m, v),
   lambda x, ctx: st.tuples(broadcastable(x.shape, grow=False).flatmap(
       lambda s: arrays(s, np.bool_)).map(Leaf), st.sampled_from(PYTHON_SCALARS)),
   "x.masked_fill_({0}, {1})")


def _setitem(lib, x, key, value):
    x[key] = value
    return x


@st.composite
def setitem_args(draw, x, ctx):
    """An index and a value for it: a number, or a tensor shaped like the indexed part."""
    key = draw(indexes(x.shape))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = x.detach()[materialize(key, torch, [])].shape
    except Exception:
        target = None
    if target is None or advanced_repeats(key, x.shape) or draw(st.booleans()):
        return key, draw(st.sampled_from(PYTHON_SCALARS))
    value = draw(broadcastable(target, grow=False).flatmap(
        lambda s: leaves(s, ctx.dtypes, ctx.special, st.booleans() if ctx.grad else False)))
    return key, value


op("setitem", _setitem, setitem_args, lambda a: f"x[{format_index(a[0])}] = {a[1]!r}")

ELEMENTWISE = UNARY + ["clamp", "clamp_tensors", "clamp_min", "clamp_max", "pow_scalar",
                       "rpow", "maximum", "minimum", "where", "where_mask", "masked_fill",
                       ] + list(BINARY)
REDUCTIONS = ["reduce_all", "sum", "mean", "max", "min", "prod", "argmax", "amax", "amin", "std", "var",
              "std_unbiased", "var_unbiased", "softmax", "log_softmax", "cumsum"]
SHAPES = ["reshape", "view", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
          "expand", "t", "cat", "stack", "matmul", "getitem"]
IN_PLACE = ["add_", "sub_", "mul_", "div_", "+=", "-=", "*=", "/=", "relu_", "zero_",
            "clamp_", "fill_", "copy_", "masked_fill_", "setitem"]
STATEMENTS = {"+=", "-=", "*=", "/=", "setitem"}  # lines of code that are not `x = ...`
OUT_OF_PLACE = ELEMENTWISE + REDUCTIONS + SHAPES
assert set(OUT_OF_PLACE + IN_PLACE) == set(OPS), set(OPS) ^ set(OUT_OF_PLACE + IN_PLACE)
