"""nn.Module calls that fail: PyTorch's exception type, raised before the module changes.

Each mistake runs on minigrad and on PyTorch; both must raise the same exception type, and
minigrad's module must be exactly as it was (parameters, buffers, children, attributes,
dtypes, gradients). Where PyTorch itself changes the module before raising
(``load_state_dict``, ``requires_grad_``), minigrad still changes nothing, on purpose.
"""

from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg


class Net:
    """The same small model built with either library: two layers, an integer parameter
    that does not require grad, a float buffer, an integer buffer, a plain attribute."""

    @staticmethod
    def build(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        model.register_parameter("steps", lib.nn.Parameter(lib.zeros(2, dtype=lib.int64),
                                                           requires_grad=False))
        model.register_buffer("scale", lib.ones(2))
        model.register_buffer("count", lib.tensor(3))
        model.note = "plain attribute"
        model(lib.ones(1, 3)).sum().backward()  # gradients too
        return model


def snapshot(model):
    """Everything a failed call must leave as it was, as plain Python values."""
    def grad(t):
        return None if t.grad is None else (str(t.grad.dtype), t.grad.tolist())
    return {
        "parameters": [(n, type(p).__name__, str(p.dtype), p.requires_grad,
                        p.detach().tolist(), grad(p)) for n, p in model.named_parameters()],
        "buffers": [(n, str(b.dtype), b.tolist()) for n, b in model.named_buffers()],
        "modules": [(n, type(m).__name__) for n, m in model.named_modules()],
        "attributes": {k: v for k, v in vars(model).items() if not k.startswith("_")},
        "state_dict": list(model.state_dict()),
        "registries": [list(getattr(model, r)) for r in ("_parameters", "_buffers", "_modules")],
    }


def _state_dict_with(lib, model, key, value):
    state = OrderedDict((k, v.clone() + 1 if v.is_floating_point() else v.clone())
                        for k, v in model.state_dict().items())
    state[key] = value
    return state


MISTAKES = {
    # .to() / dtype conversions
    "to an integer dtype": (TypeError, lambda lib, m: m.to(lib.int64)),
    "to bool": (TypeError, lambda lib, m: m.to(lib.bool)),
    "to an integer dtype by keyword": (TypeError, lambda lib, m: m.to(dtype=lib.int32)),
    "to the dtype of an integer tensor": (TypeError, lambda lib, m: m.to(lib.tensor([1, 2]))),
    "to an unknown device": (RuntimeError, lambda lib, m: m.to("nowhere")),
    # registration with a bad name or value
    "a parameter named with a dot": (KeyError, lambda lib, m: m.register_parameter(
        "a.b", lib.nn.Parameter(lib.ones(1)))),
    "a parameter with an empty name": (KeyError, lambda lib, m: m.register_parameter(
        "", lib.nn.Parameter(lib.ones(1)))),
    "a parameter named by a number": (TypeError, lambda lib, m: m.register_parameter(
        3, lib.nn.Parameter(lib.ones(1)))),
    "a parameter over a plain attribute": (KeyError, lambda lib, m: m.register_parameter(
        "note", lib.nn.Parameter(lib.ones(1)))),
    "a parameter over a buffer": (KeyError, lambda lib, m: m.register_parameter(
        "scale", lib.nn.Parameter(lib.ones(1)))),
    "a parameter over a child module": (KeyError, lambda lib, m: m.register_parameter(
        "0", lib.nn.Parameter(lib.ones(1)))),
    "a parameter over a method": (KeyError, lambda lib, m: m.register_parameter(
        "forward", lib.nn.Parameter(lib.ones(1)))),
    "a plain tensor as a parameter": (TypeError, lambda lib, m: m.register_parameter(
        "steps", lib.ones(1))),
    "a buffer named with a dot": (KeyError, lambda lib, m: m.register_buffer("a.b", lib.ones(1))),
    "a buffer with an empty name": (KeyError, lambda lib, m: m.register_buffer("", lib.ones(1))),
    "a buffer named by a number": (TypeError, lambda lib, m: m.register_buffer(3, lib.ones(1))),
    "a buffer over a parameter": (KeyError, lambda lib, m: m.register_buffer(
        "steps", lib.ones(1))),
    "a buffer over training": (KeyError, lambda lib, m: m.register_buffer(
        "training", lib.ones(1))),
    "a number as a buffer": (TypeError, lambda lib, m: m.register_buffer("scale", 5)),
    "a module named with a dot": (KeyError, lambda lib, m: m.add_module("a.b", lib.nn.ReLU())),
    "a module with an empty name": (KeyError, lambda lib, m: m.add_module("", lib.nn.ReLU())),
    "a module named by a number": (TypeError, lambda lib, m: m.add_module(3, lib.nn.ReLU())),
    "a module over a plain attribute": (KeyError, lambda lib, m: m.add_module(
        "note", lib.nn.ReLU())),
    "a module over a parameter": (KeyError, lambda lib, m: m.add_module(
        "steps", lib.nn.ReLU())),
    "a function as a module": (TypeError, lambda lib, m: m.add_module("act", lib.tanh)),
    "a tensor assigned over a parameter": (TypeError, lambda lib, m: setattr(
        m, "steps", lib.ones(2))),
    "a number assigned over a child module": (TypeError, lambda lib, m: setattr(m, "0", 1)),
    # requires_grad_ on a model with an integer parameter
    "requires_grad_ with an integer parameter": (RuntimeError,
                                                 lambda lib, m: m.requires_grad_()),
    "train with a string": (ValueError, lambda lib, m: m.train("yes")),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_failed_call_raises_as_pytorch_and_changes_nothing(mistake, torch):
    error, call = MISTAKES[mistake]
    with pytest.raises(error):
        call(torch, Net.build(torch))
    model = Net.build(mg)
    before = snapshot(model)
    with pytest.raises(error):
        call(mg, model)
    assert snapshot(model) == before


LOADS = {
    "a value of the wrong shape": lambda lib, m: _state_dict_with(
        lib, m, "2.weight", lib.zeros(5, 5)),
    "an unexpected key": lambda lib, m: _state_dict_with(lib, m, "extra", lib.zeros(1)),
    "an unexpected key inside a child": lambda lib, m: _state_dict_with(
        lib, m, "0.extra", lib.zeros(1)),
    "a list instead of a tensor": lambda lib, m: _state_dict_with(
        lib, m, "0.bias", [1.0, 2.0, 3.0, 4.0]),
    "a numpy array instead of a tensor": lambda lib, m: _state_dict_with(
        lib, m, "0.bias", np.ones(4, np.float32)),
}


@pytest.mark.parametrize("problem", list(LOADS))
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_with_one_bad_entry_changes_nothing(problem, strict, torch):
    """PyTorch copies the entries that fit and then raises; minigrad (as its docstring says)
    copies nothing. Same exception type and the same lines in the message."""
    theirs = Net.build(torch)
    state = LOADS[problem](torch, theirs)
    expect_error = strict or "unexpected" not in problem
    torch_before = snapshot(theirs)
    if expect_error:
        with pytest.raises(RuntimeError) as torch_error:
            theirs.load_state_dict(state, strict=strict)
        assert snapshot(theirs) != torch_before  # PyTorch did copy the good entries

    ours = Net.build(mg)
    state = LOADS[problem](mg, ours)
    before = snapshot(ours)
    if not expect_error:
        result = ours.load_state_dict(state, strict=False)
        assert tuple(result) == tuple(theirs.load_state_dict(
            LOADS[problem](torch, Net.build(torch)), strict=False))
        return
    with pytest.raises(RuntimeError) as our_error:
        ours.load_state_dict(state, strict=strict)
    assert snapshot(ours) == before
    ours_lines = str(our_error.value).replace("minigrad", "torch").split("\n\t")
    theirs_lines = str(torch_error.value).split("\n\t")
    assert ours_lines[0] == theirs_lines[0] and len(ours_lines) == len(theirs_lines)
    for mine, reference in zip(ours_lines[1:], theirs_lines[1:]):
        assert mine.startswith(reference.rstrip()), (mine, reference)


def test_load_state_dict_lists_missing_keys_before_unexpected_ones(torch):
    messages = []
    for lib in (mg, torch):
        model = lib.nn.Linear(2, 2)
        state = {"weight": lib.zeros(2, 2), "stray": lib.zeros(1)}
        with pytest.raises(RuntimeError) as error:
            model.load_state_dict(state)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert messages[0].index("Missing") < messages[0].index("Unexpected")


def test_load_state_dict_that_fits_copies_everything(torch):
    """The same values (an integer buffer loaded from a float too) into both libraries."""
    ours, theirs = Net.build(mg), Net.build(torch)
    values = {k: v.numpy() + 1 for k, v in ours.state_dict().items()}
    values["count"] = np.array(7.0, np.float32)
    assert tuple(ours.load_state_dict({k: mg.tensor(v) for k, v in values.items()})) == ([], [])
    theirs.load_state_dict({k: torch.tensor(v) for k, v in values.items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, mine), their in zip(ours.state_dict().items(), theirs.state_dict().values()):
        assert mine.tolist() == their.tolist(), name
        assert str(mine.dtype).split(".")[1] == str(their.dtype).split(".")[1], name


@pytest.mark.parametrize("convert", ["double", "half", "float", "to float64", "to tensor"])
def test_dtype_conversion_keeps_integer_tensors_as_pytorch(convert, torch):
    def run(lib):
        model = Net.build(lib)
        steps = model.steps
        if convert == "to float64":
            model.to(lib.float64)
        elif convert == "to tensor":
            model.to(lib.zeros(1, dtype=lib.float64))
        else:
            getattr(model, convert)()
        assert model.steps is steps  # the same Parameter objects, converted in place
        return [(n, str(p.dtype).split(".")[1], str(p.grad.dtype).split(".")[1]
                 if p.grad is not None else None) for n, p in model.named_parameters()] + \
            [(n, str(b.dtype).split(".")[1]) for n, b in model.named_buffers()]

    assert run(mg) == run(torch)


def test_non_persistent_buffers_stay_out_of_the_state_dict(torch):
    def run(lib):
        model = lib.nn.Linear(2, 2)
        model.register_buffer("cache", lib.ones(2), persistent=False)
        model.register_buffer("kept", lib.ones(2))
        keys = list(model.state_dict())
        model.load_state_dict(model.state_dict())  # not reported missing
        model.register_buffer("cache", lib.zeros(2))  # registered again, persistent
        return keys, list(model.state_dict()), [n for n, _ in model.named_buffers()]

    assert run(mg) == run(torch)
    assert run(mg)[0] == ["weight", "bias", "kept"]


@pytest.mark.parametrize("bad", ["a list with a string in it", "a number"])
def test_module_list_extend_checks_everything_first(bad, torch):
    def extend(lib, modules):
        others = [lib.nn.Linear(1, 1), "relu"] if bad.startswith("a list") else 3
        with pytest.raises(TypeError) as error:
            modules.extend(others)
        return error

    theirs = torch.nn.ModuleList([torch.nn.ReLU()])
    their_error = extend(torch, theirs)
    ours = mg.nn.ModuleList([mg.nn.ReLU()])
    our_error = extend(mg, ours)
    assert str(our_error.value) == str(their_error.value)
    assert [type(m).__name__ for m in ours] == ["ReLU"]  # (PyTorch kept the Linear)


TO_CALLS = {
    "a device object": lambda lib: ((lib.device("cpu"),), {}),
    "a device string": lambda lib: (("cpu",), {}),
    "dtype=None": lambda lib: ((), {"dtype": None}),
    "device=None": lambda lib: ((), {"device": None}),
    "device and float32": lambda lib: (("cpu", lib.float32), {}),
    "a float32 tensor": lambda lib: ((lib.ones(1),), {}),
    "float16 by keyword": lambda lib: ((), {"dtype": lib.float16}),
}


@pytest.mark.parametrize("call", list(TO_CALLS))
def test_to_changes_the_dtype_only_when_asked(call, torch):
    """A float64 model moved to a device stays float64 (it used to become float32)."""
    def run(lib):
        model = lib.nn.Linear(2, 2).double()
        args, kwargs = TO_CALLS[call](lib)
        assert model.to(*args, **kwargs) is model
        return str(model.weight.dtype).split(".")[1]

    assert run(mg) == run(torch)


def test_to_takes_pytorchs_keywords(torch):
    def run(lib):
        model = lib.nn.Linear(2, 2)
        model.to("cpu", non_blocking=True)
        model.to(device="cpu", dtype=lib.float64, non_blocking=False)
        x = lib.ones(1, 2).to("cpu", non_blocking=True)
        return str(model.weight.dtype).split(".")[1], str(x.dtype).split(".")[1]

    assert run(mg) == run(torch) == ("float64", "float32")
