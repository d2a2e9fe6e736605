"""Tensors print exactly as PyTorch prints the same tensors (with `torch.` read as `minigrad.`)."""

import numpy as np
import pytest

import minigrad as mg

R = np.random.default_rng(7)

DATA = {
    "seed_12": [12.0],
    "ints": [1, 2, 3],
    "negative_ints": [[-1, 20], [300, -4000]],
    "whole_floats": [1.0, -2.0, 30.0],
    "decimals": [0.1, -2.5, 3.14159],
    "scalar": 3.5,
    "scalar_whole": 3.0,
    "scalar_int": 7,
    "tiny": [1e-5, 2.0],
    "huge": [1e9, 1.0],
    "wide_range": [0.001, 10.0],
    "whole_sci": [1.0, 5000.0],
    "nan_inf": [float("nan"), float("inf"), -1.5],
    "bools": [True, False, True],
    "matrix": R.standard_normal((3, 4)).round(6).tolist(),
    "cube": R.standard_normal((2, 3, 2)).tolist(),
    "long_row": R.standard_normal(30).tolist(),
    "summarized": R.standard_normal(2000).tolist(),
    "summarized_2d": R.standard_normal((40, 40)).tolist(),
    "zeros": [0.0, 0.0],
    "empty": [],
}


def _same(ours, theirs):
    assert ours == theirs.replace("torch.", "minigrad.")


@pytest.mark.parametrize("name", sorted(DATA))
def test_repr_matches_pytorch(name, torch):
    _same(repr(mg.tensor(DATA[name])), repr(torch.tensor(DATA[name])))


@pytest.mark.parametrize("name", ["decimals", "matrix", "empty", "seed_12"])
def test_dtype_suffix_matches_pytorch(name, torch):
    _same(repr(mg.tensor(DATA[name], dtype=mg.float64)), repr(torch.tensor(DATA[name], dtype=torch.float64)))
    _same(repr(mg.tensor(DATA[name], dtype=mg.int32)), repr(torch.tensor(DATA[name], dtype=torch.int32)))


def test_grad_suffixes_match_pytorch(torch):
    for lib in (mg, torch):
        x = lib.tensor([2.0], requires_grad=True)
        y = x * x * 3
        s = (y * x).sum()
        w = lib.tensor(np.arange(40.0).reshape(4, 10), requires_grad=True)
        texts = [repr(x), repr(y), repr(s), repr(w), repr(w.double() * 1)]
        if lib is mg:
            ours = texts
        else:
            theirs = texts
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_the_seed_example_prints_12_then_24():
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    assert repr(x.grad) == "tensor([12.])"
    z.backward()
    assert repr(x.grad) == "tensor([24.])"
    assert repr(x) == "tensor([2.], requires_grad=True)"
    assert repr(z.sum()) == "tensor(12., grad_fn=<SumBackward0>)"


def test_shapes_and_dtypes_print_as_minigrad():
    t = mg.zeros(2, 3)
    assert repr(t.shape) == "minigrad.Size([2, 3])"
    assert t.shape == (2, 3) and t.size(1) == 3
    assert repr(t.dtype) == "minigrad.float32"
    assert repr(t.device) == "device(type='cpu')"
    assert f"{mg.tensor(2.5):.1f}" == "2.5"
