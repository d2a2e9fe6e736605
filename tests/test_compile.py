"""minigrad.compile: a replayed step is bitwise the eager step, for every optimizer; the
guards fire; what cannot be traced breaks the graph (or raises under fullgraph=True)."""

import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.compile import GraphBreak, OptimizedModule

OPTIMIZERS = {
    "sgd": (optim.SGD, dict(lr=0.05)),
    "sgd-momentum": (optim.SGD, dict(lr=0.05, momentum=0.9)),
    "sgd-nesterov-wd": (optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True,
                                        weight_decay=1e-3)),
    "sgd-dampening": (optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.3)),
    "adam": (optim.Adam, dict(lr=1e-2)),
    "adam-amsgrad-wd": (optim.Adam, dict(lr=1e-2, amsgrad=True, weight_decay=1e-2)),
    "adamw": (optim.AdamW, dict(lr=1e-2)),
    "rmsprop": (optim.RMSprop, dict(lr=1e-3, momentum=0.5)),
    "adagrad": (optim.Adagrad, dict(lr=1e-2)),
    "adadelta": (optim.Adadelta, dict(lr=1.0)),
}
MLPS = [(2, 16, 2), (64, 128, 10), (784, 256, 10)]


def mlp(sizes, seed=0):
    mg.manual_seed(seed)
    return nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(),
                         nn.Linear(sizes[1], sizes[2]))


def batches(sizes, n=16, count=4, seed=1):
    rng = np.random.default_rng(seed)
    return [(mg.tensor(rng.standard_normal((n, sizes[0])).astype(np.float32)),
             mg.tensor(rng.integers(0, sizes[2], n))) for _ in range(count)]


def training(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def run(sizes, name, compiled, steps, model_fn=mlp):
    cls, options = OPTIMIZERS[name]
    model = model_fn(sizes)
    opt = cls(model.parameters(), **options)
    step = training(model, opt)
    if compiled:
        step = mg.compile(step)
    data = batches(sizes)
    losses = [step(*data[i % len(data)])._data.copy() for i in range(steps)]
    return model, opt, losses, step


def assert_same_state(a, b):
    (model_a, opt_a, losses_a, _), (model_b, opt_b, losses_b, _) = a, b
    for la, lb in zip(losses_a, losses_b):
        assert np.array_equal(la, lb)
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.array_equal(p._data, q._data)
        assert np.array_equal(p.grad._data, q.grad._data)
        assert p._version == q._version
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        state_a, state_b = opt_a.state[p], opt_b.state[q]
        assert state_a.keys() == state_b.keys()
        for key in state_a:
            va, vb = state_a[key], state_b[key]
            va = va._data if hasattr(va, "_data") else np.asarray(va)
            vb = vb._data if hasattr(vb, "_data") else np.asarray(vb)
            assert np.array_equal(va, vb), key


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_replay_is_bitwise_the_eager_step_for_every_optimizer(name):
    eager = run(MLPS[1], name, False, 100)
    compiled = run(MLPS[1], name, True, 100)
    assert_same_state(eager, compiled)
    step = compiled[3]
    assert (step.traces, step.replays, step.graph_break) == (1, 99, None)


@pytest.mark.parametrize("sizes", MLPS)
@pytest.mark.parametrize("name", ["sgd-momentum", "adam", "adamw"])
def test_replay_is_bitwise_on_the_course_models(sizes, name):
    steps = 100 if sizes[0] < 784 else 30
    assert_same_state(run(sizes, name, False, steps), run(sizes, name, True, steps))


@pytest.mark.parametrize("name", ["sgd", "sgd-momentum", "adam"])
def test_the_replay_as_recorded_is_bitwise_too(name):
    """Without fast.py's helpers: every instruction replayed as program.py records it."""
    eager = run(MLPS[0], name, False, 50)
    cls, options = OPTIMIZERS[name]
    model = mlp(MLPS[0])
    opt = cls(model.parameters(), **options)
    step = mg.compile(training(model, opt))
    step.fast = False
    data = batches(MLPS[0])
    losses = [step(*data[i % len(data)])._data.copy() for i in range(50)]
    assert_same_state(eager, (model, opt, losses, step))
    assert step.replays == 49


def test_a_returned_loss_has_the_eager_loss_node_and_a_freed_graph():
    model = mlp(MLPS[0])
    opt = optim.SGD(model.parameters(), lr=0.1)
    step = mg.compile(training(model, opt))
    x, y = batches(MLPS[0])[0]
    for _ in range(3):
        loss = step(x, y)
    assert loss.requires_grad and loss.grad_fn.name() == "NllLossBackward0"
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def small_cnn(_sizes, seed=0):
    mg.manual_seed(seed)
    return nn.Sequential(nn.Unflatten(1, (1, 4, 4)) if hasattr(nn, "Unflatten") else nn.Identity(),
                         nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))


def test_replay_is_bitwise_on_a_small_cnn():
    if not hasattr(nn, "Unflatten"):
        pytest.skip("no nn.Unflatten")
    eager = run((16, 0, 2), "adam", False, 30, small_cnn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = run((16, 0, 2), "adam", True, 30, small_cnn)
    assert_same_state(eager, compiled)


def test_the_lbfgs_closure_breaks_the_graph_and_stays_eager():
    model = mlp(MLPS[0])
    opt = optim.LBFGS(model.parameters(), lr=0.1)
    x, y = batches(MLPS[0])[0]

    def step():
        def closure():
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return opt.step(closure)
    compiled = mg.compile(step)
    with pytest.warns(UserWarning, match="closure"):
        compiled()
    compiled()
    assert compiled.graph_break is not None and compiled.replays == 0


# ------------------------------------------------------------------ guards

def compiled_sgd(sizes=MLPS[0]):
    model = mlp(sizes)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = mg.compile(training(model, opt))
    data = batches(sizes)
    step(*data[0])
    step(*data[1])
    assert (step.traces, step.replays) == (1, 1)
    return model, opt, step, data


def fires(step, args, guard):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(*args)
    assert step.traces == 2, step.guard_failures
    assert step.guard_failures[-1].startswith(guard), step.guard_failures


def test_guard_input_shape():
    model, opt, step, data = compiled_sgd()
    x, y = data[0]
    fires(step, (x[:5], y[:5]), "inputs")


def test_guard_input_dtype():
    model, opt, step, data = compiled_sgd()
    x, y = data[0]
    model.double()
    opt.param_groups[0]["params"] = list(model.parameters())
    fires(step, (x.double(), y), "inputs")


def test_guard_requires_grad_of_an_input():
    model, opt, step, data = compiled_sgd()
    x, y = data[0]
    fires(step, (x.clone().requires_grad_(), y), "inputs")


def test_guard_grad_mode():
    model = mlp(MLPS[0])
    forward = mg.compile(model)
    x, _ = batches(MLPS[0])[0]
    with mg.no_grad():
        forward(x)
        forward(x)
    with pytest.warns(UserWarning, match="graph is still alive"):
        out = forward(x)  # grad mode on: retraced, and a live graph cannot be replayed
    assert forward._compiled.guard_failures[-1].startswith("grad_mode")
    assert out.grad_fn is not None


def test_guard_parameter_changed_in_place_outside():
    model, opt, step, data = compiled_sgd()
    with mg.no_grad():
        model[0].weight.mul_(0.5)
    fires(step, data[0], "tensors")


def test_guard_parameter_memory_replaced():
    model, opt, step, data = compiled_sgd()
    model[0].weight.data = model[0].weight.data.clone()
    fires(step, data[0], "tensors")


def test_guard_parameter_requires_grad():
    model, opt, step, data = compiled_sgd()
    model[0].bias.requires_grad_(False)
    fires(step, data[0], "tensors")


def test_guard_training_flag():
    model, opt, step, data = compiled_sgd()
    model.eval()
    fires(step, data[0], "training")


def test_guard_optimizer_hyperparameter():
    model, opt, step, data = compiled_sgd()
    opt.param_groups[0]["lr"] = 0.01
    fires(step, data[0], "optimizer")


def test_guard_module_hook():
    model, opt, step, data = compiled_sgd()
    model[0].register_forward_hook(lambda *a: None)
    with pytest.warns(UserWarning, match="hooks"):
        step(*data[0])
    assert step.guard_failures[-1].startswith("hooks")


def test_guard_gradient_hook():
    model, opt, step, data = compiled_sgd()
    handle = model[0].weight.register_hook(lambda g: g)
    with pytest.warns(UserWarning, match="hook"):
        step(*data[0])
    handle.remove()
    assert step.guard_failures[-1].startswith("hooks")


def test_guard_forward_mode():
    model = mlp(MLPS[0])
    forward = mg.compile(model)
    x, _ = batches(MLPS[0])[0]
    with mg.no_grad():
        forward(x)
        forward(x)
        with mg.autograd.forward_ad.dual_level():
            with pytest.warns(UserWarning, match="forward mode"):
                forward(x)
    assert forward._compiled.guard_failures[-1].startswith("forward mode")


def test_guard_non_tensor_argument():
    calls = []

    @mg.compile
    def scale(x, k):
        calls.append(k)
        return x * k
    x = mg.ones(3)
    assert scale(x, 2.0).tolist() == [2.0] * 3
    assert scale(x + 1, 2.0).tolist() == [4.0] * 3
    assert scale(x, 3.0).tolist() == [3.0] * 3  # another constant: retraced
    assert calls == [2.0, 3.0]  # Python side effects run only while tracing
    assert scale.guard_failures == ["inputs: the arguments differ (their structure, or a value "
                                    "that is no tensor)"]


def test_too_many_retraces_run_eagerly_with_one_warning():
    @mg.compile
    def double(x):
        return x * 2
    for n in range(1, 9):
        double(mg.ones(n))
    with pytest.warns(UserWarning, match="cache_size_limit"):
        assert double(mg.ones(9)).tolist() == [2.0] * 9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert double(mg.ones(10)).tolist() == [2.0] * 10
    assert double.traces == 8


# ------------------------------------------------------------------ graph breaks

BREAKS = {
    "item": (lambda x: x.sum().item(), ".item()"),
    "tolist": (lambda x: x.tolist(), ".tolist()"),
    "bool": (lambda x: x * 2 if x.sum() > 0 else x, "bool"),
    "print": (lambda x: print(x * 2), "printing"),
    "random": (lambda x: F.dropout(x, 0.5), "outside minigrad's ops"),  # the mask
    "rng": (lambda x: (mg.rand(1), x * 2)[1], "draws random numbers"),
    "randn": (lambda x: x + mg.randn(3), "outside minigrad's ops"),
    "in-place": (lambda x: (x * 2).add_(1), "in-place"),
    "numpy": (lambda x: mg.tensor(np.asarray(x.detach().numpy()) * 2), "numpy"),
    "python": (lambda x: float(x.sum()), "float"),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_graph_break_warns_once_and_runs_eagerly(case, capsys):
    fn, says = BREAKS[case]
    compiled = mg.compile(fn)
    x = mg.tensor([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="graph break") as caught:
        first = compiled(x)
    assert says in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = compiled(x)
    assert compiled.replays == 0 and compiled.traces == 1
    if case not in ("random", "randn", "print", "rng"):
        expected = fn(x)
        for got in (first, second):
            assert np.array_equal(np.asarray(got.tolist() if hasattr(got, "tolist") else got),
                                  np.asarray(expected.tolist() if hasattr(expected, "tolist")
                                             else expected))


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_fullgraph_raises_instead(case, capsys):
    fn, says = BREAKS[case]
    compiled = mg.compile(fn, fullgraph=True)
    with pytest.raises(GraphBreak, match="fullgraph=True"):
        compiled(mg.tensor([1.0, 2.0, 3.0]))


def test_create_graph_and_autograd_grad_break_the_graph():
    def second(x):
        (g,) = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)
        return g
    compiled = mg.compile(second)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph|autograd.grad"):
        compiled(x)


def test_an_input_that_requires_grad_receives_its_gradient():
    @mg.compile
    def f(x, w):
        (x * w).sum().backward()

    w = mg.tensor([2.0, 3.0])
    for values in ([1.0, 1.0], [4.0, 5.0], [6.0, 7.0]):
        x = mg.tensor(values, requires_grad=True)
        assert f(x, w) is None
        assert x.grad.tolist() == [2.0, 3.0]
    assert (f.traces, f.replays) == (1, 2)


# ------------------------------------------------------------------ the API

def test_call_shapes():
    def f(x):
        return x * 2
    assert mg.compile(f)(mg.ones(2)).tolist() == [2.0, 2.0]
    assert mg.compile()(f)(mg.ones(2)).tolist() == [2.0, 2.0]
    assert mg.compile(fullgraph=True, mode="reduce-overhead")(f)(mg.ones(2)).tolist() == [2.0] * 2
    assert mg.compile(f, disable=True) is f
    assert mg.compile(f).__name__ == "f"
    with pytest.raises(RuntimeError, match="Either mode or options"):
        mg.compile(f, mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        mg.compile(f, mode="fastest")


def test_torch_agrees_on_the_call_shapes():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        torch.compile(lambda x: x, mode="default", options={})
    model = torch.nn.Linear(2, 2)
    compiled = torch.compile(model)
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    mine = mg.compile(nn.Linear(2, 2))
    assert type(mine).__name__ == type(compiled).__name__ == "OptimizedModule"
    assert list(mine.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]


def test_compiled_module_behaves_like_the_module():
    model = mlp(MLPS[0])
    compiled = mg.compile(model)
    assert isinstance(compiled, OptimizedModule) and compiled._orig_mod is model
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    compiled.eval()
    assert not model.training
    compiled.train()
    assert model.training
    model.note = "kept"
    assert compiled.note == "kept"  # other attributes are the module's
    x, _ = batches(MLPS[0])[0]
    with mg.no_grad():
        outs = [compiled(x) for _ in range(3)]
        expected = model(x)
    for out in outs:
        assert np.array_equal(out._data, expected._data)
    assert compiled._compiled.replays == 2


def test_class_indices_out_of_range_are_refused_as_eagerly():
    model = mlp(MLPS[0])
    opt = optim.SGD(model.parameters(), lr=0.1)
    step = mg.compile(training(model, opt))
    x, y = batches(MLPS[0])[0]
    step(x, y)
    step(x, y)
    before = [p._data.copy() for p in model.parameters()]
    for bad in (-1, 2):
        labels = y.clone()
        labels[3] = bad
        with pytest.raises(IndexError, match="out of bounds"):
            step(x, labels)
        assert step.guard_failures[-1] == "values: a class index is out of range"
    for p, b in zip(model.parameters(), before):
        assert np.array_equal(p._data, b)
    step(x, y)
    assert step.replays == 2


def test_a_compiled_function_called_inside_a_trace_is_recorded_there():
    inner = mg.compile(lambda x: x * 3)
    inner(mg.ones(2))
    inner(mg.ones(2))  # it replays on its own

    @mg.compile
    def outer(x):
        return inner(x) + 1
    for k in (1.0, 2.0, 5.0):
        assert outer(mg.full((2,), k)).tolist() == [3 * k + 1] * 2
    assert (outer.traces, outer.replays) == (1, 2)
