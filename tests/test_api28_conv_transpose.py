"""``nn.ConvTranspose1d/2d`` and ``F.conv_transpose1d/2d`` (issue 28, the DCGAN and autoencoder
programs) against PyTorch: values and gradients for the settings (stride, padding,
output_padding, groups, dilation, bias), the layers' parameters, init bounds, repr,
``output_size``, and the errors. The op's own checks (double backward, forward mode) are
its opinfo entries (tests/opinfo/nn_ops.py, tag "transposed")."""

import math

import numpy as np
import pytest
import torch

import minigrad as mg

RNG = np.random.default_rng(28)

CASES_2D = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=2, groups=2, dilation=2, output_padding=1),
    dict(stride=(2, 3), padding=(1, 0), output_padding=(0, 2)),
    dict(stride=1, dilation=3, output_padding=2),
]


def both(shape, requires_grad=True, dtype=np.float64):
    a = RNG.standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=requires_grad),
            mg.tensor(a, requires_grad=requires_grad))


def assert_close(mine, theirs, tol=1e-10):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def check(fn, shapes, groups=1):
    pairs = [both(s) for s in shapes]
    out_t = fn(torch, *[t for t, _ in pairs])
    out_m = fn(mg, *[m for _, m in pairs])
    assert tuple(out_m.shape) == tuple(out_t.shape)
    assert out_m.dtype == mg.float64
    assert_close(out_m, out_t)
    g = RNG.standard_normal(tuple(out_t.shape))
    out_t.backward(torch.tensor(g))
    out_m.backward(mg.tensor(g))
    for t, m in pairs:
        assert_close(m.grad, t.grad)
    return out_m


@pytest.mark.parametrize("kw", CASES_2D)
def test_conv_transpose2d_values_and_gradients(kw):
    groups = kw.get("groups", 1)
    out = check(lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(x, w, b, **kw),
                [(2, 4, 5, 6), (4, 3, 3, 2), (3 * groups,)])
    assert type(out.grad_fn).__name__ == "ConvolutionBackward0"


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=3, groups=2, dilation=2, output_padding=1)])
def test_conv_transpose1d_values_and_gradients(kw):
    groups = kw.get("groups", 1)
    check(lambda lib, x, w, b: lib.nn.functional.conv_transpose1d(x, w, b, **kw),
          [(2, 4, 7), (4, 3, 3), (3 * groups,)])


def test_unbatched_and_no_bias():
    check(lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
          [(4, 5, 6), (4, 3, 3, 2)])
    check(lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w, None, 2, 1, 1),
          [(4, 5), (4, 2, 3)])


def test_float32_stays_float32():
    x_t, x_m = both((1, 2, 3, 3), dtype=np.float32)
    w_t, w_m = both((2, 2, 2, 2), dtype=np.float32)
    out = mg.nn.functional.conv_transpose2d(x_m, w_m, stride=2)
    assert out.dtype == mg.float32
    assert_close(out, torch.nn.functional.conv_transpose2d(x_t, w_t, stride=2), 1e-5)


@pytest.mark.parametrize("cls,shape", [("ConvTranspose2d", (2, 4, 5, 5)),
                                       ("ConvTranspose1d", (2, 4, 9))])
def test_the_layers_as_pytorchs(cls, shape):
    kw = dict(stride=2, padding=1, output_padding=1, groups=2, bias=True, dilation=1)
    theirs = getattr(torch.nn, cls)(4, 6, 3, **kw).double()
    mine = getattr(mg.nn, cls)(4, 6, 3, **kw).double()
    assert repr(mine) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    for attr in ("in_channels", "out_channels", "kernel_size", "stride", "padding",
                 "output_padding", "dilation", "groups", "transposed", "padding_mode"):
        assert getattr(mine, attr) == getattr(theirs, attr), attr
    mine.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    x_t, x_m = both(shape)
    out_t, out_m = theirs(x_t), mine(x_m)
    assert_close(out_m, out_t)
    out_t.sum().backward()
    out_m.sum().backward()
    assert_close(mine.weight.grad, theirs.weight.grad)
    assert_close(mine.bias.grad, theirs.bias.grad)
    assert_close(x_m.grad, x_t.grad)


def test_init_bounds_use_out_channels_per_group_as_fan_in():
    mg.manual_seed(0)
    layer = mg.nn.ConvTranspose2d(16, 4, 3, groups=2)
    fan_in = (4 // 2) * 9  # weight (16, 2, 3, 3): fan_in is dim 1 times the kernel
    bound = 1 / math.sqrt(fan_in)
    assert float(layer.weight.abs().max()) <= bound  # kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in)
    assert float(layer.weight.abs().max()) > 0.8 * bound
    assert float(layer.bias.abs().max()) <= bound
    assert repr(mg.nn.ConvTranspose2d(4, 6, 3, bias=False)) == \
        repr(torch.nn.ConvTranspose2d(4, 6, 3, bias=False))


def test_output_size_picks_the_output_padding():
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, stride=2)
    mine = mg.nn.ConvTranspose2d(4, 6, 3, stride=2)
    x_t, x_m = both((2, 4, 5, 5), requires_grad=False, dtype=np.float32)
    for size in ([11, 11], [12, 12], [11, 12], [2, 6, 12, 11]):
        assert tuple(mine(x_m, output_size=size).shape) == tuple(theirs(x_t, output_size=size).shape)
    with pytest.raises(ValueError, match=r"valid sizes range from \[11, 11\] to \[12, 12\]"):
        theirs(x_t, output_size=[14, 14])
    with pytest.raises(ValueError, match=r"valid sizes range from \[11, 11\] to \[12, 12\]"):
        mine(x_m, output_size=[14, 14])


def error_of(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return info.value


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   output_padding=1),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   stride=2, output_padding=2),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 5, 5, 5), lib.ones(4, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   padding="same"),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   padding=-1),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   groups=3),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   lib.ones(4)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(5, 5), lib.ones(4, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5).double(),
                                                   lib.ones(4, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 4, 5, 5), lib.ones(4, 3, 3, 3),
                                                   stride=0),
    lambda lib: lib.nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect"),
    lambda lib: lib.nn.ConvTranspose2d(4, 3, 3, groups=3),
])
def test_errors_as_pytorchs(call):
    theirs, mine = error_of(torch, call), error_of(mg, call)
    assert type(mine) is type(theirs)
    words = str(theirs).split(":")[0][:40]
    assert words in str(mine), (str(mine), str(theirs))


@pytest.mark.parametrize("cls,shape", [("LazyConvTranspose2d", (2, 4, 5, 5)),
                                       ("LazyConvTranspose1d", (2, 4, 9))])
def test_lazy_transposed_layers(cls, shape):
    kw = dict(stride=2, padding=1, output_padding=1, groups=2)
    theirs, mine = getattr(torch.nn, cls)(6, 3, **kw), getattr(mg.nn, cls)(6, 3, **kw)
    x_t, x_m = both(shape, requires_grad=False, dtype=np.float32)
    out_t, out_m = theirs(x_t), mine(x_m)
    assert type(mine).__name__ == type(theirs).__name__ == cls.replace("Lazy", "")
    assert repr(mine) == repr(theirs)
    assert tuple(mine.weight.shape) == tuple(theirs.weight.shape) == (4, 3) + (3,) * (len(shape) - 2)
    assert tuple(out_m.shape) == tuple(out_t.shape)
    mine.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert_close(mine(x_m), theirs(x_t), 1e-5)
