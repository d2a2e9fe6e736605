"""``minigrad.utils.checkpoint`` against ``torch.utils.checkpoint``: the gradients of a
checkpointed call are those of the plain call (and PyTorch's), random draws are replayed,
PyTorch's warnings and errors, and less memory kept alive between forward and backward."""

import tracemalloc
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import minigrad as mg
import minigrad.utils.checkpoint as mcp

RNG = np.random.default_rng(3)


def _models():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3),
                                 torch.nn.Sigmoid(), torch.nn.Linear(3, 2)).double()
    ours = mg.nn.Sequential(mg.nn.Linear(4, 6), mg.nn.Tanh(), mg.nn.Linear(6, 3),
                            mg.nn.Sigmoid(), mg.nn.Linear(3, 2)).double()
    ours.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return ours, theirs


def _inputs():
    values = RNG.standard_normal((5, 4))
    return mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


def _grads(model, x):
    return [p.grad.detach().numpy().copy() for p in model.parameters()] + [x.grad.numpy()]


def _assert_all_close(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_equal_the_plain_run_and_torchs(use_reentrant):
    model, tmodel = _models()
    x, tx = _inputs()
    (model(x) ** 2).sum().backward()
    plain = _grads(model, x)
    model.zero_grad()
    x.grad = None
    out = mcp.checkpoint(model, x, use_reentrant=use_reentrant)
    tout = tcp.checkpoint(tmodel, tx, use_reentrant=use_reentrant)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    (out ** 2).sum().backward()
    (tout ** 2).sum().backward()
    _assert_all_close(_grads(model, x), plain)
    _assert_all_close(_grads(model, x), _grads(tmodel, tx))


def test_checkpoint_sequential_matches_torch():
    model, tmodel = _models()
    x, tx = _inputs()
    for segments in (1, 2, 3):
        model.zero_grad()
        tmodel.zero_grad()
        x.grad = tx.grad = None
        out = mcp.checkpoint_sequential(model, segments, x, use_reentrant=False)
        tout = tcp.checkpoint_sequential(tmodel, segments, tx, use_reentrant=False)
        out.sum().backward()
        tout.sum().backward()
        _assert_all_close(_grads(model, x), _grads(tmodel, tx))


def test_non_reentrant_connects_the_weights_reentrant_only_the_arguments():
    w = mg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    tw = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x, tx = mg.tensor([0.3, 0.1, 2.0]), torch.tensor([0.3, 0.1, 2.0])
    out = mcp.checkpoint(lambda a: (a * w).sin(), x, use_reentrant=False)
    tout = tcp.checkpoint(lambda a: (a * tw).sin(), tx, use_reentrant=False)
    assert out.requires_grad and tout.requires_grad
    (g,) = mg.autograd.grad(out.sum(), w)
    (tg,) = torch.autograd.grad(tout.sum(), tw)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = mcp.checkpoint(lambda a: a * w, x, use_reentrant=True)
        tout = tcp.checkpoint(lambda a: a * tw, tx, use_reentrant=True)
    assert not out.requires_grad and not tout.requires_grad


def test_autograd_grad_through_reentrant_checkpoint_sees_only_the_arguments():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    tw = torch.tensor([1.0, 2.0], requires_grad=True)
    x, tx = mg.tensor([0.5, 0.7], requires_grad=True), torch.tensor([0.5, 0.7],
                                                                    requires_grad=True)
    out = mcp.checkpoint(lambda a: a * w, x, use_reentrant=True)
    tout = tcp.checkpoint(lambda a: a * tw, tx, use_reentrant=True)
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        torch.autograd.grad(tout.sum(), tw)
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        mg.autograd.grad(out.sum(), w)


def test_several_outputs_and_keyword_arguments():
    x, tx = _inputs()

    def f(lib, a, scale=1.0):
        return a.sin() * scale, "tag", a.exp().sum()

    for use_reentrant in (True, False):
        x.grad = tx.grad = None
        kwargs = {} if use_reentrant else {"scale": 3.0}
        s, tag, e = mcp.checkpoint(lambda *a, **k: f(mg, *a, **k), x,
                                   use_reentrant=use_reentrant, **kwargs)
        ts, ttag, te = tcp.checkpoint(lambda *a, **k: f(torch, *a, **k), tx,
                                      use_reentrant=use_reentrant, **kwargs)
        assert tag == ttag == "tag"
        (s.sum() * e).backward()
        (ts.sum() * te).backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


def test_dropout_masks_are_replayed_and_the_stream_moves_on_as_without_checkpoint():
    layer = mg.nn.Dropout(0.5)
    x = mg.tensor(RNG.standard_normal(200), requires_grad=True)
    mg.manual_seed(1)
    (layer(x) * x).sum().backward()
    plain, after_plain = x.grad.numpy().copy(), mg.rand(3).numpy()
    for use_reentrant in (True, False):
        x.grad = None
        mg.manual_seed(1)
        out = mcp.checkpoint(lambda a: layer(a) * a, x, use_reentrant=use_reentrant)
        out.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), plain)
        np.testing.assert_array_equal(mg.rand(3).numpy(), after_plain)
    x.grad = None
    mg.manual_seed(1)
    mcp.checkpoint(lambda a: layer(a) * a, x, use_reentrant=False,
                   preserve_rng_state=False).sum().backward()
    assert not np.array_equal(x.grad.numpy(), plain)  # another mask in the second run


def test_warnings_and_errors_as_torch():
    x, tx = _inputs()
    for module, value in ((tcp, tx), (mcp, x)):
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
            module.checkpoint(lambda a: a.sin(), value)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
            module.checkpoint_sequential([lambda a: a.sin()], 1, value)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
            module.checkpoint(lambda a: a.sin(), value.detach(), use_reentrant=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
            module.checkpoint(lambda a, b=1: a * b, value, b=2, use_reentrant=True)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            module.checkpoint(lambda a: a, value, use_reentrant=True, debug=True)
        out = module.checkpoint(lambda a: a.sin(), value, use_reentrant=True)
        out.sum().backward()
        with pytest.raises(RuntimeError, match="second time"):
            out.sum().backward()


def _retained_bytes(run):
    """Bytes still allocated after ``run()`` (whose result is kept) compared with before:
    what the forward pass left alive for backward. (minigrad's graphs hold no reference
    cycles, so what is unreachable is already freed: no ``gc.collect()`` needed.)"""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = run()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del result
    return after - before


def test_checkpointing_keeps_fewer_arrays_alive_and_gives_the_same_gradients():
    x = mg.tensor(RNG.standard_normal(50_000), requires_grad=True)  # 400 kB per array

    def deep(a):
        for _ in range(12):
            a = (a * 1.01).tanh()
        return a

    plain = _retained_bytes(lambda: deep(x))
    kept = {flag: _retained_bytes(lambda: mcp.checkpoint(deep, x, use_reentrant=flag))
            for flag in (True, False)}
    array = x.numel() * 8
    assert plain > 10 * array  # the graph holds a dozen activations
    for flag, size in kept.items():
        assert size < 2 * array, (flag, size, plain)  # only the output
    deep(x).sum().backward()
    expected = x.grad.numpy().copy()
    for flag in (True, False):
        x.grad = None
        mcp.checkpoint(deep, x, use_reentrant=flag).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_double_backward_through_a_non_reentrant_checkpoint():
    w, tw = mg.tensor([1.5, -1.0], requires_grad=True), torch.tensor([1.5, -1.0],
                                                                     requires_grad=True)
    x, tx = mg.tensor([0.5, 2.0], requires_grad=True), torch.tensor([0.5, 2.0],
                                                                    requires_grad=True)
    found = []
    for lib, module, a, b in ((mg, mcp, x, w), (torch, tcp, tx, tw)):
        y = module.checkpoint(lambda t: t ** 3 * b, a, use_reentrant=False)
        g, gw = lib.autograd.grad(y.sum(), (a, b), create_graph=True)
        gg, ggw = lib.autograd.grad((g * g).sum() + gw.sum(), (a, b))
        found.append([t.detach().numpy() for t in (g, gw, gg, ggw)])
    _assert_all_close(*found)
