"""``linalg.qr`` (issue 28) against PyTorch: the three modes' shapes and values (LAPACK's
Householder QR in both, so the same signs), gradients of Q and R for the reduced QR and the
complete one where it is differentiable (tall, square and wide, batched), second derivatives,
forward mode (``func.jvp`` and forward-over-reverse), and PyTorch's errors."""

import numpy as np
import pytest
import torch

import minigrad as mg

SHAPES = [(5, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 4)]


def sample(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def close(mine, theirs, tol=1e-10):
    np.testing.assert_allclose(np.asarray(mine.detach().numpy()),
                               np.asarray(theirs.detach().numpy()), rtol=tol, atol=tol)


def weighted(lib, Q, R, seed=1):
    """A scalar that depends on every entry of Q and R (fixed random weights)."""
    rng = np.random.default_rng(seed)
    return ((Q * lib.tensor(rng.standard_normal(tuple(Q.shape)))).sum()
            + (R * lib.tensor(rng.standard_normal(tuple(R.shape)))).sum())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_values_and_shapes(shape, mode):
    a = sample(shape)
    mine, theirs = mg.linalg.qr(mg.tensor(a), mode=mode), torch.linalg.qr(torch.tensor(a), mode=mode)
    for got, want in zip(mine, theirs):
        assert tuple(got.shape) == tuple(want.shape)
        close(got, want)
    assert tuple(mine.Q.shape) == tuple(theirs.Q.shape)
    assert mine.R.dtype == mg.float64


def test_float32_and_the_product():
    a = sample((4, 3)).astype(np.float32)
    Q, R = mg.linalg.qr(mg.tensor(a))
    assert Q.dtype == mg.float32 and R.dtype == mg.float32
    np.testing.assert_allclose((Q @ R).numpy(), a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((Q.mT @ Q).numpy(), np.eye(3), atol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_gradients(shape, mode):
    a = sample(shape)
    mine, theirs = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tall = shape[-2] > shape[-1]
    if mode == "complete" and tall:
        for lib, x in ((torch, theirs), (mg, mine)):
            with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
                weighted(lib, *lib.linalg.qr(x, mode=mode)).backward()
        return
    Qm, Rm = mg.linalg.qr(mine, mode=mode)
    assert Qm.grad_fn.name() == "LinalgQrBackward0"
    weighted(mg, Qm, Rm).backward()
    weighted(torch, *torch.linalg.qr(theirs, mode=mode)).backward()
    close(mine.grad, theirs.grad)


@pytest.mark.parametrize("which", ["Q", "R"])
def test_gradient_of_one_output(which):
    a = sample((4, 3), 2)
    grads = []
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        getattr(lib.linalg.qr(x), which).pow(3).sum().backward()
        grads.append(x.grad)
    close(*grads)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_second_derivatives(shape):
    a = sample(shape, 3)
    v = sample(shape, 4)
    results = []
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(weighted(lib, *lib.linalg.qr(x)), x, create_graph=True)
        (h,) = lib.autograd.grad((g * lib.tensor(v)).sum(), x)
        results.append(h)
    close(*results, tol=1e-8)


@pytest.mark.parametrize("shape", SHAPES)
def test_forward_mode(shape):
    a, t = sample(shape, 5), sample(shape, 6)
    outs = [lib.func.jvp(lambda x, lib=lib: tuple(lib.linalg.qr(x)), (lib.tensor(a),),
                         (lib.tensor(t),)) for lib in (mg, torch)]
    (mine, mine_t), (theirs, theirs_t) = outs
    for got, want in zip(mine_t, theirs_t):
        close(got, want, 1e-9)


def test_forward_over_reverse():
    a, t = sample((4, 3), 7), sample((4, 3), 8)
    results = []
    for lib in (mg, torch):
        grad = lib.func.grad(lambda x, lib=lib: weighted(lib, *lib.linalg.qr(x)))
        results.append(lib.func.jvp(grad, (lib.tensor(a),), (lib.tensor(t),))[1])
    close(*results, tol=1e-8)


def error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return info.value


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.qr(lib.ones(3, 3), mode="x"),
    lambda lib: lib.linalg.qr(lib.ones(3)),
    lambda lib: lib.linalg.qr(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True), mode="r").R.sum().backward(),
])
def test_errors(call):
    theirs, mine = error(torch, call), error(mg, call)
    assert type(mine) is type(theirs)
    assert str(theirs)[:45] in str(mine)


DECOMPOSITIONS = {
    "eigvalsh": lambda lib, x: (lib.linalg.eigvalsh(x) ** 3).sum(),
    "eigh": lambda lib, x: (lib.linalg.eigh(x)[1] ** 4).sum() + (lib.linalg.eigh(x)[0] ** 3).sum(),
    "svdvals": lambda lib, x: (lib.linalg.svdvals(x) ** 3).sum(),
    "svd": lambda lib, x: sum((out ** 4).sum() for out in lib.linalg.svd(x)),
    "qr R": lambda lib, x: (lib.linalg.qr(x).R ** 3).sum(),
}


@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_forward_over_reverse_of_every_decomposition(name):
    """Under create_graph the saved outputs are computed again from A, so they carry A's
    tangent (before: Hessian-vector products of eigh and svd by jvp(grad(f)) came out
    wrong, the saved eigenvalues having no tangent)."""
    a, t = sample((3, 3), 9), sample((3, 3), 10)
    a, t = a + a.T, t + t.T
    results = []
    for lib in (mg, torch):
        grad = lib.func.grad(lambda x, lib=lib: DECOMPOSITIONS[name](lib, x))
        results.append(lib.func.jvp(grad, (lib.tensor(a),), (lib.tensor(t),))[1])
    close(*results, tol=1e-8)
