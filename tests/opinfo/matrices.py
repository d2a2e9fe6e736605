"""Registry entries of square-matrix algebra (``minigrad/ops/matrices.py``): inverse,
determinants, solve, Cholesky and the cross product, on well-conditioned samples."""

import numpy as np

from . import op


def well_conditioned(shape):
    """Random matrices plus a multiple of the identity: far from singular."""
    def maker(rng, dtype):
        a = rng.standard_normal(shape) + 3 * np.eye(shape[-1])
        return a.astype(dtype)
    return maker


def positive_definite(shape):
    """Symmetric positive-definite matrices: ``B B^T + n I``."""
    def maker(rng, dtype):
        b = rng.standard_normal(shape)
        return (b @ b.swapaxes(-1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    return maker


op("LinalgInvExBackward0", lambda lib, a: lib.linalg.inv(a), args=(well_conditioned((2, 3, 3)),))
op("LinalgInvExBackward0", lambda lib, a: a.inverse(), args=(well_conditioned((3, 3)),),
   tag="method")
op("LinalgDetBackward0", lambda lib, a: lib.linalg.det(a), args=(well_conditioned((2, 3, 3)),))
op("LinalgDetBackward0", lambda lib, a: a.det(), args=(well_conditioned((3, 3)),), tag="method")
op("LinalgSlogdetBackward0", lambda lib, a: lib.linalg.slogdet(a).logabsdet,
   args=(well_conditioned((2, 3, 3)),))
op("LinalgSlogdetBackward0", lambda lib, a: lib.logdet(a), args=(positive_definite((3, 3)),),
   tag="logdet", torch_node=None)
op("LinalgSolveExBackward0", lambda lib, a, b: lib.linalg.solve(a, b),
   args=(well_conditioned((2, 3, 3)), (2, 3, 2)))
op("LinalgSolveExBackward0", lambda lib, a, b: lib.linalg.solve(a, b),
   args=(well_conditioned((3, 3)), (3,)), tag="vector")
op("LinalgCholeskyExBackward0", lambda lib, a: lib.linalg.cholesky(a),
   args=(positive_definite((2, 3, 3)),))
op("LinalgCholeskyExBackward0", lambda lib, a: lib.linalg.cholesky(a, upper=True),
   args=(positive_definite((3, 3)),), tag="upper")
op("LinalgCrossBackward0", lambda lib, a, b: lib.linalg.cross(a, b), args=((4, 3), (1, 3)))
