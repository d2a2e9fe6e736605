"""Registry entries of the one-input math ops (``minigrad/ops/pointwise.py``): exp, log,
trigonometry, rounding, casts and copies. Corners: 0 and -0 where a formula branches on the
sign, whole numbers and halves for rounding, nan and infinities for nan_to_num."""

import numpy as np

from . import WITH_INT, base, op, unary

POSITIVE = (0.1, 3.0)
UNIT = (-0.9, 0.9)
HALVES = (0.5, 1.5, -0.5, -2.5, 2.0, -1.0, 0.0)

unary("ExpBackward0", "exp", corners=(0.0,))
unary("LogBackward0", "log", domain=POSITIVE, corners=(1.0,))
unary("Log2Backward0", "log2", domain=POSITIVE, corners=(1.0,))
unary("Log10Backward0", "log10", domain=POSITIVE, corners=(1.0,))
unary("Log1PBackward0", "log1p", domain=(-0.9, 3.0), corners=(0.0,))
unary("Expm1Backward0", "expm1", corners=(0.0,))
unary("SqrtBackward0", "sqrt", domain=POSITIVE, corners=(1.0,))
unary("RsqrtBackward0", "rsqrt", domain=POSITIVE, corners=(1.0,))
unary("ReciprocalBackward0", "reciprocal", domain=POSITIVE, corners=(1.0, -1.0, -0.5))
unary("SinBackward0", "sin", corners=(0.0, np.pi / 2))
unary("CosBackward0", "cos", corners=(0.0, np.pi / 2))
unary("SinhBackward0", "sinh", corners=(0.0,))
unary("CoshBackward0", "cosh", corners=(0.0,))
unary("TanhBackward0", "tanh", corners=(0.0, 20.0, -20.0))
unary("SigmoidBackward0", "sigmoid", corners=(0.0, 40.0, -40.0))
unary("AsinBackward0", "asin", domain=UNIT, corners=(0.0,))
unary("AcosBackward0", "acos", domain=UNIT, corners=(0.0,))
unary("AtanBackward0", "atan", corners=(0.0,))
unary("ErfBackward0", "erf", corners=(0.0,))
unary("AbsBackward0", "abs", corners=(0.0, -0.0), dtypes=WITH_INT)
unary("SignBackward0", "sign", corners=(0.0, -0.0, float("nan")), dtypes=WITH_INT)
unary("FloorBackward0", "floor", corners=HALVES, dtypes=WITH_INT)
unary("CeilBackward0", "ceil", corners=HALVES, dtypes=WITH_INT)
unary("TruncBackward0", "trunc", corners=HALVES, dtypes=WITH_INT)
unary("RoundBackward0", "round", corners=HALVES, dtypes=WITH_INT)
op("RoundBackward1", lambda lib, x: x.round(decimals=1), corners=(0.25, 0.35, -0.05, 1.0),
   inplace=lambda lib, x: x.round_(decimals=1), inplace_method="round_",
   out=lambda lib, x, out: lib.round(x, decimals=1, out=out), out_function="round")
unary("FracBackward0", "frac", corners=(0.0, 1.0, -1.0, 2.5, -2.5))
unary("NanToNumBackward0", "nan_to_num",
      corners=(float("nan"), float("inf"), -float("inf"), 0.0))
op("NanToNumBackward0", lambda lib, x: x.nan_to_num(nan=1.5, posinf=2.0, neginf=-3.0),
   corners=(float("nan"), float("inf"), -float("inf")), tag="numbers")
op("CloneBackward0", lambda lib, x: x.clone(), dtypes=WITH_INT)
op("ToCopyBackward0", lambda lib, x: x.to(lib.float64 if x.dtype == lib.float32 else lib.float32))
op("ToCopyBackward0", lambda lib, x: x.float(), tag="float")
op("BernoulliBackward0", lambda lib, p: lib.bernoulli(p),
   args=(lambda rng, dtype: rng.integers(0, 2, (3, 4)).astype(dtype),))

base("ZeroGradient", "the base of the ops whose gradient is 0 (floor, sign, bernoulli, ...)")
# logit: the formula changes at the clamp bounds (eps, 1 - eps) and leaves [0, 1] without eps
op("LogitBackward0", lambda lib, x: lib.logit(x), domain=(0.05, 0.95), corners=(0.5, 0.25),
   inplace=lambda lib, x: x.logit_(), inplace_method="logit_",
   out=lambda lib, x, out: lib.logit(x, out=out), out_function="logit")
op("LogitBackward0", lambda lib, x: lib.logit(x, eps=0.1), domain=(-0.2, 1.2),
   corners=(0.1, 0.9, 0.05, 0.95, 0.5), tag="eps",
   inplace=lambda lib, x: x.logit_(eps=0.1), inplace_method="logit_")

# 0-dim inputs: numpy hands back scalars there, the ops must give 0-dim tensors
op("ExpBackward0", lambda lib, x: x.exp(), args=((),), tag="0dim")
op("TanhBackward0", lambda lib, x: x.tanh(), args=((),), tag="0dim")
op("AbsBackward0", lambda lib, x: x.abs(), args=((),), corners=(0.0,), tag="0dim")
