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


# ---------------------------------------------------------------------------- malformed files
# Every file below is built here, in tmp_path: each must give ValueError (the documented
# error of minigrad.load), never BadZipFile, zlib.error, RecursionError, MemoryError, ...

import io
import json
import tracemalloc
import zipfile

from minigrad import serialization


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def _header(tree):
    return json.dumps({"format": "minigrad-npz", "version": 1, "tree": tree})


def _write_archive(path, members, compression=zipfile.ZIP_DEFLATED):
    """An .npz as numpy writes it: each member ``name.npy`` (bytes or an array)."""
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, content in members.items():
            data = content if isinstance(content, bytes) else _npy_bytes(content)
            archive.writestr(name + ".npy", data)
    return path


def _one_tensor_file(path, array, compression=zipfile.ZIP_DEFLATED):
    return _write_archive(path, {"__minigrad__": np.array(_header({"tensor": "t0"})),
                                 "t0": array}, compression)


def test_a_small_deflated_file_that_expands_past_max_bytes_is_refused_before_inflating(tmp_path):
    path = _one_tensor_file(tmp_path / "bomb.npz", np.zeros(50 * 2**20, np.uint8))
    assert path.stat().st_size < 2**20  # 50 MiB of zeros deflate to well under 1 MiB
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"max_bytes=10,485,760.*max_bytes=\d+\)"):
            mg.load(path, max_bytes=10 * 2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20  # nothing was inflated
    for limit in (60 * 2**20, None):  # a file you trust: raise the limit, or lift it
        loaded = mg.load(path, max_bytes=limit)
        assert loaded.shape == (50 * 2**20,) and not loaded.numpy().any()


def test_the_default_limit_refuses_a_file_declaring_gigabytes(tmp_path):
    """The central directory says 3 GiB; nothing that large is written or inflated."""
    path = _one_tensor_file(tmp_path / "forged.npz", np.zeros(1000, np.float32))
    raw = bytearray(path.read_bytes())
    entry = raw.rfind(b"PK\x01\x02")  # the central directory entry of the last member, t0
    raw[entry + 24:entry + 28] = (3 * 2**30).to_bytes(4, "little")  # its uncompressed size
    path.write_bytes(bytes(raw))
    assert serialization.MAX_BYTES == 2 * 2**30
    with pytest.raises(ValueError, match=r"3,221,22\d,\d{3} bytes.*max_bytes=2,147,483,648"):
        mg.load(path)


def test_an_array_header_declaring_more_data_than_the_member_holds(tmp_path):
    header = np.lib.format.header_data_from_array_1_0(np.zeros(3, np.float32))
    header["shape"] = (10**12,)  # 4 TB of float32, with 12 bytes behind it
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    member = buffer.getvalue() + np.zeros(3, np.float32).tobytes()
    path = _one_tensor_file(tmp_path / "shape.npz", member)
    with pytest.raises(ValueError, match=r"damaged.*shape \(1000000000000,\)"):
        mg.load(path)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_corrupted_member_is_a_value_error(tmp_path, compression):
    path = _one_tensor_file(tmp_path / "corrupt.npz", np.arange(4000, dtype=np.float32),
                            compression)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("t0.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for offset in range(start + 200, start + 260):  # bytes in the middle of the data
        raw[offset] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="damaged"):
        mg.load(path)


def test_a_truncated_file_is_a_value_error(tmp_path):
    path = tmp_path / "cut.pt"
    mg.save({"w": mg.ones(1000)}, path)
    path.write_bytes(path.read_bytes()[:-40])  # the end of the central directory is gone
    with pytest.raises(ValueError, match="not a file written by minigrad.save"):
        mg.load(path)


def _npy_with_header_text(text):
    """A .npy member whose header is ``text`` (padded as numpy pads it)."""
    header = text.encode("latin1")
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


MALFORMED = {
    "a description that is a list": {"__minigrad__": np.array(json.dumps([1, 2]))},
    "a description that is not JSON": {"__minigrad__": np.array("{not json")},
    "a description nested 100000 levels": {
        "__minigrad__": np.array('{"format": "minigrad-npz", "tree": '
                                 + '{"list": [' * 100000 + ']}' * 100000 + "}")},
    "a structure nested past MAX_DEPTH": {
        "__minigrad__": np.array(_header(
            json.loads('{"list": [' * 150 + '{"value": 1}' + ']}' * 150)))},
    "a structure entry that is a number": {"__minigrad__": np.array(_header(5))},
    "a dict entry of three items": {"__minigrad__": np.array(_header({"dict": [[1, 2, 3]]}))},
    "a dict entry with a list as key": {
        "__minigrad__": np.array(_header({"dict": [[[1], {"value": 1}]]}))},
    "no tree": {"__minigrad__": np.array(json.dumps({"format": "minigrad-npz"}))},
    "a tensor that is not there": {"__minigrad__": np.array(_header({"tensor": "t9"}))},
    "a tensor named by a number": {"__minigrad__": np.array(_header({"tensor": 0})),
                                   "t0": np.ones(2)},
    "the description used as a tensor": {
        "__minigrad__": np.array(_header({"tensor": "__minigrad__"}))},
    "a tensor of strings": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                            "t0": np.array(["a", "b"])},
    "a tensor of complex numbers": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                                    "t0": np.ones(2, np.complex64)},
    "an array header that is a list": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                                       "t0": _npy_with_header_text("[1, 2]")},
    "an array header nested deeply": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                                      "t0": _npy_with_header_text("[" * 3000 + "]" * 3000)},
    "an array header that is not Python": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                                           "t0": _npy_with_header_text("{'descr': <f4")},
    "an array with no data": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                              "t0": _npy_bytes(np.ones(8, np.float32))[:-20]},
    "an array in format 3.0": {"__minigrad__": np.array(_header({"tensor": "t0"})),
                               "t0": b"\x93NUMPY\x03\x00" + _npy_bytes(np.ones(2))[8:]},
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_file_is_a_value_error(tmp_path, case):
    path = _write_archive(tmp_path / "bad.npz", MALFORMED[case])
    with pytest.raises(ValueError) as error:
        mg.load(path)
    assert type(error.value) in (ValueError, json.JSONDecodeError)
    assert str(path) in str(error.value)


def test_save_refuses_what_load_would_refuse(tmp_path):
    deep = [1.0]
    for _ in range(serialization.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ValueError, match="nested more than"):
        mg.save(deep, tmp_path / "deep.pt")
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        mg.save(loop, tmp_path / "loop.pt")
    fits = [1.0]
    for _ in range(serialization.MAX_DEPTH - 1):
        fits = [fits]
    mg.save(fits, tmp_path / "fits.pt")
    assert mg.load(tmp_path / "fits.pt") == fits


def test_file_objects_are_read_with_the_same_checks():
    buffer = io.BytesIO()
    mg.save({"w": mg.arange(6.0).reshape(2, 3).T, "epoch": 2}, buffer)
    buffer.seek(0)
    back = mg.load(buffer)
    assert back["epoch"] == 2 and back["w"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    buffer.seek(0)
    with pytest.raises(ValueError, match="max_bytes=10"):
        mg.load(buffer, max_bytes=10)
    with pytest.raises(ValueError, match="not a file written by minigrad.save"):
        mg.load(io.BytesIO(b"PK\x03\x04 and then garbage"))
