"""``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder``,
``nn.Transformer.generate_square_subsequent_mask`` and ``F.scaled_dot_product_attention``
(issue 28: PyTorch's nn.Transformer tutorial and the word-language model's TransformerModel)
against PyTorch, with the torch module's state_dict loaded into minigrad's: outputs, the
head-averaged weights, gradients of inputs and parameters, masks (bool and float, causal,
key padding), batch_first, unbatched inputs, norm_first, gelu; the parameters' names,
shapes and init; the errors."""

import numpy as np
import pytest
import torch

import minigrad as mg

RNG = np.random.default_rng(28)


def same_module(make):
    theirs, mine = make(torch.nn), make(mg.nn)
    mine.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return theirs, mine


def inputs(*shapes):
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [mg.tensor(a, requires_grad=True) for a in arrays])


def close(mine, theirs, tol=2e-5):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def masks(lib, kind):
    if kind == "causal float":
        return dict(attn_mask=lib.nn.Transformer.generate_square_subsequent_mask(4))
    if kind == "bool":
        return dict(attn_mask=lib.tensor(np.triu(np.ones((4, 4), bool), 1)))
    if kind == "padding":
        return dict(key_padding_mask=lib.tensor(np.array([[False] * 4, [False, False, True,
                                                                         True]])))
    if kind == "both":
        return {**masks(lib, "bool"), **masks(lib, "padding")}
    return {}


@pytest.mark.parametrize("kind", ["none", "causal float", "bool", "padding", "both"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_self_attention(kind, batch_first):
    theirs, mine = same_module(lambda nn: nn.MultiheadAttention(8, 2, batch_first=batch_first))
    assert repr(mine) == repr(theirs)
    shape = (2, 4, 8) if batch_first else (4, 2, 8)
    (x_t,), (x_m,) = inputs(shape)
    out_t, w_t = theirs(x_t, x_t, x_t, **masks(torch, kind))
    out_m, w_m = mine(x_m, x_m, x_m, **masks(mg, kind))
    close(out_m, out_t)
    close(w_m, w_t)
    (out_t.sum() + (w_t * w_t).sum()).backward()
    (out_m.sum() + (w_m * w_m).sum()).backward()
    close(x_m.grad, x_t.grad)
    for (name, p_t), (_, p_m) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p_m.grad, p_t.grad, 5e-5)


def test_cross_attention_other_dims_heads_and_unbatched():
    theirs, mine = same_module(lambda nn: nn.MultiheadAttention(8, 4, kdim=6, vdim=5))
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    (q_t, k_t, v_t), (q_m, k_m, v_m) = inputs((3, 2, 8), (5, 2, 6), (5, 2, 5))
    out_t, w_t = theirs(q_t, k_t, v_t, average_attn_weights=False)
    out_m, w_m = mine(q_m, k_m, v_m, average_attn_weights=False)
    close(out_m, out_t)
    close(w_m, w_t)
    out_t.pow(2).sum().backward()
    out_m.pow(2).sum().backward()
    for x_m, x_t in ((q_m, q_t), (k_m, k_t), (v_m, v_t)):
        close(x_m.grad, x_t.grad)
    theirs, mine = same_module(lambda nn: nn.MultiheadAttention(8, 2, bias=False))
    (x_t,), (x_m,) = inputs((4, 8))
    out_t, w_t = theirs(x_t, x_t, x_t)
    out_m, w_m = mine(x_m, x_m, x_m)
    close(out_m, out_t)
    close(w_m, w_t)
    assert mine(x_m, x_m, x_m, need_weights=False)[1] is None


def test_init_as_pytorchs():
    mg.manual_seed(0)
    layer = mg.nn.MultiheadAttention(8, 2)
    bound = (6 / (8 + 24)) ** 0.5  # xavier_uniform of (24, 8)
    w = layer.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not layer.in_proj_bias.detach().numpy().any()
    assert not layer.out_proj.bias.detach().numpy().any()


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True), dict(activation="gelu"),
                                dict(batch_first=True)])
def test_encoder_layer_and_encoder(kw):
    def make(nn):
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw)
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    theirs, mine = same_module(make)
    assert repr(mine) == repr(theirs)
    (x_t,), (x_m,) = inputs((2, 4, 8) if kw.get("batch_first") else (4, 2, 8))
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    mask_m = mg.nn.Transformer.generate_square_subsequent_mask(4)
    out_t = theirs(x_t, mask_t)
    out_m = mine(x_m, mask_m)
    close(out_m, out_t)
    out_t.pow(2).sum().backward()
    out_m.pow(2).sum().backward()
    close(x_m.grad, x_t.grad, 1e-4)
    for (name, p_t), (_, p_m) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p_m.grad, p_t.grad, 1e-4)


def test_the_layers_are_copies():
    layer = mg.nn.TransformerEncoderLayer(8, 2, 16)
    encoder = mg.nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight
    assert first is not second and first is not layer.linear1.weight
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True), dict(scale=0.3), "bool", "float"])
def test_scaled_dot_product_attention(kw):
    (q_t, k_t, v_t), (q_m, k_m, v_m) = inputs((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7))
    if isinstance(kw, str):
        mask = RNG.random((4, 6)) > 0.3 if kw == "bool" else RNG.standard_normal((4, 6))
        mask[:, 0] = True if kw == "bool" else mask[:, 0]
        kw_t, kw_m = dict(attn_mask=torch.tensor(mask)), dict(attn_mask=mg.tensor(mask))
        if kw == "float":
            kw_t, kw_m = ({"attn_mask": d["attn_mask"].float()} for d in (kw_t, kw_m))
    else:
        kw_t = kw_m = kw
    out_t = torch.nn.functional.scaled_dot_product_attention(q_t, k_t, v_t, **kw_t)
    out_m = mg.nn.functional.scaled_dot_product_attention(q_m, k_m, v_m, **kw_m)
    close(out_m, out_t)
    out_t.pow(2).sum().backward()
    out_m.pow(2).sum().backward()
    for x_m, x_t in ((q_m, q_t), (k_m, k_t), (v_m, v_t)):
        close(x_m.grad, x_t.grad)


def error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return info.value


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.MultiheadAttention(8, 3),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.ones(3, 2, 6), lib.ones(3, 2, 6),
                                               lib.ones(3, 2, 6)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.ones(3, 2, 8), lib.ones(3, 2, 8),
                                               lib.ones(3, 2, 8), attn_mask=lib.ones(2, 2)),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
])
def test_errors(call):
    theirs, mine = error(torch, call), error(mg, call)
    assert type(mine) is type(theirs)
    assert str(theirs)[:30] in str(mine), (str(mine), str(theirs))
