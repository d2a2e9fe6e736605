"""Chapter 8's build exercise (``notebooks/08b_optimizers.ipynb``): ``SGD``, a subclass of
``optim.Optimizer`` with momentum and weight decay, registered with ``teach.build`` as the
piece ``sgd``. A class that is, subclasses or calls minigrad's own SGD, or one of PyTorch's
optimizers, is refused.

``teach.use(sgd=...)`` makes ``minigrad.optim.SGD`` the learner's class inside the block. The
check (``optimizer_checks``, shared with chapter 8's Adam) runs the learner's optimizer and
minigrad's own side by side on the same problems, step by step (parameters, momentum buffers,
``zero_grad``, the signature and PyTorch's defaults, float32), and names the first step and
parameter where they differ; this module says what is SGD's own: its problem, how a wrong
move is explained, and its momentum buffers.
"""

from unittest import mock

import numpy as np

from ... import optim
from ...creation import tensor
from ...dtypes import float64
from ...optim import sgd as _sgd_module
from ... import Tensor
from ..build import Mismatch, Piece, register, show
from ..checks import keeps_random_state
from .optimizer_checks import OptimizerBuild, optimizer_battery, refuse_pytorchs, run_learner

__all__ = ["TORCH_SGD_DEFAULTS", "run_learner"]


# ---------------------------------------------------------------- build: SGD with momentum

_OWN_SGD = _sgd_module.SGD   # minigrad's own, whatever optim.SGD is while a check runs

# PyTorch's defaults (torch.optim.SGD since PyTorch 2.0): SGD(params) alone is
# SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False).
TORCH_SGD_DEFAULTS = {"lr": 1e-3, "momentum": 0, "dampening": 0, "weight_decay": 0,
                      "nesterov": False, "maximize": False}


def _plug_sgd(sgd_class):
    """``minigrad.optim.SGD`` is the learner's class inside the block: code that builds its
    optimizer there (``optim.SGD(model.parameters(), lr=0.01)``, ``teach.training_run``)
    gets theirs."""
    return mock.patch.object(optim, "SGD", sgd_class)


# (what the check says, the settings, zero_grad's set_to_none, two parameter groups?)
_SGD_CASES = [
    ("SGD(params, lr=0.1)", dict(lr=0.1), True, False),
    ("SGD(params, lr=0.05, momentum=0.9)", dict(lr=0.05, momentum=0.9), True, False),
    ("SGD(params, lr=0.1, weight_decay=0.1)", dict(lr=0.1, weight_decay=0.1), True, False),
    ("SGD(params, lr=0.05, momentum=0.9, weight_decay=0.01)",
     dict(lr=0.05, momentum=0.9, weight_decay=0.01), True, False),
    ("SGD(params, lr=0.05, momentum=0.9) with zero_grad(set_to_none=False)",
     dict(lr=0.05, momentum=0.9), False, False),
    ("SGD([{'params': [w]}, {'params': [b, unused], 'lr': 0.02, 'momentum': 0.5}], lr=0.1, "
     "momentum=0.9)", dict(lr=0.1, momentum=0.9), True, True),
]
_SGD_STEPS = 6
_SKIPPED_STEP = 4   # before this step zero_grad() runs but no backward: no gradient at all


def _sgd_problem(seed):
    """A seeded little regression in float64: parameters w (3, 2) and b (2,), and
    ``unused``, which takes no part in the loss (its .grad stays None). Returns
    (named parameters, loss function of the step)."""
    rng = np.random.default_rng(seed)
    x = tensor(rng.normal(size=(5, 3)).round(2), dtype=float64)
    y = tensor(rng.normal(size=(5, 2)).round(2), dtype=float64)
    params = {name: tensor(rng.normal(size=shape).round(2), dtype=float64, requires_grad=True)
              for name, shape in (("w", (3, 2)), ("b", (2,)), ("unused", (2,)))}

    def loss_fn(step=None):   # the same loss at every step
        w, b = params["w"], params["b"]
        return ((x @ w + b - y) ** 2).mean() + 0.1 * (w ** 4).sum()
    return params, loss_fn


def _own_buffer(optimizer, param):
    """minigrad's momentum buffer of ``param`` (an array), or None before the first one."""
    state = optimizer.state.get(param, {})
    if "momentum_buffer" not in state:
        return None
    return state["momentum_buffer"].detach().numpy().copy()


def _same(got, want, got_before, want_before, lr):
    """SGD's update is exact in float64: the parameters agree to rounding."""
    return np.allclose(got, want, rtol=1e-10, atol=1e-12)


def _sgd_hint(before, grad, after, buffer_before, settings, step):
    """Why a parameter moved wrong at this step: a hint that names the idea, not the code."""
    lr, momentum = settings.get("lr"), settings.get("momentum", 0)
    weight_decay = settings.get("weight_decay", 0)
    moved = after - before
    if np.array_equal(after, before):
        return (" It did not move at all. Hint: `p = p - lr * g` only gives the name p a new "
                "tensor; change the parameter itself, in place.")
    decayed = grad + weight_decay * before
    if weight_decay and (np.allclose(moved, -lr * grad) or (
            momentum and step == 1 and np.allclose(moved, -lr * grad))):
        return " Hint: weight_decay adds weight_decay * p to the gradient before anything else."
    if np.allclose(moved, lr * decayed):
        return " It moved uphill. Hint: a step goes against the gradient."
    if momentum:
        if step == 1 and np.allclose(moved, 0 * moved):
            return (" Hint: on the first step the buffer is the gradient itself, and the "
                    "parameter moves by lr times it.")
        if step > 1 and np.allclose(moved, -lr * decayed):
            return (" It moved as plain SGD would, by lr times this step's gradient: the "
                    "momentum of the earlier steps was lost. Hint: the buffer must live from "
                    "one step to the next, in self.state[p]['momentum_buffer'].")
        if buffer_before is not None and np.allclose(
                moved, -lr * (momentum * buffer_before + (1 - momentum) * decayed)):
            return (" Hint: the buffer is momentum * buffer + gradient: the whole gradient "
                    "is added (PyTorch's dampening is 0).")
        if step == 1 and np.allclose(moved, -lr * (1 + momentum) * decayed):
            return " Hint: the first step's buffer is the gradient itself, counted once."
    return ""


def _compare_buffers(run):
    """Each momentum buffer must sit in optimizer.state[p]['momentum_buffer'], as PyTorch's
    (``run``: an ``optimizer_checks.StepRun``)."""
    label, step, params = run.label, run.step, run.params
    state = getattr(run.optimizer, "state", None)
    for name in params:
        buffer = _own_buffer(run.own, run.own_params[name])
        if buffer is None:
            continue
        entry = state.get(params[name], {}) if hasattr(state, "get") else {}
        got = entry.get("momentum_buffer") if hasattr(entry, "get") else None
        if got is None:
            raise Mismatch(f"{label}, after step {step}: optimizer.state[{name}] has no "
                           "'momentum_buffer'. Hint: keep each parameter's buffer in the state "
                           "dict the Optimizer base class made, self.state[p], under that key "
                           "(optimizer.state_dict() saves it from there).")
        if got is params[name].grad:
            raise Mismatch(f"{label}, after step {step}: the momentum buffer of {name} is its "
                           ".grad tensor itself, which backward() adds into and zero_grad("
                           "set_to_none=False) zeroes. Hint: make the first buffer a tensor of "
                           "its own, a copy of the gradient.")
        if isinstance(got, Tensor) and (got.requires_grad or got.grad_fn is not None):
            raise Mismatch(f"{label}, after step {step}: the momentum buffer of {name} "
                           "requires grad: it was computed while autograd recorded, so it "
                           "holds on to a graph that grows with every step. Hint: the whole "
                           "step, buffer included, runs with autograd off (@mg.no_grad()).")
        got = got.detach().numpy() if isinstance(got, Tensor) else np.asarray(got)
        if not np.allclose(got, buffer, rtol=1e-10, atol=1e-12):
            decay = run.settings_of(name).get("weight_decay", 0)
            hint = ""
            if decay and np.allclose(got, buffer - decay * run.before[name], rtol=1e-10,
                                     atol=1e-12):
                hint = (" It lacks exactly the weight decay. Hint: the decay goes into the "
                        "gradient before the buffer: the buffer adds up the decayed gradients "
                        "(gradient plus weight_decay times the parameter), not the plain ones.")
            raise Mismatch(f"{label}, after step {step}: the momentum buffer of {name} is "
                           f"{show(got)}; expected {show(buffer)}.{hint}")




def _refuse_pytorchs(sgd_class):
    refuse_pytorchs(SGD_BUILD, sgd_class)


SGD_BUILD = OptimizerBuild(
    name="SGD", own=_OWN_SGD,
    own_names=((_sgd_module, [("SGD", "optim.SGD")]), (optim, [("SGD", "optim.SGD")])),
    defaults=TORCH_SGD_DEFAULTS,
    signature="SGD(params, lr=0.001, momentum=0, weight_decay=0)",
    problem=_sgd_problem, cases=tuple(_SGD_CASES), second_group=dict(lr=0.02, momentum=0.5),
    steps=_SGD_STEPS, skipped_step=_SKIPPED_STEP,
    skipped_what=(" (zero_grad() ran, then step() without a backward: no parameter has a "
                  "gradient)"),
    same=_same, own_state=_own_buffer, explain=_sgd_hint, compare_state=_compare_buffers,
    untouched_grad="weight decay and momentum",
    no_grad_hint=(" Its .grad is None: it took no part, so step() must leave it alone (not "
                  "even weight decay or momentum moves it)."),
    state_keys={"momentum_buffer": "the momentum buffer"},
    float32_settings=dict(lr=0.05, momentum=0.9, weight_decay=0.01),
    float32_tolerance=(1e-5, 1e-6),
    regression=dict(lr=0.01, epochs=10), regression_rtol=1e-5,
    write_yourself=("Write the update in step() yourself, on minigrad's tensors, as the "
                    "build cell describes it."),
    passed=("{runs} runs of {steps} steps (momentum, weight decay, two parameter groups, a "
            "parameter without gradient), float32 parameters, PyTorch's defaults, zero_grad, "
            "and the chapter's regression"))


@keeps_random_state
def _sgd_battery(sgd_class, seeds=(0, 1, 2)):
    """Refuse PyTorch's optimizers, then every case on several seeded problems, step by step
    against minigrad's SGD; float32 parameters of a model; PyTorch's defaults; zero_grad;
    the chapter's regression through ``teach.training_run`` with the class plugged in
    (``optimizer_checks.optimizer_battery``). While the learner's code runs, minigrad's own
    SGD is out of its reach."""
    return optimizer_battery(SGD_BUILD, sgd_class, seeds, plug=_plug_sgd,
                             refuse=_refuse_pytorchs)


register(Piece(name="sgd", chapter="08", defines="SGD",
               summary="the optimizer: SGD.step with momentum, zero_grad",
               plug=_plug_sgd, battery=_sgd_battery, own={"optim.SGD": _OWN_SGD}))
