"""``F.interpolate`` / ``nn.Upsample`` (issue 28: the decoders and generators of the next
programs) against PyTorch: values, dtypes, node names and gradients for each mode, size and
scale rule (a scale_factor's own scale, recompute_scale_factor, sides that keep their size),
the layers' repr, and the errors. Double backward and forward mode: the opinfo entries
(tests/opinfo/nn_ops.py, Upsample*)."""

import warnings

import numpy as np
import pytest
import torch

import minigrad as mg

CASES = [
    ((1, 2, 3, 4), dict(scale_factor=2)),
    ((1, 2, 3, 4), dict(scale_factor=1.7, mode="bilinear")),
    ((1, 2, 3, 4), dict(size=(5, 7), mode="bilinear", align_corners=True)),
    ((2, 2, 5, 6), dict(size=(3, 4), mode="bilinear")),
    ((1, 2, 3, 4), dict(size=5)),
    ((2, 3, 4), dict(scale_factor=2.5, mode="linear")),
    ((2, 3, 4), dict(size=9, mode="linear", align_corners=True)),
    ((2, 3, 7), dict(size=3, mode="nearest")),
    ((1, 2, 3, 4), dict(scale_factor=2, mode="nearest-exact")),
    ((1, 2, 7, 5), dict(size=(3, 4), mode="nearest-exact")),
    ((1, 2, 6, 8), dict(scale_factor=0.5, mode="area")),
    ((2, 3, 8), dict(size=3, mode="area")),
    ((1, 2, 3, 4), dict(scale_factor=(2, 3), mode="bilinear", recompute_scale_factor=True)),
    ((1, 2, 3, 4), dict(scale_factor=1.3, mode="bilinear")),
    ((1, 2, 3, 4), dict(scale_factor=1.3)),
    ((1, 2, 5, 5), dict(scale_factor=2.2)),
    ((1, 1, 1, 4), dict(size=(3, 4), mode="bilinear", align_corners=True)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", CASES)
def test_values_and_gradients(shape, kw, dtype):
    rng = np.random.default_rng(len(shape) + len(kw))
    a = rng.standard_normal(shape).astype(dtype)
    x_t, x_m = torch.tensor(a, requires_grad=True), mg.tensor(a, requires_grad=True)
    out_t = torch.nn.functional.interpolate(x_t, **kw)
    out_m = mg.nn.functional.interpolate(x_m, **kw)
    assert tuple(out_m.shape) == tuple(out_t.shape)
    assert str(out_m.dtype).split(".")[1] == str(out_t.dtype).split(".")[1]
    assert out_m.grad_fn.name() == out_t.grad_fn.name()
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(out_t.shape)).astype(dtype)
    out_t.backward(torch.tensor(g))
    out_m.backward(mg.tensor(g))
    np.testing.assert_allclose(x_m.grad.numpy(), x_t.grad.numpy(), rtol=tol * 4, atol=tol * 4)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"),
    lambda nn: nn.Upsample(size=(3, 4)),
    lambda nn: nn.Upsample(scale_factor=2.0, mode="bilinear", align_corners=True),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
    lambda nn: nn.UpsamplingBilinear2d(size=3),
])
def test_the_layers(make):
    theirs, mine = make(torch.nn), make(mg.nn)
    assert repr(mine) == repr(theirs)
    a = np.random.default_rng(3).standard_normal((1, 2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(mine(mg.tensor(a)).numpy(), theirs(torch.tensor(a)).numpy(),
                               rtol=1e-6, atol=1e-6)


def test_upsample_is_the_deprecated_name():
    a = np.ones((1, 1, 2, 2), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="deprecated"):
            mg.nn.functional.upsample(mg.tensor(a), scale_factor=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tuple(mg.nn.functional.upsample(mg.tensor(a), scale_factor=2).shape) == (1, 1, 4, 4)


def error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return info.value


X4 = (1, 2, 3, 4)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), size=5, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), size=(5, 5, 5)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), scale_factor=(2, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), scale_factor=2, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(2, 3, 4), scale_factor=2, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), scale_factor=2, mode="linear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), scale_factor=2, mode="foo"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(3, 4), scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), size=0),
    lambda lib: lib.nn.functional.interpolate(lib.ones(*X4), scale_factor=-1),
])
def test_errors_as_pytorchs(call):
    theirs, mine = error(torch, call), error(mg, call)
    assert type(mine) is type(theirs)
    assert str(mine) == str(theirs)
