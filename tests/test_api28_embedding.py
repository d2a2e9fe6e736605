"""``nn.Embedding`` / ``F.embedding``'s options (issue 28: the word-language-model and seq2seq
programs): ``max_norm`` (rows renormalised in place before the lookup), ``norm_type``,
``scale_grad_by_freq`` and PyTorch's positional signature, against PyTorch."""

import numpy as np
import pytest
import torch

import minigrad as mg

TABLE = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32) * 2
INDICES = np.array([[1, 3, 1], [5, 1, 0]])


def pair(**kw):
    theirs = torch.nn.Embedding(6, 4, **kw)
    mine = mg.nn.Embedding(6, 4, **kw)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(TABLE))
    with mg.no_grad():
        mine.weight.copy_(mg.tensor(TABLE))
    return theirs, mine


@pytest.mark.parametrize("kw", [dict(max_norm=1.0), dict(max_norm=2.5, norm_type=1.0),
                                dict(scale_grad_by_freq=True),
                                dict(padding_idx=0, max_norm=1.5, scale_grad_by_freq=True),
                                dict()])
def test_lookup_renorm_and_gradient(kw):
    theirs, mine = pair(**kw)
    assert repr(mine) == repr(theirs)
    out_t = theirs(torch.tensor(INDICES))
    out_m = mine(mg.tensor(INDICES))
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-6)
    # the table itself changed in place where rows were too long (and only those rows)
    np.testing.assert_allclose(mine.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)
    g = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(np.float32)
    out_t.backward(torch.tensor(g))
    out_m.backward(mg.tensor(g))
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6,
                               atol=1e-7)


def test_max_norm_changes_only_looked_up_rows():
    _, mine = pair(max_norm=0.5)
    mine(mg.tensor(np.array([2])))
    norms = np.linalg.norm(mine.weight.detach().numpy(), axis=1)
    assert norms[2] <= 0.5 + 1e-6
    assert (norms[[0, 1, 3, 4, 5]] > 0.5).all()


def test_positional_signature_and_functional():
    theirs = torch.nn.Embedding(6, 4, None, 1.0, 2.0, True)
    mine = mg.nn.Embedding(6, 4, None, 1.0, 2.0, True)
    assert repr(mine) == repr(theirs)
    w_t, w_m = torch.tensor(TABLE), mg.tensor(TABLE)
    out_t = torch.nn.functional.embedding(torch.tensor(INDICES), w_t, max_norm=1.0)
    out_m = mg.nn.functional.embedding(mg.tensor(INDICES), w_m, max_norm=1.0)
    np.testing.assert_allclose(out_m.numpy(), out_t.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w_m.numpy(), w_t.numpy(), rtol=1e-6)


def test_from_pretrained_takes_the_options():
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(TABLE), max_norm=1.0)
    mine = mg.nn.Embedding.from_pretrained(mg.tensor(TABLE), max_norm=1.0)
    assert repr(mine) == repr(theirs)
    np.testing.assert_allclose(mine(mg.tensor(INDICES)).numpy(),
                               theirs(torch.tensor(INDICES)).numpy(), rtol=1e-6)


def test_sparse_is_refused_with_a_reason():
    layer = mg.nn.Embedding(6, 4, sparse=True)
    assert "sparse=True" in repr(layer)
    with pytest.raises(NotImplementedError, match="sparse"):
        layer(mg.tensor(INDICES))
