"""Registry entries of the shape ops (``minigrad/ops/shape.py``): views, reshapes,
(un)squeeze, expand, permute, transpose, cat and stack."""

from . import WITH_INT, op

op("ViewBackward0", lambda lib, x: x.view(4, 3), dtypes=WITH_INT)
op("ViewBackward0", lambda lib, x: x.reshape(-1), tag="reshape")
op("ViewBackward0", lambda lib, x: x.repeat_interleave(2, dim=0), tag="repeat_interleave")
op("UnsafeViewBackward0", lambda lib, x: x.t().reshape(12))
op("SqueezeBackward0", lambda lib, x: x.squeeze(), args=((3, 1, 4),), dtypes=WITH_INT)
op("SqueezeBackward1", lambda lib, x: x.squeeze(1), args=((3, 1, 4),))
op("UnsqueezeBackward0", lambda lib, x: x.unsqueeze(1), dtypes=WITH_INT)
op("UnsqueezeBackward0", lambda lib, x: x[:, None], tag="index_none")
op("ExpandBackward0", lambda lib, x: x.expand(2, 3, 4), args=((3, 1),), dtypes=WITH_INT)
op("PermuteBackward0", lambda lib, x: x.permute(2, 0, 1), args=((2, 3, 4),), dtypes=WITH_INT)
op("TBackward0", lambda lib, x: x.t(), dtypes=WITH_INT)
op("TransposeBackward0", lambda lib, x: x.transpose(0, 2), args=((2, 3, 4),))
op("CatBackward0", lambda lib, a, b: lib.cat([a, b], 1), args=((3, 4), (3, 2)),
   dtypes=WITH_INT, out=lambda lib, a, b, out: lib.cat([a, b], 1, out=out),
   out_function="cat")
op("StackBackward0", lambda lib, a, b: lib.stack([a, b], 1), args=((3, 4), (3, 4)),
   dtypes=WITH_INT, out=lambda lib, a, b, out: lib.stack([a, b], 1, out=out),
   out_function="stack")
