"""Square-matrix algebra (``minigrad.linalg``, after chapter 13): the inverse, the determinant
and its logarithm, solving ``A X = B``, the Cholesky factor and the cross product. Each op's
forward, what it saves and its backward in one class named like PyTorch's node, followed by
its public function. Real matrices, batched over leading dimensions as in PyTorch.

The backward formulas are PyTorch's (``FunctionsManual.cpp``), written once for arrays and
Tensors like every backward in ``ops``: the Tensor branch calls the public functions of this
module, so a second derivative is recorded too.
"""

import numpy as np

from .formulas import is_array, transpose_last
from .op import Op
from .selection import where
from .. import dtypes
from .._tensor import wrap

__all__ = ["LinAlgError", "LinalgInvExBackward0", "LinalgDetBackward0", "LinalgSlogdetBackward0",
           "LinalgSolveExBackward0", "LinalgCholeskyExBackward0", "LinalgCrossBackward0",
           "inverse", "det", "slogdet", "logdet", "solve", "cholesky", "cross"]


class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError``: the matrix has no inverse, no Cholesky factor."""


# ------------------------------------------------------------------ the checks

def square_matrices(a, name):
    """Refuse what is not a (batch of) square float matrices, with PyTorch's messages."""
    if a.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if a._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as "
                           f"input. Got {dtypes.scalar_name(a._data.dtype)}: convert it first "
                           "(A.float())")
    rows, cols = a.shape[-2:]
    if rows != cols:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{rows} by {cols} matrices")


def _singular(name, a):
    """PyTorch's LinAlgError for a singular matrix, naming the first zero pivot."""
    order = _first_failing_minor(a, np.linalg.det)
    where = f"The diagonal element {order} is zero, the " if order else "The "
    return LinAlgError(f"linalg.{name}: {where}inversion could not be completed because the "
                       "input matrix is singular.")


def _first_failing_minor(a, test):
    """The order (from 1) of the first leading minor of the first failing matrix of the
    batch for which ``test`` fails or gives 0, or None."""
    matrices = a.reshape(-1, *a.shape[-2:])
    for matrix in matrices:
        for k in range(1, matrix.shape[-1] + 1):
            try:
                if test(matrix[:k, :k]) == 0:
                    return k
            except np.linalg.LinAlgError:
                return k
    return None


# ------------------------------------------------------------------ inverse

class LinalgInvExBackward0(Op):
    """d(A^-1) = -A^-1 dA A^-1, so the gradient of A is -A^-T g A^-T (the output saved)."""

    def forward(self, a):
        try:
            out = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise _singular("inv", a) from None
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        out_t = transpose_last(out)
        return -(out_t @ grad @ out_t)

    def jvp(self, tangents, out, a):
        return -(out @ tangents[0] @ out)


def inverse(input):
    """The inverse matrix (``torch.inverse``, ``linalg.inv``); LinAlgError if singular."""
    square_matrices(input, "inv")
    return LinalgInvExBackward0.run((input,))


# ------------------------------------------------------------------ determinants

class LinalgDetBackward0(Op):
    """d det(A) = det(A) tr(A^-1 dA): the gradient of A is g det(A) A^-T, the adjugate's
    transpose; for a singular A the adjugate comes from the SVD (PyTorch's way too)."""

    def forward(self, a):
        out = np.linalg.det(a)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if is_array(grad):
            return grad[..., None, None] * _cofactors(a)
        return (grad * out)[..., None, None] * transpose_last(inverse(a))

    def jvp(self, tangents, out, a):
        """d det(A) = det(A) tr(A^-1 dA)."""
        return out * _trace(_solved(a, tangents[0]))


def _cofactors(a):
    """The cofactor matrix (the adjugate transposed) of each matrix, singular or not."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    products = np.empty_like(s)
    for i in range(n):  # the product of all singular values but the i-th
        products[..., i] = np.prod(np.delete(s, i, axis=-1), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    adjugate = (transpose_last(vh) * products[..., None, :]) @ transpose_last(u)
    return sign[..., None, None] * transpose_last(adjugate)


def _solved(a, b):
    """A^-1 B for arrays (a solve) or Tensors (recorded)."""
    return np.linalg.solve(a, b) if is_array(a) else solve(a, b)


def _trace(m):
    """The trace of each matrix."""
    return m.diagonal(0, -2, -1).sum(-1) if not is_array(m) else np.trace(m, axis1=-2, axis2=-1)


def det(input):
    """The determinant of each square matrix (``torch.det``, ``linalg.det``)."""
    square_matrices(input, "det")
    return LinalgDetBackward0.run((input,))


class LinalgSlogdetBackward0(Op):
    """log|det A|: its gradient is g A^-T."""

    def forward(self, a):
        self.save_for_backward(a)
        return np.linalg.slogdet(a)[1]

    def backward(self, grad, a):
        if is_array(grad):
            return grad[..., None, None] * transpose_last(np.linalg.inv(a))
        return grad[..., None, None] * transpose_last(inverse(a))

    def jvp(self, tangents, out, a):
        """d log|det A| = tr(A^-1 dA)."""
        return _trace(_solved(a, tangents[0]))


def slogdet(input):
    """``(sign, logabsdet)`` of each square matrix: the sign of the determinant (no
    gradient) and the log of its absolute value, without overflow."""
    square_matrices(input, "slogdet")
    sign = np.linalg.slogdet(input._data)[0]
    return SlogdetResult(wrap(np.asarray(sign, dtype=input._data.dtype)),
                         LinalgSlogdetBackward0.run((input,)))


class SlogdetResult(tuple):
    """``torch.return_types.linalg_slogdet``: a pair with the names ``sign`` and
    ``logabsdet``."""

    def __new__(cls, sign, logabsdet):
        return super().__new__(cls, (sign, logabsdet))

    @property
    def sign(self):
        return self[0]

    @property
    def logabsdet(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.linalg_slogdet(\nsign={self[0]!r},\nlogabsdet={self[1]!r})"


def logdet(input):
    """log det(A): nan where the determinant is negative, -inf where it is 0 (``torch.logdet``)."""
    sign, logabsdet = slogdet(input)
    return where(sign < 0, np.nan, logabsdet)


# ------------------------------------------------------------------ solving A X = B

class LinalgSolveExBackward0(Op):
    """X = A^-1 B: the gradient of B is A^-T g, that of A is -(A^-T g) X^T."""
    __slots__ = ("vector",)

    def forward(self, a, b, vector):
        self.vector = vector
        try:
            out = np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise _singular("solve", a) from None
        self.save_for_backward(a, out)
        return out

    def backward(self, grad, a, out):
        if is_array(grad):
            a_t = transpose_last(a)
            grad_b = (np.linalg.solve(a_t, grad[..., None])[..., 0] if self.vector
                      else np.linalg.solve(a_t, grad))
        else:
            grad_b = solve(a.mT, grad)
        if self.vector:
            return -(grad_b[..., :, None] * out[..., None, :]), grad_b
        return -(grad_b @ transpose_last(out)), grad_b

    def jvp(self, tangents, out, a, b):
        """dX = A^-1 (dB - dA X)."""
        ta, tb = tangents
        rhs = None
        if ta is not None:
            rhs = -((ta @ out[..., None])[..., 0] if self.vector else ta @ out)
        if tb is not None:
            rhs = tb if rhs is None else rhs + tb
        if self.vector:
            if is_array(rhs):
                return np.linalg.solve(a, rhs[..., None])[..., 0]
            return solve(a, rhs)
        return _solved(a, rhs)


def solve(A, B, *, left=True):
    """X with ``A @ X = B`` (``left=False``: ``X @ A = B``), ``linalg.solve``. ``B`` is a
    vector (or a batch of them) when its shape is A's without the last dimension."""
    square_matrices(A, "solve")
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {dtypes.scalar_name(A._data.dtype)} and B of type "
                           f"{dtypes.scalar_name(B._data.dtype)} instead")
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    if (B.shape[-1] if vector else (B.shape[-2] if B.ndim >= 2 else None)) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({A.shape[-2]}x{n} and {'x'.join(map(str, B.shape))})")
    return LinalgSolveExBackward0.run((A, B), A._data, B._data, vector=vector)


# ------------------------------------------------------------------ Cholesky

class LinalgCholeskyExBackward0(Op):
    """A = L L^T. PyTorch's backward: phi(L^T gL) (its lower triangle, diagonal halved)
    between L^-T and L^-1, then made symmetric."""
    __slots__ = ("upper",)

    def forward(self, a, upper):
        self.upper = upper
        try:
            lower = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            order = _first_failing_minor(a, lambda m: np.linalg.cholesky(m)[-1, -1])
            raise LinAlgError(f"linalg.cholesky: The factorization could not be completed "
                              f"because the input is not positive-definite (the leading minor "
                              f"of order {order} is not positive-definite).") from None
        out = transpose_last(lower).copy() if upper else lower
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        lower, grad = (transpose_last(out), transpose_last(grad)) if self.upper else (out, grad)
        lower_inverse, half_diagonal = _inverse_and_phi(lower)
        phi = (transpose_last(lower) @ grad) * half_diagonal
        g = transpose_last(lower_inverse) @ phi @ lower_inverse
        return (g + transpose_last(g)) * 0.5

    def jvp(self, tangents, out, a):
        """dL = L phi(L^-1 dA L^-T), phi: the lower triangle with its diagonal halved."""
        lower = transpose_last(out) if self.upper else out
        lower_inverse, half_diagonal = _inverse_and_phi(lower)
        inner = lower_inverse @ tangents[0] @ transpose_last(lower_inverse)
        tangent = lower @ (inner * half_diagonal)
        return transpose_last(tangent) if self.upper else tangent


def _inverse_and_phi(lower):
    """L^-1, and the mask phi multiplies by (the lower triangle, the diagonal halved), as
    arrays or as Tensors (recorded) like ``lower``."""
    n = lower.shape[-1]
    kind = lower.dtype if is_array(lower) else dtypes.to_numpy(lower.dtype)
    half_diagonal = np.tril(np.ones((n, n), kind)) - np.eye(n, dtype=kind) / 2
    if is_array(lower):
        return np.linalg.inv(lower), half_diagonal
    return inverse(lower), wrap(half_diagonal)


def cholesky(A, *, upper=False):
    """L, lower triangular with a positive diagonal, with ``A = L @ L.mT`` (``upper=True``:
    U = L.mT) for a symmetric positive-definite A (``linalg.cholesky``)."""
    square_matrices(A, "cholesky")
    return LinalgCholeskyExBackward0.run((A,), A._data, upper=bool(upper))


# ------------------------------------------------------------------ cross product

class LinalgCrossBackward0(Op):
    """c = a x b along ``dim``: the gradient of a is b x g, that of b is g x a."""
    __slots__ = ("dim",)

    def forward(self, a, b, dim):
        self.dim = dim
        self.save_for_backward(a, b)
        return np.cross(a, b, axis=dim)

    def backward(self, grad, a, b):
        if is_array(grad):
            return np.cross(b, grad, axis=self.dim), np.cross(grad, a, axis=self.dim)
        return cross(b, grad, dim=self.dim), cross(grad, a, dim=self.dim)

    def jvp(self, tangents, out, a, b):
        ta, tb = tangents
        terms = []
        for first, second in ((ta, b), (a, tb)):
            if first is None or second is None:
                continue
            if is_array(first) and is_array(second):
                terms.append(np.cross(first, second, axis=self.dim))
            else:
                terms.append(cross(wrap(first) if is_array(first) else first,
                                   wrap(second) if is_array(second) else second, dim=self.dim))
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (``linalg.cross``), broadcast."""
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. "
                           f"Got {input.ndim} and {other.ndim}")
    ndim = max(input.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return LinalgCrossBackward0.run((input, other), input._data, other._data, dim=dim % ndim)


# Public functions of this module (``minigrad.<name>``), and those that are also Tensor
# methods with the tensor first: installed by ``minigrad.methods``.
FUNCTIONS = ("inverse", "det", "logdet", "slogdet",)
METHODS = ("inverse", "det", "logdet", "slogdet",)
