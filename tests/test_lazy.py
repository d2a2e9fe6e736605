"""Lazy modules (``nn.LazyLinear``, ``nn.LazyConv2d``, ``nn.LazyBatchNorm1d``) and
``nn.parameter.UninitializedParameter``, against PyTorch: what works before the first call
and what raises (the same exception types), what the first call infers, that the module
becomes the ordinary class, and that it starts from the numbers the ordinary module would
after the same seed."""

import copy

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn

LIBS = [pytest.param(mg, id="minigrad"), pytest.param(torch, id="torch")]
R = np.random.default_rng(3)


def outcome(f):
    """What calling ``f`` gives: ("ok", value) or (exception type name, None)."""
    try:
        return "ok", f()
    except Exception as error:  # noqa: BLE001  (comparing which exception each library raises)
        return type(error).__name__, None


def both(f):
    """``f(lib)`` for minigrad and torch: the outcome of each."""
    return outcome(lambda: f(mg)), outcome(lambda: f(torch))


def same_kind(f):
    (mine, _), (theirs, _) = both(f)
    assert mine == theirs, f"minigrad: {mine}, torch: {theirs}"
    return mine


# ------------------------------------------------------------------ UninitializedParameter

@pytest.mark.parametrize("use", [
    lambda w, lib: w.shape, lambda w, lib: w + 1, lambda w, lib: w * 2, lambda w, lib: -w,
    lambda w, lib: w.sum(), lambda w, lib: w.numel(), lambda w, lib: w.dim(),
    lambda w, lib: w.detach(), lambda w, lib: w.tolist(), lambda w, lib: w.zero_(),
    lambda w, lib: w.view(-1), lambda w, lib: w[0], lambda w, lib: len(w),
    lambda w, lib: bool(w), lambda w, lib: lib.sum(w), lambda w, lib: w.numpy(),
    lambda w, lib: lib.nn.init.normal_(w), lambda w, lib: lib.nn.init.zeros_(w),
    lambda w, lib: w.requires_grad_(False), lambda w, lib: w.item(), lambda w, lib: w.clone(),
    lambda w, lib: np.asarray(w), lambda w, lib: w.share_memory_(),
])
def test_using_an_uninitialized_parameter_raises_as_in_pytorch(use):
    kind = same_kind(lambda lib: use(lib.nn.parameter.UninitializedParameter(), lib))
    assert kind in ("ValueError", "RuntimeError")


def test_what_an_uninitialized_parameter_still_answers():
    for lib in (mg, torch):
        w = lib.nn.parameter.UninitializedParameter()
        assert (w.requires_grad, w.grad, w.is_leaf, w.ndim) == (True, None, True, 1)
        assert str(w.dtype).split(".")[1] == "float32"
        assert tuple(w.size()) == (0,)
        assert repr(w) == "<UninitializedParameter>"
        assert w.is_floating_point()
        assert w.float() is w and w.cpu() is w
        assert str(w.to(lib.float64).dtype).split(".")[1] == "float64"
        assert isinstance(w, lib.nn.Parameter)
        assert lib.nn.parameter.is_lazy(w)
        assert not lib.nn.parameter.is_lazy(lib.nn.Parameter(lib.ones(1)))
        assert not lib.nn.parameter.is_lazy(3)
        b = lib.nn.parameter.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad


def test_materialize_turns_it_into_a_parameter_in_place():
    for lib in (mg, torch):
        w = lib.nn.parameter.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        w.materialize((2, 3))
        assert type(w) is lib.nn.Parameter
        assert tuple(w.shape) == (2, 3) and w.dtype == lib.float64 and not w.requires_grad
        b = lib.nn.parameter.UninitializedBuffer()
        b.materialize((4,))
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,)


def test_an_integer_uninitialized_parameter_cannot_require_grad():
    assert same_kind(lambda lib: lib.nn.parameter.UninitializedParameter(
        dtype=lib.int64)) == "RuntimeError"
    assert same_kind(lambda lib: lib.nn.parameter.UninitializedParameter(
        requires_grad=False, dtype=lib.int64)) == "ok"


# ------------------------------------------------------------------ LazyLinear

def test_lazy_linear_before_and_after_its_first_call():
    for lib in (mg, torch):
        layer = lib.nn.LazyLinear(3)
        assert repr(layer) == "LazyLinear(in_features=0, out_features=3, bias=True)"
        assert layer.has_uninitialized_params()
        assert all(lib.nn.parameter.is_lazy(p) for p in layer.parameters())
        params = list(layer.parameters())
        out = layer(lib.ones(2, 5))
        assert type(layer) is lib.nn.Linear
        assert repr(layer) == "Linear(in_features=5, out_features=3, bias=True)"
        assert layer.in_features == 5 and tuple(out.shape) == (2, 3)
        assert [tuple(p.shape) for p in layer.parameters()] == [(3, 5), (3,)]
        assert [id(p) for p in layer.parameters()] == [id(p) for p in params]
        assert type(layer.weight) is lib.nn.Parameter
        assert not hasattr(layer, "has_uninitialized_params")


def test_lazy_linear_starts_from_the_numbers_linear_would_after_the_same_seed():
    for lib in (mg, torch):
        lib.manual_seed(11)
        eager = lib.nn.Linear(7, 4)
        lib.manual_seed(11)
        lazy = lib.nn.LazyLinear(4)
        lazy(lib.zeros(1, 7))
        assert lib.equal(eager.weight, lazy.weight) and lib.equal(eager.bias, lazy.bias)


def test_constructing_a_lazy_layer_draws_no_random_numbers():
    for lib in (mg, torch):
        lib.manual_seed(5)
        lib.nn.LazyLinear(4), lib.nn.LazyConv2d(3, 2), lib.nn.LazyBatchNorm1d()
        after = lib.rand(3)
        lib.manual_seed(5)
        assert lib.equal(after, lib.rand(3))


def test_lazy_linear_without_bias_and_with_a_dtype():
    for lib in (mg, torch):
        layer = lib.nn.LazyLinear(2, bias=False, dtype=lib.float64)
        assert layer.bias is None
        layer(lib.ones(4, 3, dtype=lib.float64))
        assert layer.weight.dtype == lib.float64 and layer.bias is None


def test_lazy_linear_computes_what_torch_computes_and_its_gradients():
    x = R.standard_normal((4, 6)).astype(np.float32)
    results = []
    for lib in (mg, torch):
        net = lib.nn.Sequential(lib.nn.LazyLinear(5), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        net(lib.tensor(x))
        with lib.no_grad():
            for p in net.parameters():
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32)
                                   .reshape(tuple(p.shape))))
        out = net(lib.tensor(x))
        out.sum().backward()
        results.append([out.detach().numpy()] + [p.grad.numpy() for p in net.parameters()])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_an_optimizer_made_before_the_first_call_updates_the_materialised_parameters():
    """minigrad's SGD, made on the uninitialized parameters, against torch's gradients and
    SGD's rule p - lr * grad (torch.optim itself takes seconds to import)."""
    x = R.standard_normal((3, 4)).astype(np.float32)
    layer = mg.nn.LazyLinear(2)
    opt = mg.optim.SGD(layer.parameters(), lr=0.5)
    reference = torch.nn.Linear(4, 2)
    for lib, module in ((mg, layer), (torch, reference)):
        module(lib.tensor(x))
        with lib.no_grad():
            module.weight.fill_(0.25)
            module.bias.fill_(-0.5)
        module(lib.tensor(x)).pow(2).sum().backward()
    opt.step()
    for mine, theirs in zip(layer.parameters(), reference.parameters()):
        want = (theirs - 0.5 * theirs.grad).detach().numpy()
        np.testing.assert_allclose(mine.detach().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(), (4,), (2, 3, 4)])
def test_lazy_linear_inputs_of_other_ranks(shape):
    kind = same_kind(lambda lib: lib.nn.LazyLinear(3)(lib.ones(shape)).shape)
    if shape:
        assert kind == "ok"
        assert tuple(mg.nn.LazyLinear(3)(mg.ones(shape)).shape) == shape[:-1] + (3,)


def test_a_second_call_with_another_size_raises_as_linear_does():
    for lib in (mg, torch):
        layer = lib.nn.LazyLinear(3)
        layer(lib.ones(2, 4))
        assert outcome(lambda: layer(lib.ones(2, 5)))[0] == "RuntimeError"


def test_the_state_dict_of_a_lazy_module_shows_its_uninitialized_parameters():
    for lib in (mg, torch):
        state = lib.nn.LazyLinear(3).state_dict()
        assert list(state) == ["weight", "bias"]
        assert all(repr(v) == "<UninitializedParameter>" for v in state.values())
        bn = lib.nn.LazyBatchNorm1d().state_dict()
        assert [repr(v) for v in bn.values()][:4] == ["<UninitializedParameter>"] * 2 + [
            "<UninitializedBuffer>"] * 2
        assert int(bn["num_batches_tracked"]) == 0


def test_loading_a_trained_state_into_a_lazy_module_gives_it_the_shapes():
    for lib in (mg, torch):
        trained = lib.nn.Linear(4, 3)
        lazy = lib.nn.LazyLinear(3)
        lazy.load_state_dict(trained.state_dict())
        assert type(lazy) is lib.nn.LazyLinear and lazy.in_features == 0
        assert lib.equal(lazy.weight, trained.weight) and lib.equal(lazy.bias, trained.bias)
        assert outcome(lambda: lazy(lib.ones(2, 5)))[0] == "AssertionError"
        x = lib.ones(2, 4)
        assert lib.equal(lazy(x), trained(x))
        assert type(lazy) is lib.nn.Linear and lazy.in_features == 4


def test_loading_a_lazy_state_into_a_built_module_raises():
    assert same_kind(lambda lib: lib.nn.Linear(4, 3).load_state_dict(
        lib.nn.LazyLinear(3).state_dict())) == "RuntimeError"


def test_loading_into_a_model_that_holds_lazy_modules():
    """D2L's clone: the lazy modules inside take the loaded shapes (load pre-hooks)."""
    trained = mg.nn.Sequential(mg.nn.Linear(4, 3), mg.nn.ReLU(), mg.nn.Linear(3, 2))
    lazy = mg.nn.Sequential(mg.nn.LazyLinear(3), mg.nn.ReLU(), mg.nn.LazyLinear(2))
    lazy.load_state_dict(trained.state_dict())
    assert mg.equal(lazy(mg.ones(1, 4)), trained(mg.ones(1, 4)))


def test_model_double_before_the_first_call_makes_float64_parameters():
    for lib in (mg, torch):
        net = lib.nn.Sequential(lib.nn.LazyLinear(3)).double()
        net(lib.ones(2, 4, dtype=lib.float64))
        assert net[0].weight.dtype == lib.float64


def test_a_deep_copy_is_initialised_on_its_own():
    for lib in (mg, torch):
        net = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        twin = copy.deepcopy(net)
        twin(lib.ones(4, 2))
        assert [type(m).__name__ for m in twin] == ["Linear", "ReLU", "Linear"]
        assert [type(m).__name__ for m in net] == ["LazyLinear", "ReLU", "LazyLinear"]
        assert tuple(net(lib.ones(4, 5)).shape) == (4, 2)
        assert net[0].in_features == 5 and twin[0].in_features == 2


def test_an_uninitialized_buffer_is_not_deep_copied():
    assert same_kind(lambda lib: copy.deepcopy(lib.nn.LazyBatchNorm1d())) == "ValueError"


# ------------------------------------------------------------------ LazyConv2d

def test_lazy_conv2d_infers_the_channels_and_becomes_conv2d():
    for lib in (mg, torch):
        lib.manual_seed(2)
        eager = lib.nn.Conv2d(3, 4, 3, padding=1)
        lib.manual_seed(2)
        conv = lib.nn.LazyConv2d(4, 3, padding=1)
        assert repr(conv) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
        out = conv(lib.ones(2, 3, 5, 5))
        assert type(conv) is lib.nn.Conv2d and conv.in_channels == 3
        assert repr(conv) == repr(eager) and tuple(out.shape) == (2, 4, 5, 5)
        assert lib.equal(conv.weight, eager.weight) and lib.equal(conv.bias, eager.bias)


def test_lazy_conv2d_unbatched_input_and_groups():
    for lib in (mg, torch):
        conv = lib.nn.LazyConv2d(4, 2, groups=2, bias=False)
        conv(lib.ones(6, 4, 4))
        assert tuple(conv.weight.shape) == (4, 3, 2, 2) and conv.bias is None


@pytest.mark.parametrize("make, shape", [
    (lambda lib: lib.nn.LazyConv2d(4, 3), (2, 3)),
    (lambda lib: lib.nn.LazyConv2d(4, 3, groups=2), (1, 3, 5, 5)),
])
def test_lazy_conv2d_errors(make, shape):
    kind = same_kind(lambda lib: make(lib)(lib.ones(shape)))
    assert kind in ("RuntimeError", "ValueError")


# ------------------------------------------------------------------ LazyBatchNorm1d

def test_lazy_batch_norm_infers_the_features_and_trains_as_batch_norm():
    x = R.standard_normal((6, 3)).astype(np.float32)
    got = []
    for lib in (mg, torch):
        bn = lib.nn.LazyBatchNorm1d(momentum=0.3)
        assert repr(bn) == ("LazyBatchNorm1d(0, eps=1e-05, momentum=0.3, affine=True, "
                            "bias=True, track_running_stats=True)")
        out = bn(lib.tensor(x))
        assert type(bn) is lib.nn.BatchNorm1d and bn.num_features == 3
        assert repr(bn) == repr(lib.nn.BatchNorm1d(3, momentum=0.3))
        got.append([out.detach().numpy(), bn.running_mean.numpy(), bn.running_var.numpy(),
                    bn.weight.detach().numpy(), bn.bias.detach().numpy(),
                    int(bn.num_batches_tracked)])
    for mine, theirs in zip(*got):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_lazy_batch_norm_without_affine_or_running_stats():
    for lib in (mg, torch):
        bn = lib.nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
        assert bn.weight is None and bn.running_mean is None
        bn(lib.ones(4, 3))
        assert type(bn) is lib.nn.BatchNorm1d and bn.num_features == 0


def test_lazy_batch_norm_on_a_vector_raises():
    assert same_kind(lambda lib: lib.nn.LazyBatchNorm1d()(lib.ones(4))) == "IndexError"


def test_the_lazy_names_are_where_pytorch_has_them():
    for name in ("LazyLinear", "LazyConv2d", "LazyBatchNorm1d", "UninitializedParameter",
                 "UninitializedBuffer"):
        assert hasattr(nn, name) and name in nn.__all__
    assert nn.parameter.Parameter is nn.Parameter
    assert nn.UninitializedParameter is nn.parameter.UninitializedParameter
