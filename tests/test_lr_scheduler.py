"""Learning-rate schedulers against PyTorch: each scenario is written once as a function of
``lib`` (minigrad or torch) and run with both."""

import copy
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import lr_scheduler


def halving(epoch):
    return 0.5 ** (epoch // 4)


def inverse(epoch):
    return 1.0 / (epoch + 1)


class Warmup:
    """A callable object: its ``__dict__`` is what LambdaLR's state_dict saves."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.steps)


SCHEDULERS = {
    "step": ("StepLR", dict(step_size=4, gamma=0.5)),
    "step_default_gamma": ("StepLR", dict(step_size=7)),
    "multistep": ("MultiStepLR", dict(milestones=[3, 7, 7, 20], gamma=0.3)),
    "exponential": ("ExponentialLR", dict(gamma=0.9)),
    "cosine": ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),  # 30 steps go past T_max
    "cosine_to_zero": ("CosineAnnealingLR", dict(T_max=10)),
    "lambda_one": ("LambdaLR", dict(lr_lambda=halving)),
    "lambda_per_group": ("LambdaLR", dict(lr_lambda=[halving, inverse])),
    "lambda_object": ("LambdaLR", dict(lr_lambda=[Warmup(6), lambda epoch: 0.95 ** epoch])),
    "linear": ("LinearLR", dict()),
    "linear_decay": ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=12)),
    "linear_warmup": ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=8)),
}


def make_optimizer(lib, lr=0.1):
    """Two param groups with different learning rates."""
    a = lib.zeros(3, requires_grad=True, dtype=lib.float64)
    b = lib.zeros(2, requires_grad=True, dtype=lib.float64)
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 5 * lr}], lr=lr, momentum=0.9)


def make_scheduler(lib, name, opt, **extra):
    kind, kwargs = SCHEDULERS[name]
    return getattr(lib.optim.lr_scheduler, kind)(opt, **kwargs, **extra)


def lrs(opt):
    return [group["lr"] for group in opt.param_groups]


def run(lib, name, steps=30):
    """The lr of each group after construction and after each of ``steps`` epochs."""
    opt = make_optimizer(lib)
    sched = make_scheduler(lib, name, opt)
    seen, last = [lrs(opt)], [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append(lrs(opt))
        last.append(list(sched.get_last_lr()))
    return np.array(seen), np.array(last), opt, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_sequence_matches_pytorch(name, torch):
    ours, _, _, _ = run(mg, name)
    theirs, _, _, _ = run(torch, name)
    assert ours.shape == (31, 2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
    assert len(np.unique(ours[:, 0])) > 1, "the schedule changes the lr"
    assert (ours[:, 0] != ours[:, 1]).any(), "each group has its own lr"


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_get_last_lr_is_what_the_groups_hold(name, torch):
    seen, last, _, sched = run(mg, name)
    np.testing.assert_array_equal(last, seen)
    _, theirs, _, _ = run(torch, name)
    np.testing.assert_allclose(last, theirs, rtol=1e-12, atol=0)
    assert isinstance(sched.get_last_lr(), list) and len(sched.get_last_lr()) == 2


def assert_same_state(ours, theirs):
    assert list(ours) == list(theirs)  # the same keys, in the same order
    for key in ours:
        if key in ("base_lrs", "_last_lr"):
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=0)
        else:
            assert ours[key] == theirs[key], key


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_matches_pytorch(name, torch):
    """Every key and value agrees. LambdaLR's lr_lambdas compare too: None for a function,
    the ``__dict__`` of a callable object; nothing needs to be left out."""
    ours = run(mg, name, steps=9)[3].state_dict()
    theirs = run(torch, name, steps=9)[3].state_dict()
    assert_same_state(ours, theirs)
    assert "optimizer" not in ours and ours["last_epoch"] == 9 and ours["_step_count"] == 10
    if name == "lambda_object":
        assert ours["lr_lambdas"] == [{"steps": 6}, None]


def resumed(lib, name, stop=11, steps=30):
    """Train ``stop`` epochs, save both state dicts, rebuild everything and go on."""
    opt = make_optimizer(lib)
    sched = make_scheduler(lib, name, opt)
    seen = [lrs(opt)]
    for _ in range(stop):
        opt.step()
        sched.step()
        seen.append(lrs(opt))
    saved = copy.deepcopy((opt.state_dict(), sched.state_dict()))  # as if written to a file
    opt = make_optimizer(lib, lr=7.0)  # a different lr: the loaded state must win
    sched = make_scheduler(lib, name, opt)
    opt.load_state_dict(saved[0])
    sched.load_state_dict(saved[1])
    assert sched.get_last_lr() == seen[-1] == lrs(opt)
    for _ in range(steps - stop):
        opt.step()
        sched.step()
        seen.append(lrs(opt))
    return np.array(seen)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_load_state_dict_continues_the_same_sequence(name, torch):
    straight = run(mg, name)[0]
    ours = resumed(mg, name)
    np.testing.assert_allclose(ours, straight, rtol=1e-12, atol=0)
    np.testing.assert_allclose(ours, resumed(torch, name), rtol=1e-12, atol=0)


def test_lambda_object_state_is_restored(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [Warmup(6), Warmup(3)])
        saved = sched.state_dict()
        fresh = [Warmup(100), Warmup(100)]
        lib.optim.lr_scheduler.LambdaLR(make_optimizer(lib), fresh).load_state_dict(saved)
        assert [fn.steps for fn in fresh] == [6, 3]
        assert "lr_lambdas" in saved, "loading leaves the saved dict as it was"


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_resuming_with_last_epoch(name, torch):
    """A scheduler built with last_epoch=k on a loaded optimizer (which holds initial_lr)."""
    results = []
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = make_scheduler(lib, name, opt)
        for _ in range(5):
            opt.step()
            sched.step()
        fresh = make_optimizer(lib, lr=3.0)
        fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
        again = make_scheduler(lib, name, fresh, last_epoch=5)
        seen = [lrs(fresh)]
        for _ in range(6):
            fresh.step()
            again.step()
            seen.append(lrs(fresh))
        assert again.last_epoch == 12 and again.base_lrs == [0.1, 0.5]
        results.append(seen)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=0)


def test_last_epoch_without_initial_lr_raises(torch):
    for lib in (mg, torch):
        with pytest.raises(KeyError, match="initial_lr"):
            lib.optim.lr_scheduler.StepLR(make_optimizer(lib), step_size=2, last_epoch=3)


def test_initial_lr_is_set_once(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        first = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step()
        first.step()
        second = lib.optim.lr_scheduler.StepLR(opt, step_size=3)  # a second one keeps them
        assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.5]
        assert second.base_lrs == [0.1, 0.5] and lrs(opt) == [0.05, 0.25]
        assert first.last_epoch == 1 and second.last_epoch == 0


def train(lib, weights, x, y):
    model = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        model.weight.copy_(lib.tensor(weights[0]))
        model.bias.copy_(lib.tensor(weights[1]))
    opt = lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    xs, ys = lib.tensor(x), lib.tensor(y)
    for _ in range(10):
        opt.zero_grad()
        lib.nn.functional.mse_loss(model(xs), ys).backward()
        opt.step()
        sched.step()
    return [p.detach().numpy().copy() for p in model.parameters()], sched.get_last_lr()


def test_training_loop_with_steplr_matches_pytorch(torch):
    rng = np.random.default_rng(3)
    weights = [rng.uniform(-0.5, 0.5, (2, 3)), rng.uniform(-0.5, 0.5, 2)]
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))
    ours, our_lr = train(mg, weights, x, y)
    theirs, their_lr = train(torch, weights, x, y)
    assert our_lr == their_lr == [0.2 * 0.5 ** 3]
    for a, b, w in zip(ours, theirs, weights):
        assert a.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        assert not np.allclose(a, w), "the parameters moved"


# A loss that falls, flattens (tiny changes below the threshold), rises, falls again.
METRICS = [1.0, 0.8, 0.7, 0.69995, 0.6999, 0.7, 0.71, 0.70, 0.5, 0.5, 0.49999, 0.6, 0.6, 0.6,
           0.6, 0.4, 0.4, 0.4, 0.4, 0.4, 0.39, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4]
PLATEAU = {
    "defaults_patience_2": dict(patience=2),
    "min_rel": dict(mode="min", factor=0.5, patience=1, threshold=1e-3),
    "min_abs": dict(mode="min", factor=0.5, patience=1, threshold=0.02, threshold_mode="abs"),
    "max_rel": dict(mode="max", factor=0.3, patience=2, threshold=1e-2),
    "max_abs": dict(mode="max", factor=0.3, patience=0, threshold=0.05, threshold_mode="abs"),
    "cooldown": dict(factor=0.5, patience=1, cooldown=3),
    "min_lr": dict(factor=0.2, patience=0, min_lr=0.01),
    "min_lr_per_group": dict(factor=0.2, patience=0, min_lr=[0.002, 0.2]),
    "eps": dict(factor=0.5, patience=0, eps=0.02),
}


def plateau(lib, name):
    opt = make_optimizer(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **PLATEAU[name])
    # mode="max" watches a score that rises and flattens, as an accuracy does
    metrics = [1.0 - m for m in METRICS] if sched.mode == "max" else METRICS
    seen = []
    for i, m in enumerate(metrics):
        opt.step()
        sched.step(lib.tensor(m) if i % 2 else m)  # a number or a one-element tensor
        seen.append(lrs(opt) + [sched.num_bad_epochs, sched.cooldown_counter, sched.best])
        assert sched.get_last_lr() == lrs(opt)
    return np.array(seen), sched


@pytest.mark.parametrize("name", sorted(PLATEAU))
def test_reduce_lr_on_plateau_matches_pytorch(name, torch):
    ours, sched = plateau(mg, name)
    theirs, their_sched = plateau(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
    assert ours[-1, 0] < 0.1, "the plateaus reduced the lr"
    assert_same_state(sched.state_dict(), their_sched.state_dict())


def test_reduce_lr_on_plateau_details(torch):
    min_lr = plateau(mg, "min_lr")[0]
    assert min_lr[-1, 0] == 0.01 and min_lr[-1, 1] == 0.01  # floor reached, then kept
    per_group = plateau(mg, "min_lr_per_group")[0]
    assert per_group[-1, :2].tolist() == [0.002, 0.2]
    cooldown = plateau(mg, "cooldown")[0]
    assert cooldown[:, 3].max() == 3  # the counter runs down from `cooldown` after a cut
    for lib in (mg, torch):  # this scheduler sets no initial_lr and leaves step alone
        opt = make_optimizer(lib)
        lib.optim.lr_scheduler.ReduceLROnPlateau(opt)
        assert "initial_lr" not in opt.param_groups[0] and "step" not in vars(opt)


def test_reduce_lr_on_plateau_state_dict_round_trip(torch):
    results = []
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
        for m in [1.0, 2.0, 2.0, 2.0]:
            sched.step(m)
        fresh = lib.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(lib), mode="max")
        fresh.load_state_dict(copy.deepcopy(sched.state_dict()))
        fresh.optimizer.load_state_dict(copy.deepcopy(opt.state_dict()))
        for m in [2.0, 2.0, 2.0]:
            fresh.step(m)
        results.append([fresh.best, fresh.patience, fresh.last_epoch] + lrs(fresh.optimizer))
    assert results[0] == pytest.approx(results[1], rel=1e-12)
    assert results[0] == pytest.approx([2.0, 1, 7, 0.001, 0.005], rel=1e-12)


STEP_ORDER = r"`lr_scheduler\.step\(\)` before `optimizer\.step\(\)`"


def test_scheduler_step_before_optimizer_step_warns(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match=STEP_ORDER) as record:
            sched.step()
        assert record[0].filename == __file__  # it points at the learner's line
        if lib is mg:
            message = str(record[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # only the first call is checked
            sched.step()
            opt.step()
            sched.step()
    assert "opposite order, `optimizer.step()` then `lr_scheduler.step()`" in message


def test_right_order_does_not_warn(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):
                opt.zero_grad()
                assert opt.step(lambda: 2.5) == 2.5  # the wrapped step passes arguments on
                sched.step()
        assert sched.last_epoch == 3 and opt._opt_called is True


def test_replacing_optimizer_step_after_the_scheduler_warns(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step = lambda closure=None: None  # e.g. a learner's own step, put in later
        opt.step()
        with pytest.warns(UserWarning, match="overridden after learning rate scheduler"):
            sched.step()


def test_only_an_optimizer_with_a_scheduler_has_its_step_wrapped(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        assert "step" not in vars(opt), "no scheduler: the class's step, nothing added"
        lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        wrapped = opt.step
        lib.optim.lr_scheduler.LinearLR(opt)
        assert opt.step is wrapped and wrapped._wrapped_by_lr_sched  # wrapped once
        assert opt.step.__name__ == "step"


def test_deepcopy_of_an_optimizer_with_a_scheduler_steps_the_copy(torch):
    for lib in (mg, torch):
        opt = make_optimizer(lib)
        lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        twin = copy.deepcopy(opt)
        param = twin.param_groups[0]["params"][0]
        param.grad = lib.ones(3, dtype=lib.float64)
        twin.step()
        assert param.tolist() == [-0.1] * 3
        assert opt.param_groups[0]["params"][0].tolist() == [0.0] * 3
        assert not getattr(opt, "_opt_called", False)


def test_get_lr_outside_step_warns(torch):
    for lib in (mg, torch):
        sched = lib.optim.lr_scheduler.StepLR(make_optimizer(lib), step_size=2)
        with pytest.warns(UserWarning, match="get_last_lr"):
            assert sched.get_lr() == [0.1, 0.5]


def test_a_learners_own_scheduler(torch):
    """Subclassing LRScheduler (or its old name _LRScheduler) and writing get_lr is enough."""
    results = []
    for lib in (mg, torch):
        for base in (lib.optim.lr_scheduler.LRScheduler, lib.optim.lr_scheduler._LRScheduler):
            class Triangle(base):
                def get_lr(self):
                    return [b * (1 + self.last_epoch % 3) for b in self.base_lrs]
            opt = make_optimizer(lib)
            sched = Triangle(opt)
            seen = [lrs(opt)]
            for _ in range(5):
                opt.step()
                sched.step()
                seen.append(sched.get_last_lr())
            results.append(seen)
    assert results[0] == results[1] == results[2] == results[3]
    assert [s[0] for s in results[0]] == pytest.approx([0.1, 0.2, 0.3, 0.1, 0.2, 0.3])
    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    with pytest.raises(NotImplementedError):
        lr_scheduler.LRScheduler(make_optimizer(mg))


def test_reachable_as_in_pytorch(torch):
    assert mg.optim.lr_scheduler is lr_scheduler
    assert "lr_scheduler" in mg.optim.__all__
    assert set(lr_scheduler.__all__) <= set(torch.optim.lr_scheduler.__all__)
    for name in lr_scheduler.__all__:
        ours = getattr(lr_scheduler, name)
        assert ours.__doc__ and ours.__doc__.strip(), name
        assert isinstance(getattr(torch.optim.lr_scheduler, name), type)
    assert "chapter 10" in lr_scheduler.__doc__


BAD_ARGUMENTS = [
    (TypeError, "is not an Optimizer", lambda lib: lib.optim.lr_scheduler.StepLR([], 2)),
    (TypeError, "is not an Optimizer", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau("sgd")),
    (ValueError, "mode", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(lib),
                                                                             mode="lowest")),
    (ValueError, "threshold mode", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), threshold_mode="relative")),
    (ValueError, "Factor should be < 1.0", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), factor=2.0)),
    (ValueError, "min_lrs", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        make_optimizer(lib), min_lr=[0.1])),
    (ValueError, "Starting multiplicative factor", lambda lib: lib.optim.lr_scheduler.LinearLR(
        make_optimizer(lib), start_factor=0)),
    (ValueError, "Ending multiplicative factor", lambda lib: lib.optim.lr_scheduler.LinearLR(
        make_optimizer(lib), end_factor=1.5)),
    (ValueError, "Expected 2 lr_lambdas, but got 1", lambda lib: lib.optim.lr_scheduler.LambdaLR(
        make_optimizer(lib), [halving])),
    (TypeError, "float", lambda lib: lib.optim.lr_scheduler.LambdaLR(make_optimizer(lib), 0.5)),
]


@pytest.mark.parametrize("error, message, build", BAD_ARGUMENTS)
def test_bad_arguments_raise_as_in_pytorch(error, message, build, torch):
    for lib in (mg, torch):
        with pytest.raises(error, match=message):
            build(lib)


def test_bad_arguments_minigrad_refuses_early():
    """Where PyTorch fails later (a division by zero at some step) or takes the deprecated
    epoch argument, minigrad says what is wrong at once."""
    with pytest.raises(ValueError, match="step_size should be a positive"):
        lr_scheduler.StepLR(make_optimizer(mg), step_size=0)
    with pytest.raises(ValueError, match="T_max should be a positive"):
        lr_scheduler.CosineAnnealingLR(make_optimizer(mg), T_max=0)
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        lr_scheduler.LambdaLR(make_optimizer(mg), 0.5)
    sched = lr_scheduler.StepLR(make_optimizer(mg), step_size=2)
    with pytest.raises(TypeError, match=r"call scheduler\.step\(\) once per epoch"):
        sched.step(3)
    with pytest.raises(TypeError, match="deprecated"):
        lr_scheduler.ReduceLROnPlateau(make_optimizer(mg)).step(1.0, epoch=3)
    assert sched.last_epoch == 0, "the refused call changed nothing"
