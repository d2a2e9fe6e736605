"""BatchNorm1d, LayerNorm, Embedding and GELU against PyTorch: values, gradients, grad_fn
names, running statistics, state_dict keys, reprs, errors and a short training loop.

Each scenario is written once as a function of ``lib`` (minigrad or torch) and run with
both; float64 numbers must agree to 1e-9 (relative), everything else exactly.
"""

import numpy as np
import pytest

import minigrad as mg
from parity import errors_of_both

RTOL, ATOL = 1e-9, 1e-12


def _data(seed, *shape, loc=0.0, scale=1.0):
    return loc + scale * np.random.default_rng(seed).standard_normal(shape)


def _is_tensor(value):
    return hasattr(value, "numpy") and hasattr(value, "requires_grad")


def _assert_same(ours, theirs, where="result"):
    """Tensors: same shape, numpy dtype and values; dicts: same keys in the same order."""
    if _is_tensor(theirs):
        assert _is_tensor(ours), f"{where}: {ours!r} is not a tensor"
        a, b = ours.detach().numpy(), theirs.detach().numpy()
        assert (a.shape, a.dtype) == (b.shape, b.dtype), f"{where}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=where)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), f"{where}: keys {list(ours)} vs {list(theirs)}"
        for key in theirs:
            _assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), f"{where}: {ours!r} vs {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=RTOL, abs=ATOL), where
    else:
        assert ours == theirs, f"{where}: {ours!r} vs {theirs!r}"


def _both(torch, scenario, *args):
    """Run ``scenario(lib, *args)`` with both libraries and compare; minigrad's result."""
    ours = scenario(mg, *args)
    _assert_same(ours, scenario(torch, *args))
    return ours


def _t(lib, array, grad=False):
    return lib.tensor(array, dtype=lib.float64, requires_grad=grad)


def _load(lib, module, **arrays):
    with lib.no_grad():
        for name, array in arrays.items():
            getattr(module, name).copy_(lib.tensor(array))


def _backward(lib, out, seed):
    """Backward from a random weighting of ``out``: a plain sum would give batch norm's
    input a zero gradient, which tests nothing."""
    (out * _t(lib, _data(seed, *out.shape))).sum().backward()


def _graph(out):
    """The output's grad_fn name and where its edges lead: one fused node goes straight to
    the leaves."""
    edges = [None if node is None else type(node).__name__
             for node, _ in out.grad_fn.next_functions]
    return [type(out.grad_fn).__name__, edges]


def _grads(**tensors):
    return {name: None if t is None else t.grad for name, t in tensors.items()}


# ----------------------------------------------------------------------------- BatchNorm1d

BN_CONFIGS = {
    "default": {},
    "affine_off": {"affine": False},
    "bias_off": {"bias": False},
    "untracked": {"track_running_stats": False},
    "momentum_none": {"momentum": None},
    "eps_and_momentum": {"eps": 1e-3, "momentum": 0.3},
}


def _batch_norm_module(lib, config, shape, mode):
    bn = lib.nn.BatchNorm1d(3, **BN_CONFIGS[config]).double()
    if bn.weight is not None:
        _load(lib, bn, weight=_data(1, 3, loc=1.0))
    if bn.bias is not None:
        _load(lib, bn, bias=_data(2, 3))
    for seed in (3, 4):  # two batches move the running statistics away from 0 and 1
        bn(_t(lib, _data(seed, *shape, loc=2.0, scale=3.0)))
    if mode == "eval":
        bn.eval()
    x = _t(lib, _data(5, *shape, loc=-1.0, scale=2.0), grad=True)
    out = bn(x)
    _backward(lib, out, 6)
    return {"out": out, "graph": _graph(out), "grads": _grads(x=x, weight=bn.weight, bias=bn.bias),
            "buffers": dict(bn.named_buffers()), "training": bn.training}


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("shape", [(8, 3), (5, 3, 4)], ids=["2d", "3d"])
@pytest.mark.parametrize("config", sorted(BN_CONFIGS))
def test_batch_norm_1d_values_gradients_and_buffers(torch, config, shape, mode):
    ours = _both(torch, _batch_norm_module, config, shape, mode)
    assert ours["graph"][0] == "NativeBatchNormBackward0"
    assert ours["grads"]["x"].abs().sum().item() > 0.1


def _running_stats_after_three_steps(lib, momentum, shape):
    bn = lib.nn.BatchNorm1d(3, momentum=momentum).double()
    for seed in (10, 11, 12):
        bn(_t(lib, _data(seed, *shape, loc=seed - 11.0, scale=seed / 4)))
    return dict(bn.named_buffers())


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 5)], ids=["2d", "3d"])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_running_statistics_after_three_training_steps(torch, momentum, shape):
    ours = _both(torch, _running_stats_after_three_steps, momentum, shape)
    assert ours["num_batches_tracked"].item() == 3
    assert ours["num_batches_tracked"].dtype == mg.int64


def test_momentum_none_keeps_the_plain_average_of_the_batch_statistics():
    bn = mg.nn.BatchNorm1d(2, momentum=None).double()
    batches = [_data(seed, 4, 2, loc=seed) for seed in (20, 21, 22)]
    for batch in batches:
        bn(_t(mg, batch))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([b.mean(0) for b in batches], 0))
    np.testing.assert_allclose(bn.running_var.numpy(),
                               np.mean([b.var(0, ddof=1) for b in batches], 0))


def _train_and_eval_differ(lib):
    bn = lib.nn.BatchNorm1d(3).double()
    x = _t(lib, _data(30, 6, 3, loc=4.0, scale=2.0))
    train_full, train_first = bn(x)[:1], bn(x[:2])[:1]
    with lib.no_grad():  # still training: the statistics move, nothing is recorded
        quiet = bn(x)
    stats_before_eval = [bn.running_mean.clone(), bn.running_var.clone()]
    bn.eval()
    eval_full, eval_alone = bn(x)[:1], bn(x[:1])
    return {"train_depends_on_batch": not np.allclose(train_full.detach().numpy(),
                                                      train_first.detach().numpy()),
            "eval_independent_of_batch": np.allclose(eval_full.detach().numpy(),
                                                       eval_alone.detach().numpy()),
            "no_grad_output_requires_grad": quiet.requires_grad,
            "counted": bn.num_batches_tracked.item(),
            "eval_changes_nothing": [stats_before_eval, [bn.running_mean, bn.running_var]],
            "eval_out": eval_full}


def test_train_uses_the_batch_and_eval_the_running_statistics(torch):
    ours = _both(torch, _train_and_eval_differ)
    assert ours["train_depends_on_batch"] and ours["eval_independent_of_batch"]
    assert ours["counted"] == 3 and not ours["no_grad_output_requires_grad"]
    _assert_same(*ours["eval_changes_nothing"])


def _functional_batch_norm(lib, training, shape, with_stats):
    x = _t(lib, _data(40, *shape, loc=1.0, scale=2.0), grad=True)
    weight, bias = _t(lib, _data(41, 3), grad=True), _t(lib, _data(42, 3), grad=True)
    stats = [_t(lib, _data(43, 3)), _t(lib, np.abs(_data(44, 3)) + 0.5)] if with_stats else [None, None]
    out = lib.nn.functional.batch_norm(x, *stats, weight, bias, training, 0.2, 1e-4)
    _backward(lib, out, 45)
    return {"out": out, "graph": _graph(out), "grads": _grads(x=x, weight=weight, bias=bias),
            "stats": stats}


@pytest.mark.parametrize("training,shape,with_stats", [
    (True, (4, 3), True), (True, (2, 3, 2, 2), True), (True, (5, 3, 2), False),
    (False, (4, 3), True), (False, (2, 3, 3), True)])
def test_functional_batch_norm(torch, training, shape, with_stats):
    _both(torch, _functional_batch_norm, training, shape, with_stats)


def _eval_weight_frozen(lib):
    bn = lib.nn.BatchNorm1d(3).double().eval().requires_grad_(False)
    x = _t(lib, _data(50, 4, 3), grad=True)
    out = bn(x)
    _backward(lib, out, 51)
    return {"graph": _graph(out), "x": x.grad}


def test_eval_batch_norm_with_frozen_parameters_sends_gradient_to_the_input_only(torch):
    assert _both(torch, _eval_weight_frozen)["graph"][1] == ["AccumulateGrad", None, None]


# ----------------------------------------------------------------------------- LayerNorm

LN_CASES = {
    "last_dim": ((4, 5), 5, {}),
    "last_dim_3d": ((2, 3, 5), 5, {}),
    "last_two_dims": ((2, 3, 4), (3, 4), {}),
    "last_two_as_list": ((3, 2, 4), [2, 4], {"eps": 1e-3}),
    "no_affine": ((3, 4), (4,), {"elementwise_affine": False}),
    "no_affine_two_dims": ((2, 3, 4), (3, 4), {"elementwise_affine": False}),
    "no_bias": ((2, 3, 4), 4, {"bias": False}),
    "no_batch_dims": ((6,), 6, {}),
}


def _layer_norm_module(lib, case, mode):
    shape, normalized_shape, kwargs = LN_CASES[case]
    ln = lib.nn.LayerNorm(normalized_shape, **kwargs).double()
    weight_shape = tuple(ln.normalized_shape)
    if ln.weight is not None:
        _load(lib, ln, weight=_data(60, *weight_shape, loc=1.0))
    if ln.bias is not None:
        _load(lib, ln, bias=_data(61, *weight_shape))
    if mode == "eval":
        ln.eval()
    x = _t(lib, _data(62, *shape, loc=3.0, scale=2.0), grad=True)
    out = ln(x)
    _backward(lib, out, 63)
    return {"out": out, "graph": _graph(out), "grads": _grads(x=x, weight=ln.weight, bias=ln.bias),
            "normalized_shape": ln.normalized_shape, "state": list(ln.state_dict())}


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("case", sorted(LN_CASES))
def test_layer_norm_values_and_gradients(torch, case, mode):
    ours = _both(torch, _layer_norm_module, case, mode)
    assert ours["graph"][0] == "NativeLayerNormBackward0"
    assert ours["grads"]["x"].abs().sum().item() > 0.1


def _functional_layer_norm(lib):
    x = _t(lib, _data(70, 3, 2, 5), grad=True)
    weight = _t(lib, _data(71, 2, 5), grad=True)
    out = lib.nn.functional.layer_norm(x, [2, 5], weight, None, 1e-6)
    _backward(lib, out, 72)
    return {"out": out, "graph": _graph(out), "grads": _grads(x=x, weight=weight)}


def test_functional_layer_norm_with_weight_only(torch):
    _both(torch, _functional_layer_norm)


# ----------------------------------------------------------------------------- Embedding

def _embedding_module(lib, padding_idx, index_dtype):
    emb = lib.nn.Embedding(6, 4, padding_idx=padding_idx).double()
    weight = _data(80, 6, 4)
    if emb.padding_idx is not None:
        weight[emb.padding_idx] = 0
    _load(lib, emb, weight=weight)
    indices = lib.tensor([[1, 2, 2, 5], [0, 5, 5, 5]], dtype=getattr(lib, index_dtype))
    out = emb(indices)
    _backward(lib, out, 81)
    return {"out": out, "graph": _graph(out), "weight.grad": emb.weight.grad,
            "padding_idx": emb.padding_idx}


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("padding_idx", [None, 5, 0, -1, -4])
def test_embedding_repeats_accumulate_and_the_padding_row_gets_no_gradient(
        torch, padding_idx, index_dtype):
    ours = _both(torch, _embedding_module, padding_idx, index_dtype)
    assert ours["graph"] == ["EmbeddingBackward0", ["AccumulateGrad"]]
    grad = ours["weight.grad"].numpy()
    if ours["padding_idx"] is not None:
        assert not grad[ours["padding_idx"]].any()
    assert not grad[3].any() and not grad[4].any()  # never looked up


def _functional_embedding(lib):
    weight = _t(lib, _data(90, 5, 3), grad=True)  # the padding row is not zero here
    outs = [lib.nn.functional.embedding(index, weight, padding_idx=-2)
            for index in (lib.tensor(3), lib.tensor([], dtype=lib.int64),
                          lib.tensor([[3, 1], [4, 3]]))]
    _backward(lib, outs[2], 91)
    return {"outs": outs, "grad": weight.grad, "graph": _graph(outs[2])}


def test_functional_embedding_of_any_index_shape_keeps_the_padding_row_value(torch):
    ours = _both(torch, _functional_embedding)
    assert ours["outs"][0].shape == (3,) and ours["outs"][1].shape == (0, 3)
    assert not ours["grad"].numpy()[3].any()


def _from_pretrained(lib, freeze, padding_idx):
    table = _t(lib, _data(95, 4, 3))
    emb = lib.nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=padding_idx)
    with lib.no_grad():
        table[0, 0] = 7.0  # the weight shares the given tensor's memory
    out = emb(lib.tensor([0, 2, 2]))
    if out.requires_grad:
        _backward(lib, out, 96)
    return {"out": out, "requires_grad": [emb.weight.requires_grad, out.requires_grad],
            "grad": emb.weight.grad, "repr": repr(emb), "weight": emb.weight}


@pytest.mark.parametrize("freeze,padding_idx", [(True, None), (False, None), (False, 2)])
def test_embedding_from_pretrained(torch, freeze, padding_idx):
    ours = _both(torch, _from_pretrained, freeze, padding_idx)
    assert ours["weight"][0, 0].item() == 7.0
    assert ours["requires_grad"] == [not freeze, not freeze]


def test_embedding_weight_is_drawn_from_a_standard_normal_with_a_zero_padding_row():
    mg.manual_seed(0)
    emb = mg.nn.Embedding(2000, 50, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert w.dtype == np.float32 and emb.weight.requires_grad
    assert not w[3].any() and abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


# ----------------------------------------------------------------------------- GELU

GELU_X = np.concatenate([
    [-40.0, -20.0, -12.0, -8.0, -6.0, -5.0, -3.0, -1.5, -1.0, -1e-3, -1e-8, 0.0, 1e-8, 1e-3,
     0.7, 1.0, 3.0, 6.0, 12.0, 40.0],
    _data(100, 30, scale=3.0)])


def _gelu(lib, approximate, as_module):
    x = _t(lib, GELU_X.reshape(5, 10), grad=True)
    out = (lib.nn.GELU(approximate)(x) if as_module
           else lib.nn.functional.gelu(x, approximate=approximate))
    _backward(lib, out, 101)
    return {"out": out, "graph": _graph(out), "grad": x.grad}


@pytest.mark.parametrize("as_module", [True, False], ids=["module", "functional"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_values_and_gradients_including_large_inputs(torch, approximate, as_module):
    ours = _both(torch, _gelu, approximate, as_module)
    assert ours["graph"] == ["GeluBackward0", ["AccumulateGrad"]]
    out = ours["out"].detach().numpy().ravel()
    assert out[0] == 0 and out[19] == 40.0  # gelu(-40) = -0, gelu(40) = 40


def _gelu_float32(lib, approximate):
    out = lib.nn.functional.gelu(lib.tensor(GELU_X.astype(np.float32)), approximate=approximate)
    return [str(out.dtype).split(".")[-1], out.numpy().astype(np.float64)]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_keeps_float32(torch, approximate):
    ours, theirs = _gelu_float32(mg, approximate), _gelu_float32(torch, approximate)
    assert ours[0] == theirs[0] == "float32"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- state dicts

def _state_dict_layout(lib, dtype):
    nn = lib.nn
    model = nn.Sequential(
        nn.Embedding(10, 4, padding_idx=0), nn.LayerNorm(4), nn.Linear(4, 3), nn.BatchNorm1d(3),
        nn.GELU(), nn.BatchNorm1d(3, affine=False), nn.BatchNorm1d(3, track_running_stats=False),
        nn.BatchNorm1d(3, bias=False), nn.LayerNorm((2, 4), elementwise_affine=False),
        nn.LayerNorm(4, bias=False))
    if dtype == "double":
        model.double()
    return [(key, str(value.dtype).split(".")[-1], list(value.shape))
            for key, value in model.state_dict().items()]


@pytest.mark.parametrize("dtype", ["float", "double"])
def test_state_dict_keys_dtypes_and_shapes_in_torchs_order(torch, dtype):
    ours = _both(torch, _state_dict_layout, dtype)
    assert ("3.num_batches_tracked", "int64", []) in ours


def test_batch_norm_loads_a_torch_state_dict_and_evaluates_the_same(torch):
    torch.manual_seed(0)
    theirs = torch.nn.BatchNorm1d(3).double()
    for seed in (110, 111):
        theirs(torch.tensor(_data(seed, 5, 3, loc=2.0)))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(_data(112, 3)))
    ours = mg.nn.BatchNorm1d(3).double()
    result = ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    assert ours.num_batches_tracked.item() == 2
    x = _data(113, 4, 3)
    _assert_same(ours.eval()(_t(mg, x)), theirs.eval()(torch.tensor(x)))


# ----------------------------------------------------------------------------- reprs

REPRS = {
    "bn": lambda nn: nn.BatchNorm1d(3),
    "bn_options": lambda nn: nn.BatchNorm1d(4, eps=1e-3, momentum=None, affine=False),
    "bn_untracked_no_bias": lambda nn: nn.BatchNorm1d(2, 0.01, 0.2, True, False, bias=False),
    "ln": lambda nn: nn.LayerNorm(5),
    "ln_two_dims": lambda nn: nn.LayerNorm((2, 3), eps=1e-6, elementwise_affine=False),
    "ln_list_no_bias": lambda nn: nn.LayerNorm([4], bias=False),
    "embedding": lambda nn: nn.Embedding(10, 3),
    "embedding_padding": lambda nn: nn.Embedding(10, 3, padding_idx=0),
    "embedding_negative_padding": lambda nn: nn.Embedding(10, 3, -1),
    "gelu": lambda nn: nn.GELU(),
    "gelu_tanh": lambda nn: nn.GELU(approximate="tanh"),
    "model": lambda nn: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.GELU("tanh"),
                                      nn.LayerNorm(4), nn.Linear(4, 2)),
}


@pytest.mark.parametrize("name", sorted(REPRS))
def test_repr_is_torchs(torch, name):
    assert repr(REPRS[name](mg.nn)) == repr(REPRS[name](torch.nn))


# ----------------------------------------------------------------------------- errors

def _bn_train(lib, shape, channels=3):
    return lib.nn.BatchNorm1d(channels)(lib.ones(*shape))


ERRORS = {
    "bn_one_sample": lambda lib: _bn_train(lib, (1, 3)),
    "bn_one_value_per_channel_3d": lambda lib: _bn_train(lib, (1, 3, 1)),
    "bn_wrong_channels": lambda lib: _bn_train(lib, (4, 5)),
    "bn_wrong_channels_3d": lambda lib: _bn_train(lib, (4, 2, 6)),
    "bn_wrong_channels_eval": lambda lib: lib.nn.BatchNorm1d(3).eval()(lib.ones(4, 5)),
    "bn_1d_input": lambda lib: _bn_train(lib, (3,)),
    "bn_4d_input": lambda lib: _bn_train(lib, (2, 3, 2, 2)),
    "bn_mixed_dtype": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 3, dtype=lib.float64)),
    "bn_integer_input": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 3, dtype=lib.int64)),
    "F_bn_eval_without_stats": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None),
    "F_bn_one_stat": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3), lib.zeros(3), None, training=True),
    "F_bn_wrong_weight": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3), lib.zeros(3), lib.ones(3), lib.ones(4)),
    "F_bn_wrong_bias": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3), None, None, lib.ones(3), lib.ones(2), training=True),
    "F_bn_zero_eps_training": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3), None, None, training=True, eps=0.0),
    "F_bn_negative_eps": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3), lib.zeros(3), lib.ones(3), eps=-1.0),
    "F_bn_1d_training": lambda lib: lib.nn.functional.batch_norm(lib.ones(3), None, None, training=True),
    "ln_wrong_last_dim": lambda lib: lib.nn.LayerNorm(3)(lib.ones(4, 5)),
    "ln_wrong_last_dims": lambda lib: lib.nn.LayerNorm((2, 3))(lib.ones(4, 3, 2)),
    "ln_input_too_small": lambda lib: lib.nn.LayerNorm((2, 3))(lib.ones(3)),
    "ln_empty_shape": lambda lib: lib.nn.LayerNorm(())(lib.ones(2, 3)),
    "ln_mixed_dtype": lambda lib: lib.nn.LayerNorm(3)(lib.ones(2, 3, dtype=lib.float64)),
    "ln_integer_input": lambda lib: lib.nn.LayerNorm(3, elementwise_affine=False)(
        lib.ones(2, 3, dtype=lib.int64)),
    "F_ln_int_shape": lambda lib: lib.nn.functional.layer_norm(lib.ones(4, 3), 3),
    "F_ln_wrong_weight": lambda lib: lib.nn.functional.layer_norm(lib.ones(4, 3), (3,), lib.ones(4)),
    "F_ln_wrong_bias": lambda lib: lib.nn.functional.layer_norm(
        lib.ones(4, 3), (3,), lib.ones(3), lib.ones(2)),
    "emb_index_too_large": lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([[0, 5]])),
    "emb_negative_index": lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([-1])),
    "emb_float_index": lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([1.0])),
    "emb_bool_index": lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([True])),
    "emb_list_index": lambda lib: lib.nn.Embedding(5, 3)([1, 2]),
    "emb_padding_too_large": lambda lib: lib.nn.Embedding(5, 3, padding_idx=5),
    "emb_padding_too_small": lambda lib: lib.nn.Embedding(5, 3, padding_idx=-6),
    "F_emb_padding_too_large": lambda lib: lib.nn.functional.embedding(
        lib.tensor([1]), lib.ones(5, 3), padding_idx=5),
    "F_emb_1d_weight": lambda lib: lib.nn.functional.embedding(lib.tensor([1]), lib.ones(5)),
    "emb_pretrained_1d": lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(5)),
    "gelu_unknown_approximation": lambda lib: lib.nn.GELU("exact")(lib.ones(2)),
    "gelu_approximate_none": lambda lib: lib.nn.functional.gelu(lib.ones(2), approximate=None),
    "gelu_approximate_positional": lambda lib: lib.nn.functional.gelu(lib.ones(2), "tanh"),
    "gelu_integer_input": lambda lib: lib.nn.functional.gelu(lib.ones(2, dtype=lib.int64)),
}

# Errors whose message (its first words) minigrad does not repeat: torch's is an internal one.
OWN_MESSAGE = {"F_bn_1d_training"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_type_and_message(torch, name):
    ours, theirs = errors_of_both(ERRORS[name], torch)
    assert type(ours) is type(theirs), f"{ours!r} vs {theirs!r}"
    if name not in OWN_MESSAGE:
        assert str(theirs)[:24] in str(ours)


def test_a_refused_batch_changes_no_running_statistic():
    """PyTorch counts the batch (num_batches_tracked) before refusing it; minigrad refuses
    first, so a failed call leaves the layer as it was."""
    bn = mg.nn.BatchNorm1d(3)
    bn(mg.randn(4, 3))
    before = {k: v.clone() for k, v in bn.state_dict().items()}
    for bad in (mg.randn(1, 3), mg.randn(4, 5)):
        with pytest.raises((ValueError, RuntimeError)):
            bn(bad)
    for key, value in bn.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key].numpy(), err_msg=key)


def test_messages_say_what_to_do():
    with pytest.raises(ValueError, match="model.eval()"):
        mg.nn.BatchNorm1d(3)(mg.ones(1, 3))
    with pytest.raises(IndexError, match="rows go from 0 to 4"):
        mg.nn.Embedding(5, 3)(mg.tensor([7]))
    with pytest.raises(RuntimeError, match=r"\.long\(\)"):
        mg.nn.Embedding(5, 3)(mg.tensor([1.0]))


# ----------------------------------------------------------------------------- training loop

def _train(lib, initial, batches, test_x):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3)).double()
    model.load_state_dict({key: lib.tensor(value) for key, value in initial.items()})
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(_t(lib, x)), lib.tensor(y))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with lib.no_grad():
        predictions = model(_t(lib, test_x))
    return {"losses": losses, "state": model.state_dict(), "eval": predictions}


def test_training_loop_with_batch_norm_matches_torch(torch):
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                                    torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    initial = {key: value.numpy().copy() for key, value in reference.state_dict().items()}
    rng = np.random.default_rng(120)
    teacher = rng.standard_normal((4, 3))  # labels a model can learn
    inputs = [rng.standard_normal((16, 4)) * 2 + 1 for _ in range(10)]
    batches = [(x, (x @ teacher).argmax(1)) for x in inputs]
    test_x = rng.standard_normal((5, 4))
    ours = _both(torch, _train, initial, batches, test_x)
    assert ours["state"]["1.num_batches_tracked"].item() == 10
    assert ours["losses"][-1] < ours["losses"][0]
    assert not np.allclose(ours["state"]["1.running_mean"].numpy(), 0)


def test_an_empty_batch_changes_no_running_statistic(torch):
    import warnings

    def empty_batch(lib):
        bn = lib.nn.BatchNorm1d(3)
        x = lib.zeros(0, 3, requires_grad=True)
        out = bn(x)
        out.sum().backward()
        return (tuple(out.shape), bn.running_mean.tolist(), bn.running_var.tolist(),
                int(bn.num_batches_tracked), tuple(x.grad.shape), bn.weight.grad.tolist())

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "Mean of empty slice" would raise here
        assert empty_batch(mg) == empty_batch(torch)


@pytest.mark.parametrize("name", ["SiLU", "Mish", "ELU", "Hardswish", "Hardtanh", "ReLU6", "SELU"])
def test_an_in_place_activation_prints_as_in_pytorch(name, torch):
    """``SiLU(inplace=True)`` printed ``SiLU(, inplace=True)``; PyTorch's ``Hardswish`` never
    shows ``inplace``."""
    assert repr(getattr(mg.nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))
    assert repr(getattr(mg.nn, name)()) == repr(getattr(torch.nn, name)())
