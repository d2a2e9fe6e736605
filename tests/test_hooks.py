"""``Tensor.register_hook`` as PyTorch's: a hook sees a tensor's total gradient, may replace
it for what flows on and for ``.grad``, runs before ``retain_grad`` keeps it, and comes off
with ``handle.remove()``. Every case runs in both libraries and compares."""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def run(lib, program):
    """Run ``program(lib)`` -> dict of name: tensor or list; compare as plain lists."""
    out = program(lib)
    return {k: (v.detach().tolist() if hasattr(v, "detach") else v) for k, v in out.items()}


def both(program):
    got, want = run(mg, program), run(torch, program)
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_allclose(np.asarray(got[key], dtype=float),
                                   np.asarray(want[key], dtype=float), rtol=1e-6, err_msg=key)


def test_hooks_chain_and_retain_grad_sees_the_result():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.register_hook(lambda g: g * 10)
        y.retain_grad()
        ((y * 3).sum() + y.sum()).backward()
        return {"seen": seen, "x.grad": x.grad, "y.grad": y.grad}
    both(program)


def test_a_leaf_hook_changes_what_is_accumulated_and_runs_once_on_the_total():
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append(g.tolist()) or g.clamp(min=0))
        (x * x + x.sin()).sum().backward()
        return {"calls": calls, "x.grad": x.grad}
    both(program)


def test_removing_a_hook_and_the_handle_as_a_context_manager():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        handle = x.register_hook(lambda g: g * 0)
        (x * 2).sum().backward()
        first = x.grad.clone()
        handle.remove()
        handle.remove()  # a second remove does nothing
        (x * 2).sum().backward()
        with x.register_hook(lambda g: g * 100):
            (x * 2).sum().backward()
        (x * 2).sum().backward()
        return {"first": first, "after": x.grad}
    both(program)


def test_hooks_in_autograd_grad_and_on_a_network():
    def program(lib):
        lib.manual_seed(0)
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
        h = (x @ w).tanh()
        h.register_hook(lambda g: g * 2)
        w.register_hook(lambda g: g - 1)
        (gw,) = lib.autograd.grad((h ** 2).sum(), w, retain_graph=True)
        (h ** 2).sum().backward()
        return {"grad": gw, "w.grad": w.grad}
    both(program)


def test_a_hook_under_create_graph_is_recorded():
    def program(lib):
        x = lib.tensor([1.5, -0.5], dtype=lib.float64, requires_grad=True)
        y = x ** 3
        y.register_hook(lambda g: g * x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return {"g": g, "gg": gg}
    both(program)


@pytest.mark.parametrize("lib", [mg, torch], ids=["minigrad", "torch"])
def test_mistakes_raise_the_same_errors(lib):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        lib.tensor([1.0]).register_hook(lambda g: g)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="hook .* has changed the size of value"):
        (x * 2).sum().backward()
    assert x.grad is None


def copied_model(lib):
    """The same small network in either library (weights from one numpy draw)."""
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-1, 1, tuple(p.shape)).astype(np.float32)))
    return model


def test_forward_hooks_watch_and_change_a_module_call():
    def program(lib):
        model = copied_model(lib)
        seen = {}
        watch = model[1].register_forward_hook(lambda m, args, out: seen.update(relu=out))
        double = model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        shift = model[2].register_forward_hook(lambda m, args, out: out + 1)
        first = model[2].register_forward_hook(lambda m, args, out: out * 10, prepend=True)
        x = lib.tensor([[1.0, -2.0, 0.5]])
        y = model(x)
        y.sum().backward()
        for handle in (watch, double, shift, first):
            handle.remove()
        return {"y": y, "relu": seen["relu"], "grad": model[0].weight.grad, "plain": model(x)}
    both(program)


def test_forward_hooks_with_kwargs():
    def program(lib):
        layer = copied_model(lib)[0]
        calls = []
        layer.register_forward_pre_hook(
            lambda m, args, kwargs: calls.append(sorted(kwargs)) or (args, kwargs),
            with_kwargs=True)
        layer.register_forward_hook(lambda m, args, kwargs, out: out * 3, with_kwargs=True)
        y = layer(input=lib.tensor([[1.0, 2.0, 3.0]]))
        return {"y": y, "calls": [len(c) for c in calls]}
    both(program)
