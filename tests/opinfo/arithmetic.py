"""Registry entries of the operators and two-input arithmetic (``minigrad/ops/arithmetic.py``)
and of the ops that pick one input per element (``minigrad/ops/selection.py``). Corners:
ties of maximum/minimum, values at clamp's bounds, zero bases and exponents of pow."""

from . import WITH_INT, grad_of, op, with_corners

BCAST = ((3, 4), (4,))
POS = (0.5, 2.0)


def form(name, call, method, function, **options):
    """A two-input op with its in-place method and its out= function."""
    return op(name, call, args=options.pop("args", BCAST),
              inplace=lambda lib, a, b: getattr(a, method)(b), inplace_method=method,
              out=lambda lib, a, b, out: getattr(lib, function)(a, b, out=out),
              out_function=function, **options)


form("AddBackward0", lambda lib, a, b: a + b, "add_", "add", dtypes=WITH_INT)
op("AddBackward0", lambda lib, a, b: lib.add(a, b, alpha=2), args=BCAST, tag="alpha",
   out=lambda lib, a, b, out: lib.add(a, b, alpha=2, out=out), out_function="add")
op("AddBackward0", lambda lib, a: a + 2.5, tag="number")
form("SubBackward0", lambda lib, a, b: a - b, "sub_", "sub", dtypes=WITH_INT)
op("SubBackward0", lambda lib, a, b: lib.sub(a, b, alpha=0.5), args=BCAST, tag="alpha")
op("RsubBackward1", lambda lib, a: 2.5 - a, dtypes=WITH_INT)
form("MulBackward0", lambda lib, a, b: a * b, "mul_", "mul", dtypes=WITH_INT)
op("MulBackward0", lambda lib, a: a * 3, tag="number", dtypes=WITH_INT)
form("DivBackward0", lambda lib, a, b: a / b, "div_", "div", domain=(None, POS))
# div(a, b, rounding_mode=...) is recorded in the second derivative of fmod and remainder
op("DivBackward2", lambda lib, a, b, g: grad_of(lib, lambda t: a % t, b, g),
   args=((3, 4), (4,), (3, 4)), domain=(None, POS, None), corners=(1.0, -1.0, 0.0))
op("DivBackward2", lambda lib, a, b, g: grad_of(lib, lambda t: lib.fmod(a, t), b, g),
   args=((3, 4), (4,), (3, 4)), domain=(None, POS, None), corners=(1.0, -1.0, 0.0),
   tag="trunc")
op("NegBackward0", lambda lib, a: -a, dtypes=WITH_INT, inplace=lambda lib, a: a.neg_(),
   inplace_method="neg_", out=lambda lib, a, out: lib.neg(a, out=out), out_function="neg")
op("NotImplemented", lambda lib, a: a // 2, backward=False, corners=(2.0, -2.0, 0.0))
op("PowBackward0", lambda lib, a: a ** 3, corners=(0.0,),
   inplace=lambda lib, a: a.pow_(3), inplace_method="pow_",
   out=lambda lib, a, out: lib.pow(a, 3, out=out), out_function="pow")
op("PowBackward0", lambda lib, a: a ** 0.5, domain=POS, tag="half")
op("PowBackward0", lambda lib, a: a ** 0, corners=(0.0,), tag="zero")
op("PowBackward0", lambda lib, a: a ** -2, domain=POS, tag="negative")
op("PowBackward1", lambda lib, a, b: a ** b, args=BCAST, domain=(POS, None),
   corners=(0.0, 1.0), corner_arg=1,
   out=lambda lib, a, b, out: lib.pow(a, b, out=out), out_function="pow")
op("PowBackward1", lambda lib, a, b: a ** b, args=(with_corners((3, 4), (0.0, 0.0, 0.0)),
                                                   with_corners((4,), (2.0, 0.0, -1.0))),
   tag="zero_base")
op("PowBackward2", lambda lib, b: 2.0 ** b, corners=(0.0,))
op("PowBackward2", lambda lib, b: 0.0 ** b, domain=POS, corners=(0.0, 1.0), tag="zero_base")
op("FmodBackward0", lambda lib, a: lib.fmod(a, 1.5), corners=(1.5, -1.5, 3.0),
   out=lambda lib, a, out: lib.fmod(a, 1.5, out=out), out_function="fmod")
op("FmodBackward1", lambda lib, a, b: lib.fmod(a, b), args=BCAST, domain=(None, POS),
   corners=(0.0,))
op("RemainderBackward0", lambda lib, a: a % 1.5, corners=(1.5, -1.5, 3.0, 0.0),
   out=lambda lib, a, out: lib.remainder(a, 1.5, out=out), out_function="remainder")
op("RemainderBackward1", lambda lib, a, b: a % b, args=BCAST, domain=(None, POS),
   corners=(0.0,))
op("Atan2Backward0", lambda lib, a, b: lib.atan2(a, b), args=BCAST,
   out=lambda lib, a, b, out: lib.atan2(a, b, out=out), out_function="atan2")
op("LerpBackward0", lambda lib, a, b: lib.lerp(a, b, 0.3), args=BCAST,
   inplace=lambda lib, a, b: a.lerp_(b, 0.3), inplace_method="lerp_",
   out=lambda lib, a, b, out: lib.lerp(a, b, 0.3, out=out), out_function="lerp")
op("LerpBackward1", lambda lib, a, b, w: lib.lerp(a, b, w), args=((3, 4), (4,), (3, 1)),
   inplace=lambda lib, a, b, w: a.lerp_(b, w), inplace_method="lerp_")
op("AddcmulBackward0", lambda lib, a, b, c: a.addcmul(b, c, value=0.5),
   args=((3, 4), (4,), (3, 1)), inplace=lambda lib, a, b, c: a.addcmul_(b, c, value=0.5),
   out=lambda lib, a, b, c, out: lib.addcmul(a, b, c, value=0.5, out=out),
   out_function="addcmul")
op("AddcdivBackward0", lambda lib, a, b, c: a.addcdiv(b, c, value=-2),
   args=((3, 4), (4,), (3, 1)), domain=(None, None, POS),
   inplace=lambda lib, a, b, c: a.addcdiv_(b, c, value=-2),
   out=lambda lib, a, b, c, out: lib.addcdiv(a, b, c, value=-2, out=out),
   out_function="addcdiv")

# selection.py
TIES = (0.0, 1.0, -1.0)
op("MaximumBackward0", lambda lib, a, b: lib.maximum(a, b), corners=TIES,
   args=((3, 4), with_corners((4,), TIES)), dtypes=WITH_INT,
   out=lambda lib, a, b, out: lib.maximum(a, b, out=out), out_function="maximum")
op("MinimumBackward0", lambda lib, a, b: lib.minimum(a, b), corners=TIES,
   args=((3, 4), with_corners((4,), TIES)), dtypes=WITH_INT,
   out=lambda lib, a, b, out: lib.minimum(a, b, out=out), out_function="minimum")
op("ClampBackward1", lambda lib, a: a.clamp(-1, 2), dtypes=WITH_INT, tag="int_bounds",
   inplace=lambda lib, a: a.clamp_(-1, 2))
op("ClampBackward1", lambda lib, a: a.clamp(-0.5, 0.5), corners=(-0.5, 0.5, 0.0),
   inplace=lambda lib, a: a.clamp_(-0.5, 0.5),
   out=lambda lib, a, out: lib.clamp(a, -0.5, 0.5, out=out), out_function="clamp")
op("ClampMinBackward0", lambda lib, a: a.clamp_min(0.5), corners=(0.5,),
   inplace=lambda lib, a: a.clamp_min_(0.5), inplace_method="clamp_min_")
op("ClampMaxBackward0", lambda lib, a: a.clamp_max(0.5), corners=(0.5,),
   inplace=lambda lib, a: a.clamp_max_(0.5), inplace_method="clamp_max_")
op("ClampBackward0", lambda lib, a, lo, hi: a.clamp(lo, hi), corners=(-0.5, 0.5, 0.0),
   args=((3, 4), with_corners((4,), (-0.5, -0.5), (-1.0, -0.5)),
         with_corners((3, 1), (0.5,), (0.5, 1.0))),
   inplace=lambda lib, a, lo, hi: a.clamp_(lo, hi))
op("ClampBackward0", lambda lib, a, lo: a.clamp(min=lo), corners=(0.5,),
   args=((3, 4), with_corners((4,), (0.5,))), tag="min_only")
op("MaskedFillBackward0", lambda lib, a: a.masked_fill(a > 0.5, -1.0), corners=(0.5,),
   dtypes=WITH_INT, inplace=lambda lib, a: a.masked_fill_(a > 0.5, -1.0))
op("MaskedFillBackward1", lambda lib, a, v: a.masked_fill(a > 0.5, v), args=((3, 4), ()),
   inplace=lambda lib, a, v: a.masked_fill_(a > 0.5, v))
op("WhereBackward0", lambda lib, a, b: lib.where(a > 0, a, b), args=BCAST, corners=(0.0,),
   dtypes=WITH_INT, out=lambda lib, a, b, out: lib.where(a > 0, a, b, out=out),
   out_function="where")
