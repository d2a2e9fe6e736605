"""The local derivative of every op: one ``Node`` subclass per op (chapters 3 and 5).

Each node gets the gradient of its op's output as a numpy array and returns one gradient
per input (``None`` where that input needs none). Names follow PyTorch's ``grad_fn``
names, so ``(x * y).grad_fn`` prints ``<MulBackward0>`` in both. Numpy only: no Tensor.
"""

import numpy as np

from .graph import Node, unbroadcast
# made by Tensor's in-place changes of views, with ViewCopySlices below
from .ops.indexing import AsStridedBackward0, _view_at  # noqa: F401


def _zero_safe_log(base, exponent):
    """log(base) where it matters for d(base**exponent)/d(exponent); 0 where base == 0 and
    exponent >= 0 (the derivative there is 0, as PyTorch defines it, not nan)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log(base)
    return np.where((base == 0) & (exponent >= 0), 0.0, log)


def sign(a):
    """-1, 0 or 1 in ``a``'s dtype, and 0 for nan, as PyTorch's sgn (numpy's sign says nan):
    the slope of |a| and the gradient of the 1-norm are 0 at a nan."""
    return np.subtract(a > 0, a < 0, dtype=a.dtype)


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def keep_where(mask, grad):
    """``grad`` where ``mask`` holds and +0 elsewhere, as PyTorch's masks give it: even an
    inf or nan gradient becomes 0 where the mask is False (``grad * mask`` would turn
    inf * 0 into nan, and a negative gradient into -0)."""
    return _and_bits(grad, mask, keep=True)


def zero_where(mask, grad):
    """``grad`` with +0 where ``mask`` holds (``masked_fill(mask, 0)``), whatever it was."""
    return _and_bits(grad, mask, keep=False)


def _and_bits(grad, mask, keep):
    """``np.where(mask, grad, 0)`` says the same, but takes 2.5 times as long as
    ``grad * mask``, and ReLU's backward runs on every step of training. Instead, each
    mask element becomes an integer of the gradient's size, all ones (the float kept as it
    is) or 0 (+0), ANDed with the gradient's bits: 1.4 times the product's time."""
    if grad.size <= 4096 or grad.dtype.kind != "f" or mask.shape != grad.shape:
        # below about 4096 elements np.where's one call beats the four of the bit trick
        return np.where(mask if keep else ~mask, grad, np.zeros((), grad.dtype))
    bits = _SAME_SIZE_INT[grad.itemsize]
    ones = mask.view(np.int8).astype(bits)  # 1 where the mask holds, else 0
    if keep:
        np.negative(ones, out=ones)  # 1 -> -1: all bits set
    else:
        ones -= 1  # 0 -> -1: all bits set, 1 -> 0
    ones &= grad.view(bits)
    return ones.view(grad.dtype)


# ------------------------------------------------------------------ elementwise, two inputs

class AddBackward0(Node):
    __slots__ = ("shapes",)

    def __init__(self, inputs, shape_a, shape_b):
        super().__init__(inputs)
        self.shapes = (shape_a, shape_b)

    def apply(self, grad):
        a, b = self.inputs
        shape_a, shape_b = self.shapes
        return (unbroadcast(grad, shape_a) if a is not None else None,
                unbroadcast(grad, shape_b) if b is not None else None)


class SubBackward0(AddBackward0):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.inputs
        shape_a, shape_b = self.shapes
        return (unbroadcast(grad, shape_a) if a is not None else None,
                unbroadcast(-grad, shape_b) if b is not None else None)


class MulBackward0(Node):
    """d(a*b) = b da + a db: each operand is saved only if the other one needs a gradient."""
    __slots__ = ("shapes",)

    def __init__(self, inputs, a, b):
        super().__init__(inputs, (a if inputs[1] is not None else None,
                                  b if inputs[0] is not None else None))
        self.shapes = (np.shape(a), np.shape(b))

    def apply(self, grad):
        a, b = self.saved_arrays()
        return (unbroadcast(grad * b, self.shapes[0]) if b is not None else None,
                unbroadcast(grad * a, self.shapes[1]) if a is not None else None)


class DivBackward0(Node):
    """d(a/b) = da / b - a db / b²: ``b`` is always needed, ``a`` only for db."""
    __slots__ = ("shapes",)

    def __init__(self, inputs, a, b):
        super().__init__(inputs, (a if inputs[1] is not None else None, b))
        self.shapes = (np.shape(a), np.shape(b))

    def apply(self, grad):
        a, b = self.saved_arrays()
        grad_a = grad_b = None
        if self.inputs[0] is not None:
            grad_a = unbroadcast(grad / b, self.shapes[0])
        if self.inputs[1] is not None:
            # (a / b) / b, not a / (b * b): b * b underflows to 0 for |b| < 1e-19 (float32)
            grad_b = unbroadcast(-grad * (a / b / b), self.shapes[1])
        return grad_a, grad_b


class PowBackward1(Node):
    """a ** b with both tensors."""
    __slots__ = ()

    def apply(self, grad):
        a, b, out = self.saved_arrays()
        grad_a = grad_b = None
        if self.inputs[0] is not None:
            # 0 where b == 0, even for an infinite gradient (PyTorch's where, not a product)
            local = b * a ** np.where(b == 0, 1, b - 1)
            grad_a = unbroadcast(np.where(b == 0, np.zeros((), a.dtype), grad * local), a.shape)
        if self.inputs[1] is not None:
            grad_b = unbroadcast(grad * out * _zero_safe_log(a, b), b.shape)
        return grad_a, grad_b


def _winner_grads(node, grad, a_wins, b_wins, tie):
    """The gradients of maximum/minimum, as PyTorch computes them: an operand gets the whole
    gradient unless the other one wins, half of it where they tie; where neither wins nor
    ties (a nan on either side) both get it. A losing side gets 0, even for an inf grad."""
    a, b = node.saved_arrays()
    half = np.where(tie, grad / 2, grad)
    return (unbroadcast(keep_where(~b_wins, half), a.shape) if node.inputs[0] is not None else None,
            unbroadcast(keep_where(~a_wins, half), b.shape) if node.inputs[1] is not None else None)


class MaximumBackward0(Node):
    """Where a and b tie, each gets half the gradient (as PyTorch does)."""
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        return _winner_grads(self, grad, a > b, a < b, a == b)


class MinimumBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        return _winner_grads(self, grad, a < b, a > b, a == b)


class MaskedFillBackward0(Node):
    """x.masked_fill(mask, value): the gradient goes to x where the mask is False; a 0-dim
    tensor ``value`` (MaskedFillBackward1) gets the sum of the gradient where it is True."""
    __slots__ = ("shape",)

    def __init__(self, inputs, mask, shape):
        super().__init__(inputs, (mask,))
        self.shape = shape

    def apply(self, grad):
        (mask,) = self.saved_arrays()
        zero = np.zeros((), dtype=grad.dtype)
        grad_input = (unbroadcast(np.where(mask, zero, grad), self.shape)
                      if self.inputs[0] is not None else None)
        if len(self.inputs) == 1:
            return (grad_input,)
        grad_value = (np.where(mask, grad, zero).sum(dtype=grad.dtype)
                      if self.inputs[1] is not None else None)
        return grad_input, grad_value


MaskedFillBackward1 = type("MaskedFillBackward1", (MaskedFillBackward0,), {"__slots__": ()})


class WhereBackward0(Node):
    """where(cond, a, b): the gradient goes to a where cond holds, to b elsewhere."""
    __slots__ = ("shapes",)

    def __init__(self, inputs, condition, shape_a, shape_b):
        super().__init__(inputs, (condition,))
        self.shapes = (shape_a, shape_b)

    def apply(self, grad):
        (condition,) = self.saved_arrays()
        zero = np.zeros((), dtype=grad.dtype)
        return (unbroadcast(np.where(condition, grad, zero), self.shapes[0])
                if self.inputs[0] is not None else None,
                unbroadcast(np.where(condition, zero, grad), self.shapes[1])
                if self.inputs[1] is not None else None)


# ------------------------------------------------------------------ elementwise, one input

class NegBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        return (-grad,)


class RsubBackward1(Node):
    """scalar - a."""
    __slots__ = ()

    def apply(self, grad):
        return (-grad,)


class PowBackward0(Node):
    """a ** exponent for a number exponent: exponent * a ** (exponent - 1)."""
    __slots__ = ("exponent",)

    def __init__(self, inputs, a, exponent):
        super().__init__(inputs, (a,))
        self.exponent = exponent

    def apply(self, grad):
        (a,) = self.saved_arrays()
        e = self.exponent
        if e == 0:
            return (np.zeros_like(grad),)
        if e == 2:
            return (grad * 2 * a,)
        return (grad * e * a ** (e - 1),)


class PowBackward2(Node):
    """number ** b: out * log(number)."""
    __slots__ = ("base",)

    def __init__(self, inputs, base, exponent, out):
        super().__init__(inputs, (exponent, out))
        self.base = base

    def apply(self, grad):
        exponent, out = self.saved_arrays()
        return (grad * out * _zero_safe_log(np.asarray(self.base, dtype=out.dtype), exponent),)


class ExpBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (grad * out,)


class LogBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (a,) = self.saved_arrays()
        return (grad / a,)


class SqrtBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (grad / (2 * out),)


class ReciprocalBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (-grad * (out * out),)  # as PyTorch groups it: inf * (tiny² = 0) is nan


class AbsBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (a,) = self.saved_arrays()
        return (grad * sign(a),)


class SinBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (a,) = self.saved_arrays()
        return (grad * np.cos(a),)


class CosBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (a,) = self.saved_arrays()
        return (-grad * np.sin(a),)


class TanhBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (grad * (1 - out * out),)


class SigmoidBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (grad * out * (1 - out),)


class ReluBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (zero_where(out <= 0, grad),)  # PyTorch's threshold_backward: nan passes


class LeakyReluBackward0(Node):
    """leaky_relu(a): the gradient passes where a > 0 and is scaled by the slope elsewhere."""
    __slots__ = ("slope",)

    def __init__(self, inputs, a, slope):
        super().__init__(inputs, (a,))
        self.slope = slope

    def apply(self, grad):
        (a,) = self.saved_arrays()
        return (np.where(a > 0, grad, grad * self.slope),)


class LeakyReluBackward1(LeakyReluBackward0):
    """leaky_relu in place: as LeakyReluBackward0, but read from the result (slope >= 0 only)."""
    __slots__ = ()

    def apply(self, grad):
        # PyTorch keeps only the result, whose sign a negative slope flips: it refuses then.
        if self.slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead "
                "(F.leaky_relu(x, slope) or nn.LeakyReLU(slope) without inplace=True).")
        return super().apply(grad)


class ClampBackward1(Node):
    """clamp with number bounds: the gradient passes where min <= a <= max, and is 0 where a
    was clamped (or is nan)."""
    __slots__ = ("bounds",)

    def __init__(self, inputs, a, low, high):
        super().__init__(inputs, (a,))
        self.bounds = (low, high)

    def apply(self, grad):
        (a,) = self.saved_arrays()
        low, high = self.bounds
        if high is None:
            inside = a >= low
        elif low is None:
            inside = a <= high
        else:
            inside = (a >= low) & (a <= high)
        return (keep_where(inside, grad),)


ClampMinBackward0 = type("ClampMinBackward0", (ClampBackward1,), {"__slots__": ()})
ClampMaxBackward0 = type("ClampMaxBackward0", (ClampBackward1,), {"__slots__": ()})


class ClampBackward0(Node):
    """clamp with tensor bounds (inputs: a, min, max; a missing bound is None): a gets the
    gradient where min <= a <= max, min where a < min (unless min >= max), max where a > max
    or max < min (then max wins everywhere), as PyTorch decides ties and crossed bounds."""
    __slots__ = ()

    def apply(self, grad):
        a, low, high = self.saved_arrays()
        gets = [True, None, None]  # where a, min and max get the gradient
        if low is not None:
            gets[0] = a >= low
            gets[1] = a < low if high is None else (a < low) & (low < high)
        if high is not None:
            gets[0] = gets[0] & (a <= high)
            gets[2] = a > high if low is None else (a > high) | (high < low)
        return tuple(None if node is None else
                     unbroadcast(keep_where(np.broadcast_to(mask, grad.shape), grad), array.shape)
                     for node, mask, array in zip(self.inputs, gets, (a, low, high)))


class ToCopyBackward0(Node):
    """A dtype conversion: the gradient goes back in the input's dtype."""
    __slots__ = ("dtype",)

    def __init__(self, inputs, dtype):
        super().__init__(inputs)
        self.dtype = dtype

    def apply(self, grad):
        return (grad.astype(self.dtype, copy=False),)


class CloneBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        return (grad,)


class RemainderBackward0(Node):
    """a % number = a - floor(a / number) * number: the gradient passes unchanged."""
    __slots__ = ()

    def apply(self, grad):
        return (grad,)


class RemainderBackward1(Node):
    """a % b for tensors, a - (a // b) * b: da = grad, db = -(a // b) grad."""
    __slots__ = ("shapes",)

    def __init__(self, inputs, a, b):
        super().__init__(inputs, (a, b) if inputs[1] is not None else ())
        self.shapes = (np.shape(a), np.shape(b))

    def apply(self, grad):
        grad_a = unbroadcast(grad, self.shapes[0]) if self.inputs[0] is not None else None
        if self.inputs[1] is None:
            return grad_a, None
        a, b = self.saved_arrays()
        # floor_divide, not floor(a / b): as PyTorch's floor division, 1 // -inf is -1
        return grad_a, unbroadcast(-np.floor_divide(a, b) * grad, self.shapes[1])


class NoDerivative(Node):
    """The node of an op that has no derivative (``x // 2``, ``2 % x``): the result requires
    grad like any other, but backward through it refuses, as in PyTorch, where this node is
    called ``NotImplemented`` (a Python builtin's name, so only its printed name here)."""
    __slots__ = ("op",)

    def __init__(self, inputs, op):
        super().__init__(inputs)
        self.op = op

    def apply(self, grad):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented: {self.op} "
                           "has no useful gradient (it is flat almost everywhere). Compute it "
                           "on .detach()ed values, or under minigrad.no_grad().")


NoDerivative.__name__ = NoDerivative.__qualname__ = "NotImplemented"


class FillBackward0(Node):
    """After fill_/zero_ the value no longer depends on what was there: gradient 0."""
    __slots__ = ()

    def apply(self, grad):
        return (np.zeros_like(grad),)


ZeroBackward0 = type("ZeroBackward0", (FillBackward0,), {"__slots__": ()})
# sign is flat wherever it has a slope at all: its gradient is 0 (PyTorch records it too)
SignBackward0 = type("SignBackward0", (FillBackward0,), {"__slots__": ()})
# PyTorch's name for t.fill_(number); FillBackward0 is the out-of-place torch.fill's.
FillBackward2 = type("FillBackward2", (FillBackward0,), {"__slots__": ()})


class FillBackward3(Node):
    """t.fill_(value) with a 0-dim tensor ``value``: t's old values get gradient 0 and
    ``value``, which is now in every element, the sum of the gradient."""
    __slots__ = ("dtype",)

    def __init__(self, inputs, dtype):
        super().__init__(inputs)
        self.dtype = dtype

    def apply(self, grad):
        grad_value = None
        if self.inputs[1] is not None:
            grad_value = np.asarray(grad.sum(), dtype=self.dtype)
        return np.zeros_like(grad), grad_value


class AddcmulBackward0(Node):
    """``t + value * t1 * t2`` (``addcmul``, and ``addcmul_`` in place)."""
    __slots__ = ("value", "shapes")

    def __init__(self, inputs, t1, t2, value, shapes):
        super().__init__(inputs, (t1, t2))
        self.value, self.shapes = value, shapes

    def apply(self, grad):
        t1, t2 = self.saved_arrays()
        s, a, b = self.inputs
        return (unbroadcast(grad, self.shapes[0]) if s is not None else None,
                unbroadcast(grad * t2 * self.value, self.shapes[1]) if a is not None else None,
                unbroadcast(grad * t1 * self.value, self.shapes[2]) if b is not None else None)


class AddcdivBackward0(AddcmulBackward0):
    """``t + value * t1 / t2`` (``addcdiv``, and ``addcdiv_`` in place)."""
    __slots__ = ()

    def apply(self, grad):
        t1, t2 = self.saved_arrays()
        s, a, b = self.inputs
        scaled = grad * self.value / t2
        return (unbroadcast(grad, self.shapes[0]) if s is not None else None,
                unbroadcast(scaled, self.shapes[1]) if a is not None else None,
                unbroadcast(-scaled * t1 / t2, self.shapes[2]) if b is not None else None)


class CopyBackwards(Node):
    """t.copy_(src): t's old values get gradient 0; ``src`` gets the gradient, summed over
    the dims it was broadcast along, in its own dtype."""
    __slots__ = ("src_shape", "src_dtype")

    def __init__(self, inputs, src_shape, src_dtype):
        super().__init__(inputs)
        self.src_shape, self.src_dtype = src_shape, src_dtype

    def apply(self, grad):
        grad_src = None
        if self.inputs[1] is not None:
            grad_src = unbroadcast(grad, self.src_shape).astype(self.src_dtype, copy=False)
        return np.zeros_like(grad), grad_src


# ------------------------------------------------------------------ reductions

class SumBackward0(Node):
    """sum of every element: each element gets the whole gradient."""
    __slots__ = ("shape",)

    def __init__(self, inputs, shape):
        super().__init__(inputs)
        self.shape = shape

    def apply(self, grad):
        return (np.broadcast_to(grad, self.shape),)


class SumBackward1(Node):
    """sum over ``dims``: put the reduced axes back, then spread along them."""
    __slots__ = ("shape", "dims", "keepdim")

    def __init__(self, inputs, shape, dims, keepdim):
        super().__init__(inputs)
        self.shape, self.dims, self.keepdim = shape, dims, keepdim

    def apply(self, grad):
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dims)
        return (np.broadcast_to(grad, self.shape),)


class MeanBackward0(SumBackward0):
    __slots__ = ()

    def apply(self, grad):
        count = max(int(np.prod(self.shape)), 1)
        return (np.broadcast_to(grad / count, self.shape),)


class MeanBackward1(SumBackward1):
    __slots__ = ()

    def apply(self, grad):
        count = max(int(np.prod([self.shape[d] for d in self.dims])), 1)
        (spread,) = super().apply(grad / count)
        return (spread,)


class VarBackward0(Node):
    """var over ``dims``: d/dx of sum((x - mean)^2) / (N - correction)."""
    __slots__ = ("dims", "keepdim", "divisor")

    def __init__(self, inputs, centered, dims, keepdim, divisor):
        super().__init__(inputs, (centered,))
        self.dims, self.keepdim, self.divisor = dims, keepdim, divisor

    def apply(self, grad):
        (centered,) = self.saved_arrays()
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dims)
        return (grad * 2 * centered / self.divisor,)


class StdBackward0(VarBackward0):
    """std = sqrt(var): the var gradient divided by 2 * std."""
    __slots__ = ()

    def __init__(self, inputs, centered, dims, keepdim, divisor, out):
        Node.__init__(self, inputs, (centered, out))
        self.dims, self.keepdim, self.divisor = dims, keepdim, divisor

    def apply(self, grad):
        centered, out = self.saved_arrays()
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dims)
            out = np.expand_dims(out, self.dims)
        # Where std is 0 (all values equal) PyTorch takes the gradient 0, not 0 / 0.
        grad_var = np.where(out == 0, np.zeros((), out.dtype), grad / out)
        return (grad_var * centered / self.divisor,)


class MaxBackward1(Node):
    """max() of all elements: ties share the gradient evenly (PyTorch's rule); a nan result
    came from the nan elements, which share it. The others get 0, whatever the gradient."""
    __slots__ = ()

    def apply(self, grad):
        a, out = self.saved_arrays()
        winners = np.isnan(a) if np.isnan(out) else a == out
        share = grad / np.count_nonzero(winners)
        return (np.where(winners, share, np.zeros((), share.dtype)),)


MinBackward1 = type("MinBackward1", (MaxBackward1,), {"__slots__": ()})


class MaxBackward0(Node):
    """max(dim): the gradient goes to the element each index points at."""
    __slots__ = ("shape", "dim", "keepdim")

    def __init__(self, inputs, indices, shape, dim, keepdim):
        super().__init__(inputs, (indices,))
        self.shape, self.dim, self.keepdim = shape, dim, keepdim

    def apply(self, grad):
        (indices,) = self.saved_arrays()
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
            indices = np.expand_dims(indices, self.dim)
        out = np.zeros(self.shape, dtype=grad.dtype)
        np.put_along_axis(out, indices, grad, axis=self.dim)
        return (out,)


MinBackward0 = type("MinBackward0", (MaxBackward0,), {"__slots__": ()})


class AmaxBackward0(Node):
    """amax over ``dims``: the gradient is shared evenly by the elements equal to the result
    (PyTorch's rule for ties; max(dim) instead gives it all to the one its index names)."""
    __slots__ = ("dims", "keepdim")

    def __init__(self, inputs, a, out, dims, keepdim):
        super().__init__(inputs, (a, out))
        self.dims, self.keepdim = dims, keepdim

    def apply(self, grad):
        a, out = self.saved_arrays()
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dims)
            out = np.expand_dims(out, self.dims)
        hits = a == out
        return (grad * hits / hits.sum(axis=self.dims, keepdims=True),)


AminBackward0 = type("AminBackward0", (AmaxBackward0,), {"__slots__": ()})


def _product_of_others(a, axis):
    """For each element of ``a``, the product of the other elements along ``axis``: the
    running product of those before it times that of those after it. No division, so it is
    right where ``a`` holds zeros (PyTorch's way, too)."""
    a = np.moveaxis(a, axis, -1)
    before, after = np.ones_like(a), np.ones_like(a)
    before[..., 1:] = np.cumprod(a[..., :-1], axis=-1)
    after[..., -2::-1] = np.cumprod(a[..., :0:-1], axis=-1)
    return np.moveaxis(before * after, -1, axis)


class ProdBackward0(Node):
    """prod of every element: each element gets the product of all the others."""
    __slots__ = ()

    def __init__(self, inputs, a, out):
        super().__init__(inputs, (a, out))

    def apply(self, grad):
        a, out = self.saved_arrays()
        if a.ndim == 0:  # the product is the element: gradient 1, also for inf (not inf / inf)
            return (grad,)
        zeros = np.count_nonzero(a == 0)
        if not zeros:
            return (grad * (out / a),)
        if zeros > 1:  # every product of the others holds a 0: PyTorch says 0, even next to inf
            return (np.zeros_like(a),)
        return (grad * _product_of_others(a.reshape(-1), 0).reshape(a.shape),)


class ProdBackward1(Node):
    """prod along ``dim``: each element gets the product of the others in its slice."""
    __slots__ = ("dim", "keepdim")

    def __init__(self, inputs, a, out, dim, keepdim):
        super().__init__(inputs, (a, out))
        self.dim, self.keepdim = dim, keepdim

    def apply(self, grad):
        a, out = self.saved_arrays()
        if a.ndim == 0:
            return (grad,)
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
            out = np.expand_dims(out, self.dim)
        if (a != 0).all():
            return (grad * (out / a),)
        return (grad * _product_of_others(a, self.dim),)


class CumsumBackward0(Node):
    """cumsum along ``dim``: element i gets the sum of the gradients of outputs i, i+1, ..."""
    __slots__ = ("dim",)

    def __init__(self, inputs, dim):
        super().__init__(inputs)
        self.dim = dim

    def apply(self, grad):
        if grad.ndim == 0:
            return (grad,)
        return (np.flip(running_sum(np.flip(grad, self.dim), self.dim), self.dim),)


def running_sum(a, axis):
    """``np.cumsum`` as PyTorch computes it: float32 adds up in float64 (float16 in float32),
    each sum then rounded, so a million 0.1s end at 100000.0 rather than drifting to 100958."""
    wider = _ACCUMULATOR.get(a.dtype)
    if wider is not None:
        return np.cumsum(a, axis=axis, dtype=wider).astype(a.dtype)
    return np.cumsum(a, axis=axis)


_ACCUMULATOR = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


class LinalgVectorNormBackward0(Node):
    """‖a‖_p: sign(a) |a|^(p-1) / ‖a‖^(p-1); p=2: a / ‖a‖; inf: the max |a| share; 0 at ‖a‖=0."""
    __slots__ = ("p", "dims", "keepdim")

    def __init__(self, inputs, a, out, p, dims, keepdim):
        super().__init__(inputs, (a, out))
        self.p, self.dims, self.keepdim = p, dims, keepdim

    def apply(self, grad):
        a, norm = self.saved_arrays()
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dims)
            norm = np.expand_dims(norm, self.dims)
        p = self.p
        if p == 1:
            return (sign(a) * grad,)
        if p == 2:
            return (grad * np.where(norm == 0, 0, a / norm),)
        if p == np.inf:
            winners = (np.abs(a) == norm) | np.isnan(a)
            return (sign(a) * (grad / winners.sum(axis=self.dims, keepdims=True) * winners),)
        if p < 1:  # |a|^(p-1) is infinite at 0: PyTorch takes 0 there
            scaled = np.sign(a) * np.where(a == 0, 0, np.abs(a) ** (p - 1))
            return (scaled * grad * norm ** (1 - p),)
        scaled = np.sign(a) * np.abs(a) ** (p - 1) if p < 2 else a * np.abs(a) ** (p - 2)
        return (scaled * np.where(norm == 0, 0, grad / norm ** (p - 1)),)


class SoftmaxBackward0(Node):
    __slots__ = ("dim",)

    def __init__(self, inputs, out, dim):
        super().__init__(inputs, (out,))
        self.dim = dim

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (out * (grad - (grad * out).sum(axis=self.dim, keepdims=True)),)


class LogSoftmaxBackward0(SoftmaxBackward0):
    __slots__ = ()

    def apply(self, grad):
        (out,) = self.saved_arrays()
        return (grad - np.exp(out) * grad.sum(axis=self.dim, keepdims=True),)


# ------------------------------------------------------------------ shapes

def _index_arrays(key):
    """The index arrays in an advanced ``key``: saved like any array, so changing an index
    tensor in place afterwards makes backward refuse (PyTorch saves the indices too)."""
    return tuple(k for k in key if isinstance(k, np.ndarray)) if type(key) is tuple else ()


class ViewCopySlices(Node):
    """The root's node after an in-place op on its view ``root[path]``: the viewed part's
    gradient goes to the op's result, the rest to the root as it was before."""
    __slots__ = ("path",)

    def __init__(self, inputs, path):
        super().__init__(inputs)
        self.path = path

    def name(self):
        return "CopySlices"

    def apply(self, grad):
        rest = grad.copy()
        _view_at(rest, self.path)[...] = 0
        return rest, _view_at(grad, self.path).copy()


class IndexPutBackward0(Node):
    """``t[key] = value`` on a tensor in the graph (``t[first][key]`` for an advanced index,
    as ``IndexBackward0``): the overwritten part of ``t`` gets no gradient, ``value`` gets the
    gradient of the part it filled."""
    __slots__ = ("key", "value_shape", "first")

    def __init__(self, inputs, key, value_shape, first=None):
        super().__init__(inputs, _index_arrays(key))
        self.key, self.value_shape, self.first = key, value_shape, first

    def apply(self, grad):
        self.saved_arrays()  # refuses once freed, as PyTorch does
        grad_self = grad_value = None
        if self.inputs[0] is not None:
            grad_self = np.array(grad)  # a copy, and an array when grad is 0-dim
            (grad_self if self.first is None else grad_self[self.first])[self.key] = 0
        if self.inputs[1] is not None:
            part = (grad if self.first is None else grad[self.first])[self.key]
            if part.ndim < len(self.value_shape):  # a value with extra leading dims of size 1
                part = part.reshape((1,) * (len(self.value_shape) - part.ndim) + part.shape)
            grad_value = unbroadcast(part, self.value_shape)
        return grad_self, grad_value


# PyTorch's name when the key is basic (ints and slices): the value is copied into a slice.
CopySlices = type("CopySlices", (IndexPutBackward0,), {"__slots__": ()})


# ------------------------------------------------------------------ matrix products

def _right_grad(a, grad, b):
    """``a.T @ grad``, the gradient of ``b`` in ``a @ b``, laid out in memory like ``b``: a
    weight used transposed (``w.T`` in linear) then gets a C-ordered gradient back, which
    ``.grad`` keeps without a reordering copy (for a 256 x 784 weight that copy took 200 µs,
    two thirds of the product itself)."""
    if not b.flags.c_contiguous:
        return (grad.T @ a).T
    return a.T @ grad


class MmBackward0(Node):
    """C = A @ B for matrices: dA = dC @ B.T, dB = A.T @ dC."""
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        return (grad @ b.T if self.inputs[0] is not None else None,
                _right_grad(a, grad, b) if self.inputs[1] is not None else None)


class DotBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        return (grad * b if self.inputs[0] is not None else None,
                grad * a if self.inputs[1] is not None else None)


class MvBackward0(Node):
    """y = A @ v: dA = outer(dy, v), dv = A.T @ dy."""
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        return (np.outer(grad, b) if self.inputs[0] is not None else None,
                a.T @ grad if self.inputs[1] is not None else None)


class MatmulBackward0(Node):
    """The general case (1-D operands, batches): promote to matrices, then as MmBackward0,
    summing over broadcast batch dimensions."""
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_arrays()
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g = grad
        if a.ndim == 1:
            g = np.expand_dims(g, -2)
        if b.ndim == 1:
            g = np.expand_dims(g, -1)
        grad_a = grad_b = None
        if self.inputs[0] is not None:
            grad_a = unbroadcast(g @ np.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if self.inputs[1] is not None:
            grad_b = unbroadcast(np.swapaxes(a2, -1, -2) @ g, b2.shape).reshape(b.shape)
        return grad_a, grad_b


class AddmmBackward0(Node):
    """``bias + x @ w_t`` in one node (PyTorch's addmm, behind nn.Linear), where ``w_t`` is
    the weight transposed: inputs (bias, x, w_t) in PyTorch's order. ``w_t`` is always kept
    (a view of the weight, no extra memory): its layout decides the weight gradient's."""
    __slots__ = ("bias_shape",)

    def __init__(self, inputs, x, w_t, bias_shape):
        super().__init__(inputs, (x if inputs[2] is not None else None, w_t))
        self.bias_shape = bias_shape

    def apply(self, grad):
        x, w_t = self.saved_arrays()
        b_node, x_node, w_node = self.inputs
        return (unbroadcast(grad.sum(axis=0), self.bias_shape) if b_node is not None else None,
                grad @ w_t.T if x_node is not None else None,
                _right_grad(x, grad, w_t) if w_node is not None else None)
