"""optim.LBFGS and optim.Adadelta against PyTorch.

Both are run from the same float64 start as PyTorch's on a small least-squares problem and a
small MLP, step after step, and compared after every step: parameters, the loss ``step``
returns, and the optimizer's state (LBFGS's evaluation counts show that the same iterations
and line-search evaluations were taken). Float64 makes the bounds (1e-9 for Adadelta; 1e-7
for LBFGS, whose 80 quasi-Newton iterations amplify last-bit rounding differences of the
model's ops to about 1e-9) ones that any difference in the algorithm breaks at once.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim

TOL = dict(rtol=1e-9, atol=1e-12)
LBFGS_TOL = dict(rtol=1e-7, atol=1e-10)


def _np(t):
    return t.detach().numpy().copy()


# ------------------------------------------------------------------ problems

def least_squares(lib, seed=0):
    """min |A w - b|^2 over w, A of shape (20, 5): returns (params, loss function)."""
    rng = np.random.default_rng(seed)
    a, b = lib.tensor(rng.standard_normal((20, 5))), lib.tensor(rng.standard_normal(20))
    w = lib.tensor(rng.standard_normal(5), requires_grad=True)
    return [w], lambda: ((a @ w - b) ** 2).sum()


def mlp(lib, seed=1, dtype="float64"):
    """A 4-8-3 tanh MLP with MSE on 16 points: returns (params, loss function)."""
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    model = getattr(model, "double" if dtype == "float64" else "float")()
    shapes = [(8, 4), (8,), (3, 8), (3,)]
    with lib.no_grad():
        for p, shape in zip(model.parameters(), shapes):
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, shape).astype(dtype)))
    x = lib.tensor(rng.standard_normal((16, 4)).astype(dtype))
    y = lib.tensor(rng.standard_normal((16, 3)).astype(dtype))
    return list(model.parameters()), lambda: lib.nn.functional.mse_loss(model(x), y)


def run_lbfgs(lib, problem, steps, **kwargs):
    params, loss_fn = problem(lib)
    opt = lib.optim.LBFGS(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    history = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        history.append((float(loss.detach()), [_np(p) for p in params],
                        state["func_evals"], state["n_iter"], len(state.get("old_dirs", ()))))
    return history, opt


LBFGS_CONFIGS = {
    "defaults": dict(),
    "lr_max_iter": dict(lr=0.5, max_iter=4),
    "short_history": dict(lr=0.8, max_iter=6, history_size=2),
    "max_eval": dict(max_iter=10, max_eval=6),
    "strong_wolfe": dict(line_search_fn="strong_wolfe"),
    "strong_wolfe_short": dict(line_search_fn="strong_wolfe", max_iter=5, history_size=3),
    # a long first trial step: the zoom phase (cubic interpolation inside the bracket)
    "strong_wolfe_big_lr": dict(line_search_fn="strong_wolfe", lr=10, max_iter=4),
    # a short one: the extrapolation phase (interpolation with bounds)
    "strong_wolfe_small_lr": dict(line_search_fn="strong_wolfe", lr=0.01, max_iter=4),
    # the line search runs out of evaluations (its max_ls branch)
    "strong_wolfe_max_eval": dict(line_search_fn="strong_wolfe", lr=0.001, max_iter=6,
                                  max_eval=4),
    "tolerance_change": dict(tolerance_change=1e-2, max_iter=30),
}


@pytest.mark.parametrize("problem", [least_squares, mlp], ids=["least-squares", "mlp"])
@pytest.mark.parametrize("name", sorted(LBFGS_CONFIGS))
def test_lbfgs_matches_pytorch_step_by_step(name, problem, torch):
    ours, _ = run_lbfgs(mg, problem, 4, **LBFGS_CONFIGS[name])
    theirs, _ = run_lbfgs(torch, problem, 4, **LBFGS_CONFIGS[name])
    for step, ((loss, params, evals, iters, kept), (t_loss, t_params, t_evals, t_iters, t_kept)) \
            in enumerate(zip(ours, theirs)):
        assert (evals, iters, kept) == (t_evals, t_iters, t_kept), f"step {step}"
        np.testing.assert_allclose(loss, t_loss, **LBFGS_TOL, err_msg=f"step {step}")
        for a, b in zip(params, t_params):
            np.testing.assert_allclose(a, b, **LBFGS_TOL, err_msg=f"step {step}")
    assert ours[-1][0] < ours[0][0], "the loss went down"


def test_lbfgs_float32_is_close_to_pytorch(torch):
    """Float32: the scalars of the algorithm are float32 0-dim tensors in both libraries."""
    for kwargs in (dict(max_iter=5), dict(line_search_fn="strong_wolfe", max_iter=5)):
        ours, _ = run_lbfgs(mg, lambda lib: mlp(lib, dtype="float32"), 2, **kwargs)
        theirs, _ = run_lbfgs(torch, lambda lib: mlp(lib, dtype="float32"), 2, **kwargs)
        for (loss, params, *counts), (t_loss, t_params, *t_counts) in zip(ours, theirs):
            assert counts == t_counts
            assert loss == pytest.approx(t_loss, rel=1e-4)
            for a, b in zip(params, t_params):
                assert a.dtype == np.float32
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_lbfgs_stops_at_once_at_an_optimum(torch):
    """A gradient below tolerance_grad: one evaluation, nothing moves, in both."""
    for lib in (mg, torch):
        history, opt = run_lbfgs(lib, least_squares, 1, tolerance_grad=1e6)
        params, _ = least_squares(lib)
        np.testing.assert_array_equal(history[0][1][0], _np(params[0]))
        assert history[0][2:4] == (1, 0)


def test_lbfgs_state_dict_round_trip():
    """Saved after two steps and loaded into a new optimizer, it goes on as if uninterrupted."""
    straight, _ = run_lbfgs(mg, mlp, 4, history_size=3, max_iter=5)
    params, loss_fn = mlp(mg)
    first = optim.LBFGS(params, history_size=3, max_iter=5)

    def closure_for(opt):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        return closure
    for _ in range(2):
        first.step(closure_for(first))
    saved = first.state_dict()
    second = optim.LBFGS(params, history_size=1, max_iter=1)
    second.load_state_dict(saved)
    assert second.param_groups[0]["history_size"] == 3
    for _ in range(2):
        second.step(closure_for(second))
    for a, b in zip(params, straight[-1][1]):
        np.testing.assert_allclose(_np(a), b, rtol=1e-12)


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001  (compared by the caller)
        return type(e), str(e)
    return None


OPTIMIZER_ERRORS = {
    "LBFGS groups": lambda lib: lib.optim.LBFGS(
        [{"params": [lib.zeros(1, requires_grad=True)]},
         {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1}]),
    "LBFGS lr": lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=-1),
    "LBFGS line search": lambda lib: _lbfgs_one_step(lib, line_search_fn="backtracking"),
    "Adadelta lr": lambda lib: lib.optim.Adadelta([lib.zeros(1, requires_grad=True)], lr=-1),
    "Adadelta rho": lambda lib: lib.optim.Adadelta([lib.zeros(1, requires_grad=True)], rho=1.5),
    "Adadelta eps": lambda lib: lib.optim.Adadelta([lib.zeros(1, requires_grad=True)], eps=-1),
    "Adadelta weight_decay": lambda lib: lib.optim.Adadelta(
        [lib.zeros(1, requires_grad=True)], weight_decay=-0.1),
}


def _lbfgs_one_step(lib, **kwargs):
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.LBFGS([w], **kwargs)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    opt.step(closure)


@pytest.mark.parametrize("name", list(OPTIMIZER_ERRORS))
def test_errors_match_pytorch(name, torch):
    ours, theirs = _error(mg, OPTIMIZER_ERRORS[name]), _error(torch, OPTIMIZER_ERRORS[name])
    assert ours is not None and ours == theirs


def test_lbfgs_without_closure_says_what_it_needs(torch):
    w = mg.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="needs a closure"):
        optim.LBFGS([w]).step(None)
    with pytest.raises(TypeError):  # PyTorch: 'NoneType' object is not callable
        torch.optim.LBFGS([torch.ones(2, requires_grad=True)]).step(None)


def test_lbfgs_defaults_as_pytorch(torch):
    ours = optim.LBFGS([mg.ones(1, requires_grad=True)]).param_groups[0]
    theirs = torch.optim.LBFGS([torch.ones(1, requires_grad=True)]).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == \
           {k: v for k, v in theirs.items() if k != "params"}
    ours = optim.Adadelta([mg.ones(1, requires_grad=True)]).param_groups[0]
    theirs = torch.optim.Adadelta([torch.ones(1, requires_grad=True)]).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == \
           {k: v for k, v in theirs.items() if k != "params"}


# ------------------------------------------------------------------ Adadelta

ADADELTA_CONFIGS = {
    "defaults": dict(),
    "lr": dict(lr=0.5),
    "rho_eps": dict(rho=0.5, eps=1e-3),
    "weight_decay": dict(weight_decay=0.1),
    "maximize": dict(lr=0.1, maximize=True),
    "all": dict(lr=2.0, rho=0.95, eps=1e-5, weight_decay=0.05, maximize=False),
}


def run_adadelta(lib, steps, opt=None, params_loss=None, first_step=0, **kwargs):
    params, loss_fn = params_loss or mlp(lib)
    opt = opt or lib.optim.Adadelta(params, **kwargs)
    losses = []
    for step in range(first_step, first_step + steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        if step % 3 == 1:  # a parameter without a gradient is left alone
            params[1].grad = None
        opt.step()
        losses.append(loss.item())
    return [_np(p) for p in params], opt, losses


@pytest.mark.parametrize("name", sorted(ADADELTA_CONFIGS))
def test_adadelta_matches_pytorch(name, torch):
    ours, opt, losses = run_adadelta(mg, 20, **ADADELTA_CONFIGS[name])
    theirs, topt, t_losses = run_adadelta(torch, 20, **ADADELTA_CONFIGS[name])
    np.testing.assert_allclose(losses, t_losses, **TOL)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **TOL)
    ours_state, theirs_state = opt.state_dict()["state"], topt.state_dict()["state"]
    assert sorted(ours_state) == sorted(theirs_state)
    for i in theirs_state:
        assert set(ours_state[i]) == set(theirs_state[i]) == {"step", "square_avg", "acc_delta"}
        assert ours_state[i]["step"].dtype == mg.float32
        for key in theirs_state[i]:
            np.testing.assert_allclose(_np(ours_state[i][key]), _np(theirs_state[i][key]), **TOL)
    assert not np.allclose(ours[0], mlp(mg)[0][0].detach().numpy()), "the parameters moved"


def test_adadelta_float32_matches_pytorch(torch):
    results = []
    for lib in (mg, torch):
        params_loss = mlp(lib, dtype="float32")
        params, _, _ = run_adadelta(lib, 10, params_loss=params_loss, lr=0.5)
        results.append(params)
    for a, b in zip(*results):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_adadelta_state_dict_round_trip():
    straight, _, _ = run_adadelta(mg, 10, lr=0.5, weight_decay=0.01)
    params_loss = mlp(mg)
    _, first, _ = run_adadelta(mg, 5, params_loss=params_loss, lr=0.5, weight_decay=0.01)
    second = optim.Adadelta(params_loss[0], lr=3.0)
    second.load_state_dict(first.state_dict())
    assert second.param_groups[0]["lr"] == 0.5 and second.param_groups[0]["weight_decay"] == 0.01
    resumed, _, _ = run_adadelta(mg, 5, opt=second, params_loss=params_loss, first_step=5)
    for a, b in zip(resumed, straight):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_adadelta_closure_and_repr():
    w = mg.tensor([3.0], requires_grad=True)
    opt = optim.Adadelta([w], lr=1.0)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    with mg.no_grad():
        assert opt.step(closure).item() == 9.0
    assert w.item() < 3.0
    assert repr(opt).startswith("Adadelta (\nParameter Group 0\n")
    assert isinstance(opt, optim.Optimizer) and isinstance(optim.LBFGS([w]), optim.Optimizer)


# ------------------------------------------------------------------ a real program

def test_pytorch_time_sequence_example_prints_pytorchs_numbers(torch):
    """PyTorch's time_sequence_prediction example (two LSTMCells trained with LBFGS,
    tests/programs), on 5 sine waves of 30 points for one LBFGS step: every loss it prints
    (20 closure evaluations, then the test loss on a 10-step forecast) is PyTorch's."""
    path = Path(__file__).parent / "programs" / "time_sequence_prediction.py"
    spec = importlib.util.spec_from_file_location("time_sequence_prediction", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    record, replay = program.torch_start(torch)
    printed = {torch: [], mg: []}
    sizes = dict(steps=1, N=5, L=30, future=10)
    forecast = {lib: program.run(lib, **sizes, start=start, out=lambda *a, lib=lib:
                                 printed[lib].append(a))
                for lib, start in ((torch, record), (mg, replay))}
    assert len(printed[mg]) == len(printed[torch]) == 22  # STEP, 20 losses, test loss
    for ours, theirs in zip(printed[mg], printed[torch]):
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9)
    np.testing.assert_allclose(forecast[mg], forecast[torch], rtol=1e-9, atol=1e-12)
