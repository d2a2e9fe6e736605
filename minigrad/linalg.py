"""``minigrad.linalg``: PyTorch's ``torch.linalg`` for real matrices (after chapter 13).

The single-output ops live in ``ops.matrices`` (inverse, determinants, solve, Cholesky,
cross) and ``ops.reductions`` (the vector norm); here are their ``linalg`` names, the
norms built from them, and the three decompositions with several differentiable outputs,
``eigh``, ``svd`` and ``qr``, written as ``autograd.Function``s whose nodes carry PyTorch's names.
Their backward formulas are PyTorch's (``linalg_eig_backward``, ``svd_backward``,
``linalg_qr_backward``) on
Tensors, so they can be differentiated again.
"""

from collections import namedtuple

import numpy as np

from . import dtypes
from .autograd.function import Function
from .graph import is_grad_enabled
from .creation import eye, tensor
from .ops import reductions
from .ops.linalg import matmul
from .ops.matrices import LinAlgError, cholesky, cross, det, slogdet, solve
from .ops.matrices import inverse as inv
from .ops.matrices import square_matrices
from .ops.diagonals import tril, triu
from .ops.shape import cat, movedim
from .ops.sorting import amax, amin

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "vecdot", "vector_norm"]

EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SvdResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
QrResult = namedtuple("linalg_qr", ["Q", "R"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# ------------------------------------------------------------------ norms

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements by default)."""
    return reductions.norm(x, ord, dim, keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of each matrix (over the two dimensions ``dim``): 'fro', 'nuc',
    inf/-inf (largest/smallest row sum of |A|), 1/-1 (column sums), 2/-2 (largest/smallest
    singular value)."""
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim)
    rows, cols = (d % A.ndim for d in dim)
    last = movedim(A, (rows, cols), (-2, -1))
    if ord == "nuc":
        result = svdvals(last).sum(-1)
    elif ord in (2, -2):
        values = svdvals(last)
        result = amax(values, -1) if ord == 2 else amin(values, -1)
    elif ord in (1, -1, np.inf, -np.inf):
        sums = last.abs().sum(-2 if abs(ord) == 1 else -1)
        result = amax(sums, -1) if ord > 0 else amin(sums, -1)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        for d in sorted((rows, cols)):
            result = result.unsqueeze(d)
    return result


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``dim`` an int, or a 1-D tensor) or a matrix norm (``dim`` a pair,
    or a 2-D tensor with ``ord`` given); ``ord=None``: the 2-norm of the flattened tensor."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


# ------------------------------------------------------------------ products

def vecdot(x, y, *, dim=-1):
    """The dot product of the vectors along ``dim`` (broadcast)."""
    return (x * y).sum(dim)


def multi_dot(tensors):
    """``tensors[0] @ tensors[1] @ ...``; the first and the last may be vectors."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result


def matrix_power(A, n):
    """A multiplied by itself ``n`` times (n = 0: the identity; n < 0: the inverse's)."""
    square_matrices(A, "matrix_power")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype).expand(*A.shape).clone()
    base = inv(A) if n < 0 else A
    result = base
    for _ in range(abs(n) - 1):
        result = matmul(result, base)
    return result


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix (a view)."""
    return A.diagonal(offset, dim1, dim2)


# ------------------------------------------------------------------ eigh

def outputs_to_differentiate(function, ctx, *options):
    """The outputs a decomposition's backward formula reads (saved after its input A).
    Under ``create_graph`` (grad mode on inside backward) they are computed again from A
    itself, by the same Function: so they are functions of A in the recorded graph and,
    in forward mode, carry A's tangent through ``jvp``, which makes forward-over-reverse
    (``jvp(grad(f))``, ``jacfwd(jacrev(f))``) right. Without it they are the saved values."""
    A, *outputs = ctx.saved_tensors
    if is_grad_enabled():
        return function.apply(A, *options)
    return outputs


class LinalgEigh(Function):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices."""
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, A, uplo):
        values, vectors = np.linalg.eigh(A.detach().numpy(), UPLO=uplo)
        L, V = A.new_tensor(values), A.new_tensor(vectors)
        ctx.save_for_backward(A, L, V)
        ctx.uplo = uplo
        ctx.save_for_forward(L, V)
        return L, V

    @staticmethod
    def jvp(ctx, tangent, _):
        """dL = diag(V^T dA V); dV = V (F o V^T dA V), F_ij = 1 / (L_j - L_i) off the
        diagonal, 0 on it."""
        L, V = ctx.saved_tensors
        inner = V.mT @ tangent @ V
        n = L.shape[-1]
        identity = eye(n, dtype=L.dtype)
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity
        return inner.diagonal(0, -2, -1), V @ (inner / E * (1 - identity))

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        L, V = outputs_to_differentiate(LinalgEigh, ctx, ctx.uplo)
        VhgV = V.mT @ grad_vectors
        VhgV = (VhgV - VhgV.mT) * 0.5
        n = L.shape[-1]
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye(n, dtype=L.dtype)
        inner = VhgV / E + grad_values.unsqueeze(-1) * eye(n, dtype=L.dtype)
        return V @ inner @ V.mT, None


def eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix (only its ``UPLO`` triangle
    is read), eigenvalues ascending."""
    square_matrices(A, "eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(*LinalgEigh.apply(A, UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of each symmetric matrix, ascending."""
    return eigh(A, UPLO).eigenvalues


# ------------------------------------------------------------------ svd

class LinalgSvd(Function):
    """``A = U diag(S) Vh``; PyTorch's ``svd_backward`` (full matrices narrowed to k)."""
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, A, full_matrices):
        u, s, vh = np.linalg.svd(A.detach().numpy(), full_matrices=full_matrices)
        U, S, Vh = A.new_tensor(u), A.new_tensor(s), A.new_tensor(vh)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(A, U, S, Vh)
        ctx.save_for_forward(U, S, Vh)
        ctx.full_matrices = full_matrices
        return U, S, Vh

    @staticmethod
    def jvp(ctx, tangent, _):
        """PyTorch's ``linalg_svd_jvp``: with dP = U^T dA V, dS = diag(dP) and E as in
        backward, dU = U (sym(dP S) / E), dVh = -(sym(S dP) / E) Vh, plus the parts outside
        U's or V's column space; zeros for the extra columns of full matrices."""
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        m, n = U.shape[-2], Vh.shape[-1]
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        V = Vh.mT
        identity = eye(k, dtype=S.dtype)
        dP = U.mT @ tangent @ V
        dS = dP.diagonal(0, -2, -1)
        dP = dP - dS.unsqueeze(-1) * identity
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + identity
        dU = U @ (_sym(dP * S.unsqueeze(-2)) / E)
        if m > n:
            dAVSinv = tangent @ (V / S.unsqueeze(-2))
            dU = dU + dAVSinv - U @ (U.mT @ dAVSinv)
            if ctx.full_matrices:
                dU = cat([dU, dU.new_zeros((*dU.shape[:-1], m - n))], -1)
        dVh = -(_sym(S.unsqueeze(-1) * dP) / E) @ Vh
        if m < n:
            UHdASinv = (U.mT / S.unsqueeze(-1)) @ tangent
            dVh = dVh + UHdASinv - (UHdASinv @ V) @ Vh
            if ctx.full_matrices:
                dVh = cat([dVh, dVh.new_zeros((*dVh.shape[:-2], n - m, n))], -2)
        return dU, dS, dVh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = outputs_to_differentiate(LinalgSvd, ctx, ctx.full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :, :k]
        gVh = None if gVh is None else gVh[..., :k, :]
        return _svd_backward(gU, gS, gVh, U, S, Vh), None


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's formula: gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + I gS] V^T
    plus the parts outside U's and V's column spaces."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    V, gV = Vh.mT, (None if gVh is None else gVh.mT)
    UhgU = None if gU is None else _skew(U.mT @ gU)
    VhgV = None if gV is None else _skew(Vh @ gV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(S.shape[-1], dtype=S.dtype)
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = UhgU * S.unsqueeze(-2) / E
    else:
        gA = S.unsqueeze(-1) * VhgV / E
    if gS is not None:
        gA = gA + gS.unsqueeze(-1) * eye(S.shape[-1], dtype=S.dtype)
    if m > n and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        gA = U @ gA + gUSinv - U @ (U.mT @ gUSinv)
        return gA @ Vh
    if m < n and gV is not None:
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA @ Vh + gVSinv.mT - (gVSinv.mT @ V) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


def _skew(A):
    return A - A.mT


def _sym(A):
    return A + A.mT


def svd(A, full_matrices=True):
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh``, singular values descending."""
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. "
                           f"Got {str(A.dtype).split('.')[-1].capitalize()}")
    return SvdResult(*LinalgSvd.apply(A, bool(full_matrices)))


def svdvals(A):
    """The singular values of each matrix, descending."""
    return svd(A, full_matrices=False).S


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse: singular values below ``max(atol, rtol * largest)`` count as 0
    (default rtol: machine epsilon times the larger side)."""
    U, S, Vh = svd(A, full_matrices=False)
    if atol is None and rtol is None:
        rtol = np.finfo(S.detach().numpy().dtype).eps * max(A.shape[-2:])
    largest = S.detach().amax(-1, keepdim=True) if S.shape[-1] else S.detach()
    cutoff = max(atol or 0.0, 0.0) + (rtol or 0.0) * largest
    kept = S > cutoff
    S_inverse = (1 / S.where(kept, S.new_ones(()))).where(kept, S.new_zeros(()))
    return (Vh.mT * S_inverse.unsqueeze(-2)) @ U.mT


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of ``A X ~ B`` (through the pseudo-inverse); like PyTorch
    on the CPU (driver 'gelsy'), residuals are returned for m > n and full rank, singular
    values are empty."""
    solution = pinv(A, rtol=rcond) @ B if rcond is not None else pinv(A) @ B
    rank = tensor(np.linalg.matrix_rank(A.detach().numpy()))
    m, n = A.shape[-2:]
    if m > n and bool((rank == n).all()):
        residuals = ((A @ solution - B) ** 2).sum(-2).detach()
    else:
        residuals = A.new_zeros((0,))
    return LstsqResult(solution, residuals, rank, A.new_zeros((0,)))


# ------------------------------------------------------------------ qr

QR_MODES = ("reduced", "complete", "r")


class LinalgQr(Function):
    """``A = Q R``, Q with orthonormal columns, R upper triangular (LAPACK's Householder QR,
    numpy's and PyTorch's, so the same signs)."""
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, A, mode):
        a = A.detach().numpy()
        if mode == "r":
            q, r = np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
        else:
            q, r = np.linalg.qr(a, mode=mode)
        Q, R = A.new_tensor(q), A.new_tensor(r)
        ctx.mode = mode
        ctx.save_for_backward(A, Q, R)
        ctx.save_for_forward(Q, R)
        return Q, R

    @staticmethod
    def jvp(ctx, tangent, _):
        """With C = Q^T dA R^-1 and its skew part Omega = tril(C, -1) - tril(C, -1)^T
        (Q^T dQ, as Q^T Q = I): dR = (C - Omega) R and dQ = dA R^-1 - Q (C - Omega); for a
        wide A = [X | Y], R = [U | V], the square QR of X, then dV = Q^T (dY - dQ V)."""
        Q, R = ctx.saved_tensors
        _differentiable(ctx.mode, Q, R)
        m, n = Q.shape[-2], R.shape[-1]
        U = R if m >= n else R[..., :, :m]
        dX = tangent if m >= n else tangent[..., :, :m]
        dX_Uinv = solve(U, dX, left=False)  # dX U^-1
        C = Q.mT @ dX_Uinv
        lower = tril(C, -1)
        upper = C - (lower - lower.mT)  # C - Omega
        dQ = dX_Uinv - Q @ upper
        dR = upper @ U
        if m < n:
            dV = Q.mT @ (tangent[..., :, m:] - dQ @ R[..., :, m:])
            dR = cat([dR, dV], -1)
        return dQ, dR

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = outputs_to_differentiate(LinalgQr, ctx, ctx.mode)
        _differentiable(ctx.mode, Q, R)
        return _qr_backward(gQ, gR, Q, R), None


def _differentiable(mode, Q, R):
    """PyTorch's refusals: mode 'r' computes no Q; a complete QR of a tall A leaves Q's
    last columns undetermined."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if mode == "complete" and Q.shape[-2] > R.shape[-1]:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")


def _qr_backward(gQ, gR, Q, R):
    """PyTorch's ``linalg_qr_backward``. With M = gR R^T - Q^T gQ: for m >= n, gA = (gQ + Q
    sym(M)) R^-T, sym(M) = triu(M) + triu(M)^T with the diagonal counted once; for m < n,
    gA = [Q tril(M^T - M) U^-T | 0] + Q gR (U: R's first m columns)."""
    m, n = Q.shape[-2], R.shape[-1]
    M = gR @ R.mT - Q.mT @ gQ
    if m >= n:
        upper = triu(M)
        sym = upper + upper.mT
        sym = sym - sym * eye(n, dtype=sym.dtype) * 0.5
        return solve(R.mT, Q @ sym + gQ, left=False)  # (...) R^-T
    gA = Q @ tril(M.mT - M)
    gA = solve(R[..., :, :m].mT, gA, left=False)  # (...) U^-T
    gA = cat([gA, gA.new_zeros((*gA.shape[:-1], n - m))], -1)
    return gA + Q @ gR


def qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q @ R``: 'reduced' (Q m x k, R k x n, k = min(m, n)),
    'complete' (Q m x m, R m x n), 'r' (R only; Q is empty and nothing is differentiable)."""
    if mode not in QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.qr: Expected a floating point or complex tensor as input. "
                           f"Got {dtypes.scalar_name(A._data.dtype)}: convert it first "
                           "(A.float())")
    return QrResult(*LinalgQr.apply(A, mode))
