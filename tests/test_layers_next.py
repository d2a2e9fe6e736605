"""The layers the programs after the course use, against PyTorch: ``Conv1d`` (``F.conv1d``,
``LazyConv1d``), ``MaxPool1d`` / ``AvgPool1d`` (and F), ``BatchNorm2d`` (``LazyBatchNorm2d``),
``GroupNorm`` (``F.group_norm``), ``Dropout1d`` / ``Dropout2d`` (and F), and
``minigrad.accelerator``. Values, dtypes, gradients (first and second), errors and reprs.

Initial values: minigrad draws from numpy's PCG64 (``minigrad.random``), not PyTorch's
stream, so a seeded layer cannot hold PyTorch's numbers; what is checked is what can be:
the same draws in the same order as the eager layer (the lazy one after its first call),
the bounds PyTorch's initialisation uses, and PyTorch's outputs once PyTorch's parameters
are loaded (``load_state_dict``).
"""

import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F


def _run(lib, fn, arrays, grad_of=()):
    """``fn(lib, *tensors)`` on tensors made from ``arrays`` (those at ``grad_of`` require
    grad); the outputs, then the gradients of ``(out * weights).sum()``, as numpy."""
    tensors = [lib.tensor(a, requires_grad=i in grad_of) for i, a in enumerate(arrays)]
    out = fn(lib, *tensors)
    outs = out if isinstance(out, tuple) else (out,)
    result = [o.detach().numpy() for o in outs]
    if grad_of:
        first = outs[0]
        weights = lib.tensor(np.cos(np.arange(first.numel())).reshape(tuple(first.shape)),
                             dtype=first.dtype)
        (first * weights).sum().backward()
        result += [tensors[i].grad.numpy() for i in grad_of]
    return result


def same_as_torch(torch, fn, arrays, grad_of=(), rtol=1e-5, atol=1e-6):
    ours, theirs = _run(mg, fn, arrays, grad_of), _run(torch, fn, arrays, grad_of)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def same_error(torch, fn):
    """Both libraries raise, the same built-in type; returns minigrad's message."""
    errors = []
    for lib in (mg, torch):
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib)
        errors.append(info.value)
    builtin = next(c for c in type(errors[1]).__mro__ if c.__module__ == "builtins")
    assert isinstance(errors[0], builtin), (errors[0], errors[1])
    return str(errors[0])


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- conv1d

CONV1D = [
    ((2, 4, 7), (3, 4, 3), {}),
    ((2, 4, 7), (3, 4, 3), dict(stride=2, padding=1)),
    ((2, 4, 9), (6, 2, 3), dict(groups=2, dilation=2)),
    ((4, 7), (3, 4, 2), dict(padding="same")),
    ((2, 4, 7), (3, 4, 4), dict(padding="same", dilation=2)),
    ((2, 4, 7), (3, 4, 7), dict(padding="valid")),
    ((0, 4, 7), (3, 4, 3), dict(padding=(1,))),
    ((2, 4, 5), (4, 1, 3), dict(groups=4, stride=(3,))),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape, w_shape, options", CONV1D)
def test_conv1d_values_and_gradients(torch, x_shape, w_shape, options, bias):
    arrays = [rand(*x_shape), rand(*w_shape, seed=1), rand(w_shape[0], seed=2)]
    if bias:
        same_as_torch(torch, lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, **options),
                      arrays, grad_of=(0, 1, 2))
    else:
        same_as_torch(torch, lambda lib, x, w: lib.nn.functional.conv1d(x, w, **options),
                      arrays[:2], grad_of=(0, 1))


def test_conv1d_float32_and_its_node(torch):
    arrays = [rand(2, 4, 7, dtype=np.float32), rand(3, 4, 3, seed=1, dtype=np.float32)]
    same_as_torch(torch, lambda lib, x, w: lib.nn.functional.conv1d(x, w), arrays, (0, 1),
                  rtol=1e-4, atol=1e-5)
    x = mg.tensor(arrays[0], requires_grad=True)
    assert type(F.conv1d(x, mg.tensor(arrays[1])).grad_fn).__name__ == "ConvolutionBackward0"
    assert type(F.conv1d(x[0], mg.tensor(arrays[1])).grad_fn).__name__ == "SqueezeBackward1"


def test_conv1d_second_derivatives(torch):
    """d/dx of <grad_w, v>: the gradient of a gradient, through the 1-d shapes."""
    results = []
    for lib in (mg, torch):
        x = lib.tensor(rand(2, 3, 6), requires_grad=True)
        w = lib.tensor(rand(4, 3, 3, seed=1), requires_grad=True)
        out = lib.nn.functional.conv1d(x, w, padding=1, stride=2)
        (gw,) = lib.autograd.grad((out * out).sum(), (w,), create_graph=True)
        (gw * lib.tensor(rand(4, 3, 3, seed=3))).sum().backward()
        results.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


CONV1D_ERRORS = [
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5, 5), lib.ones(3, 4, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(5), lib.ones(3, 4, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), padding=(1, 1)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), stride=(1, 1)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 7)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 2, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), stride=0),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), padding=-1),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), padding="same",
                                         stride=2),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 5), lib.ones(3, 4, 3), lib.ones(2)),
    lambda lib: lib.nn.functional.conv1d(np.ones((2, 4, 5)), lib.ones(3, 4, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.ones(2, 4, 5), lib.ones(3, 4, 3)),
    lambda lib: lib.nn.Conv1d(4, 3, 3)(lib.ones(2, 3, 5)),
    lambda lib: lib.nn.Conv1d(4, 3, 3, groups=3),
    lambda lib: lib.nn.Conv1d(4, 3, 3, padding="full"),
    lambda lib: lib.nn.Conv1d(4, 4, 3, stride=2, padding="same"),
]


@pytest.mark.parametrize("call", CONV1D_ERRORS)
def test_conv1d_errors(torch, call):
    same_error(torch, call)


def test_conv1d_messages_name_the_1d_shapes():
    with pytest.raises(RuntimeError, match=r"weight of size \[3, 2, 3\], expected input\[2, 4, "
                                           r"5\] to have 2 channels"):
        F.conv1d(mg.ones(2, 4, 5), mg.ones(3, 2, 3))
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(5\). Kernel "
                                           r"size: \(7\)"):
        F.conv1d(mg.ones(2, 4, 5), mg.ones(3, 4, 7))


def test_conv1d_layer_as_pytorch(torch):
    for options in ({}, dict(stride=2, padding=1, bias=False), dict(groups=2, dilation=2),
                    dict(padding="same")):
        ours, theirs = mg.nn.Conv1d(4, 6, 3, **options), torch.nn.Conv1d(4, 6, 3, **options)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        x = rand(2, 4, 9, dtype=np.float32)
        np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_conv1d_initialisation_bounds_and_order():
    """PyTorch's init: weight and bias uniform in +-1/sqrt(fan_in), fan_in = 2 * 5; drawn
    weight first, then bias, as Conv2d with a kernel of height 1 draws them."""
    mg.manual_seed(3)
    layer = mg.nn.Conv1d(4, 300, 5, groups=2)
    bound = 1 / np.sqrt(2 * 5)
    for p in (layer.weight, layer.bias):
        a = p.detach().numpy()
        assert a.dtype == np.float32 and np.abs(a).max() <= bound
        assert np.abs(a).max() > 0.9 * bound
    mg.manual_seed(3)
    plane = mg.nn.Conv2d(4, 300, (1, 5), groups=2)
    np.testing.assert_array_equal(plane.weight.detach().numpy()[:, :, 0],
                                  layer.weight.detach().numpy())
    np.testing.assert_array_equal(plane.bias.detach().numpy(), layer.bias.detach().numpy())


def test_lazy_conv1d_becomes_conv1d_with_the_same_draws(torch):
    mg.manual_seed(0)
    lazy = mg.nn.LazyConv1d(3, 3, padding=1)
    assert repr(lazy) == repr(torch.nn.LazyConv1d(3, 3, padding=1))
    lazy(mg.ones(2, 4, 6))
    mg.manual_seed(0)
    eager = mg.nn.Conv1d(4, 3, 3, padding=1)
    assert type(lazy) is mg.nn.Conv1d and repr(lazy) == repr(eager)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(lazy.bias.detach().numpy(), eager.bias.detach().numpy())
    unbatched = mg.nn.LazyConv1d(3, 3)
    unbatched(mg.ones(5, 6))
    assert unbatched.in_channels == 5
    with pytest.raises(RuntimeError, match="Expected 2D .unbatched. or 3D"):
        mg.nn.LazyConv1d(3, 3)(mg.ones(2, 4, 6, 6))


# ----------------------------------------------------------------------------- 1-d pooling

POOL1D = [
    ("max_pool1d", (2,), {}),
    ("max_pool1d", (3,), dict(stride=1, padding=1)),
    ("max_pool1d", (3, 2, 1, 2, True), {}),
    ("max_pool1d", ((2,),), dict(stride=(1,), return_indices=True)),
    ("avg_pool1d", (2,), {}),
    ("avg_pool1d", (3, 2, 1, True, False), {}),
    ("avg_pool1d", (3,), dict(stride=1, padding=1)),
    ("avg_pool1d", ((4,), (3,)), dict(ceil_mode=True)),
]


@pytest.mark.parametrize("shape", [(2, 4, 7), (4, 7), (0, 3, 5)])
@pytest.mark.parametrize("name, args, options", POOL1D)
def test_pool1d_values_indices_and_gradients(torch, name, args, options, shape):
    same_as_torch(torch, lambda lib, x: getattr(lib.nn.functional, name)(x, *args, **options),
                  [rand(*shape)], grad_of=(0,))


def test_pool1d_nodes_as_pytorch(torch):
    for lib in (mg, torch):
        x = lib.ones(2, 3, 6, requires_grad=True)
        for pool, node in ((lib.nn.functional.max_pool1d, "MaxPool2DWithIndicesBackward0"),
                           (lib.nn.functional.avg_pool1d, "AvgPool2DBackward0")):
            fn = pool(x, 2).grad_fn
            assert type(fn).__name__ == "SqueezeBackward1"
            assert type(fn.next_functions[0][0]).__name__ == node


def test_avg_pool1d_of_integers(torch):
    same_as_torch(torch, lambda lib, x: lib.nn.functional.avg_pool1d(x, 2),
                  [np.arange(-7, 17).reshape(2, 3, 4)])


def test_pool1d_layers(torch):
    x = rand(2, 3, 8, dtype=np.float32)
    for make in (lambda lib: lib.nn.MaxPool1d(3), lambda lib: lib.nn.MaxPool1d(3, 1, 1, 2),
                 lambda lib: lib.nn.AvgPool1d(3, 1, 1), lambda lib: lib.nn.AvgPool1d(2),
                 lambda lib: lib.nn.AvgPool1d(3, 2, 1, True, False)):
        ours, theirs = make(mg), make(torch)
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=1e-6)
    values, indices = mg.nn.MaxPool1d(2, return_indices=True)(mg.tensor(x))
    t_values, t_indices = torch.nn.MaxPool1d(2, return_indices=True)(torch.tensor(x))
    assert indices.dtype == mg.int64 and indices.tolist() == t_indices.tolist()


POOL1D_ERRORS = [
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(5), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 3, 4, 5), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 0, 5), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 4, 5), 6),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 4, 5), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 4, 5), (2, 2)),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 4, 5), 2, stride=0),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 4, 5, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(5), 2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 3, 4, 5), 2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 0, 5), 2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 4, 5), 6),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 4, 5), 3, padding=2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 4, 5), (2, 2)),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 4, 5), 2, stride=0),
]


@pytest.mark.parametrize("call", POOL1D_ERRORS)
def test_pool1d_errors(torch, call):
    same_error(torch, call)


# ----------------------------------------------------------------------------- BatchNorm2d

@pytest.mark.parametrize("options", [{}, dict(affine=False), dict(momentum=None),
                                     dict(track_running_stats=False), dict(bias=False)])
def test_batchnorm2d_trains_and_evaluates_as_pytorch(torch, options):
    results = []
    for lib in (mg, torch):
        layer = lib.nn.BatchNorm2d(3, **options)
        assert repr(layer) == repr(torch.nn.BatchNorm2d(3, **options))
        outs = []
        for step in range(3):
            x = lib.tensor(rand(4, 3, 2, 5, seed=step, dtype=np.float32) * (step + 1) + step,
                           requires_grad=True)
            y = layer(x)
            (y * lib.tensor(rand(4, 3, 2, 5, seed=9, dtype=np.float32))).sum().backward()
            outs += [y.detach().numpy(), x.grad.numpy()]
        outs += [p.grad.numpy() for p in layer.parameters()]
        outs += [b.numpy() for b in layer.buffers()]
        layer.eval()
        outs.append(layer(lib.tensor(rand(1, 3, 2, 2, seed=7, dtype=np.float32))).detach().numpy())
        results.append(outs)
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_batchnorm2d_errors_and_state_dict(torch):
    same_error(torch, lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(4, 3, 5)))
    same_error(torch, lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(4, 2, 5, 5)))
    same_error(torch, lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(1, 3, 1, 1)))
    assert list(mg.nn.BatchNorm2d(3).state_dict()) == list(torch.nn.BatchNorm2d(3).state_dict())
    assert not isinstance(mg.nn.BatchNorm2d(3), mg.nn.BatchNorm1d)


def test_lazy_batchnorm2d(torch):
    lazy, theirs = mg.nn.LazyBatchNorm2d(momentum=0.2), torch.nn.LazyBatchNorm2d(momentum=0.2)
    assert repr(lazy) == repr(theirs)
    x = rand(4, 3, 2, 2, dtype=np.float32)
    out = lazy(mg.tensor(x)).detach().numpy()
    assert type(lazy) is mg.nn.BatchNorm2d and repr(lazy) == repr(torch.nn.BatchNorm2d(3, momentum=0.2))
    np.testing.assert_allclose(out, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(lazy.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-5)


# ----------------------------------------------------------------------------- GroupNorm

GROUP_NORM = [((3, 4, 5), 2, True), ((2, 6, 2, 2), 3, False), ((2, 4), 4, True),
              ((3, 4), 1, True), ((0, 4, 3), 2, True), ((2, 4, 0), 2, True),
              ((2, 6, 3), 6, True)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, groups, affine", GROUP_NORM)
def test_group_norm_values_and_gradients(torch, shape, groups, affine, dtype):
    c = shape[1]
    arrays = [rand(*shape, dtype=dtype) * 3 + 1, rand(c, seed=1, dtype=dtype),
              rand(c, seed=2, dtype=dtype)]
    # float32: one value per group (var 0, invstd 1/sqrt(eps) = 316) leaves PyTorch's
    # gradient of x at rounding noise times 316
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else {}
    if affine:
        same_as_torch(torch, lambda lib, x, w, b: lib.nn.functional.group_norm(x, groups, w, b),
                      arrays, grad_of=(0, 1, 2), **tol)
    else:
        same_as_torch(torch, lambda lib, x: lib.nn.functional.group_norm(x, groups, eps=1e-3),
                      arrays[:1], grad_of=(0,), **tol)


def test_group_norm_second_derivatives(torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor(rand(2, 4, 3), requires_grad=True)
        w = lib.tensor(rand(4, seed=1), requires_grad=True)
        out = lib.nn.functional.group_norm(x, 2, w)
        (gx,) = lib.autograd.grad((out ** 3).sum(), (x,), create_graph=True)
        (gx * lib.tensor(rand(2, 4, 3, seed=3))).sum().backward()
        results.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


GROUP_NORM_ERRORS = [
    lambda lib: lib.nn.functional.group_norm(lib.ones(3), 1),
    lambda lib: lib.nn.functional.group_norm(lib.ones(1, 2), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4), 2, lib.ones(3)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4), 2, None, lib.ones(3)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3), 2, lib.ones(2, 2)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3), 0),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3), 2,
                                             lib.ones(4, dtype=lib.float64)),
    lambda lib: lib.nn.GroupNorm(2, 3),
    lambda lib: lib.nn.GroupNorm(2, 4)(lib.ones(2, 6, 3)),
]


@pytest.mark.parametrize("call", GROUP_NORM_ERRORS)
def test_group_norm_errors(torch, call):
    same_error(torch, call)


@pytest.mark.parametrize("options", [{}, dict(affine=False), dict(bias=False), dict(eps=0.1)])
def test_group_norm_layer(torch, options):
    ours, theirs = mg.nn.GroupNorm(2, 4, **options), torch.nn.GroupNorm(2, 4, **options)
    assert repr(ours) == repr(theirs)
    assert {k: v.tolist() for k, v in ours.state_dict().items()} == {
        k: v.tolist() for k, v in theirs.state_dict().items()}
    x = rand(3, 4, 5, dtype=np.float32)
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert type(ours(mg.ones(2, 4, requires_grad=True)).grad_fn).__name__ == \
        "NativeGroupNormBackward0"


# ----------------------------------------------------------------------------- dropout

@pytest.mark.parametrize("name, shape", [("dropout1d", (4, 6, 5)), ("dropout1d", (6, 5)),
                                         ("dropout2d", (4, 6, 3, 2)), ("dropout2d", (4, 6, 5))])
def test_channel_dropout_zeroes_whole_channels(name, shape):
    mg.manual_seed(0)
    x = mg.tensor(rand(*shape) + 10, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(F, name)(x, p=0.4)
    a = out.detach().numpy()
    channels = a.reshape(shape[:1 if len(shape) == 2 else 2] + (-1,))  # a row per channel
    dropped = (channels == 0).all(axis=-1)
    kept = np.isclose(channels, x.detach().numpy().reshape(channels.shape) / 0.6).all(axis=-1)
    assert (dropped | kept).all() and dropped.any() and kept.any()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy().reshape(channels.shape),
                               np.where(kept[..., None], 1 / 0.6, 0.0) + 0 * channels)


@pytest.mark.filterwarnings("ignore:dropout2d. Received a 3D input")
def test_channel_dropout_as_pytorch(torch):
    for lib in (mg, torch):
        x = lib.ones(2, 3, 4, requires_grad=True)
        assert lib.nn.functional.dropout1d(x, training=False) is x
        assert lib.nn.functional.dropout1d(x, p=0.0) is x
        assert lib.nn.functional.dropout1d(x, p=1.0).sum().item() == 0
        assert type(lib.nn.functional.dropout1d(x[0]).grad_fn).__name__ == "SqueezeBackward1"
        assert type(lib.nn.functional.dropout2d(x[None]).grad_fn).__name__ == "MulBackward0"
        layer = lib.nn.Dropout2d(0.3).eval()
        assert layer(x) is x
        assert not isinstance(lib.nn.Dropout1d(), lib.nn.Dropout)
    assert repr(mg.nn.Dropout1d(0.2, True)) == repr(torch.nn.Dropout1d(0.2, True))
    y = mg.ones(2, 3, 4)
    assert F.dropout1d(y, 0.5, inplace=True) is y and set(np.unique(y.numpy())) <= {0.0, 2.0}
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(mg.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 5-D input"):
        F.dropout2d(mg.ones(2, 3, 4, 1, 1))


DROPOUT_ERRORS = [
    lambda lib: lib.nn.functional.dropout2d(lib.ones(5)),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 5, 3, 3)),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 5), p=1.5),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 5, dtype=lib.int64)),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 5, 3, 3, dtype=lib.int64)),
    lambda lib: lib.nn.Dropout2d(-0.1),
]


@pytest.mark.parametrize("call", DROPOUT_ERRORS)
def test_channel_dropout_errors(torch, call):
    same_error(torch, call)


# ----------------------------------------------------------------------------- accelerator

def test_accelerator_answers_as_pytorch_on_the_cpu(torch):
    assert mg.accelerator.is_available() is torch.accelerator.is_available() is False
    assert mg.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    assert mg.accelerator.current_accelerator(check_available=True) is None
    assert mg.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name in ("current_device_index", "synchronize"):
        same_error(torch, lambda lib: getattr(lib.accelerator, name)())
    device = mg.accelerator.current_accelerator() if mg.accelerator.is_available() else "cpu"
    assert mg.ones(2).to(device).tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------- adaptive 1-d

@pytest.mark.parametrize("size", [1, 3, (2,), 7])
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 7), (0, 2, 5)])
def test_adaptive_avg_pool1d(torch, shape, size):
    same_as_torch(torch, lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, size),
                  [rand(*shape)], grad_of=(0,))
    assert repr(mg.nn.AdaptiveAvgPool1d(size)) == repr(torch.nn.AdaptiveAvgPool1d(size))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(2, 3, 7), (3, 2)),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(7), 3),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(1, 2, 3, 7), 3),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(2, 3, 0), 3),
])
def test_adaptive_avg_pool1d_errors(torch, call):
    same_error(torch, call)
