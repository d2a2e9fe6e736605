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


def build(lib, weights):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    return model


def train(lib, name, weights, x, y, steps=25, set_to_none=True):
    kind, kwargs = CONFIGS[name]
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


def test_float32_adam_stays_close_to_pytorch(problem, torch):
    weights, x, y = problem
    results = []
    for lib in (mg, torch):
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
        with lib.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(lib.tensor(w, dtype=lib.float32))
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(25):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(lib.tensor(x, dtype=lib.float32)), lib.tensor(y)).backward()
            opt.step()
        results.append([p.detach().numpy() for p in model.parameters()])
    for a, b in zip(*results):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


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
