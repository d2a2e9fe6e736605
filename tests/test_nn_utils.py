"""nn.utils against torch.nn.utils: gradient clipping by norm and by value, and parameters
as one vector. Each check gives both libraries the very same gradients."""

import numpy as np
import pytest

import minigrad as mg

R = np.random.default_rng(10)
INF = float("inf")


def _parameters(lib, grads, dtype):
    """Leaves that require grad, with the given gradients (None: no gradient)."""
    params = []
    for i, g in enumerate(grads):
        shape = (2, 3) if g is None else g.shape
        p = lib.tensor(np.full(shape, float(i)), dtype=dtype, requires_grad=True)
        if g is not None:
            p.grad = lib.tensor(g, dtype=dtype)
        params.append(p)
    return params


def _clipped(lib, grads, dtype_name, **kwargs):
    params = _parameters(lib, grads, getattr(lib, dtype_name))
    total = lib.nn.utils.clip_grad_norm_(params, **kwargs)
    return total, [None if p.grad is None else p.grad.numpy().copy() for p in params]


GRADS = [R.standard_normal((3, 4)) * 3, None, R.standard_normal(5), R.standard_normal((2, 2, 2))]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, 1, INF, 3.0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_pytorch(torch, dtype_name, norm_type, max_norm):
    ours, our_grads = _clipped(mg, GRADS, dtype_name, max_norm=max_norm, norm_type=norm_type)
    theirs, their_grads = _clipped(torch, GRADS, dtype_name, max_norm=max_norm,
                                   norm_type=norm_type)
    rtol = 1e-12 if dtype_name == "float64" else 1e-6
    assert ours.dtype.name == dtype_name == str(theirs.dtype).split(".")[1]
    assert ours.shape == () and not ours.requires_grad
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol)
    for g, h, original in zip(our_grads, their_grads, GRADS):
        assert (g is None) == (h is None) == (original is None)
        if h is not None:
            assert g.dtype == h.dtype
            np.testing.assert_allclose(g, h, rtol=rtol)
            if max_norm > 1e5:  # small enough already: multiplied by 1.0
                np.testing.assert_allclose(g, original, rtol=rtol)


def test_clip_grad_norm_leaves_the_norm_at_max_norm():
    model = mg.nn.Sequential(mg.nn.Linear(4, 8), mg.nn.LeakyReLU(), mg.nn.Linear(8, 1))
    loss = (model(mg.randn(16, 4)) * 100).pow(2).mean()
    loss.backward()
    total = mg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    assert total.item() > 1.0
    after = np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum() for p in model.parameters()))
    assert after == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_norm_of_one_tensor_and_of_nothing(torch):
    results = []
    for lib in (mg, torch):
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        w.grad = lib.tensor([3.0, 4.0])
        total = lib.nn.utils.clip_grad_norm_(w, 2.5)
        nothing = lib.nn.utils.clip_grad_norm_([lib.ones(2, requires_grad=True)], 1.0)
        results.append([total.item(), w.grad.tolist(), nothing.item(), str(nothing.dtype)[-7:]])
    np.testing.assert_allclose(results[0][:1] + results[0][1], results[1][:1] + results[1][1],
                               rtol=1e-6)
    assert results[0][2:] == results[1][2:] == [0.0, "float32"]


def test_an_empty_generator_is_warned_about(torch):
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="empty generator"):
            total = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        assert total.item() == 0.0


@pytest.mark.parametrize("bad", [float("nan"), INF, -INF])
def test_a_non_finite_gradient_refused_changes_nothing(torch, bad):
    grads = [np.array([1.0, bad, 2.0]), np.array([[5.0, -6.0]])]
    for lib in (mg, torch):
        params = _parameters(lib, grads, lib.float32)
        with pytest.raises(RuntimeError, match="non-finite"):
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
        for p, g in zip(params, grads):
            np.testing.assert_array_equal(p.grad.numpy(), g.astype(np.float32))


@pytest.mark.parametrize("bad", [float("nan"), INF])
def test_a_non_finite_gradient_allowed_is_scaled_as_pytorch_does(torch, bad):
    grads = [np.array([1.0, bad, 2.0]), np.array([[5.0, -6.0]])]
    ours, our_grads = _clipped(mg, grads, "float64", max_norm=1.0)
    theirs, their_grads = _clipped(torch, grads, "float64", max_norm=1.0)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_array_equal(g, h)  # nan where PyTorch has nan
    assert not np.isfinite(our_grads[0]).all()


@pytest.mark.parametrize("clip_value", [0.5, 2, 100.0])
def test_clip_grad_value_matches_pytorch(torch, clip_value):
    results = []
    for lib in (mg, torch):
        params = _parameters(lib, GRADS, lib.float32)
        assert lib.nn.utils.clip_grad_value_(params, clip_value) is None
        results.append([None if p.grad is None else p.grad.numpy().copy() for p in params])
    for g, h, original in zip(*results, GRADS):
        if original is None:
            assert g is None and h is None
        else:
            np.testing.assert_array_equal(g, h)
            assert np.abs(g).max() <= clip_value
    if clip_value < 1:
        assert any(np.abs(g).max() == np.float32(clip_value) for g in results[0] if g is not None)


def test_clip_grad_value_of_one_tensor(torch):
    results = []
    for lib in (mg, torch):
        w = lib.zeros(3, requires_grad=True)
        w.grad = lib.tensor([-3.0, 0.2, 7.0])
        lib.nn.utils.clip_grad_value_(w, 1)
        results.append(w.grad.tolist())
    assert results[0] == results[1] == pytest.approx([-1.0, 0.2, 1.0])


def _round_trip(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Linear(2, 1, bias=False))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) + 10 * i)
    vec = lib.nn.utils.parameters_to_vector(model.parameters())
    node = type(vec.grad_fn).__name__
    (vec * lib.arange(vec.numel(), dtype=lib.float32)).sum().backward()
    grads = [p.grad.tolist() for p in model.parameters()]
    new = lib.arange(vec.numel(), dtype=lib.float32) * -1
    lib.nn.utils.vector_to_parameters(new, model.parameters())
    values = [p.tolist() for p in model.parameters()]
    new[0] = 100.0  # the parameters now share the vector's memory, as in PyTorch
    shares = model[0].weight[0, 0].item()
    out = model(lib.ones(1, 3)).tolist()
    return [vec.tolist(), node, vec.requires_grad, grads, values, shares, out]


def test_parameters_to_vector_and_back_match_pytorch(torch):
    ours, theirs = _round_trip(mg), _round_trip(torch)
    assert ours == theirs
    assert ours[1] == "CatBackward0" and ours[5] == 100.0


def test_a_vector_too_short_is_refused(torch):
    for lib in (mg, torch):
        params = [lib.zeros(2, 3, requires_grad=True)]
        with pytest.raises(RuntimeError):
            lib.nn.utils.vector_to_parameters(lib.ones(4), params)
        assert params[0].tolist() == [[0.0] * 3] * 2


def test_a_vector_of_the_wrong_length_changes_no_parameter():
    model = mg.nn.Linear(2, 3)
    before = [p.tolist() for p in model.parameters()]
    with pytest.raises(RuntimeError, match="7 numbers but the parameters need 9"):
        mg.nn.utils.vector_to_parameters(mg.zeros(7), model.parameters())
    assert [p.tolist() for p in model.parameters()] == before
