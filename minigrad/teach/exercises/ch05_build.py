"""Chapter 5's build exercises (``notebooks/05b_tensor_gradients.ipynb``): the backward of
broadcasting (``sum_to``, the piece ``unbroadcast``) and of a matrix product (``mm_backward``,
the piece ``matmul_backward``), registered with ``teach.build``.

The pieces are plugged into minigrad in place of its own ``formulas.sum_to`` and of the
backward of ``MmBackward0`` and ``AddmmBackward0``; each check runs the chapter's cases,
random shapes and whole graphs with the learner's piece and compares with minigrad's own.
"""

import contextlib
import inspect
from unittest import mock

import numpy as np

import minigrad as mg

from ...creation import tensor
from ...dtypes import float64
from ...ops import formulas, linalg
from ...ops import op as _op
from ..build import Mismatch, Piece, attempt, register, same_dtype, show
from ..checks import keeps_random_state


# ------------------------------------------------------------------ build: shared helpers

def _is_array(value):
    """An array gradient (a plain backward); a Tensor one comes under create_graph=True."""
    return isinstance(value, (np.ndarray, np.generic))


def _close(got, want):
    return np.allclose(np.asarray(got, dtype=float), want, rtol=1e-5, atol=1e-6)


def _linear_layer(rng, bias):
    """A linear layer as in chapter 6 (F.linear: x @ W.T + b, float32), input 5 x 3 -> 2
    features, the input requiring grad too: (text, build)."""
    x, w = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    b = rng.normal(size=2).astype(np.float32)
    text = f"a linear layer x @ W.T{' + b' if bias else ''} (x 5 x 3, W 2 x 3, float32)"

    def build():
        leaves = {"x": tensor(x, requires_grad=True), "W": tensor(w, requires_grad=True)}
        if bias:
            leaves["b"] = tensor(b, requires_grad=True)
        out = mg.nn.functional.linear(leaves["x"], leaves["W"], leaves.get("b"))
        return leaves, (out * out).sum()
    return text, build


def _compare_backward(plug, obj, text, build, name):
    """backward() on the same graph with minigrad's own piece and with the learner's: the
    same numbers, and the same dtype (a float32 graph keeps float32 gradients)."""
    leaves, loss = build()
    loss.backward()
    want = {n: t.grad.numpy().copy() for n, t in leaves.items() if t.grad is not None}
    leaves, loss = build()
    with plug(obj):
        attempt(f"backward() on {text} with your {name} plugged in", loss.backward)
    for n, expected in want.items():
        got = leaves[n].grad
        if got is None or not _close(got.numpy(), expected):
            raise Mismatch(f"plugged into backward() on {text}, {n}.grad is "
                           f"{None if got is None else show(got.numpy())}; expected "
                           f"{show(expected)} (your {name} gives the right results when "
                           "called alone: does it depend on anything but its arguments?)")
        same_dtype(f"plugged into backward() on {text}, {n}.grad", got, expected)


def _returned_array(call, got, what="the result"):
    """A learner's result must be a numpy array (the engine's gradients are)."""
    if got is None:
        raise Mismatch(f"{call}: {what} is None; return the gradient (did the function end "
                       "without return?).")
    if isinstance(got, mg.Tensor):
        raise Mismatch(f"{call} returned a Tensor for {what}; return a numpy array (the "
                       "engine's gradients are numpy arrays: numpy's sum, swapaxes and @ "
                       "on them give arrays).")
    if not isinstance(got, (np.ndarray, np.generic)):
        raise Mismatch(f"{call} returned a {type(got).__name__} for {what}; return a numpy "
                       "array (the engine's gradients are numpy arrays).")


# ------------------------------------------------------------------ build: sum_to

def _sum_to_with(sum_to):
    """``formulas.sum_to`` with the learner's inside (for array gradients; a Tensor one,
    under create_graph=True, goes to minigrad's own). A result of another shape than the
    input's stops backward with a clear error instead of being broadcast silently."""
    own = formulas.sum_to
    running = []

    def plugged(grad, shape):
        if not _is_array(grad):
            return own(grad, shape)
        if running:  # called again from inside the learner's sum_to
            raise Mismatch(_CALLS_ITSELF.format(name="sum_to", own="formulas.sum_to"))
        running.append(True)
        try:
            result = sum_to(grad, tuple(shape))
        finally:
            running.pop()
        if np.shape(result) != tuple(shape):
            raise ValueError(f"your sum_to turned a gradient of shape {tuple(grad.shape)} into "
                             f"one of shape {np.shape(result)}; the input has shape "
                             f"{tuple(shape)} (run teach.check_piece('unbroadcast', sum_to))")
        return result
    return plugged


def _plug_sum_to(sum_to):
    return mock.patch.object(formulas, "sum_to", _sum_to_with(sum_to))


_CALLS_ITSELF = (
    "it uses minigrad's own {own} (through minigrad's modules, or through minigrad's "
    "autograd), the very piece you are asked to write: with your {name} plugged in, it ends "
    "up calling itself. Compute the gradient with numpy yourself.")


def _shape_hint(got, shape, grad_shape):
    """What is wrong with a result of shape ``got`` for an input of shape ``shape``."""
    if len(got) > len(shape):
        return (" Broadcasting added dimensions on the left of the input's shape: the "
                "gradient must be summed over them, so that they are gone.")
    if len(got) < len(shape):
        return (" A dimension where the input had size 1 is gone: the input's gradient keeps "
                "every dimension of the input, the 1s too (keepdims).")
    if len(shape) < len(grad_shape) and tuple(got) == tuple(grad_shape[:len(shape)]):
        return (" You kept the first dimensions of grad and summed the last ones; broadcasting "
                "aligns shapes on the RIGHT, so the dimensions it added are grad's first ones.")
    return (" Where the input had size 1 and the gradient has more, broadcasting stretched "
            "one number into copies: their gradients must be summed into that one number, "
            f"keeping size 1 (the gradient came in with shape {grad_shape}).")


def _one_copy(grad, shape):
    """The gradient of one copy only (what indexing instead of summing gives)."""
    added = grad.ndim - len(shape)
    one = grad[(0,) * added]
    return one[tuple(slice(0, 1) if n == 1 else slice(None) for n in shape)]


def _sum_to_error_hint(grad, shape):
    """What a learner's sum_to that raised on ``grad`` for ``shape`` most likely got wrong."""
    added = grad.ndim - len(shape)
    left = int(np.prod(grad.shape[max(added, 0):]))
    return lambda error: _sum_to_advice(error, left, int(np.prod(shape)))


def _sum_to_advice(error, left, size):
    if f"cannot reshape array of size {left} " in str(error) and left != size:
        return (f". Summing the added dimensions away leaves {left} numbers, but the input "
                f"has {size}: where the input had size 1 and the gradient has more, "
                "broadcasting stretched one number into copies, and their gradients must be "
                "summed into that number (keeping size 1). A reshape only rearranges the "
                "numbers; it cannot add the copies up.")
    if "cannot reshape" in str(error):
        return (". Summing axes one after another without keepdims renumbers the axes after "
                "the one summed, so the later sums hit the wrong axes: keep the summed axes "
                "(keepdims=True), or sum all of them in one call.")
    if isinstance(error, (ValueError, IndexError, TypeError)) and "axis" in str(error):
        return (" Check the axes you sum over: they must exist in the array at that moment "
                "(after summing the added dimensions away, the stretched ones are numbered "
                "as in the input's shape).")
    return ""


def _compare_sum_to(sum_to, grad, shape, label):
    """Call the learner's sum_to directly and compare with minigrad's own."""
    want = formulas.sum_to(grad, shape)
    before = grad.copy()
    call = f"sum_to(grad of shape {grad.shape}, {shape}) ({label})"
    got = attempt(call, lambda: sum_to(grad, shape), _sum_to_error_hint(grad, shape))
    if got is None:
        raise Mismatch(f"{call} returned None; return the summed gradient.")
    if isinstance(got, mg.Tensor):
        raise Mismatch(f"{call} returned a Tensor; return a numpy array (the engine's "
                       "gradients are numpy arrays: use numpy's sum on grad).")
    if not isinstance(got, (np.ndarray, np.generic)):
        raise Mismatch(f"{call} returned a {type(got).__name__}; return a numpy array (the "
                       "engine's gradients are numpy arrays: use numpy's sum on grad).")
    if not np.array_equal(grad, before):
        raise Mismatch(f"{call} changed grad itself; leave it is (another input may "
                       "receive the same array) and return a new one.")
    if got.dtype != grad.dtype:
        raise Mismatch(f"{call} returned {got.dtype} numbers for a {grad.dtype} gradient; "
                       "keep grad's dtype (summing an array keeps it; a new array of zeros, "
                       "or one made with dtype=float, takes float64 unless told otherwise).")
    got_shape = np.shape(got)
    if got_shape != shape:
        raise Mismatch(f"{call} returned shape {got_shape}; expected {shape}, the input's "
                       f"shape.{_shape_hint(got_shape, shape, grad.shape)}")
    if not _close(got, want):
        copies = grad.size // max(want.size, 1)
        extra = ""
        if copies > 1 and _close(got, want / copies):
            extra = (" Yours is a mean: every copy sends back its whole gradient, so add "
                     "them; do not divide by the number of copies.")
        elif copies > 1 and _close(got, _one_copy(grad, shape)):
            extra = (" Yours keeps the gradient of one copy (an index such as grad[0]): add "
                     "the gradients of all the copies instead.")
        raise Mismatch(f"{call} returned {show(got)}; expected {show(want)}. The shape is "
                       "right but not the numbers: each entry must be the sum of the gradients "
                       f"of every copy broadcasting made of that input number.{extra}")


def _random_broadcast(rng, dims=(0, 5)):
    """An input shape (0 to 4 dimensions, sizes 1 to 3) and the shape broadcasting may have
    stretched it to (0 to 2 dimensions added on the left, some sizes 1 stretched)."""
    shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(*dims))))
    added = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    stretched = tuple(int(rng.integers(1, 4)) if n == 1 and rng.random() < 0.7 else n
                      for n in shape)
    return shape, added + stretched


# The chapter's cases: (what, the gradient's shape, the input's shape).
_SUM_TO_EXAMPLES = [
    ("section 5's table", (2, 4, 3), (2, 4, 3)),
    ("section 5's table", (2, 4, 3), (4, 3)),
    ("section 5's table", (2, 4, 3), (3,)),
    ("section 5's table", (2, 4, 3), (4, 1)),
    ("section 5's table", (2, 4, 3), (1, 1, 3)),
    ("a bias per feature, X + b", (4, 3), (3,)),
    ("a bias per row, X + b", (2, 3), (2, 1)),
    ("a loss, a sum of everything", (2, 3), ()),
    ("two dimensions added, float32", (2, 3, 4, 1), (4, 1)),
    ("a size 1 after an added one, float32", (3, 2, 4), (1, 4)),
]


def _broadcast_program(rng, dtype=float64):
    """Two leaves of broadcasting shapes in a small graph: (text, build)."""
    shape_a, out = _random_broadcast(rng)
    shape_b = tuple(n if rng.random() < 0.5 else 1 for n in out[int(rng.integers(0, 2)):])
    values = {"a": rng.uniform(-2, 2, size=shape_a).round(2),
              "b": rng.uniform(-2, 2, size=shape_b).round(2)}
    weight = rng.uniform(-2, 2, size=np.broadcast_shapes(shape_a, shape_b)).round(2)
    text = (f"loss = (w * (a * b + a)).sum(), a of shape {shape_a}, b of shape {shape_b}, "
            f"{str(dtype).replace('minigrad.', '')}")

    def build():
        a, b = (tensor(values[n], dtype=dtype, requires_grad=True) for n in ("a", "b"))
        return {"a": a, "b": b}, (tensor(weight, dtype=dtype) * (a * b + a)).sum()
    return text, build


@keeps_random_state
def _sum_to_battery(sum_to, n_random=200, n_graphs=30):
    """The chapter's cases and random shapes, called directly; then backward() through
    random graphs with broadcasting, and through the chapter's linear layer."""
    rng = np.random.default_rng(5)
    for label, grad_shape, shape in _SUM_TO_EXAMPLES:
        dtype = np.float32 if "float32" in label else np.float64
        grad = np.arange(1.0, 1.0 + np.prod(grad_shape)).reshape(grad_shape).astype(dtype)
        _compare_sum_to(sum_to, grad, shape, label)
    for _ in range(n_random):
        shape, grad_shape = _random_broadcast(rng)
        dtype = [np.float32, np.float64][int(rng.integers(2))]
        grad = rng.uniform(-2, 2, size=grad_shape).round(2).astype(dtype)
        _compare_sum_to(sum_to, grad, shape, "a random case")
    for i in range(n_graphs):
        _compare_backward(_plug_sum_to, sum_to,
                          *_broadcast_program(rng, (float64, mg.float32)[i % 2]), "sum_to")
    _compare_backward(_plug_sum_to, sum_to, *_linear_layer(rng, bias=True), "sum_to")
    return (f"the chapter's {len(_SUM_TO_EXAMPLES)} cases, {n_random} random shapes, and "
            f"backward() through {n_graphs} random graphs and a linear layer")


register(Piece(name="unbroadcast", chapter="05", defines="sum_to",
               summary="the backward of broadcasting: sum_to(grad, shape)",
               plug=_plug_sum_to, battery=_sum_to_battery,
               own={"ops.formulas.sum_to": formulas.sum_to,
                    "ops.op._shaped (which runs formulas.sum_to)": _op._shaped}))


# ------------------------------------------------------------------ build: mm_backward
# The piece: mm_backward(grad, a, b) for C = A @ B with A of shape (..., n, m) and B of shape
# (..., m, p), the batch dimensions "..." broadcasting as np.matmul's (and torch.matmul's):
# no batch dimension at all (a product of two matrices), a batch of inputs times one weight,
# batch dimensions of size 1 stretched. Each gradient must come back in its operand's shape,
# summed over the batch dimensions its operand was broadcast along (section 5's sum_to).

def _placeholder(shape, dtype):
    """Zeros standing in for an operand minigrad did not save (the other one needs no
    gradient, so what is computed from it is thrown away)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


_MM_RUNNING = []  # not empty while a learner's mm_backward runs inside a plugged node


def _call_mm_backward(mm_backward, grad, a, b):
    """The learner's gradients, checked for their shapes."""
    if _MM_RUNNING:  # a product's backward called again from inside the learner's
        raise Mismatch(_CALLS_ITSELF.format(name="mm_backward",
                                            own="backward of a matrix product"))
    _MM_RUNNING.append(True)
    try:
        result = mm_backward(grad, a, b)
    finally:
        _MM_RUNNING.pop()
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ValueError("mm_backward must return two gradients, (grad_a, grad_b); run "
                         "teach.check_piece('matmul_backward', mm_backward)")
    grad_a, grad_b = result
    if np.shape(grad_a) != a.shape or np.shape(grad_b) != b.shape:
        raise ValueError(f"your mm_backward returned gradients of shapes {np.shape(grad_a)} "
                         f"and {np.shape(grad_b)} for A {a.shape} and B {b.shape}; run "
                         "teach.check_piece('matmul_backward', mm_backward)")
    return grad_a, grad_b


def _mm_with(mm_backward):
    """MmBackward0.backward (and BmmBackward0's) with the learner's formulas (array
    gradients only)."""
    def backward(self, grad, a, b):
        if not _is_array(grad):
            return _OWN_BACKWARD[type(self)](self, grad, a, b)
        shape_a, shape_b = self.shapes
        grad_a, grad_b = _call_mm_backward(
            mm_backward, grad, a if a is not None else _placeholder(shape_a, grad.dtype),
            b if b is not None else _placeholder(shape_b, grad.dtype))
        return (grad_a if b is not None else None, grad_b if a is not None else None)
    return backward


def _matmul_with(mm_backward):
    """MatmulBackward0.backward (``@`` with batches, or a vector operand) with the learner's
    formulas: a vector operand becomes a matrix of one row (on the left) or one column (on
    the right), as minigrad's own and PyTorch do, and the gradient gets its shape back."""
    def backward(self, grad, a, b):
        if not _is_array(grad):
            return _OWN_BACKWARD[linalg.MatmulBackward0](self, grad, a, b)
        shape_a, shape_b = self.shapes
        matrix_a = (1,) + shape_a if len(shape_a) == 1 else shape_a
        matrix_b = shape_b + (1,) if len(shape_b) == 1 else shape_b
        if len(shape_a) == 1:
            grad = np.expand_dims(grad, -2)
        if len(shape_b) == 1:
            grad = np.expand_dims(grad, -1)
        grad_a, grad_b = _call_mm_backward(
            mm_backward, grad,
            a.reshape(matrix_a) if a is not None else _placeholder(matrix_a, grad.dtype),
            b.reshape(matrix_b) if b is not None else _placeholder(matrix_b, grad.dtype))
        return (np.reshape(grad_a, shape_a) if b is not None else None,
                np.reshape(grad_b, shape_b) if a is not None else None)
    return backward


def _addmm_with(mm_backward):
    """AddmmBackward0.backward (``bias + x @ W.T``, nn.Linear) with the learner's formulas
    for the product; the bias gets the gradient as it is (summed to its shape by sum_to)."""
    own = _OWN_BACKWARD[linalg.AddmmBackward0]

    def backward(self, grad, m1, m2):
        if not _is_array(grad):
            return own(self, grad, m1, m2)
        _, shape_1, shape_2 = self.shapes
        grad_1, grad_2 = _call_mm_backward(
            mm_backward, grad, m1 if m1 is not None else _placeholder(shape_1, grad.dtype),
            m2 if m2 is not None else _placeholder(shape_2, grad.dtype))
        if self.alpha != 1:
            grad_1, grad_2 = grad_1 * self.alpha, grad_2 * self.alpha
        grad_c = None
        if self.inputs[0] is not None:  # the bias's: summed to its shape here, as the own does
            grad_c = formulas.sum_to(grad if self.beta == 1 else grad * self.beta,
                                     self.shapes[0])
        return grad_c, grad_1 if m2 is not None else None, grad_2 if m1 is not None else None
    return backward


# minigrad's own backward of each node the piece replaces (kept before any plugging).
_OWN_BACKWARD = {node: node.backward for node in (
    linalg.MmBackward0, linalg.BmmBackward0, linalg.MatmulBackward0, linalg.AddmmBackward0)}


@contextlib.contextmanager
def _plug_mm_backward(mm_backward):
    with mock.patch.object(linalg.MmBackward0, "backward", _mm_with(mm_backward)), \
            mock.patch.object(linalg.BmmBackward0, "backward", _mm_with(mm_backward)), \
            mock.patch.object(linalg.MatmulBackward0, "backward", _matmul_with(mm_backward)), \
            mock.patch.object(linalg.AddmmBackward0, "backward", _addmm_with(mm_backward)):
        yield


# The chapter's products: (what, A, B, G = dL/dC).
_MM_EXAMPLES = [
    ("section 6's example", [[1., 2., 3.], [4., 5., 6.]], [[1., 0.], [2., 1.], [0., 3.]],
     [[1., 2.], [3., 4.]]),
    ("loss = (A @ B).sum()", [[1., 2., 0.], [0., 1., 3.]], [[1., 2.], [0., 1.], [4., 0.]],
     [[1., 1.], [1., 1.]]),
]

# Batched products, float32: (what, A's shape, B's shape).
_MM_BATCHED = [
    ("a batch of inputs times one weight, X @ W", (2, 4, 3), (3, 2)),
    ("one matrix times a batch", (4, 3), (2, 3, 2)),
    ("a batch times a batch", (2, 4, 3), (2, 3, 2)),
    ("two batch dimensions times one weight", (2, 3, 4, 3), (3, 2)),
    ("a batch of one times a batch", (1, 4, 3), (2, 3, 2)),
    ("batch dimensions that broadcast", (2, 1, 4, 3), (3, 3, 2)),
]


def _own_mm_gradients(a, b, grad):
    """minigrad's own gradients of A @ B for dL/dC = grad."""
    A = tensor(a, requires_grad=True)
    B = tensor(b, requires_grad=True)
    (A @ B).backward(tensor(grad))
    return A.grad.numpy(), B.grad.numpy()


def _swap_last(x):
    return np.swapaxes(x, -1, -2)


_TRANSPOSE_IN_A_BATCH = (
    "On an array of more than 2 dimensions, .T reverses EVERY axis (a (2, 4, 3) array becomes "
    "(3, 4, 2)), and transposing axes 0 and 1 moves a batch dimension: transpose only the last "
    "two axes, whatever their number (section 6's swapaxes), and multiply with @, which "
    "multiplies matrix by matrix along the batch (np.dot does not).")


def _names_read(function):
    """The attribute and global names ``function``'s code reads (nested code too)."""
    names, codes = set(), [getattr(inspect.unwrap(function), "__code__", None)]
    while codes:
        code = codes.pop()
        if code is not None:
            names.update(code.co_names)
            codes += [c for c in code.co_consts if inspect.iscode(c)]
    return names


def _mm_error_hint(a, b, grad, shapes, flattens=False):
    """What a learner's mm_backward that raised most likely got wrong (``flattens``: its
    code reshapes, as flattening the batch into rows does)."""
    batched = max(a.ndim, b.ndim) > 2

    def hint(error):
        text = str(error)
        if batched and b.ndim > 2 and (flattens or "cannot reshape" in text):
            return (". Flattening the batch into rows (a reshape) fits only a batch times ONE "
                    f"matrix, X @ W: here B has batch dimensions of its own ({b.shape}), so "
                    "each product of the batch has its own B, and the rows of different "
                    "products cannot be stacked into one. Keep the batch dimensions: @ "
                    "multiplies matrix by matrix along them; transpose the last two axes only.")
        if "axes don't match" in text or isinstance(error, np.exceptions.AxisError):
            return (". A transpose with axes written out (transpose(0, 2, 1), axis 2) fits "
                    "arrays of one number of dimensions only; A and B may have none, one or "
                    "two batch dimensions. " + _TRANSPOSE_IN_A_BATCH)
        if isinstance(error, ValueError):
            return "." + (f" {_TRANSPOSE_IN_A_BATCH}" if batched else shapes)
        return ""
    return hint


def _batch_shape_hint(name, got, want, full, operand):
    """A gradient of the wrong shape in a batched product: which of the two steps is off."""
    if tuple(got) == tuple(full):
        return (f" {operand} was used by every product of the batch (its batch dimensions "
                f"were broadcast, as a bias is in section 5): {name} is the sum of what each "
                f"of those products sends back, summed to {operand}'s shape {want}, section "
                "5's sum_to.")
    if tuple(got[-2:]) == tuple(want[-2:]):
        return (" The matrix sizes (the last two) are right, the batch dimensions are not: "
                "sum over the batch dimensions broadcasting added on the left, and over those "
                f"where {operand} has size 1, keeping the 1 (section 5's two steps).")
    return " " + _TRANSPOSE_IN_A_BATCH


def _compare_mm(mm_backward, a, b, grad, label):
    """Call the learner's mm_backward directly and compare with minigrad's own."""
    call = f"mm_backward(grad {grad.shape}, a {a.shape}, b {b.shape}) ({label})"
    batched = max(a.ndim, b.ndim) > 2
    shapes = (f" C = A @ B has shape {grad.shape}, and so has grad; grad_a must have A's "
              f"shape {a.shape} and grad_b B's {b.shape}. Line up the shapes of a product: "
              "(r, s) @ (s, t) gives (r, t). Which product of grad with b, each transposed "
              "or not, has A's shape? And of a with grad, B's?")
    given = grad.copy()
    flattens = bool({"reshape", "flatten", "ravel"} & _names_read(mm_backward))
    result = attempt(call, lambda: mm_backward(given, a.copy(), b.copy()),
                     _mm_error_hint(a, b, grad, shapes, flattens))
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise Mismatch(f"{call} returned {type(result).__name__}; return two gradients, "
                       "(grad_a, grad_b).")
    if not np.array_equal(given, grad):
        raise Mismatch(f"{call} changed grad itself; leave it is (minigrad may hand "
                       "the same array to other nodes) and compute new arrays.")
    want = _own_mm_gradients(a, b, grad)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    fulls = (batch + a.shape[-2:], batch + b.shape[-2:])  # each gradient before the batch sum
    for name, got, expected, other, full, operand in (
            ("grad_a", result[0], want[0], "B", fulls[0], "A"),
            ("grad_b", result[1], want[1], "A", fulls[1], "B")):
        _returned_array(call, got, name)
        if np.shape(got) != expected.shape:
            swapped = (np.shape(result[0]) == b.shape and np.shape(result[1]) == a.shape)
            hint = (" The two look swapped: return (grad_a, grad_b), A's first." if swapped
                    else _batch_shape_hint(name, np.shape(got), expected.shape, full, operand)
                    if batched else shapes)
            raise Mismatch(f"{call}: {name} has shape {np.shape(got)}; expected "
                           f"{expected.shape}.{hint}")
        same_dtype(f"{call}: {name}", got, expected)
        if not _close(got, expected):
            uses = int(np.prod(full)) // max(expected.size, 1)
            if batched and uses > 1 and _close(got, expected / uses):
                raise Mismatch(f"{call}: {name} is {show(got)}; expected {show(expected)}. "
                               f"Yours is a mean over the batch: each product that used "
                               f"{operand} sends back its whole gradient, so add them; do "
                               "not divide by their number.")
            raise Mismatch(f"{call}: {name} is {show(got)}; expected {show(expected)}. The "
                           "shape is right, not the numbers: dL/dA[i, j] sums grad[i, k] "
                           "* B[j, k] over k, and dL/dB[j, k] sums A[i, j] * grad[i, k] over "
                           f"i (section 6). Is the transpose on the right factor, {other}'s "
                           "or grad's?" + (" In a batch, transpose the last two axes only."
                                           if batched else ""))


def _random_batched(rng):
    """The shapes of a random batched product: A (..., n, m), B (..., m, p), batch
    dimensions broadcasting (sizes 1 stretched, dimensions missing on the left)."""
    batch_a, batch = _random_broadcast(rng, dims=(0, 3))
    batch_b = tuple(n if rng.random() < 0.6 else 1 for n in batch[int(rng.integers(0, 2)):])
    if rng.random() < 0.5:
        batch_a, batch_b = batch_b, batch_a
    n, m, p = (int(k) for k in rng.integers(1, 5, size=3))
    return batch_a + (n, m), batch_b + (m, p)


def _operands(rng, shape_a, shape_b, dtype):
    a, b = rng.normal(size=shape_a).round(2), rng.normal(size=shape_b).round(2)
    out = np.matmul(a, b).shape
    return a.astype(dtype), b.astype(dtype), rng.normal(size=out).round(2).astype(dtype)


def _matmul_program(rng, which, shape_a=None, shape_b=None, bmm=False):
    """A @ B of random sizes (or the given shapes, float32), with A, B or both requiring
    grad: (text, build)."""
    if shape_a is None:
        n, m, p = (int(k) for k in rng.integers(1, 5, size=3))
        shape_a, shape_b, dtype = (n, m), (m, p), np.float64
    else:
        dtype = np.float32
    a = rng.normal(size=shape_a).round(2).astype(dtype)
    b = rng.normal(size=shape_b).round(2).astype(dtype)
    weight = rng.normal(size=np.matmul(a, b).shape).round(2).astype(dtype)
    product = "mg.bmm(A, B)" if bmm else "A @ B"
    text = (f"loss = (w * {product}).sum(), A {a.shape} and B {b.shape}, {dtype.__name__}, "
            f"{which} requiring grad")

    def build():
        A = tensor(a, requires_grad=which in ("A", "both"))
        B = tensor(b, requires_grad=which in ("B", "both"))
        C = mg.bmm(A, B) if bmm else A @ B
        return {"A": A, "B": B}, (tensor(weight) * C).sum()
    return text, build


# Graphs through the batched nodes: (A's shape, B's shape), float32.
_MM_GRAPHS = [((2, 4, 3), (3, 2)), ((4, 3), (2, 3, 2)), ((2, 1, 3, 2), (3, 2, 4)),
              ((3,), (2, 3, 2)), ((2, 4, 3), (3,)), ((1, 4, 3), (2, 3, 2))]


@keeps_random_state
def _mm_battery(mm_backward, n_random=150, n_batched=100):
    """The chapter's products and random ones, called directly, first of two matrices, then
    batched; then backward() through products where A, B or both need a gradient, batched
    ones, and linear layers."""
    rng = np.random.default_rng(6)
    for label, a, b, grad in _MM_EXAMPLES:
        _compare_mm(mm_backward, np.array(a), np.array(b), np.array(grad), label)
    for i in range(n_random):
        n, m, p = (int(k) for k in rng.integers(1, 6, size=3))
        dtype = (np.float64, np.float32)[i % 2]
        a, b, grad = _operands(rng, (n, m), (m, p), dtype)
        _compare_mm(mm_backward, a, b, grad, f"a random product, {dtype.__name__}")
    for label, shape_a, shape_b in _MM_BATCHED:
        a, b, grad = _operands(rng, shape_a, shape_b, np.float32)
        _compare_mm(mm_backward, a, b, grad, f"{label}, float32")
    for i in range(n_batched):
        dtype = (np.float64, np.float32)[i % 2]
        a, b, grad = _operands(rng, *_random_batched(rng), dtype)
        _compare_mm(mm_backward, a, b, grad, f"a random batched product, {dtype.__name__}")
    for which in ("both", "A", "B") * 4:
        _compare_backward(_plug_mm_backward, mm_backward, *_matmul_program(rng, which),
                          "mm_backward")
    for (shape_a, shape_b), which in zip(_MM_GRAPHS, ("both", "A", "B") * 2):
        _compare_backward(_plug_mm_backward, mm_backward,
                          *_matmul_program(rng, which, shape_a, shape_b), "mm_backward")
    _compare_backward(_plug_mm_backward, mm_backward,
                      *_matmul_program(rng, "both", (2, 4, 3), (2, 3, 2), bmm=True),
                      "mm_backward")
    for bias in (True, False):
        _compare_backward(_plug_mm_backward, mm_backward, *_linear_layer(rng, bias),
                          "mm_backward")
    return (f"the chapter's {len(_MM_EXAMPLES)} products, {n_random} random ones, "
            f"{len(_MM_BATCHED)} batched ones and {n_batched} random batched ones, and "
            f"backward() through 12 products, {len(_MM_GRAPHS) + 1} batched ones and 2 "
            "linear layers")


register(Piece(name="matmul_backward", chapter="05", defines="mm_backward",
               summary="the gradients of C = A @ B: mm_backward(grad, a, b)",
               plug=_plug_mm_backward, battery=_mm_battery,
               own={"ops.linalg.MmBackward0": linalg.MmBackward0,
                    "MmBackward0.backward": _OWN_BACKWARD[linalg.MmBackward0],
                    "ops.linalg.AddmmBackward0": linalg.AddmmBackward0,
                    "AddmmBackward0.backward": _OWN_BACKWARD[linalg.AddmmBackward0],
                    "ops.linalg.MatmulBackward0": linalg.MatmulBackward0,
                    "MatmulBackward0.backward": _OWN_BACKWARD[linalg.MatmulBackward0],
                    "ops.linalg.BmmBackward0": linalg.BmmBackward0,
                    "BmmBackward0.backward": _OWN_BACKWARD[linalg.BmmBackward0],
                    "ops.linalg._right_grad": linalg._right_grad,
                    "ops.formulas.sum_to (write the batch sum yourself, as in section 5)":
                        formulas.sum_to,
                    "teach.exercises.ch05_build._own_mm_gradients": _own_mm_gradients}))
