"""Convolution and pooling against PyTorch: F.conv2d, max/avg/adaptive-avg pooling and their
layers (values and gradients in float64 to 1e-9, node names, reprs, init, errors), and a
small CNN that trains step for step as PyTorch's does."""

import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from parity import errors_of_both

RTOL, ATOL = 1e-9, 1e-12


def _run(lib, fn, arrays, upstream_seed=1):
    tensors = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *tensors)
    upstream = np.random.default_rng(upstream_seed).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(upstream))
    return out, [t.grad for t in tensors]


def assert_same_as_torch(torch, fn, arrays):
    ours, our_grads = _run(mg, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype == mg.float64
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    for i, (g, h) in enumerate(zip(our_grads, their_grads)):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=f"gradient of input {i}")
    assert ours.grad_fn.name() == theirs.grad_fn.name()


CONV_SETTINGS = [  # stride, padding, dilation, groups, bias
    (s, p, d, g, b) for s, p, d, g, b in itertools.product(
        [1, 2, (2, 1)], [0, 1, (2, 1), "same", "valid"], [1, 2, (1, 2)], [1, 2], [True, False])
    if not (p == "same" and s != 1)]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("stride,padding,dilation,groups,bias", CONV_SETTINGS)
def test_conv2d_matches_pytorch(stride, padding, dilation, groups, bias, torch):
    r = np.random.default_rng(CONV_SETTINGS.index((stride, padding, dilation, groups, bias)))
    n, c, h, w = r.integers(1, 4), 2 * r.integers(1, 3), r.integers(6, 11), r.integers(6, 11)
    out_c, kh, kw = 2 * r.integers(1, 4), r.integers(1, 4), r.integers(1, 4)
    arrays = [r.standard_normal((n, c, h, w)), r.standard_normal((out_c, c // groups, kh, kw))]
    if bias:
        arrays.append(r.standard_normal(out_c))

    def fn(lib, x, weight, b=None):
        return lib.nn.functional.conv2d(x, weight, b, stride, padding, dilation, groups)
    assert_same_as_torch(torch, fn, arrays)


def test_conv2d_of_an_unbatched_image_and_of_integers(torch):
    r = np.random.default_rng(3)
    assert_same_as_torch(torch, lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
                         [r.standard_normal((3, 5, 6)), r.standard_normal((4, 3, 3, 3)),
                          r.standard_normal(4)])
    x, w = r.integers(-5, 5, (1, 2, 5, 5)), r.integers(-3, 3, (3, 2, 2, 2))
    ours = mg.nn.functional.conv2d(mg.tensor(x), mg.tensor(w), stride=2)
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert ours.dtype == mg.int64 and np.array_equal(ours.numpy(), theirs.numpy())


MAX_SETTINGS = list(itertools.product([2, 3, (3, 2)], [None, 1, 2, (1, 2)], [0, 1], [1, 2],
                                      [False, True]))


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX_SETTINGS)
def test_max_pool2d_matches_pytorch(kernel, stride, padding, dilation, ceil_mode, torch):
    args = (kernel, stride, padding, dilation, ceil_mode)
    r = np.random.default_rng(MAX_SETTINGS.index(args))
    x = r.standard_normal((r.integers(1, 3), r.integers(1, 4), r.integers(7, 11),
                           r.integers(7, 11)))
    try:
        torch.nn.functional.max_pool2d(torch.tensor(x), *args)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            mg.nn.functional.max_pool2d(mg.tensor(x), *args)
        return
    assert_same_as_torch(torch, lambda lib, a: lib.nn.functional.max_pool2d(a, *args), [x])
    ours = mg.nn.functional.max_pool2d(mg.tensor(x), *args, return_indices=True)[1]
    theirs = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True)[1]
    assert ours.dtype == mg.int64 and np.array_equal(ours.numpy(), theirs.numpy())


def test_max_pool2d_ties_and_layer(torch):
    """Equal values in a window: the first one gets the gradient, as in PyTorch."""
    x = np.round(np.random.default_rng(5).standard_normal((2, 3, 6, 6)))
    assert_same_as_torch(torch, lambda lib, a: lib.nn.MaxPool2d(2)(a), [x])
    assert_same_as_torch(torch, lambda lib, a: lib.nn.MaxPool2d(3, 1, 1)(a[0]), [x])


def test_max_pool2d_of_nan_is_nan_as_pytorch(torch):
    """A nan is the largest value of its window; of several, the last gets the gradient."""
    x = np.array([[[[1.0, np.nan, 2.0, np.nan], [0.5, 3.0, -1.0, 4.0]]]])
    ours, (our_grad,) = _run(mg, lambda lib, a: lib.nn.functional.max_pool2d(a, (2, 4)), [x])
    theirs, (their_grad,) = _run(torch, lambda lib, a: lib.nn.functional.max_pool2d(a, (2, 4)),
                                 [x])
    assert np.isnan(ours.detach().numpy()).all() and np.isnan(theirs.detach().numpy()).all()
    np.testing.assert_array_equal(our_grad.numpy(), their_grad.numpy())


AVG_SETTINGS = list(itertools.product([2, 3, (3, 2)], [None, 1, 2, (1, 2)], [0, 1],
                                      [False, True], [True, False], [None, 3]))


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_pad,divisor", AVG_SETTINGS)
def test_avg_pool2d_matches_pytorch(kernel, stride, padding, ceil_mode, count_pad, divisor,
                                    torch):
    args = (kernel, stride, padding, ceil_mode, count_pad, divisor)
    r = np.random.default_rng(AVG_SETTINGS.index(args))
    x = r.standard_normal((r.integers(1, 3), r.integers(1, 4), r.integers(7, 11),
                           r.integers(7, 11)))
    try:
        torch.nn.functional.avg_pool2d(torch.tensor(x), *args)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            mg.nn.functional.avg_pool2d(mg.tensor(x), *args)
        return
    assert_same_as_torch(torch, lambda lib, a: lib.nn.functional.avg_pool2d(a, *args), [x])


def test_avg_pool2d_layer_unbatched_and_integers(torch):
    x = np.random.default_rng(6).standard_normal((3, 7, 8))
    assert_same_as_torch(torch, lambda lib, a: lib.nn.AvgPool2d(3, 2, 1)(a), [x])
    ints = np.arange(-20, 44).reshape(1, 1, 8, 8)
    ours = mg.nn.functional.avg_pool2d(mg.tensor(ints), 3)
    theirs = torch.nn.functional.avg_pool2d(torch.tensor(ints), 3)
    assert ours.dtype == mg.int64 and np.array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("output_size", [1, 2, 3, (2, 3), (None, 3), (5, 4), (9, 8), (4, None),
                                         7, (1, 1), (1, 4)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool2d_matches_pytorch(output_size, batched, torch):
    x = np.random.default_rng(8).standard_normal((2, 3, 9, 8))
    assert_same_as_torch(torch, lambda lib, a: lib.nn.AdaptiveAvgPool2d(output_size)(
        a if batched else a[1]), [x])


def test_public_names_as_pytorchs(torch):
    for name in ("conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"):
        assert getattr(mg.nn.functional, name).__name__ == name
        assert hasattr(mg, name) == hasattr(torch, name), name
    for name in ("Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"):
        assert issubclass(getattr(mg.nn, name), mg.nn.Module) and name in mg.nn.__all__


def test_layers_print_as_pytorch(torch):
    layers = [
        "Conv2d(1, 16, 3, stride=2, padding=1)",
        "Conv2d(1, 16, (3, 5), padding='same', bias=False, dilation=2)",
        "Conv2d(4, 6, 3, groups=2, padding='valid')",
        "Conv2d(2, 3, kernel_size=(1, 2), stride=(1, 2), padding=(0, 1))",
        "MaxPool2d(2)", "MaxPool2d(3, 1, 1)", "MaxPool2d((2, 3), ceil_mode=True)",
        "AvgPool2d(2)", "AvgPool2d(3, 1, 1, count_include_pad=False)",
        "AdaptiveAvgPool2d(1)", "AdaptiveAvgPool2d((2, None))",
    ]
    for layer in layers:
        assert repr(eval(f"lib.nn.{layer}", {"lib": mg})) == repr(
            eval(f"lib.nn.{layer}", {"lib": torch})), layer
    model = "lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.ReLU(), lib.nn.MaxPool2d(2))"
    assert repr(eval(model, {"lib": mg})) == repr(eval(model, {"lib": torch}))


def test_conv2d_layer_is_initialised_as_pytorch(torch):
    """kaiming_uniform(a=sqrt(5)) gives a weight uniform in ±1/sqrt(fan_in); the bias is
    uniform in the same range."""
    mg.manual_seed(0)
    layer = mg.nn.Conv2d(64, 128, 3, groups=2)
    reference = torch.nn.Conv2d(64, 128, 3, groups=2)
    bound = 1 / math.sqrt(32 * 3 * 3)
    for name, tolerance in (("weight", 0.02), ("bias", 0.25)):  # 73728 and 128 samples
        ours, theirs = getattr(layer, name), getattr(reference, name)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == mg.float32
        values = ours.detach().numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound
        for sample in (values, theirs.detach().numpy()):  # a uniform's spread: bound/sqrt(3)
            assert abs(sample.std() * math.sqrt(3) / bound - 1) < tolerance
    assert layer.weight.requires_grad and layer.weight.is_leaf
    double = mg.nn.Conv2d(1, 2, 3, bias=False, dtype=mg.float64)
    assert double.weight.dtype == mg.float64 and double.bias is None


CONV_MISTAKES = {
    "a 2-D input": lambda lib: lib.nn.functional.conv2d(lib.ones(2, 3), lib.ones(1, 1, 1, 1)),
    "too many channels": lambda lib: lib.nn.Conv2d(1, 2, 3)(lib.ones(1, 2, 5, 5)),
    "a kernel larger than the image": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 2, 2), lib.ones(1, 1, 3, 3)),
    "same padding with a stride": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), stride=2, padding="same"),
    "an unknown padding": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), padding="full"),
    "a double input to a float layer": lambda lib: lib.nn.Conv2d(1, 1, 3)(
        lib.ones(1, 1, 5, 5, dtype=lib.float64)),
    "a bias of another dtype": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), lib.ones(1, dtype=lib.float64)),
    "a bias of the wrong length": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), lib.ones(2)),
    "more groups than kernels": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 4, 5, 5), lib.ones(2, 2, 3, 3), groups=3),
    "a zero stride": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), stride=0),
    "a negative padding": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), padding=-1),
    "channels not divisible by groups": lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2),
    "a layer with same padding and a stride": lambda lib: lib.nn.Conv2d(4, 4, 3, stride=2,
                                                                        padding="same"),
    "a numpy array into conv2d": lambda lib: lib.nn.functional.conv2d(
        np.ones((1, 1, 3, 3)), lib.ones(1, 1, 3, 3)),
    "max pooling a 2-D input": lambda lib: lib.nn.functional.max_pool2d(lib.ones(2, 3), 2),
    "max pooling with too much padding": lambda lib: lib.nn.MaxPool2d(3, padding=2)(
        lib.ones(1, 1, 5, 5)),
    "max pooling to nothing": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 1, 1), 2),
    "max pooling with a zero stride": lambda lib: lib.nn.functional.max_pool2d(
        lib.ones(1, 1, 4, 4), 2, stride=0),
    "average pooling a 2-D input": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(2, 3), 2),
    "average pooling with too much padding": lambda lib: lib.nn.AvgPool2d(3, padding=2)(
        lib.ones(1, 1, 5, 5)),
    "average pooling to nothing": lambda lib: lib.nn.AvgPool2d(2)(lib.ones(1, 1, 1, 1)),
    "max pooling no channels": lambda lib: lib.nn.MaxPool2d(2)(lib.ones(1, 0, 4, 4)),
    "average pooling an empty image": lambda lib: lib.nn.AvgPool2d(2)(lib.ones(0, 4, 4)),
    "adaptive pooling a 2-D input": lambda lib: lib.nn.AdaptiveAvgPool2d(2)(lib.ones(2, 3)),
    "adaptive pooling integers": lambda lib: lib.nn.functional.adaptive_avg_pool2d(
        lib.ones(1, 1, 4, 4, dtype=lib.int64), 2),
}


@pytest.mark.parametrize("mistake", sorted(CONV_MISTAKES))
def test_conv_and_pool_mistakes_raise_pytorchs_exception(mistake, torch):
    ours, theirs = errors_of_both(CONV_MISTAKES[mistake], torch)
    assert type(ours) is type(theirs), (ours, theirs)


@pytest.mark.parametrize("layer", ["MaxPool2d(2)", "AvgPool2d(2)", "Conv2d(1, 2, 3, padding=1)",
                                   "AdaptiveAvgPool2d(2)"])
def test_an_empty_batch_gives_an_empty_result(layer, torch):
    ours = eval(f"lib.nn.{layer}", {"lib": mg})(mg.ones(0, 1, 4, 4))
    theirs = eval(f"lib.nn.{layer}", {"lib": torch})(torch.ones(0, 1, 4, 4))
    assert tuple(ours.shape) == tuple(theirs.shape)


def test_backward_refuses_a_conv_input_changed_in_place(torch):
    x = mg.randn(1, 1, 5, 5, requires_grad=True)
    h = x * 1
    out = mg.nn.functional.conv2d(h, mg.randn(1, 1, 3, 3))
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def _small_cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, stride=2, padding=1,
                                   groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(6, 10))


def test_a_small_cnn_trains_step_for_step_as_pytorch(torch):
    """The same weights and batches: the same losses after each of several SGD steps."""
    r = np.random.default_rng(0)
    images = r.standard_normal((5, 16, 1, 8, 8))
    labels = r.integers(0, 10, (5, 16))
    mg.manual_seed(0)
    ours = _small_cnn(mg).double()
    theirs = _small_cnn(torch).double()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy().copy())
                            for k, v in ours.state_dict().items()})
    losses = {}
    for lib, model in ((mg, ours), (torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses[lib.__name__] = []
        for x, y in zip(images, labels):
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[lib.__name__].append(loss.item())
    np.testing.assert_allclose(losses["minigrad"], losses["torch"], rtol=1e-9)
    assert losses["minigrad"][-1] < losses["minigrad"][0]  # it learns
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8,
                                   atol=1e-12, err_msg=name)
