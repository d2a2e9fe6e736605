"""save / load: .npz files, loaded without pickle; anything else is refused."""

import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def test_state_dict_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    mg.save(model.state_dict(), path)
    assert path.exists()  # no extension added
    loaded = mg.load(path)
    assert list(loaded) == list(model.state_dict())
    other = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    other.load_state_dict(loaded)
    x = mg.randn(5, 3)
    assert other(x).equal(model(x))


def test_nested_checkpoint_round_trip(tmp_path):
    model = nn.Linear(2, 1)
    opt = optim.Adam(model.parameters())
    model(mg.ones(1, 2)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
                  "note": "after one step", "history": [1.5, 0.5]}
    mg.save(checkpoint, tmp_path / "ckpt.npz")
    back = mg.load(tmp_path / "ckpt.npz")
    assert back["epoch"] == 3 and back["note"] == "after one step" and back["history"] == [1.5, 0.5]
    assert back["optimizer"]["state"][0]["exp_avg"].equal(opt.state[model.weight]["exp_avg"])
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    fresh = optim.Adam(model.parameters())
    fresh.load_state_dict(back["optimizer"])
    assert fresh.state[model.weight]["step"].item() == 1


class Boom:
    def __reduce__(self):
        return (open, ("/tmp/minigrad_pickle_was_executed", "w"))


def test_a_pickle_is_refused_and_not_executed(tmp_path):
    import os
    marker = "/tmp/minigrad_pickle_was_executed"
    if os.path.exists(marker):
        os.remove(marker)
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"weight": Boom()}))
    with pytest.raises(ValueError, match="not a file written by minigrad.save"):
        mg.load(path)
    assert not os.path.exists(marker)


def test_npz_with_pickled_objects_is_refused(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, __minigrad__=np.array("x"), t0=np.array([Boom()], dtype=object))
    with pytest.raises(ValueError):
        mg.load(path)


def test_plain_npz_and_garbage_are_refused(tmp_path):
    plain = tmp_path / "plain.npz"
    np.savez(plain, weight=np.ones(3))
    with pytest.raises(ValueError, match="minigrad"):
        mg.load(plain)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01 not a zip")
    with pytest.raises(ValueError, match="minigrad"):
        mg.load(garbage)


def test_tensors_cannot_be_pickled():
    with pytest.raises(TypeError, match="minigrad.save"):
        pickle.dumps(mg.ones(2))


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="state_dict"):
        mg.save({"model": nn.Linear(1, 1)}, tmp_path / "x.pt")
