"""Matrix products (chapters 2, 5 and 6): ``@`` in each of its shape cases, ``addmm`` (the
fused ``bias + x @ W.T`` of every linear layer), ``bmm`` and ``einsum``, each with its
forward, what it saves and its backward in one class named like PyTorch's node.

The gradient of ``a @ b`` is ``grad @ b.T`` for ``a`` and ``a.T @ grad`` for ``b``: each
operand is saved only when the OTHER one needs a gradient (a network's first layer never
keeps its input batch for a gradient nobody wants), and a gradient nobody needs is never
computed (``needs_input_grad``).
"""

import numpy as np

from . import formulas
from .op import Op
from .tangents import auto_multilinear, tangent_sum
from .._tensor import Tensor, tensor_from
from ..tensor_rules import takes_out
from ..tensor_rules import check_tensor
from .. import dtypes
from .op import node_named
from ..dtypes import scalar_name

__all__ = ["MmBackward0", "DotBackward0", "MvBackward0", "MatmulBackward0", "BmmBackward0",
           "AddmmBackward0", "EinsumBackward0", "node_for_matmul"]

_ndarray = np.ndarray
_T = formulas.transpose_last


def _right_grad(a, grad, b_is_c_ordered):
    """``a.T @ grad``, the gradient of ``b`` in ``a @ b`` (matrices), laid out in memory like
    ``b``: a weight used transposed (``w.T`` in linear) then gets a C-ordered gradient back,
    which ``.grad`` keeps without a reordering copy (for a 256 x 784 weight that copy took
    200 µs, two thirds of the product itself)."""
    if not b_is_c_ordered and type(grad) is _ndarray:
        return (grad.T @ a).T
    return _T(a) @ grad


def _save_operands(op, a, b, first=0):
    """Save ``a`` only if ``b`` needs a gradient, and ``b`` only if ``a`` does (``a`` and
    ``b`` are the op's inputs ``first`` and ``first + 1``)."""
    inputs = op.inputs
    op.save_for_backward(a if inputs[first + 1] is not None else None,
                         b if inputs[first] is not None else None)


class MmBackward0(Op):
    """C = A @ B for matrices: dA = dC @ B.T, dB = A.T @ dC."""
    __slots__ = ("b_is_c_ordered",)

    def forward(self, a, b):
        _save_operands(self, a, b)
        self.b_is_c_ordered = b.flags.c_contiguous
        return a @ b

    def backward(self, grad, a, b):
        return (grad @ _T(b) if b is not None else None,
                _right_grad(a, grad, self.b_is_c_ordered) if a is not None else None)

    jvp = auto_multilinear


class DotBackward0(Op):
    """s = u . v for vectors: du = ds v, dv = ds u."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return np.asarray(np.dot(a, b), dtype=a.dtype)

    def backward(self, grad, a, b):
        return (grad * b if b is not None else None,
                grad * a if a is not None else None)

    jvp = auto_multilinear


class MvBackward0(Op):
    """y = A @ v: dA = outer(dy, v), dv = A.T @ dy."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return a @ b

    def backward(self, grad, a, b):
        return (formulas.unsqueeze(grad, (1,)) * b if b is not None else None,
                _T(a) @ grad if a is not None else None)

    jvp = auto_multilinear


class MatmulBackward0(Op):
    """The general case (a 1-D operand, batches): a vector becomes a matrix of one row (on
    the left) or one column (on the right), the products are as MmBackward0's, and the
    gradients are summed over broadcast batch dimensions and put back in shape."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return np.matmul(a, b)

    def backward(self, grad, a, b):
        a_shape, b_shape = self.shapes
        a_matrix = (1,) + a_shape if len(a_shape) == 1 else a_shape
        b_matrix = b_shape + (1,) if len(b_shape) == 1 else b_shape
        if len(a_shape) == 1:
            grad = formulas.unsqueeze(grad, (-2,))
        if len(b_shape) == 1:
            grad = formulas.unsqueeze(grad, (-1,))
        grad_a = grad_b = None
        if b is not None:
            grad_a = formulas.sum_to(grad @ _T(b.reshape(b_matrix)), a_matrix).reshape(a_shape)
        if a is not None:
            grad_b = formulas.sum_to(_T(a.reshape(a_matrix)) @ grad, b_matrix).reshape(b_shape)
        return grad_a, grad_b

    jvp = auto_multilinear


class BmmBackward0(Op):
    """A batch of matrix products, no broadcasting: each as MmBackward0."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return np.matmul(a, b)

    def backward(self, grad, a, b):
        return (grad @ _T(b) if b is not None else None,
                _T(a) @ grad if a is not None else None)

    jvp = auto_multilinear


def node_for_matmul(a, b):
    """PyTorch's node for ``a @ b``, by the operands' numbers of dimensions."""
    if a.ndim == 2:
        if b.ndim == 2:
            return MmBackward0
        if b.ndim == 1:
            return MvBackward0
    elif a.ndim == 1 and b.ndim == 1:
        return DotBackward0
    return MatmulBackward0


class AddmmBackward0(Op):
    """``beta * c + alpha * (m1 @ m2)`` for matrices (``c`` broadcasts): PyTorch's addmm,
    and nn.Linear's ``bias + x @ W.T`` in one node (inputs: bias, x, W.T, in PyTorch's
    order)."""
    __slots__ = ("beta", "alpha", "m2_is_c_ordered")

    def forward(self, c, m1, m2, beta=1, alpha=1):
        self.beta, self.alpha = beta, alpha
        _save_operands(self, m1, m2, first=1)
        self.m2_is_c_ordered = m2.flags.c_contiguous
        out = m1 @ m2
        if beta == 1 and alpha == 1:
            out += c  # out is a fresh array: adding in place saves a copy
            return out
        return (beta * c + alpha * out).astype(out.dtype, copy=False)

    def backward(self, grad, m1, m2):
        beta, alpha = self.beta, self.alpha
        grad_c = None
        if self.inputs[0] is not None:
            grad_c = grad if beta == 1 else grad * beta
            if self.shapes[0] == grad.shape[1:]:  # a layer's bias: (speed) summed right here
                grad_c = formulas.sum_over(grad_c, (0,))
        grad_m1 = grad_m2 = None
        if m2 is not None:
            grad_m1 = grad @ (m2.T if type(m2) is _ndarray else _T(m2))
            if alpha != 1:
                grad_m1 = grad_m1 * alpha
        if m1 is not None:
            grad_m2 = _right_grad(m1, grad, self.m2_is_c_ordered)
            if alpha != 1:
                grad_m2 = grad_m2 * alpha
        return grad_c, grad_m1, grad_m2

    def apply(self, grad):
        if (type(grad) is _ndarray and self.saved is not None
                and self.shapes[0] == grad.shape[1:]):
            # (speed: every linear layer) a layer's gradients have their inputs' shapes
            # already, and None where nothing needs one: Op.apply's reshaping has no work
            return self.backward(grad, *self.saved)
        return Op.apply(self, grad)

    def jvp(self, tangents, out, c, m1, m2, *options):
        tc, tm1, tm2 = tangents
        beta, alpha = self.beta, self.alpha
        product = tangent_sum(None if tm1 is None else tm1 @ m2, None if tm2 is None else m1 @ tm2)
        if product is not None and alpha != 1:
            product = product * alpha
        return tangent_sum(None if tc is None else tc if beta == 1 else tc * beta, product)


# ------------------------------------------------------------------------------ einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum(spec, *operands):
    """numpy's einsum on arrays, minigrad's (recorded) on Tensors."""
    if not any(hasattr(x, "_data") for x in operands):
        return np.einsum(spec, *operands)
    wrap = Op.wrap
    return einsum(spec, *[x if hasattr(x, "_data") else wrap(np.asarray(x)) for x in operands])


class EinsumBackward0(Op):
    """Each operand's gradient is the einsum of the output's gradient with the other
    operands, back to that operand's subscripts: an index it alone summed is spread back
    (broadcast), and a repeated one such as 'ii' (a diagonal) is put back on the diagonal
    by an identity matrix."""
    __slots__ = ("terms", "output")

    def forward(self, *arrays, terms, output):
        self.terms, self.output = terms, output
        self.save_for_backward(*arrays)
        return np.asarray(np.einsum(",".join(terms) + "->" + output, *arrays))

    def backward(self, grad, *arrays):
        grads = []
        for k, (term, array) in enumerate(zip(self.terms, arrays)):
            if self.inputs[k] is None:
                grads.append(None)
                continue
            others = [(t, x) for i, (t, x) in enumerate(zip(self.terms, arrays)) if i != k]
            known = set(self.output).union(*[t for t, _ in others])
            unique = "".join(dict.fromkeys(term))
            reached = "".join(c for c in unique if c in known)
            spec = ",".join([self.output] + [t for t, _ in others]) + "->" + reached
            g = _einsum(spec, grad, *[x for _, x in others])
            sizes = {c: array.shape[term.index(c)] for c in unique}
            missing = tuple(i for i, c in enumerate(unique) if c not in known)
            if missing:
                g = formulas.expand_to(formulas.unsqueeze(g, missing),
                                       tuple(sizes[c] for c in unique))
            if len(unique) != len(term):
                g = _onto_diagonal(g, unique, term, sizes)
            grads.append(g)
        return tuple(grads)

    jvp = auto_multilinear


def _onto_diagonal(g, unique, term, sizes):
    """``g`` (subscripts ``unique``) written onto the diagonal of an array of subscripts
    ``term``, which repeats a letter: each repeat gets a letter of its own, tied to the
    first by an identity matrix (so this is a product, and it differentiates)."""
    free = iter(c for c in _LETTERS if c not in term)
    dtype = g._data.dtype if hasattr(g, "_data") else g.dtype
    seen, spread, identities = set(), "", []
    for c in term:
        if c in seen:
            new = next(free)
            spread += new
            identities.append((c + new, np.eye(sizes[c], dtype=dtype)))
        else:
            seen.add(c)
            spread += c
    spec = ",".join([unique] + [s for s, _ in identities]) + "->" + spread
    return _einsum(spec, g, *[eye for _, eye in identities])


def _refuse_bool_products(x, y):
    """PyTorch has no bool kernel for a product: NotImplementedError named after the kernel
    that would run (dot checks the dtypes first and refuses even empty vectors; a batched
    product refuses a bool first operand before comparing dtypes; nothing runs, so nothing
    is refused, when an operand is empty)."""
    if x.ndim == 1 and y.ndim == 1:
        if x.dtype != y.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{dtypes.scalar_name(x.dtype)} and "
                               f"{dtypes.scalar_name(y.dtype)}")
        if x.dtype == np.bool_:
            raise NotImplementedError("\"dot\" not implemented for 'Bool'")
        return
    if not (x.size and y.size) or x.ndim == 0 or y.ndim == 0:
        return
    if (x.ndim > 2 or y.ndim > 2) and x.dtype == np.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if x.dtype == y.dtype == np.bool_:
        kernel = "addmv_impl_cpu" if y.ndim == 1 else "addmm_impl_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def matmul(a, b):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    if not isinstance(a, Tensor):
        a = tensor_from(a)
    if isinstance(b, Tensor):
        _refuse_bool_products(a._data, b._data)
    if isinstance(b, Tensor) and a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}. "
            "Convert one of them first, e.g. a.double() or b.float()")
    x, y, t = a._operands(b)
    if t is None or x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{x.ndim}D and {np.ndim(y)}D")
    try:
        return node_for_matmul(x, y).run((a, t), x, y)
    except ValueError:
        if x.ndim <= 2 and y.ndim <= 2:
            sa = "x".join(map(str, x.shape if x.ndim == 2 else (1,) + x.shape))
            sb = "x".join(map(str, y.shape if y.ndim == 2 else y.shape + (1,)))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): "
                               f"the last dimension of the first ({x.shape[-1]}) must equal "
                               f"the first dimension of the second ({y.shape[0]})") from None
        raise RuntimeError(f"matmul: shapes {list(x.shape)} and {list(y.shape)} cannot be "
                           "multiplied: the last dimension of the first must equal the "
                           "second-to-last of the second, and batch dimensions must "
                           "broadcast") from None


# ------------------------------------------------------------------ functions

def einsum(equation, *operands):
    """Products and sums given by index letters, as numpy's and PyTorch's einsum:
    ``einsum('ij,jk->ik', a, b)`` is ``a @ b``, ``einsum('i,i->', u, v)`` the dot product,
    ``einsum('ii->i', m)`` the diagonal. (No ``...`` in the equation.)"""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, t in enumerate(operands):
        check_tensor("einsum", t, "operands", i + 2)
    equation = equation.replace(" ", "")
    if "." in equation:
        raise NotImplementedError("einsum(): '...' is not supported by minigrad; name each "
                                  "dimension with a letter")
    if "->" in equation:
        inputs, output = equation.split("->")
    else:
        inputs = equation
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    arrays = [t._data for t in operands]
    if len({x.dtype for x in arrays}) > 1:
        raise RuntimeError(f"einsum(): expected scalar type {scalar_name(arrays[0].dtype)} "
                           f"but found {scalar_name([x.dtype for x in arrays][1])}: give all "
                           "operands the same dtype")
    node_cls = node_named(EinsumBackward0, _einsum_node_name(terms, output))
    try:
        return node_cls.run(operands, *arrays, terms=terms, output=output)
    except ValueError as error:
        raise RuntimeError(f"einsum(): {error}") from None


def _einsum_node_name(terms, output):
    """The name of PyTorch's last node for this einsum: one operand is a permute (or a sum
    when it sums a letter away); several end in a batched product (a view of it), or in a
    plain product when the last step sums nothing."""
    if len(terms) == 1:
        return "SumBackward1" if set(terms[0]) - set(output) else "PermuteBackward0"
    left = set().union(*terms[:-1])
    summed = (left & set(terms[-1])) - set(output)
    return "ViewBackward0" if summed else "MulBackward0"


@takes_out(dtype="same")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices (input broadcasts): a linear
    layer's ``bias + x @ W`` in one call."""
    for position, (name, value) in enumerate((("input", input), ("mat1", mat1),
                                              ("mat2", mat2)), 1):
        check_tensor("addmm", value, name, position)
    c, m1, m2 = input._data, mat1._data, mat2._data
    if m1.ndim != 2 or m2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor" if m1.ndim != 2
                           else f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1.shape[0]}x"
                           f"{m1.shape[1]} and {m2.shape[0]}x{m2.shape[1]})")
    if not (c.dtype == m1.dtype == m2.dtype):
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{dtypes.from_numpy(m1.dtype)} != {dtypes.from_numpy(m2.dtype)}")
    try:
        np.broadcast_to(c, (m1.shape[0], m2.shape[1]))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({m2.shape[1]}) must match "
                           f"the existing size ({c.shape[-1]}) of input") from None
    return AddmmBackward0.run((input, mat1, mat2), c, m1, m2, beta=beta, alpha=alpha)


# ------------------------------------------------------------------ functions: dot, bmm

@takes_out(dtype="same")
def dot(input, tensor):
    """The dot product of two 1-D tensors of the same length and dtype (a 0-dim tensor)."""
    for position, (name, value) in enumerate((("input", input), ("tensor", tensor)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"dot(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    a, b = input._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors "
                           "(for matrices use matmul or @)")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_name(a.dtype)} and {scalar_name(b.dtype)}")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.size}] and src "
                           f"[{b.size}] to have the same number of elements, but got {a.size} "
                           f"and {b.size} elements respectively")
    _refuse_bool_products(a, b)
    return DotBackward0.run((input, tensor), a, b)


@takes_out(dtype="same")
def bmm(input, mat2):
    """The products of two batches of matrices: (b, n, m) @ (b, m, p) -> (b, n, p), with
    no broadcasting (matmul broadcasts)."""
    for position, (name, value) in enumerate((("input", input), ("mat2", mat2)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"bmm(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got shape {list(a.shape)}")
    if b.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got shape {list(b.shape)}")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(a.dtype)} but found "
                           f"{scalar_name(b.dtype)}")
    return BmmBackward0.run((input, mat2), a, b)


# -------------------------------------------------- Tensor methods (``x.<name>()``)

def outer(input, vec2):
    return input.unsqueeze(1) * vec2.unsqueeze(0)


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first (``x.<name>(...)`` is ``<name>(x, ...)``): installed by
# ``minigrad.methods``.
FUNCTIONS = ("addmm", "dot", "bmm", "einsum",)
METHODS = ("outer", "addmm", "dot", "bmm",)
