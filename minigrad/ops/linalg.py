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


class DotBackward0(Op):
    """s = u . v for vectors: du = ds v, dv = ds u."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return np.asarray(np.dot(a, b), dtype=a.dtype)

    def backward(self, grad, a, b):
        return (grad * b if b is not None else None,
                grad * a if a is not None else None)


class MvBackward0(Op):
    """y = A @ v: dA = outer(dy, v), dv = A.T @ dy."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return a @ b

    def backward(self, grad, a, b):
        return (formulas.unsqueeze(grad, (1,)) * b if b is not None else None,
                _T(a) @ grad if a is not None else None)


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


class BmmBackward0(Op):
    """A batch of matrix products, no broadcasting: each as MmBackward0."""
    __slots__ = ()

    def forward(self, a, b):
        _save_operands(self, a, b)
        return np.matmul(a, b)

    def backward(self, grad, a, b):
        return (grad @ _T(b) if b is not None else None,
                _T(a) @ grad if a is not None else None)


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


# ------------------------------------------------------------------------------ einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum(spec, *operands):
    """numpy's einsum on arrays, minigrad's (recorded) on Tensors."""
    if not any(hasattr(x, "_data") for x in operands):
        return np.einsum(spec, *operands)
    from ..math_ops import einsum
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
