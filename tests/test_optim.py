"""Optimizers against PyTorch: 25 steps on a small MLP from identical weights."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

CONFIGS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9)),
    "sgd_dampening": ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5)),
    "sgd_weight_decay": ("SGD", dict(lr=0.1, weight_decay=0.01)),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    "sgd_all": ("SGD", dict(lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=True)),
    "sgd_maximize": ("SGD", dict(lr=0.01, maximize=True)),
    "adam": ("Adam", dict()),
    "adam_lr_betas": ("Adam", dict(lr=0.01, betas=(0.8, 0.9))),
    "adam_eps": ("Adam", dict(lr=0.01, eps=1e-3)),
    "adam_weight_decay": ("Adam", dict(lr=0.01, weight_decay=0.1)),
    "adam_amsgrad": ("Adam", dict(lr=0.01, amsgrad=True)),
    "adam_all": ("Adam", dict(lr=0.02, betas=(0.85, 0.99), weight_decay=0.05, amsgrad=True)),
    "adamw": ("AdamW", dict(lr=0.01, weight_decay=0.1)),
}

# compared with PyTorch at rtol 1e-10, parameters and state (see test_..._in_float64 below)
ADAPTIVE_CONFIGS = {
    "rmsprop": ("RMSprop", dict()),
    "rmsprop_lr_alpha_eps": ("RMSprop", dict(lr=0.005, alpha=0.9, eps=1e-6)),
    "rmsprop_momentum": ("RMSprop", dict(lr=0.005, momentum=0.9)),
    "rmsprop_centered": ("RMSprop", dict(lr=0.005, centered=True)),
    # alpha <= 0.5: grad_avg's lerp_ takes its other form, end - (end - self) * (1 - weight)
    "rmsprop_centered_small_alpha": ("RMSprop", dict(lr=0.005, alpha=0.4, centered=True)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.005, centered=True, momentum=0.9)),
    "rmsprop_weight_decay": ("RMSprop", dict(lr=0.005, weight_decay=0.1)),
    "rmsprop_maximize": ("RMSprop", dict(lr=0.001, maximize=True)),
    "rmsprop_all": ("RMSprop", dict(lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.05,
                                    momentum=0.8, centered=True)),
    "adagrad": ("Adagrad", dict()),
    "adagrad_lr": ("Adagrad", dict(lr=0.1)),
    "adagrad_lr_decay": ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    "adagrad_weight_decay": ("Adagrad", dict(lr=0.1, weight_decay=0.1)),
    "adagrad_initial_accumulator_value": ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5)),
    "adagrad_eps_maximize": ("Adagrad", dict(lr=0.01, eps=1e-3, maximize=True)),
    "adagrad_all": ("Adagrad", dict(lr=0.1, lr_decay=0.02, weight_decay=0.05,
                                    initial_accumulator_value=0.2, eps=1e-8)),
}
ALL_CONFIGS = {**CONFIGS, **ADAPTIVE_CONFIGS}


def build(lib, weights):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    return model


def train(lib, name, weights, x, y, steps=25, set_to_none=True):
    kind, kwargs = ALL_CONFIGS[name]
    model = build(lib, weights)
    opt = getattr(lib.optim, kind)(model.parameters(), **kwargs)
    xs, ys = lib.tensor(x), lib.tensor(y)
    for step in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        # the first layer's bias gets no gradient on even steps: skipped params stay put
        loss = lib.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        if step % 2 == 0:
            model[0].bias.grad = None
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()], opt


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    weights = [rng.uniform(-0.5, 0.5, s) for s in [(8, 4), (8,), (3, 8), (3,)]]
    return weights, rng.standard_normal((16, 4)), rng.integers(0, 3, 16)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_pytorch_after_25_steps(name, problem, torch):
    ours, _ = train(mg, name, *problem)
    theirs, _ = train(torch, name, *problem)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert not np.allclose(ours[0], problem[0][0]), "the parameters moved"


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_set_to_none_false_gives_the_same_updates(name, problem):
    a, _ = train(mg, name, *problem, set_to_none=True)
    b, _ = train(mg, name, *problem, set_to_none=False)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_zero_grad_modes():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradient: nothing moves
    assert w.tolist() == [1.0, 2.0]


def test_state_and_param_groups(torch):
    model = nn.Linear(3, 2)
    opt = optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.5}],
                    lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[0]["momentum"] == 0.9
    model(mg.ones(1, 3)).sum().backward()
    opt.step()
    assert set(opt.state[model.weight]) == {"momentum_buffer"}
    saved = opt.state_dict()
    assert saved["param_groups"][1]["params"] == [1] and 0 in saved["state"]
    fresh = optim.SGD([{"params": [model.weight]}, {"params": [model.bias]}], lr=1.0, momentum=0.9)
    fresh.load_state_dict(saved)
    assert fresh.param_groups[1]["lr"] == 0.5
    assert fresh.state[model.weight]["momentum_buffer"].equal(opt.state[model.weight]["momentum_buffer"])
    theirs = torch.optim.SGD(torch.nn.Linear(3, 2).parameters(), lr=0.1, momentum=0.9)
    assert repr(opt).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "Parameter Group 0" in repr(theirs)


def test_bad_settings_are_refused():
    w = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="learning rate"):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        optim.SGD(w, lr=0.1)


def test_closure_is_called_with_grad_enabled():
    w = mg.tensor([3.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with mg.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and w.item() == pytest.approx(3.0 - 0.1 * 6.0)


def test_frozen_parameters_are_accepted_and_left_alone(torch):
    """Freezing a layer (requires_grad_(False)) and handing every parameter to the optimizer
    is a common pattern: PyTorch accepts it, and the frozen ones never move."""
    results = []
    for lib in (mg, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Linear(4, 2))
        for p in model[0].parameters():
            p.requires_grad_(False)
        frozen = [p.detach().clone() for p in model[0].parameters()]
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        model(lib.ones(5, 3)).sum().backward()
        opt.step()
        assert all(bool((p == q).all()) for p, q in zip(model[0].parameters(), frozen))
        results.append([p.grad is None for p in model.parameters()])
    assert results[0] == results[1] == [True, True, False, False]


# ------------------------------------------------------------------ RMSprop and Adagrad


def _state_arrays(opt):
    """The optimizer's state by parameter index, every tensor as a numpy array (a copy:
    PyTorch's state_dict hands out the state tensors themselves)."""
    return {i: {k: v.detach().numpy().copy() for k, v in s.items()}
            for i, s in opt.state_dict()["state"].items()}


@pytest.mark.parametrize("name", sorted(ADAPTIVE_CONFIGS))
def test_rmsprop_and_adagrad_match_pytorch_in_float64(name, problem, torch):
    """Parameters and every state tensor after 25 steps, to rtol 1e-10: both optimizers follow
    PyTorch's for-loop arithmetic operation by operation, so the two runs differ only by the
    last-bit roundings (PyTorch fuses some multiply-adds), which 25 steps leave far below 1e-10."""
    ours, opt = train(mg, name, *problem)
    theirs, topt = train(torch, name, *problem)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=0)
    assert not np.allclose(ours[0], problem[0][0]), "the parameters moved"
    state, tstate = _state_arrays(opt), _state_arrays(topt)
    assert sorted(state) == sorted(tstate) == [0, 1, 2, 3]
    for i in tstate:
        assert sorted(state[i]) == sorted(tstate[i]), f"state names of parameter {i}"
        for key in tstate[i]:
            assert state[i][key].dtype == tstate[i][key].dtype, (i, key)
            np.testing.assert_allclose(state[i][key], tstate[i][key], rtol=1e-10, atol=0,
                                       err_msg=f"state[{i}][{key!r}]")
    # the first layer's bias had no gradient on the 13 even steps: it was skipped, uncounted
    assert state[1]["step"] == 12 and state[0]["step"] == 25
    group, tgroup = opt.param_groups[0], topt.param_groups[0]
    assert all(group[k] == tgroup[k] for k in group if k != "params")


@pytest.mark.parametrize("kind", ["Adam", "RMSprop", "Adagrad"])
def test_float32_parameters_stay_float32_and_close_to_pytorch(kind, problem, torch):
    weights, x, y = problem
    results = []
    for lib in (mg, torch):
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
        with lib.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(lib.tensor(w, dtype=lib.float32))
        opt = getattr(lib.optim, kind)(model.parameters(), lr=0.01)
        for _ in range(25):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(lib.tensor(x, dtype=lib.float32)),
                                            lib.tensor(y)).backward()
            opt.step()
        results.append(([p.detach().numpy() for p in model.parameters()], _state_arrays(opt)))
    (ours, state), (theirs, tstate) = results
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for i in tstate:
        for key in tstate[i]:
            assert state[i][key].dtype == tstate[i][key].dtype == np.float32, (i, key)


BAD_SETTINGS = [
    ("RMSprop", dict(lr=-0.1)),
    ("RMSprop", dict(lr=float("nan"))),
    ("RMSprop", dict(eps=-1e-8)),
    ("RMSprop", dict(momentum=-0.9)),
    ("RMSprop", dict(weight_decay=-0.1)),
    ("RMSprop", dict(alpha=-0.5)),
    ("Adagrad", dict(lr=-0.1)),
    ("Adagrad", dict(lr_decay=-0.1)),
    ("Adagrad", dict(weight_decay=-0.1)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1e-10)),
]


@pytest.mark.parametrize("kind,kwargs", BAD_SETTINGS,
                         ids=[f"{k}-{next(iter(kw))}={next(iter(kw.values()))}"
                              for k, kw in BAD_SETTINGS])
def test_rmsprop_and_adagrad_refuse_bad_settings_as_pytorch(kind, kwargs, torch):
    messages = []
    for lib in (mg, torch):
        w = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(ValueError) as error:
            getattr(lib.optim, kind)([w], **kwargs)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert next(iter(kwargs.values())) is not None and str(next(iter(kwargs.values()))) in messages[0]


def test_rmsprop_and_adagrad_take_maximize_by_keyword_only():
    """PyTorch's 8th positional argument of RMSprop is ``capturable`` and Adagrad's 7th is
    ``foreach``: a positional ``maximize`` would mean something else there, so minigrad
    refuses it instead of differing silently."""
    w = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError):
        optim.RMSprop([w], 0.01, 0.99, 1e-8, 0, 0, False, True)
    with pytest.raises(TypeError):
        optim.Adagrad([w], 0.01, 0, 0, 0, 1e-10, True)
    assert optim.RMSprop([w], maximize=True).param_groups[0]["maximize"] is True
    assert optim.Adagrad([w], maximize=True).param_groups[0]["maximize"] is True


@pytest.mark.parametrize("kind", ["RMSprop", "Adagrad"])
def test_step_breaks_a_graph_that_saved_the_parameter(kind, torch):
    """The update changes p in place: a graph built before it saved the old values, so its
    backward must refuse, in minigrad as in PyTorch."""
    for lib in (mg, torch):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(lib.optim, kind)([w], lr=0.1)
        loss = (w * w).sum()
        loss.backward(retain_graph=True)
        opt.step()
        assert w.tolist() != [1.0, -2.0]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_adagrad_gives_every_parameter_its_state_at_construction(torch):
    """As PyTorch: state (step 0 and the accumulator) exists before the first step, for frozen
    parameters too; a group's own initial_accumulator_value is ignored for the constructor's,
    and a group added later gets its state at its first gradient."""
    results = []
    for lib in (mg, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0], requires_grad=True)
        frozen = lib.tensor([4.0])
        late = lib.tensor([5.0, 6.0, 7.0], requires_grad=True)
        opt = lib.optim.Adagrad([{"params": [a, frozen]},
                                 {"params": [b], "initial_accumulator_value": 9.0}],
                                lr=0.5, initial_accumulator_value=0.25)
        before = _state_arrays(opt)
        opt.add_param_group({"params": [late], "initial_accumulator_value": 3.0})
        ((a * a).sum() + (b * b).sum() + (late * late).sum()).backward()
        opt.step()
        results.append((before, _state_arrays(opt), [t.tolist() for t in (a, b, frozen, late)]))
    (before, after, values), (tbefore, tafter, tvalues) = results
    assert before.keys() == tbefore.keys() == {0, 1, 2}
    assert after.keys() == tafter.keys() == {0, 1, 2, 3}
    for ours, theirs in ((before, tbefore), (after, tafter)):
        for i in theirs:
            assert ours[i].keys() == theirs[i].keys() == {"step", "sum"}
            for key in theirs[i]:
                np.testing.assert_allclose(ours[i][key], theirs[i][key], rtol=1e-6)
    # indices: a 0, frozen 1, b 2, late 3
    assert before[2]["sum"].tolist() == [0.25] and before[2]["step"] == 0
    assert after[2]["sum"].tolist() == [36.25] and after[3]["sum"][0] == 100.25
    assert after[1]["step"] == 0 and after[0]["step"] == 1  # the frozen one: never stepped
    np.testing.assert_allclose(np.concatenate(values), np.concatenate(tvalues), rtol=1e-6)
    assert values[2] == [4.0]


@pytest.mark.parametrize("name", ["rmsprop_all", "adagrad_all"])
def test_rmsprop_and_adagrad_resume_from_a_state_dict(name, problem):
    """10 steps, save, load into a fresh optimizer (other settings), 10 more steps: the same
    parameters as 20 uninterrupted steps, bit for bit (lr_decay needs the step count back)."""
    weights, x, y = problem
    kind, kwargs = ADAPTIVE_CONFIGS[name]
    xs, ys = mg.tensor(x), mg.tensor(y)

    def run(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.cross_entropy(model(xs), ys).backward()
            opt.step()

    straight = build(mg, weights)
    run(straight, getattr(optim, kind)(straight.parameters(), **kwargs), 20)

    first = build(mg, weights)
    opt = getattr(optim, kind)(first.parameters(), **kwargs)
    run(first, opt, 10)
    saved = opt.state_dict()
    resumed = build(mg, [p.detach().numpy() for p in first.parameters()])
    fresh = getattr(optim, kind)(resumed.parameters(), lr=1.0)
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == kwargs["lr"]
    run(resumed, fresh, 10)
    run(first, opt, 10)
    for p, q, r in zip(straight.parameters(), resumed.parameters(), first.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
        assert np.array_equal(p.detach().numpy(), r.detach().numpy())
    assert float(fresh.state[next(resumed.parameters())]["step"]) == 20
