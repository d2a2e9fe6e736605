"""PyTorch's older spellings, against PyTorch: the constants ``inf``, ``nan``, ``pi``, ``e``
and the legacy constructors ``FloatTensor``, ``LongTensor``, ... (data or sizes, the same
dtypes, ``isinstance``, and the same exception types for bad input)."""

import math

import numpy as np
import pytest
import torch

import minigrad as mg

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


def dtype_name(t):
    return str(t.dtype).split(".")[1]


def test_the_constants_are_pythons_floats_as_in_pytorch():
    for name in ("inf", "pi", "e"):
        assert type(getattr(mg, name)) is float
        assert getattr(mg, name) == getattr(torch, name)
    assert math.isnan(mg.nan) and type(mg.nan) is float
    assert mg.tensor([1.0]).clamp(max=mg.inf).item() == 1.0
    assert set(["inf", "nan", "pi", "e"] + NAMES) <= set(mg.__all__)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", [[1, 2], [[1, 0], [3, 4]], (2, 3), [], [1.7, -2.2]])
def test_data_gives_the_same_tensor_as_pytorch(name, data):
    if name == "ByteTensor" and any(v < 0 for v in np.ravel(data)):
        pytest.skip("a negative number in uint8 wraps around differently")
    mine, theirs = getattr(mg, name)(data), getattr(torch, name)(data)
    assert dtype_name(mine) == dtype_name(theirs)
    assert mine.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (0,), (2, 0, 1)])
def test_whole_numbers_are_sizes(name, sizes):
    mine, theirs = getattr(mg, name)(*sizes), getattr(torch, name)(*sizes)
    assert tuple(mine.shape) == tuple(theirs.shape) == sizes
    assert dtype_name(mine) == dtype_name(theirs)
    assert tuple(getattr(mg, name)(mg.Size(sizes)).shape) == sizes
    assert tuple(getattr(mg, name)(np.int64(sizes[0])).shape) == sizes[:1]


def test_no_arguments_give_an_empty_tensor():
    for lib in (mg, torch):
        t = lib.FloatTensor()
        assert tuple(t.shape) == (0,) and dtype_name(t) == "float32"


def test_a_numpy_array_is_data_converted_to_the_dtype():
    for lib in (mg, torch):
        t = lib.FloatTensor(np.array([1, 2]))
        assert dtype_name(t) == "float32" and t.tolist() == [1.0, 2.0]
        assert lib.LongTensor(np.array([1.5, 2.5])).tolist() == [1, 2]


def test_a_tensor_of_the_same_dtype_shares_its_memory():
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0])
        y = lib.FloatTensor(x)
        y[0] = 5.0
        assert x[0].item() == 5.0


@pytest.mark.parametrize("args, kwargs", [
    (("abc",), {}), ((2.5,), {}), ((True,), {}), ((-1,), {}), ((2, -3), {}),
    (([1.0], [2.0]), {}), ((2, [3]), {}), (([1, "a"],), {}), ((2, 3), {"dtype": "float64"}),
    (([1.0],), {"requires_grad": True}), ((None,), {}),
])
def test_bad_input_raises_as_in_pytorch(args, kwargs):
    outcomes = []
    for lib in (mg, torch):
        options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        try:
            lib.FloatTensor(*args, **options)
            outcomes.append("ok")
        except Exception as error:  # noqa: BLE001  (which exception each library raises)
            outcomes.append(type(error).__name__)
    assert outcomes[0] == outcomes[1] != "ok"


def test_a_tensor_of_another_dtype_is_refused():
    for lib in (mg, torch):
        with pytest.raises(TypeError):
            lib.FloatTensor(lib.tensor([1, 2]))
        with pytest.raises(TypeError):
            lib.LongTensor(lib.tensor([1.0]))


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_asks_for_the_dtype(name):
    for lib in (mg, torch):
        legacy = getattr(lib, name)
        made = legacy([1, 0])
        assert isinstance(made, legacy) and isinstance(made, lib.Tensor)
        assert type(made) is lib.Tensor
        others = [n for n in NAMES if n != name]
        assert not any(isinstance(made, getattr(lib, other)) for other in others)
        assert not isinstance([1, 0], legacy)
        assert not issubclass(legacy, lib.Tensor)
        assert legacy.dtype == made.dtype


def test_the_class_prints_as_pytorchs():
    assert repr(mg.FloatTensor) == repr(torch.FloatTensor).replace("torch", "minigrad")
    assert mg.FloatTensor(2, 3).type() == "minigrad.FloatTensor"


@pytest.mark.parametrize("target", ["LongTensor", "IntTensor", "DoubleTensor", "torch.IntTensor",
                                    "torch.BoolTensor", "float64", "torch.Foo"])
def test_type_takes_a_legacy_class_or_its_name_as_pytorch(target):
    results = []
    for lib in (mg, torch):
        x = lib.tensor([1.5, -2.0, 0.0])
        argument = target if target.startswith("torch.") else getattr(lib, target)
        try:
            y = x.type(argument)
            results.append((str(y.dtype).split(".")[-1], y.tolist()))
        except Exception as error:  # noqa: BLE001  (the type is compared)
            results.append(type(error).__name__)
    assert results[0] == results[1]
