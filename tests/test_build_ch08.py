"""Chapter 8's build exercise (``SGD``, a subclass of ``mg.optim.Optimizer`` with momentum
and weight decay): the notebook's solution passes its check, typical wrong optimizers fail it
with the message a learner needs, and ``teach.use(sgd=...)`` really trains with the learner's
class."""

import importlib
import inspect
import json

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim, teach
from minigrad.teach.exercises import ch08

from build_cells import solution


@pytest.fixture(scope="module")
def SGD():
    return solution("08", "SGD")


_REQUIRED = object()


def make_sgd(restart=False, keep_buffer=True, no_grad=True, in_place=True, decay=True, clone=True,
             skip_none=True, dampen=False, read_group_lr=True, state_key="momentum_buffer",
             lr_default=1e-3, momentum_default=0, buffer="clone", update="in place", sign=-1,
             zero_grad_in_step=False, first_group_only=False, decay_after_buffer=False):
    """An SGD written like the notebook's, right with the defaults; each switch is a
    typical mistake."""
    class WrongSGD(optim.Optimizer):
        def __init__(self, params, lr=lr_default, momentum=momentum_default, weight_decay=0):
            super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
            self.lr = lr
            self.buffers = {}

        def _update(self):
            for group in self.param_groups[:1] if first_group_only else self.param_groups:
                lr = group["lr"] if read_group_lr else self.lr
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        if skip_none:
                            continue
                        p.grad = mg.zeros_like(p)
                    g = p.grad
                    if decay and group["weight_decay"] and not decay_after_buffer:
                        g = g + group["weight_decay"] * p
                    if group["momentum"]:
                        state = self.state[p] if keep_buffer else {}
                        if buffer == "numpy zeros" and state_key not in state:
                            state[state_key] = mg.tensor(np.zeros(tuple(p.shape)))
                            state[state_key].mul_(group["momentum"]).add_(g)
                        elif restart or state_key not in state:
                            state[state_key] = g.clone() if clone else g
                        else:
                            m = group["momentum"]
                            state[state_key].mul_(m).add_(g * (1 - m) if dampen else g)
                        g = state[state_key]
                    if decay_after_buffer and group["weight_decay"]:
                        g = g + group["weight_decay"] * p
                    if update == "data":
                        p.data = p.data + sign * lr * g
                    elif in_place:
                        p += sign * lr * g
                    else:
                        p = p + sign * lr * g
                    if zero_grad_in_step:
                        p.grad.zero_()

        def step(self):
            if no_grad:
                with mg.no_grad():
                    self._update()
            else:
                self._update()
    if lr_default is _REQUIRED:
        def __init__(self, params, lr, momentum=0, weight_decay=0):
            optim.Optimizer.__init__(self, params, dict(lr=lr, momentum=momentum,
                                                        weight_decay=weight_decay))
            self.lr = lr
        WrongSGD.__init__ = __init__
    return WrongSGD


def replaces_parameters(params, lr=1e-3, momentum=0, weight_decay=0):
    class Replacing(optim.Optimizer):
        @mg.no_grad()
        def step(self):
            for group in self.param_groups:
                group["params"] = [(p - group["lr"] * p.grad).requires_grad_()
                                   if p.grad is not None else p for p in group["params"]]
    return Replacing(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))


class NoWeightDecay(make_sgd()):
    def __init__(self, params, lr=1e-3, momentum=0):
        super().__init__(params, lr=lr, momentum=momentum)


class KeywordsToSuper(optim.Optimizer):
    """Hands the settings to Optimizer.__init__ one by one, as keywords."""
    def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    step = make_sgd().step


class DefaultsInKwargs(make_sgd()):
    """Settings as **kwargs, with a default learning rate of its own."""
    def __init__(self, params, **settings):
        super().__init__(params, **dict(dict(lr=0.01, momentum=0, weight_decay=0), **settings))


class WrapsMinigrads(optim.Optimizer):
    """A thin wrapper: builds minigrad's own SGD inside and lets it step."""
    def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
        params = list(params)
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.inner = optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    def step(self):
        self.inner.step()


class WrapsMinigradsDeep(optim.Optimizer):
    """The same wrapper, reaching minigrad's SGD by a path the look at its code misses."""
    def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
        params = list(params)
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.inner = importlib.import_module("minigrad.optim.sgd").SGD(
            params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    def step(self):
        self.inner.step()


def wraps_step(params, lr=1e-3, momentum=0, weight_decay=0):
    return optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)


class EmptySubclass(optim.SGD):
    pass


def test_the_notebooks_sgd_passes(SGD):
    result = teach.check_piece("sgd", SGD)
    assert result, result.message
    assert "18 runs" in result.message


def test_pytorchs_defaults_are_written_down_right():
    torch = pytest.importorskip("torch")
    signature = inspect.signature(torch.optim.SGD)
    for name, default in ch08.TORCH_SGD_DEFAULTS.items():
        assert signature.parameters[name].default == default, name
    own = inspect.signature(optim.SGD)
    for name, default in ch08.TORCH_SGD_DEFAULTS.items():
        assert own.parameters[name].default == default, name


@pytest.mark.parametrize("own, words", [
    (optim.SGD, ["minigrad's own optim.SGD", "not a piece you wrote", "Write SGD yourself"]),
    (optim.sgd.SGD, ["minigrad's own optim.SGD", "not a piece you wrote"]),
    (EmptySubclass, ["subclass of minigrad's own optim.SGD", "from scratch"]),
    (WrapsMinigrads, ["uses minigrad's own optim.SGD", "compare minigrad with itself"]),
    (wraps_step, ["uses minigrad's own optim.SGD", "compare minigrad with itself"]),
    (WrapsMinigradsDeep, ["calls minigrad's own optim.SGD", "mg.optim.sgd.SGD",
                          "compare minigrad with itself"]),
])
def test_minigrads_own_sgd_is_refused(own, words):
    result = teach.check_piece("sgd", own)
    assert not result
    for word in words:
        assert word in result.message, result.message


def sgd_forwarding_to_torch():
    """An SGD whose step lets torch.optim.SGD do the work on twin torch tensors and copies
    the parameters and the momentum buffers back: the numbers are right, the code is not
    the learner's."""
    torch = pytest.importorskip("torch")

    class ForwardsToTorch(optim.Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
            super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
            self.twins = {p: torch.tensor(p.detach().numpy(), requires_grad=True)
                          for group in self.param_groups for p in group["params"]}

        @mg.no_grad()
        def step(self):
            for p, twin in self.twins.items():
                twin.grad = None if p.grad is None else torch.tensor(p.grad.numpy())
            groups = [dict({k: v for k, v in group.items() if k != "params"},
                           params=[self.twins[p] for p in group["params"]])
                      for group in self.param_groups]
            inner = torch.optim.SGD(groups)
            for p, twin in self.twins.items():
                if "momentum_buffer" in self.state[p]:
                    inner.state[twin]["momentum_buffer"] = torch.tensor(
                        self.state[p]["momentum_buffer"].numpy())
            inner.step()
            for p, twin in self.twins.items():
                p.copy_(mg.tensor(twin.detach().numpy(), dtype=p.dtype))
                buffer = inner.state.get(twin, {}).get("momentum_buffer")
                if buffer is not None:
                    self.state[p]["momentum_buffer"] = mg.tensor(buffer.numpy(), dtype=p.dtype)
    return ForwardsToTorch


def test_pytorchs_own_sgd_is_refused():
    """torch.optim.SGD itself, a subclass of it, and an SGD whose step calls it: the check
    would compare PyTorch's step with minigrad's, which matches it, so each is refused by
    name (not by an accidental TypeError about tensors)."""
    torch = pytest.importorskip("torch")

    class OnTorchsSGD(torch.optim.SGD):
        pass

    for theirs, label in [(torch.optim.SGD, "torch.optim.SGD"), (OnTorchsSGD, "torch.optim.SGD"),
                          (sgd_forwarding_to_torch(), "torch.optim.SGD")]:
        result = teach.check_piece("sgd", theirs)
        assert not result
        for words in (f"PyTorch's own {label}", "SGD is yours to write",
                      "compared with itself", "step() yourself"):
            assert words in result.message, (theirs, result.message)
        assert "Hint: take the settings" not in result.message


def test_without_the_refusal_the_forwarding_sgd_would_pass(monkeypatch):
    """The SGD refused above is a real forwarding SGD: only the refusal stops it."""
    from minigrad.teach.exercises import ch08_build
    monkeypatch.setattr(ch08_build, "_refuse_pytorchs", lambda sgd_class: None)
    result = teach.check_piece("sgd", sgd_forwarding_to_torch())
    assert result, result.message


@pytest.mark.parametrize("wrong, words", [
    (make_sgd(restart=True), ["step 2", "plain SGD", "momentum of the earlier steps was lost",
                              "self.state[p]['momentum_buffer']"]),
    (make_sgd(keep_buffer=False), ["after step 1", "has no 'momentum_buffer'", "self.state[p]"]),
    (make_sgd(clone=False), ["after step 1", ".grad tensor itself", "a copy"]),
    (make_sgd(no_grad=False), ["RuntimeError", "must not be recorded"]),
    (make_sgd(in_place=False), ["did not move at all", "in place"]),
    (make_sgd(decay=False), ["weight_decay=0.1", "weight_decay * p"]),
    (make_sgd(skip_none=False), ["step 4", ".grad is None", "leave it alone"]),
    (make_sgd(dampen=True), ["momentum=0.9", "the whole gradient"]),
    (make_sgd(read_group_lr=False), ["'lr': 0.02", "parameter b", "from the group"]),
    (make_sgd(state_key="velocity"), ["has no 'momentum_buffer'", "self.state[p]"]),
    (replaces_parameters, ["expected a class"]),
    (NoWeightDecay, ["TypeError", "weight_decay=0"]),
    (make_sgd(sign=+1), ["step 1", "moved uphill", "against the gradient"]),
    (make_sgd(zero_grad_in_step=True), ["step() changed w.grad", "leaves it alone"]),
    (make_sgd(lr_default=0.01), ["your __init__ has lr=0.01", "PyTorch's SGD has lr=0.001"]),
    (make_sgd(lr_default=_REQUIRED), ["lr has no default", "PyTorch's SGD has lr=0.001"]),
    (make_sgd(momentum_default=0.9), ["momentum=0.9", "PyTorch's SGD has momentum=0"]),
    (make_sgd(first_group_only=True), ["parameter b is", "second group", "did not move",
                                       "every group"]),
    (make_sgd(decay_after_buffer=True), ["weight_decay=0.01", "momentum buffer of w",
                                         "lacks exactly the weight decay",
                                         "decay goes into the gradient before the buffer"]),
    (KeywordsToSuper, ["TypeError", "unexpected keyword argument 'lr'", "Optimizer",
                       "ONE dict of defaults", "not the settings one by one"]),
    (DefaultsInKwargs, ["lr=0.01 in its param group", "PyTorch's default is lr=0.001"]),
    (make_sgd(buffer="numpy zeros"), ["float32 nn.Linear(3, 2)", "momentum buffer of weight",
                                      "is float64", "float32 inputs"]),
    (make_sgd(buffer="numpy zeros", update="data"), ["float32 nn.Linear(3, 2)",
                                                     "parameter weight is float64",
                                                     "float64 constant"]),
    (make_sgd(update="data", no_grad=False), ["momentum buffer of w requires grad",
                                              "@mg.no_grad()"]),
])
def test_a_wrong_sgd_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("sgd", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_an_sgd_that_replaces_its_parameters_is_told_so():
    class Replacing(optim.Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
            super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

        @mg.no_grad()
        def step(self):
            for group in self.param_groups:
                group["params"] = [(p - group["lr"] * p.grad).requires_grad_()
                                   if p.grad is not None else p for p in group["params"]]
    result = teach.check_piece("sgd", Replacing)
    assert not result and "other tensors" in result.message, result.message


def test_a_wrong_zero_grad_is_named(SGD):
    class KeepsGrad(SGD):
        def zero_grad(self, set_to_none=True):
            pass
    result = teach.check_piece("sgd", KeepsGrad)
    assert not result and "step 2" in result.message


def test_not_written_yet_leaves_minigrads_own_sgd():
    result = teach.check_piece("sgd", None)
    assert not result and "not written yet" in result.message
    with teach.use(sgd=None):
        assert optim.SGD is optim.sgd.SGD


def test_use_trains_with_the_learners_class_and_puts_minigrads_back(SGD):
    steps = []

    class Counted(SGD):
        def step(self):
            steps.append(1)
            return super().step()

    own = optim.SGD
    with teach.use(sgd=Counted):
        assert mg.optim.SGD is Counted
        losses = teach.training_run(lr=0.01, epochs=5)
    assert len(steps) == 5
    assert optim.SGD is own
    assert losses == teach.training_run(lr=0.01, epochs=5)
    with pytest.raises(ZeroDivisionError):
        with teach.use(sgd=Counted):
            1 / 0
    assert optim.SGD is own


def test_the_check_leaves_the_random_state_alone(SGD):
    mg.manual_seed(5)
    want = mg.rand(3)
    mg.manual_seed(5)
    teach.check_piece("sgd", SGD)
    assert mg.equal(mg.rand(3), want)


def test_an_sgd_that_adds_weight_decay_into_grad_is_caught(SGD):
    """g = p.grad; g += wd * p changes .grad itself: with gradients accumulating (chapter 9)
    the decay would leak into later steps."""
    class DecayIntoGrad(SGD):
        def step(self):
            with mg.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        g = p.grad
                        if group["weight_decay"]:
                            g += group["weight_decay"] * p
                        if group["momentum"]:
                            state = self.state[p]
                            if "momentum_buffer" not in state:
                                state["momentum_buffer"] = g.clone()
                            else:
                                state["momentum_buffer"].mul_(group["momentum"]).add_(g)
                            g = state["momentum_buffer"]
                        p.add_(g, alpha=-group["lr"])
    result = teach.check_piece("sgd", DecayIntoGrad)
    assert not result
    assert "step() changed w.grad" in result.message and "leaves it alone" in result.message


HELPER = '''def move(p, g, lr):
    p -= lr * g
'''

BUILD_WITH_HELPER = '''class SGD(mg.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @mg.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad + group["weight_decay"] * p
                if group["momentum"]:
                    state = self.state[p]
                    if "momentum_buffer" in state:
                        state["momentum_buffer"].mul_(group["momentum"]).add_(g)
                    else:
                        state["momentum_buffer"] = g.clone()
                    g = state["momentum_buffer"]
                move(p, g, group["lr"])
'''


def test_an_sgd_using_a_helper_of_another_cell_is_told_why_in_my_pieces(tmp_path, capsys):
    names = {"__name__": "__main__", "mg": mg}
    exec(HELPER + BUILD_WITH_HELPER, names)
    in_notebook = teach.check_piece("sgd", names["SGD"])
    assert in_notebook, in_notebook.message   # in its notebook the helper is there
    cells = [{"cell_type": "code", "metadata": {"tags": tags}, "source": source, "outputs": [],
              "execution_count": None}
             for source, tags in [("import minigrad as mg", []), (HELPER, []),
                                  (BUILD_WITH_HELPER, ["solution", "build"])]]
    (tmp_path / "08b_mine.ipynb").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    chosen = teach.my_pieces(tmp_path)
    line = [l for l in capsys.readouterr().out.splitlines() if "ch08" in l][0]
    assert "sgd" not in chosen
    assert line.startswith("minigrad's own") and "yours does not pass its check yet" in line
    for words in ("NameError", "'move' is not defined in your build cell",
                  "defined in another cell", "define everything your piece needs inside it"):
        assert words in line, line


# ---------------------------------------------------------------- the second piece: Adam


@pytest.fixture(scope="module")
def Adam():
    return solution("08", "Adam")


def make_adam(correct1=True, correct2=True, eps_inside=False, global_step=False, keep_state=True,
              lr_twice=False, decay="coupled", betas_swapped=False, average=True, sqrt=True,
              in_place=True, no_grad=True, skip_none=True, state_keys=("exp_avg", "exp_avg_sq"),
              store_hat=False, lr_default=1e-3, eps_default=1e-8, sign=-1, first_group_only=False,
              group_settings=True, rebind=False):
    """An Adam written like the notebook's, right with the defaults; each switch is a typical
    mistake."""
    m_key, v_key = state_keys

    class WrongAdam(optim.Optimizer):
        def __init__(self, params, lr=lr_default, betas=(0.9, 0.999), eps=eps_default,
                     weight_decay=0):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
            self.calls = 0

        def _update(self):
            self.calls += 1
            for group in self.param_groups[:1] if first_group_only else self.param_groups:
                read = group if group_settings else self.param_groups[0]
                beta1, beta2 = read["betas"][::-1] if betas_swapped else read["betas"]
                lr, eps, wd = read["lr"], group["eps"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        if skip_none:
                            continue
                        p.grad = mg.zeros_like(p)
                    g = p.grad
                    if wd and decay == "coupled":
                        g = g + wd * p
                    state = self.state[p]
                    if not state or not keep_state:   # keep_state=False: m, v new each step
                        state.setdefault("step", 0)
                        state.update(**{m_key: mg.zeros_like(p), v_key: mg.zeros_like(p)})
                    state["step"] += 1
                    t = self.calls if global_step else state["step"]
                    m, v = state[m_key], state[v_key]
                    if rebind:   # new tensors under the local names: the state never changes
                        m = beta1 * m + (1 - beta1) * g
                        v = beta2 * v + (1 - beta2) * g * g
                    else:
                        m.mul_(beta1).add_((1 - beta1) * g if average else g)
                        v.mul_(beta2).add_((1 - beta2) * g * g)
                    m_hat = m / (1 - beta1 ** t) if correct1 else m
                    v_hat = v / (1 - beta2 ** t) if correct2 else v
                    if store_hat:
                        m.copy_(m_hat)
                    root = (v_hat + eps).sqrt() if eps_inside else (
                        (v_hat.sqrt() if sqrt else v_hat) + eps)
                    update = (lr * lr if lr_twice else lr) * m_hat / root
                    if wd and decay == "decoupled":
                        p.mul_(1 - lr * wd)
                    if in_place:
                        p += sign * update
                    else:
                        p = p + sign * update

        def step(self):
            if no_grad:
                with mg.no_grad():
                    self._update()
            else:
                self._update()
    return WrongAdam


class EmptyAdamSubclass(optim.Adam):
    pass


class WrapsMinigradsAdamW(optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        params = list(params)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.inner = importlib.import_module("minigrad.optim.adam").AdamW(
            params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def step(self):
        self.inner.step()


def test_the_notebooks_adam_passes(Adam):
    result = teach.check_piece("adam", Adam)
    assert result, result.message
    assert "18 runs" in result.message


def test_pytorchs_adam_defaults_are_written_down_right():
    torch = pytest.importorskip("torch")
    from minigrad.teach.exercises import ch08_adam
    for own in (torch.optim.Adam, optim.Adam):
        signature = inspect.signature(own)
        for name, default in ch08_adam.TORCH_ADAM_DEFAULTS.items():
            assert tuple(np.atleast_1d(signature.parameters[name].default)) == \
                tuple(np.atleast_1d(default)), (own, name)


def test_the_first_step_without_bias_correction_is_what_torch_computes():
    """(1 - β1) / sqrt(1 - β2) lr: the size of the uncorrected first step, measured."""
    torch = pytest.importorskip("torch")
    from minigrad.teach.exercises import ch08_adam
    w = torch.tensor([5.0], dtype=torch.float64, requires_grad=True)
    (w * -170.0).sum().backward()
    m, v = 0.1 * w.grad, 0.001 * w.grad ** 2
    step = (0.1 * m / (v.sqrt() + 1e-8)).abs().item()
    assert step / 0.1 == pytest.approx(ch08_adam.first_step_without_correction(), rel=1e-6)
    assert 3.1 < ch08_adam.first_step_without_correction() < 3.2


@pytest.mark.parametrize("own, words", [
    (optim.Adam, ["minigrad's own optim.Adam", "not a piece you wrote", "Write Adam yourself"]),
    (optim.AdamW, ["minigrad's own optim.AdamW", "not a piece you wrote"]),
    (EmptyAdamSubclass, ["subclass of minigrad's own optim.Adam", "from scratch"]),
    (WrapsMinigradsAdamW, ["calls minigrad's own optim.AdamW", "mg.optim.adam.AdamW"]),
])
def test_minigrads_own_adam_is_refused(own, words):
    result = teach.check_piece("adam", own)
    assert not result
    for word in words:
        assert word in result.message, result.message


@pytest.mark.parametrize("wrong, words", [
    (make_adam(correct1=False, correct2=False), ["step 1", "no bias correction", "3.16 lr"]),
    (make_adam(correct2=False), ["step 1", "corrects m but not v"]),
    (make_adam(correct1=False), ["step 1", "corrects v but not m"]),
    (make_adam(eps_inside=True), ["eps=0.1", "ε sits inside your square root", "sqrt(v̂) + ε"]),
    (make_adam(global_step=True), ["parameter late", "t = 3", "number of step() calls",
                                   "self.state[p]['step']"]),
    (make_adam(keep_state=False), ["step 2", "m and v were lost", "live from one step"]),
    (make_adam(lr_twice=True), ["step 1", "lr is applied twice"]),
    (make_adam(decay="none"), ["weight_decay=0.1", "weight_decay · p to the gradient"]),
    (make_adam(decay="decoupled"), ["weight_decay=0.1", "AdamW's decoupled decay",
                                    "added to the gradient"]),
    (make_adam(betas_swapped=True), ["betas = (β1, β2)", "β1 (0.9 by default)"]),
    (make_adam(average=False), ["m is a running AVERAGE"]),
    (make_adam(sqrt=False), ["square ROOT of v̂"]),
    (make_adam(sign=+1), ["step 1", "moved uphill"]),
    (make_adam(in_place=False), ["did not move at all", "in place"]),
    (make_adam(no_grad=False), ["RuntimeError", "must not be recorded"]),
    (make_adam(skip_none=False), ["state[late]", "no gradient yet", "no state"]),
    (make_adam(state_keys=("m", "v")), ["has no 'exp_avg'", "PyTorch's names"]),
    (make_adam(store_hat=True), ["after step 1", "m (exp_avg) of w",
                                 "the bias-corrected m̂ and v̂ are computed"]),
    (make_adam(lr_default=0.01), ["your __init__ has lr=0.01", "PyTorch's Adam has lr=0.001"]),
    (make_adam(eps_default=1e-6), ["eps=1e-06", "PyTorch's Adam has eps=1e-08"]),
    (make_adam(first_group_only=True), ["parameter b", "second group", "did not move at all",
                                        "every group"]),
    (make_adam(group_settings=False), ["parameter b", "settings of its own", "from the group"]),
    (make_adam(rebind=True), ["after step 1", "m (exp_avg) of w", "did not change in this step",
                              "update exp_avg / exp_avg_sq in self.state[p]",
                              "in place, or store them back"]),
])
def test_a_wrong_adam_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("adam", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_use_plugs_the_learners_adam_and_puts_minigrads_back(Adam):
    own = optim.Adam
    with teach.use(adam=Adam):
        assert optim.Adam is Adam
        mine = teach.training_run(lr=0.1, epochs=10, optimizer="Adam")
    assert optim.Adam is own
    assert np.allclose(mine, teach.training_run(lr=0.1, epochs=10, optimizer="Adam"))
    with teach.use(adam=None):
        assert optim.Adam is own


def test_minigrads_adam_and_adamw_match_torch_step_for_step():
    """The reference the check trusts: minigrad's Adam (coupled L2) and AdamW (decoupled)
    against torch's, with weight decay, and the two differ."""
    torch = pytest.importorskip("torch")
    start = np.array([1.5, -2.0, 0.3])
    finals = {}
    for name in ("Adam", "AdamW"):
        w, tw = mg.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
        opt = getattr(optim, name)([w], lr=0.1, weight_decay=0.5)
        topt = getattr(torch.optim, name)([tw], lr=0.1, weight_decay=0.5)
        for _ in range(5):
            for p, o in ((w, opt), (tw, topt)):
                o.zero_grad()
                ((p - 1) ** 2).sum().backward()
                o.step()
            assert np.allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-12, atol=1e-14)
        finals[name] = w.detach().numpy()
    assert not np.allclose(finals["Adam"], finals["AdamW"])


def test_an_adam_that_keeps_its_step_count_as_a_float32_tensor_passes(Adam):
    """PyTorch keeps state['step'] as a float32 tensor: a bias correction computed from it
    is rounded to float32, which the check must accept."""
    class TensorStep(optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

        @mg.no_grad()
        def step(self):
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad + group["weight_decay"] * p
                    state = self.state[p]
                    if not state:
                        state.update(step=mg.tensor(0.0), exp_avg=mg.zeros_like(p),
                                     exp_avg_sq=mg.zeros_like(p))
                    state["step"] += 1
                    t = state["step"]
                    state["exp_avg"].mul_(beta1).add_((1 - beta1) * g)
                    state["exp_avg_sq"].mul_(beta2).add_((1 - beta2) * g * g)
                    m_hat = state["exp_avg"] / (1 - beta1 ** t)
                    v_hat = state["exp_avg_sq"] / (1 - beta2 ** t)
                    p -= group["lr"] * m_hat / (v_hat.sqrt() + group["eps"])
    result = teach.check_piece("adam", TensorStep)
    assert result, result.message


def forwards_to_torch(style):
    """An Adam that lets PyTorch's optimizer do the step on twin torch tensors and copies
    the parameters and the state back: the numbers are right, the code is not the
    learner's. ``style``: how it reaches PyTorch's code."""
    torch = pytest.importorskip("torch")
    TorchAdam = torch.optim.Adam   # noqa: N806  (read as a global by "global")

    class ForwardsToTorch(optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
            self.twins, groups = {}, []
            for group in self.param_groups:
                twins = [torch.tensor(p.detach().numpy(), requires_grad=True)
                         for p in group["params"]]
                self.twins.update(zip(group["params"], twins))
                groups.append(dict({k: v for k, v in group.items() if k != "params"},
                                   params=twins))
            self.groups, self.inner = groups, self.make_inner(groups)

        if style == "global":
            def make_inner(self, groups):
                return TorchAdam(groups)
        elif style == "attribute":
            def make_inner(self, groups):
                return torch.optim.Adam(groups)
        else:
            def make_inner(self, groups):
                return None

        @mg.no_grad()
        def step(self):
            for p, twin in self.twins.items():
                twin.grad = None if p.grad is None else torch.tensor(p.grad.numpy())
            if self.inner is not None:
                self.inner.step()
            else:   # the functional step, one parameter at a time (no weight decay here)
                for group in self.groups:
                    for twin in group["params"]:
                        if twin.grad is None:
                            continue
                        s = self.state[twin]
                        if not s:
                            s.update(step=torch.tensor(0.0), exp_avg=torch.zeros_like(twin),
                                     exp_avg_sq=torch.zeros_like(twin))
                        with torch.no_grad():
                            torch.optim._functional.adam(
                                [twin], [twin.grad], [s["exp_avg"]], [s["exp_avg_sq"]], [],
                                [s["step"]], amsgrad=False, beta1=group["betas"][0],
                                beta2=group["betas"][1], lr=group["lr"],
                                weight_decay=group["weight_decay"], eps=group["eps"],
                                maximize=False)
            for p, twin in self.twins.items():
                p.copy_(mg.tensor(twin.detach().numpy(), dtype=p.dtype))
                theirs = (self.inner.state if self.inner is not None else self.state).get(twin)
                if theirs:
                    self.state[p] = {"exp_avg": mg.tensor(theirs["exp_avg"].numpy()),
                                     "exp_avg_sq": mg.tensor(theirs["exp_avg_sq"].numpy()),
                                     "step": int(theirs["step"].item())}
    return ForwardsToTorch


@pytest.mark.parametrize("style, label", [("attribute", "torch.optim.Adam"),
                                          ("global", "torch.optim.Adam"),
                                          ("functional", "torch.optim.adam.adam")])
def test_an_adam_that_forwards_to_pytorchs_is_refused(style, label):
    result = teach.check_piece("adam", forwards_to_torch(style))
    assert not result
    for words in (f"PyTorch's own {label}", "yours to write", "compared with itself"):
        assert words in result.message, result.message


def test_an_adam_subclassing_pytorchs_optimizer_is_refused():
    torch = pytest.importorskip("torch")

    class OnTorchsBase(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    result = teach.check_piece("adam", OnTorchsBase)
    assert not result and "PyTorch's own torch.optim.Optimizer" in result.message, result.message


def test_without_the_refusal_the_forwarding_adam_would_pass(monkeypatch):
    """The refused classes above are real forwarding Adams: only the refusal stops them."""
    from minigrad.teach.exercises import ch08_adam
    monkeypatch.setattr(ch08_adam, "_refuse_pytorchs", lambda adam_class: None)
    result = teach.check_piece("adam", forwards_to_torch("attribute"))
    assert result, result.message


_IMPORTS_TORCH_ITSELF = """
import sys
import minigrad as mg
from minigrad import optim, teach

class Adam(optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        import torch
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.twins = {p: torch.tensor(p.detach().numpy(), requires_grad=True)
                      for group in self.param_groups for p in group["params"]}
        self.inner = torch.optim.Adam(
            [dict({k: v for k, v in group.items() if k != "params"},
                  params=[self.twins[p] for p in group["params"]])
             for group in self.param_groups])

    @mg.no_grad()
    def step(self):
        import torch
        for p, twin in self.twins.items():
            twin.grad = None if p.grad is None else torch.tensor(p.grad.numpy())
        self.inner.step()
        for p, twin in self.twins.items():
            p.copy_(mg.tensor(twin.detach().numpy(), dtype=p.dtype))
            theirs = self.inner.state.get(twin)
            if theirs:
                self.state[p] = {"exp_avg": mg.tensor(theirs["exp_avg"].numpy()),
                                 "exp_avg_sq": mg.tensor(theirs["exp_avg_sq"].numpy()),
                                 "step": int(theirs["step"].item())}

assert "torch" not in sys.modules
result = teach.check_piece("adam", Adam)
print(result.message)
"""


def test_an_adam_that_imports_torch_itself_is_refused_once_it_has():
    """PyTorch not imported before the check: the learner's own `import torch` loads it
    during the runs, and the check looks again afterwards."""
    pytest.importorskip("torch")
    import os
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _IMPORTS_TORCH_ITSELF], capture_output=True,
                          text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "PyTorch's own torch.optim.Adam" in done.stdout, done.stdout
