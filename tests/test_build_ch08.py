"""Chapter 8's build exercise (``SGD``, a subclass of ``mg.optim.Optimizer`` with momentum
and weight decay): the notebook's solution passes its check, typical wrong optimizers fail it
with the message a learner needs, and ``teach.use(sgd=...)`` really trains with the learner's
class."""

import pytest

import minigrad as mg
from minigrad import optim, teach

from build_cells import solution


@pytest.fixture(scope="module")
def SGD():
    return solution("08", "SGD")


def make_sgd(restart=False, keep_buffer=True, no_grad=True, in_place=True, decay=True, clone=True,
             skip_none=True, dampen=False, read_group_lr=True, state_key="momentum_buffer"):
    """An SGD written like the notebook's, right with the defaults; each switch is a
    typical mistake."""
    class WrongSGD(optim.Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0, weight_decay=0):
            super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
            self.lr = lr
            self.buffers = {}

        def _update(self):
            for group in self.param_groups:
                lr = group["lr"] if read_group_lr else self.lr
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        if skip_none:
                            continue
                        p.grad = mg.zeros_like(p)
                    g = p.grad
                    if decay and group["weight_decay"]:
                        g = g + group["weight_decay"] * p
                    if group["momentum"]:
                        state = self.state[p] if keep_buffer else {}
                        if restart or state_key not in state:
                            state[state_key] = g.clone() if clone else g
                        else:
                            m = group["momentum"]
                            state[state_key].mul_(m).add_(g * (1 - m) if dampen else g)
                        g = state[state_key]
                    if in_place:
                        p -= lr * g
                    else:
                        p = p - lr * g

        def step(self):
            if no_grad:
                with mg.no_grad():
                    self._update()
            else:
                self._update()
    return WrongSGD


def replaces_parameters(params, lr=1e-3, momentum=0, weight_decay=0):
    class Replacing(optim.Optimizer):
        @mg.no_grad()
        def step(self):
            for group in self.param_groups:
                group["params"] = [(p - group["lr"] * p.grad).requires_grad_()
                                   if p.grad is not None else p for p in group["params"]]
    return Replacing(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))


class NoWeightDecay(optim.SGD):
    def __init__(self, params, lr=1e-3, momentum=0):
        super().__init__(params, lr=lr, momentum=momentum)


def test_the_notebooks_sgd_passes(SGD):
    result = teach.check_piece("sgd", SGD)
    assert result, result.message
    assert "18 runs" in result.message


def test_a_subclass_of_minigrads_own_passes():
    class Own(optim.SGD):
        pass
    assert teach.check_piece("sgd", Own)


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
