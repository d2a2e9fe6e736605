"""``mg.device`` and ``mg.cuda`` without a GPU, and ``mg.set_printoptions``, against PyTorch."""

import numpy as np
import pytest

import minigrad as mg
from parity import errors_of_both


def _pt(text):
    return text.replace("torch", "minigrad")


@pytest.mark.parametrize("expression", [
    "lib.device('cuda')", "lib.device('cuda:1')", "lib.device('cuda', 0)", "lib.device('cpu')",
    "lib.device('cpu:0')", "lib.device('cpu', 0)", "lib.device('mps')", "lib.device('meta')",
    "lib.device(type='cuda', index=2)", "lib.device(lib.device('cuda:3'))",
])
def test_devices_are_built_and_print_as_pytorchs(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)


def test_devices_compare_and_hash_as_pytorchs(torch):
    pairs = [("'cuda:1'", "'cuda', 1"), ("'cuda'", "'cuda:0'"), ("'cpu'", "'cpu'"),
             ("'cpu'", "'cuda'"), ("'cpu'", "'cpu:0'")]
    for a, b in pairs:
        for lib in (mg, torch):
            x, y = eval(f"lib.device({a})", {"lib": lib}), eval(f"lib.device({b})", {"lib": lib})
            expected = eval(f"torch.device({a}) == torch.device({b})", {"torch": torch})
            assert (x == y) == expected and (x != y) != expected, (a, b)
            if expected:
                assert hash(x) == hash(y)
    assert (mg.device("cuda:1") == "cuda:1") == (torch.device("cuda:1") == "cuda:1")
    assert mg.device("cpu").index is None and mg.device("cuda:1").index == 1
    assert mg.ones(2).device == mg.device("cpu") and mg.ones(2).device.type == "cpu"
    assert len({mg.device("cuda", 1), mg.device("cuda:1"), mg.device("cpu")}) == 2


DEVICE_MISTAKES = {
    "an unknown device type": lambda lib: lib.device("gpu"),
    "a device index that is not a number": lambda lib: lib.device("cuda:x"),
    "a negative index in the string": lambda lib: lib.device("cuda:-1"),
    "a negative index": lambda lib: lib.device("cuda", -1),
    "two indices": lambda lib: lib.device("cuda:1", 1),
}


@pytest.mark.parametrize("mistake", sorted(DEVICE_MISTAKES))
def test_bad_devices_raise_pytorchs_exception(mistake, torch):
    ours, theirs = errors_of_both(DEVICE_MISTAKES[mistake], torch)
    assert type(ours) is type(theirs), (ours, theirs)


@pytest.mark.parametrize("move", [
    lambda: mg.ones(2).to(mg.device("cuda")),
    lambda: mg.ones(2).to("cuda:0"),
    lambda: mg.zeros(2, device=mg.device("cuda", 1)),
    lambda: mg.nn.Linear(2, 2).to(mg.device("cuda")),
    lambda: mg.nn.Conv2d(1, 2, 3, device="cuda"),
])
def test_moving_to_a_gpu_says_minigrad_runs_on_the_cpu(move):
    with pytest.raises(RuntimeError, match="CPU only"):
        move()


def test_the_usual_device_line_picks_the_cpu(torch):
    for lib in (mg, torch):
        dev = lib.device("cuda" if lib.cuda.is_available() else "cpu")
        x = lib.ones(2).to(dev)
        assert str(dev) == "cpu" and x.device == dev
    assert mg.cuda.is_available() is False and mg.cuda.device_count() == 0
    mg.cuda.manual_seed(0)
    mg.cuda.manual_seed_all(0)  # nothing to seed, as in PyTorch without a GPU


# --------------------------------------------------------------------------- printing

@pytest.fixture
def reset_printoptions(torch):
    yield
    mg.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


TENSORS = [
    "lib.tensor([1.123456789, -2.5, 300.25])",
    "lib.tensor([[1e-5, 2.0], [3.0, 4e5]])",
    "lib.tensor([1.0, 2.0, 3.0])",
    "lib.tensor([100.0, 2e9])",
    "lib.arange(30).reshape(3, 10)",
    "lib.arange(2000.0).reshape(40, 50) / 7",
    "lib.arange(24.0).reshape(2, 3, 4) * 1.5",
    "lib.arange(25.0) / 24",
    "lib.tensor([[0.5, 2.25]], dtype=lib.float64)",
    "lib.tensor([0.1, float('nan'), float('inf')], requires_grad=True)",
]

SETTINGS = [
    dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False),
    dict(threshold=5), dict(threshold=10, edgeitems=1), dict(linewidth=40),
    dict(precision=3, sci_mode=True, linewidth=60), dict(profile="short"),
    dict(profile="full", precision=1), dict(edgeitems=2, threshold=20, linewidth=120),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=[str(s) for s in SETTINGS])
def test_set_printoptions_prints_as_pytorch(settings, torch, reset_printoptions):
    mg.set_printoptions(**settings)
    torch.set_printoptions(**settings)
    for expression in TENSORS:
        ours = repr(eval(expression, {"lib": mg}))
        theirs = repr(eval(expression, {"lib": torch}))
        assert ours == _pt(theirs), f"{settings} {expression}\n{ours}\n{theirs}"


def test_default_profile_restores_the_defaults(torch, reset_printoptions):
    x = mg.tensor(np.arange(2000.0) / 3, dtype=mg.float32)
    before = repr(x)
    mg.set_printoptions(precision=1, threshold=3, edgeitems=1, linewidth=30, sci_mode=True)
    assert repr(x) != before
    mg.set_printoptions(profile="default")
    assert repr(x) == before == _pt(repr(torch.tensor(np.arange(2000.0) / 3,
                                                       dtype=torch.float32)))
