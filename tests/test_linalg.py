"""``minigrad.linalg`` (and ``inverse``/``det``/``logdet``/``slogdet``) against
``torch.linalg``: values, dtypes, gradients, second derivatives and errors, on batches of
random real matrices."""

import numpy as np
import pytest
import torch

import minigrad as mg

RNG_SEED = 7


def matrices(shape, kind="general", seed=RNG_SEED):
    """float64 matrices: general, symmetric positive-definite, or symmetric."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if kind == "spd":
        a = a @ a.swapaxes(-1, -2) + shape[-1] * np.eye(shape[-1])
    elif kind == "symmetric":
        a = a + a.swapaxes(-1, -2)
    return a


def run(lib, fn, arrays, dtype):
    """fn on tensors made from arrays (requiring grad); the outputs and each input's
    gradient of the sum of the outputs weighted by fixed random numbers."""
    inputs = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
    outputs = fn(lib, *inputs)
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    rng = np.random.default_rng(1)
    total = 0
    for out in outputs:  # (one draw per output, so both libraries weigh alike)
        weights = lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
        if out.requires_grad:
            total = total + (out * weights).sum()
    grads = lib.autograd.grad(total, inputs, allow_unused=True) if torch.is_tensor(total) \
        or isinstance(total, mg.Tensor) else [None] * len(inputs)
    return ([o.detach().numpy() for o in outputs], [o.dtype for o in outputs],
            [None if g is None else g.numpy() for g in grads])


def sign_fixed(lib, U, S, Vh):
    """Singular vectors up to sign: make the largest entry of each column of U positive."""
    idx = U.abs().argmax(dim=-2, keepdim=True)
    signs = U.gather(-2, idx).sign()
    return U * signs, S, Vh * signs.mT


def eigh_fixed(lib, L, V):
    """Eigenvectors up to sign: the largest entry of each column made positive."""
    idx = V.abs().argmax(dim=-2, keepdim=True)
    return L, V * V.gather(-2, idx).sign()


CASES = [
    ("inv", lambda lib, a: lib.linalg.inv(a), [(2, 3, 3)], "general"),
    ("inverse", lambda lib, a: lib.inverse(a), [(4, 4)], "general"),
    ("det", lambda lib, a: lib.linalg.det(a), [(2, 3, 3)], "general"),
    ("det method", lambda lib, a: a.det(), [(3, 3)], "general"),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a), [(2, 3, 3)], "general"),
    ("logdet", lambda lib, a: lib.logdet(a), [(2, 3, 3)], "spd"),
    ("solve matrix", lambda lib, a, b: lib.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)], "general"),
    ("solve vector", lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (3,)], "general"),
    ("solve batch vector", lambda lib, a, b: lib.linalg.solve(a, b), [(2, 3, 3), (2, 3)],
     "general"),
    ("solve broadcast", lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (2, 3, 4)], "general"),
    ("solve right", lambda lib, a, b: lib.linalg.solve(a, b, left=False), [(3, 3), (2, 3)],
     "general"),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(a), [(2, 4, 4)], "spd"),
    ("cholesky upper", lambda lib, a: lib.linalg.cholesky(a, upper=True), [(3, 3)], "spd"),
    ("cross", lambda lib, a, b: lib.linalg.cross(a, b), [(4, 3), (1, 3)], "general"),
    ("cross dim", lambda lib, a, b: lib.linalg.cross(a, b, dim=0), [(3, 2), (3, 2)], "general"),
    ("eigh", lambda lib, a: eigh_fixed(lib, *lib.linalg.eigh(a)), [(2, 4, 4)], "symmetric"),
    ("eigh U", lambda lib, a: eigh_fixed(lib, *lib.linalg.eigh(a, UPLO="U")), [(3, 3)],
     "general"),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a), [(2, 3, 3)], "symmetric"),
    ("svd tall", lambda lib, a: sign_fixed(lib, *lib.linalg.svd(a, full_matrices=False)),
     [(2, 5, 3)], "general"),
    ("svd wide", lambda lib, a: sign_fixed(lib, *lib.linalg.svd(a, full_matrices=False)),
     [(3, 5)], "general"),
    ("svd square", lambda lib, a: sign_fixed(lib, *lib.linalg.svd(a)), [(4, 4)], "general"),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), [(2, 4, 3)], "general"),
    ("pinv", lambda lib, a: lib.linalg.pinv(a), [(5, 3)], "general"),
    ("matrix_norm fro", lambda lib, a: lib.linalg.matrix_norm(a), [(2, 3, 4)], "general"),
    ("matrix_norm nuc", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [(2, 3, 4)], "general"),
    ("matrix_norm 2", lambda lib, a: lib.linalg.matrix_norm(a, 2), [(3, 4)], "general"),
    ("matrix_norm -2", lambda lib, a: lib.linalg.matrix_norm(a, -2), [(4, 3)], "general"),
    ("matrix_norm 1", lambda lib, a: lib.linalg.matrix_norm(a, 1, keepdim=True), [(2, 3, 4)],
     "general"),
    ("matrix_norm -inf", lambda lib, a: lib.linalg.matrix_norm(a, -float("inf"), dim=(0, 2)),
     [(3, 2, 4)], "general"),
    ("norm", lambda lib, a: lib.linalg.norm(a), [(3, 4)], "general"),
    ("norm ord 3 dim", lambda lib, a: lib.linalg.norm(a, 3, dim=1), [(3, 4)], "general"),
    ("norm inf matrix", lambda lib, a: lib.linalg.norm(a, float("inf")), [(3, 4)], "general"),
    ("vector_norm", lambda lib, a: lib.linalg.vector_norm(a, 1, dim=(0, 1)), [(3, 4, 2)],
     "general"),
    ("vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b), [(3, 4), (4,)], "general"),
    ("multi_dot", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)],
     "general"),
    ("matrix_power 3", lambda lib, a: lib.linalg.matrix_power(a, 3), [(2, 3, 3)], "general"),
    ("matrix_power -2", lambda lib, a: lib.linalg.matrix_power(a, -2), [(3, 3)], "general"),
    ("matrix_power 0", lambda lib, a: lib.linalg.matrix_power(a, 0) * a, [(2, 3, 3)], "general"),
    ("diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), [(2, 3, 4)], "general"),
    ("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [(5, 3), (5, 2)], "general"),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, fn, shapes, kind", CASES, ids=[c[0] for c in CASES])
def test_values_dtypes_and_gradients_match_torch(name, fn, shapes, kind, dtype):
    arrays = [matrices(s, kind if len(s) >= 2 else "general", seed=RNG_SEED + i)
              for i, s in enumerate(shapes)]
    want_out, want_dtypes, want_grads = run(torch, fn, arrays, dtype)
    got_out, got_dtypes, got_grads = run(mg, fn, arrays, dtype)
    tol = 1e-9 if dtype == "float64" else 2e-4
    assert [str(d).split(".")[-1] for d in got_dtypes] == \
        [str(d).split(".")[-1] for d in want_dtypes]
    for got, want in zip(got_out, want_out):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    for got, want in zip(got_grads, want_grads):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("name, fn, kind", [
    ("inv", lambda lib, a: lib.linalg.inv(a), "general"),
    ("det", lambda lib, a: lib.linalg.det(a), "general"),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet, "general"),
    ("solve", lambda lib, a: lib.linalg.solve(a, a[..., 0] * 2 + 1), "general"),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(a), "spd"),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a), "symmetric"),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), "general"),
    ("cross", lambda lib, a: lib.linalg.cross(a, a.flip(-1)), "general"),
])
def test_second_derivatives_match_torch(name, fn, kind):
    array = matrices((3, 3), kind)

    def hessian_diagonal(lib):
        a = lib.tensor(array, dtype=lib.float64, requires_grad=True)
        out = fn(lib, a)
        weights = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                             dtype=lib.float64)
        (g,) = lib.autograd.grad((out * weights).sum(), a, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), a)
        return h.numpy()
    np.testing.assert_allclose(hessian_diagonal(mg), hessian_diagonal(torch), rtol=1e-7,
                               atol=1e-9)


def test_a_singular_determinant_has_the_cofactor_gradient():
    array = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    grads = []
    for lib in (torch, mg):
        a = lib.tensor(array, requires_grad=True)
        lib.linalg.det(a).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-10)


def test_node_names_are_pytorchs():
    a = mg.tensor(matrices((3, 3), "spd"), requires_grad=True)
    names = [mg.linalg.inv(a).grad_fn.name(), mg.linalg.det(a).grad_fn.name(),
             mg.linalg.slogdet(a).logabsdet.grad_fn.name(),
             mg.linalg.solve(a, a).grad_fn.name(), mg.linalg.cholesky(a).grad_fn.name(),
             mg.linalg.eigh(a).eigenvalues.grad_fn.name(), mg.linalg.svd(a).U.grad_fn.name()]
    t = torch.tensor(matrices((3, 3), "spd"), requires_grad=True)
    expected = [torch.linalg.inv(t).grad_fn.name(), torch.linalg.det(t).grad_fn.name(),
                torch.linalg.slogdet(t).logabsdet.grad_fn.name(),
                torch.linalg.solve(t, t).grad_fn.name(), torch.linalg.cholesky(t).grad_fn.name(),
                torch.linalg.eigh(t).eigenvalues.grad_fn.name(),
                torch.linalg.svd(t).U.grad_fn.name()]
    assert names == expected


ERRORS = [
    ("inv singular", lambda lib: lib.linalg.inv(lib.ones(3, 3))),
    ("inv not square", lambda lib: lib.linalg.inv(lib.ones(2, 3))),
    ("inv vector", lambda lib: lib.linalg.inv(lib.ones(3))),
    ("inv integers", lambda lib: lib.linalg.inv(lib.eye(3, dtype=lib.int64))),
    ("cholesky not positive", lambda lib: lib.linalg.cholesky(-lib.eye(3))),
    ("solve singular", lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2))),
    ("solve shapes", lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2, 2))),
    ("solve dtypes", lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64))),
    ("cross length", lambda lib: lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4))),
    ("matrix_norm order", lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), 3)),
    ("norm 3d with ord", lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2)),
    ("eigh uplo", lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X")),
    ("multi_dot one", lambda lib: lib.linalg.multi_dot([lib.eye(2)])),
]


@pytest.mark.parametrize("name, call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_pytorchs_types(name, call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as got:
        call(mg)
    assert type(got.value).__name__ == type(expected.value).__name__.lstrip("_")
    assert isinstance(got.value, RuntimeError) == isinstance(expected.value, RuntimeError)


def test_linalg_error_is_a_runtime_error_named_as_in_torch():
    with pytest.raises(mg.linalg.LinAlgError, match="singular"):
        mg.linalg.inv(mg.zeros(2, 2))
    assert issubclass(mg.linalg.LinAlgError, RuntimeError)


JVP_CASES = [
    ("inv", lambda lib, a: lib.linalg.inv(a), "general"),
    ("det", lambda lib, a: lib.linalg.det(a), "general"),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet, "general"),
    ("logdet", lambda lib, a: lib.logdet(a), "spd"),
    ("solve", lambda lib, a: lib.linalg.solve(a, a[..., :2] * 2 + 1), "general"),
    ("solve vector", lambda lib, a: lib.linalg.solve(a, a[..., 0].exp()), "general"),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(a), "spd"),
    ("cholesky upper", lambda lib, a: lib.linalg.cholesky(a, upper=True), "spd"),
    ("cross", lambda lib, a: lib.linalg.cross(a, a.flip(-1) * 2), "general"),
]


@pytest.mark.parametrize("name, fn, kind", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_forward_mode_matches_torch(name, fn, kind):
    array = matrices((2, 3, 3), kind)
    tangent = matrices((2, 3, 3), "symmetric" if kind == "spd" else "general", seed=3)

    def jvp(lib):
        a, t = lib.tensor(array), lib.tensor(tangent)
        out, out_tangent = lib.func.jvp(lambda x: fn(lib, x), (a,), (t,))
        return out.numpy(), out_tangent.numpy()
    for got, want in zip(jvp(mg), jvp(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name, fn, kind", JVP_CASES[:3] + JVP_CASES[6:7],
                         ids=[c[0] for c in JVP_CASES[:3] + JVP_CASES[6:7]])
def test_forward_over_reverse_matches_torch(name, fn, kind):
    array = matrices((3, 3), kind)

    def hessian_vector(lib):
        v = lib.tensor(matrices((3, 3), "symmetric", seed=5))
        grad = lib.func.grad(lambda x: (fn(lib, x) ** 2).sum())
        return lib.func.jvp(grad, (lib.tensor(array),), (v,))[1].detach().numpy()
    np.testing.assert_allclose(hessian_vector(mg), hessian_vector(torch), rtol=1e-8, atol=1e-9)


DECOMPOSITION_JVPS = [
    ("eigh", lambda lib, a: eigh_fixed(lib, *lib.linalg.eigh(a)), (3, 3), "symmetric"),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a), (2, 3, 3), "symmetric"),
    ("svd tall", lambda lib, a: sign_fixed(lib, *lib.linalg.svd(a, full_matrices=False)),
     (2, 5, 3), "general"),
    ("svd wide", lambda lib, a: sign_fixed(lib, *lib.linalg.svd(a, full_matrices=False)),
     (3, 5), "general"),
    ("svd full", lambda lib, a: lib.linalg.svd(a)[1:], (5, 3), "general"),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), (4, 3), "general"),
    ("matrix_norm nuc", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), (3, 4), "general"),
]


@pytest.mark.parametrize("name, fn, shape, kind", DECOMPOSITION_JVPS,
                         ids=[c[0] for c in DECOMPOSITION_JVPS])
def test_decompositions_in_forward_mode_match_torch(name, fn, shape, kind):
    array = matrices(shape, kind)
    tangent = matrices(shape, kind, seed=11)

    def jvp(lib):
        out, out_tangent = lib.func.jvp(lambda x: fn(lib, x), (lib.tensor(array),),
                                        (lib.tensor(tangent),))
        pairs = zip(out, out_tangent) if isinstance(out, tuple) else [(out, out_tangent)]
        return [(o.numpy(), t.numpy()) for o, t in pairs]
    for (got, got_t), (want, want_t) in zip(jvp(mg), jvp(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(got_t, want_t, rtol=1e-8, atol=1e-9)


PRODUCTS = [((3,), "bool", (3,), "bool"), ((3,), "bool", (3,), "float64"),
            ((0,), "bool", (0,), "bool"),
            ((2, 3), "bool", (3,), "bool"), ((2, 3), "bool", (3, 2), "bool"),
            ((2, 3), "bool", (3, 2), "float64"), ((1, 2, 3), "bool", (1, 3, 2), "bool"),
            ((1, 2, 3), "bool", (1, 3, 2), "float64"), ((1, 1), "bool", (1, 1, 1), "float64"),
            ((2, 0), "bool", (0, 3), "bool"), ((3,), "bool", (3, 2), "bool"),
            ((1, 2, 3), "float64", (1, 3, 2), "bool"), ((2, 3), "int64", (3, 2), "int64")]


@pytest.mark.parametrize("sa, da, sb, db", PRODUCTS)
def test_products_of_bool_and_mixed_dtypes_refuse_as_torch(sa, da, sb, db):
    def outcome(lib):
        a = lib.zeros(sa, dtype=getattr(lib, da))
        b = lib.zeros(sb, dtype=getattr(lib, db))
        try:
            return "ok", str(a @ b).split("(")[0]
        except Exception as error:  # the type is what both must agree on
            return type(error).__name__, ""
    assert outcome(mg)[0] == outcome(torch)[0]
