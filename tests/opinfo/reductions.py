"""Registry entries of the reductions (``minigrad/ops/reductions.py``), softmax and
logsumexp (``softmax.py``) and the ops that pick by position (``sorting.py``). Corners:
ties of max/min/amax (the gradient is shared or goes to one), zeros of prod and cumprod
(one zero, two zeros), a zero vector of norm."""

from . import WITH_INT, op

TIE = (5.0, 5.0)
LOW_TIE = (-5.0, -5.0)

op("SumBackward0", lambda lib, x: x.sum(), dtypes=WITH_INT)
op("SumBackward1", lambda lib, x: x.sum(1), dtypes=WITH_INT,
   out=lambda lib, x, out: lib.sum(x, 1, out=out), out_function="sum")
op("SumBackward1", lambda lib, x: x.sum((0, 2), keepdim=True), args=((2, 3, 4),), tag="dims")
op("MeanBackward0", lambda lib, x: x.mean())
op("MeanBackward1", lambda lib, x: x.mean(1, keepdim=True),
   out=lambda lib, x, out: lib.mean(x, 1, keepdim=True, out=out), out_function="mean")
op("ProdBackward0", lambda lib, x: x.prod(), corners=(0.0,))
op("ProdBackward0", lambda lib, x: x.prod(), corners=(0.0, 0.0), tag="two_zeros")
op("ProdBackward0", lambda lib, x: x.prod(), tag="no_zero", dtypes=WITH_INT)
op("ProdBackward1", lambda lib, x: x.prod(1), corners=(0.0, 1.0, 0.0, 2.0, 0.0),
   out=lambda lib, x, out: lib.prod(x, 1, out=out), out_function="prod")
op("AmaxBackward0", lambda lib, x: x.amax(1), corners=TIE, dtypes=WITH_INT,
   out=lambda lib, x, out: lib.amax(x, 1, out=out), out_function="amax")
op("AmaxBackward0", lambda lib, x: x.amax(), corners=TIE, tag="all")
op("AminBackward0", lambda lib, x: x.amin((0, 1)), corners=LOW_TIE,
   out=lambda lib, x, out: lib.amin(x, (0, 1), out=out), out_function="amin")
op("MaxBackward1", lambda lib, x: x.max(), corners=TIE, dtypes=WITH_INT)
op("MinBackward1", lambda lib, x: x.min(), corners=LOW_TIE, dtypes=WITH_INT)
op("CumsumBackward0", lambda lib, x: x.cumsum(1), dtypes=WITH_INT,
   out=lambda lib, x, out: lib.cumsum(x, 1, out=out), out_function="cumsum")
op("CumprodBackward0", lambda lib, x: x.cumprod(1), corners=(0.0, 1.0, 2.0, 3.0, 0.0, 0.0),
   out=lambda lib, x, out: lib.cumprod(x, 1, out=out), out_function="cumprod")
op("CumprodBackward0", lambda lib, x: x.cumprod(0), tag="no_zero")
op("LinalgVectorNormBackward0", lambda lib, x: x.norm(), corners=(0.0,))
op("LinalgVectorNormBackward0", lambda lib, x: x.norm(p=3, dim=1),
   corners=(0.0, 0.0, 0.0, 0.0), tag="p3_zero_row")
op("LinalgVectorNormBackward0", lambda lib, x: x.norm(p=1, dim=0), corners=(0.0,), tag="p1")
op("VarBackward0", lambda lib, x: x.var(1), corners=(1.0, 1.0, 1.0, 1.0))
op("VarBackward0", lambda lib, x: x.var(correction=0), tag="all")
op("StdBackward0", lambda lib, x: x.std(1))
op("StdBackward0", lambda lib, x: x.std(), tag="all")
# var_mean and std_mean: the same nodes, renamed as PyTorch's when the call runs
op("VarBackward0", lambda lib, x: lib.var_mean(x, 1)[0], tag="var_mean",
   torch_node="VarMeanBackward0")
op("StdBackward0", lambda lib, x: lib.std_mean(x, 0)[0] * 2, tag="std_mean",
   torch_node="StdMeanBackward0")

# softmax.py
op("SoftmaxBackward0", lambda lib, x: x.softmax(1), corners=(0.0, 0.0))
op("LogSoftmaxBackward0", lambda lib, x: x.log_softmax(0), corners=(30.0, -30.0))
op("LogsumexpBackward0", lambda lib, x: x.logsumexp(1), corners=(30.0,),
   out=lambda lib, x, out: lib.logsumexp(x, 1, out=out), out_function="logsumexp")

# sorting.py
op("MaxBackward0", lambda lib, x: x.max(1).values, distinct=True, dtypes=WITH_INT)
op("MaxBackward0", lambda lib, x: x.max(1).values, corners=TIE, tag="tie")
op("MinBackward0", lambda lib, x: x.min(0, keepdim=True).values, distinct=True)
op("MedianBackward0", lambda lib, x: x.median(), distinct=True, dtypes=WITH_INT)
op("MedianBackward1", lambda lib, x: x.median(1).values, distinct=True)
op("SortBackward0", lambda lib, x: x.sort(1, descending=True).values, distinct=True,
   dtypes=WITH_INT)
op("SortBackward1", lambda lib, x: x.sort(dim=1, stable=True).values, corners=(1.0, 1.0))
op("TopkBackward0", lambda lib, x: x.topk(2, 1).values, distinct=True, dtypes=WITH_INT)
op("TopkBackward0", lambda lib, x: x.topk(2, 0, largest=False).values, distinct=True,
   tag="smallest")
op("SumBackward1", lambda lib, x: x.sum(0), args=((),), tag="0dim")
op("MeanBackward1", lambda lib, x: x.mean(0), args=((0, 3),), tag="empty")
