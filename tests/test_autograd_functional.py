"""minigrad.autograd.functional against torch.autograd.functional: the same values, the same
structure (a tensor for a tensor, tuples for tuples) and the same errors, on functions made
of ops that are twice differentiable (+, -, *, neg, sum)."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import functional as F
from parity import errors_of_both

X = np.array([1.0, 2.0, -3.0])
Y = np.array([0.5, -1.0, 2.0])
M = np.array([[1.0, -2.0], [0.5, 3.0]])


def f_one(lib, x):
    return x * x * x - x


def f_two(lib, x, y):
    return (x * y * x - y).sum() * x


def f_scalar(lib, x, y):
    return (x * y * x * x - y * y).sum() + (-x).sum()


def f_tuple_out(lib, x, y):
    return x * y, (x - y).sum()


CASES = [("one", f_one, (X,)), ("two", f_two, (X, Y)), ("matrix", f_one, (M,)),
         ("tuple_out", f_tuple_out, (X, Y))]


def _run(lib, name, fn, values, single, **options):
    inputs = tuple(lib.tensor(v) for v in values)
    if single:
        inputs = inputs[0]
    func = (lambda *a: fn(lib, *a))
    return getattr(lib.autograd.functional, name)(func, inputs, **options)


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif theirs is None:
        assert ours is None
    else:
        assert isinstance(ours, mg.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                   rtol=1e-12, atol=1e-12)


def _v(lib, shapes, single, k=0):
    rng = np.random.default_rng(k)
    vs = tuple(lib.tensor(rng.standard_normal(s)) for s in shapes)
    return vs[0] if single else vs


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_jacobian(torch, case):
    _, fn, values = case
    single = len(values) == 1
    _same(_run(mg, "jacobian", fn, values, single), _run(torch, "jacobian", fn, values, single))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vjp(torch, case):
    _, fn, values = case
    single = len(values) == 1
    probe = fn(np, *values)
    shapes = [np.shape(p) for p in probe] if isinstance(probe, tuple) else [np.shape(probe)]
    one_out = not isinstance(probe, tuple)
    ours = _run(mg, "vjp", fn, values, single, v=_v(mg, shapes, one_out))
    theirs = _run(torch, "vjp", fn, values, single, v=_v(torch, shapes, one_out))
    _same(ours, theirs)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_jvp(torch, case):
    _, fn, values = case
    single = len(values) == 1
    shapes = [np.shape(v) for v in values]
    ours = _run(mg, "jvp", fn, values, single, v=_v(mg, shapes, single, 1))
    theirs = _run(torch, "jvp", fn, values, single, v=_v(torch, shapes, single, 1))
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
@pytest.mark.parametrize("single", [True, False])
def test_second_order(torch, name, single):
    values = (X,) if single else (X, Y)
    fn = (lambda lib, x: (x * x * x).sum() - (x * x).sum()) if single else f_scalar
    options = {} if name == "hessian" else {"v": _v(mg, [X.shape] * len(values), single, 2)}
    ours = _run(mg, name, fn, values, single, **options)
    if options:
        options = {"v": _v(torch, [X.shape] * len(values), single, 2)}
    _same(ours, _run(torch, name, fn, values, single, **options))


def test_vjp_without_v_on_one_number(torch):
    _same(_run(mg, "vjp", f_scalar, (X, Y), False), _run(torch, "vjp", f_scalar, (X, Y), False))


@pytest.mark.parametrize("name", ["jacobian", "vjp", "jvp", "hessian", "hvp", "vhp"])
def test_create_graph_keeps_history(torch, name):
    """create_graph=True: the results can be differentiated again, with the same numbers."""
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        fn = lambda a: (a * a * a).sum() if name in ("hessian", "hvp", "vhp") else a * a * a
        extra = {} if name in ("jacobian", "hessian") else {"v": lib.tensor(Y)}
        result = getattr(lib.autograd.functional, name)(fn, x, create_graph=True, **extra)
        value = result if name in ("jacobian", "hessian") else result[1]
        assert value.requires_grad
        return value, lib.autograd.grad((value * value).sum(), x)[0]
    _same(run(mg), run(torch))


def test_inputs_are_left_alone(torch):
    """Without create_graph, the results are detached and the caller's graph is untouched."""
    x = mg.tensor(X, requires_grad=True)
    out, g = F.vjp(lambda a: (a * a).sum(), x)
    assert not out.requires_grad and not g.requires_grad and x.grad is None
    j = F.jacobian(lambda a: a * a, x)
    assert not j.requires_grad and x.grad is None


@pytest.mark.parametrize("name", ["jacobian", "vjp", "jvp", "hessian", "hvp", "vhp"])
def test_strict_independent_input(torch, name):
    def mistake(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        fn = (lambda a, b: (a * a).sum()) if name in ("vjp", "hessian", "hvp", "vhp") \
            else (lambda a, b: a * a)
        extra = {"v": (lib.tensor(X), lib.tensor(Y))} if name in ("jvp", "hvp", "vhp") else {}
        getattr(lib.autograd.functional, name)(fn, (x, y), strict=True, **extra)
    ours, theirs = errors_of_both(mistake, torch)
    assert type(ours) is type(theirs)


def test_not_strict_independent_input_gives_zeros(torch):
    fn = lambda lib, a, b: (a * a).sum()  # noqa: E731
    _same(_run(mg, "vjp", fn, (X, Y), False), _run(torch, "vjp", fn, (X, Y), False))
    fn2 = lambda lib, a, b: a * a  # noqa: E731
    _same(_run(mg, "jacobian", fn2, (X, Y), False), _run(torch, "jacobian", fn2, (X, Y), False))


def test_strict_output_without_grad(torch):
    def mistake(lib):
        lib.autograd.functional.vjp(lambda a: lib.ones(3), lib.tensor(X), lib.ones(3),
                                    strict=True)
    ours, theirs = errors_of_both(mistake, torch)
    assert type(ours) is type(theirs) and "does not require gradients" in str(ours)


@pytest.mark.parametrize("mistake", [
    lambda lib: lib.autograd.functional.vjp(lambda a: a * 2, lib.tensor(X)),  # v needed
    lambda lib: lib.autograd.functional.vjp(lambda a: a * 2, lib.tensor(X), lib.ones(4)),
    lambda lib: lib.autograd.functional.vjp(lambda a: a * 2, lib.tensor(X),
                                            (lib.ones(3), lib.ones(3))),
    lambda lib: lib.autograd.functional.vjp(lambda a: 3, lib.tensor(X)),
    lambda lib: lib.autograd.functional.vjp(lambda a: a * 2, [1.0]),
    lambda lib: lib.autograd.functional.hessian(lambda a: a * 2, lib.tensor(X)),
    lambda lib: lib.autograd.functional.hvp(lambda a: (a, a), lib.tensor(X), lib.tensor(X)),
    lambda lib: lib.autograd.functional.jvp(lambda a: a * 2, lib.tensor(X)),
    lambda lib: lib.autograd.functional.jacobian(lambda a: a * 2, lib.tensor(X),
                                                 strategy="forward-mode"),
], ids=["v_missing", "v_shape", "v_length", "not_tensor_out", "list_inputs", "hessian_vector",
        "hvp_tuple", "jvp_v_missing", "forward_mode"])
def test_errors_as_pytorch(torch, mistake):
    ours, theirs = errors_of_both(mistake, torch)
    assert type(ours) is type(theirs), (ours, theirs)


def test_forward_mode_message():
    with pytest.raises(NotImplementedError, match="reverse-mode"):
        F.jacobian(lambda a: a * 2, mg.tensor(X), vectorize=True, strategy="forward-mode")


def test_vectorize_gives_the_same(torch):
    ours = F.jacobian(lambda a: a * a, mg.tensor(X), vectorize=True)
    theirs = torch.autograd.functional.jacobian(lambda a: a * a, torch.tensor(X), vectorize=True)
    _same(ours, theirs)
