"""Chapter 8's second build exercise (``notebooks/08c_adam.ipynb``): ``Adam``, a subclass of
``optim.Optimizer`` with bias correction, ε and weight decay (PyTorch's coupled L2), registered
with ``teach.build`` as the piece ``adam``. A class that is, subclasses or calls minigrad's own
Adam, or one of PyTorch's optimizers, is refused.

``teach.use(adam=...)`` makes ``minigrad.optim.Adam`` the learner's class inside the block. The
check (``optimizer_checks``, shared with chapter 8's SGD) runs the learner's optimizer and
minigrad's own ``optim.Adam`` (PyTorch's update, which
minigrad's tests compare with ``torch.optim.Adam``) side by side, step by step: parameters,
the state PyTorch keeps (``exp_avg``, ``exp_avg_sq``, ``step``), two parameter groups, a
parameter that joins late and one that never gets a gradient, float32, PyTorch's defaults.
At the first difference it names the mistake whose update the learner's step matches (no bias
correction, ε inside the square root, a step counter shared by all parameters, ...), without
giving the code.
"""

import math
from unittest import mock

import numpy as np

from ... import optim
from ...creation import tensor
from ...dtypes import float64
from ...optim import adam as adam_module
from ..build import Mismatch, Piece, register, show
from ..checks import keeps_random_state
from . import ch08_build  # noqa: F401  (registers "sgd" first: the pieces in the parts' order)
from .optimizer_checks import (
    OptimizerBuild, numbers, optimizer_battery, refuse_pytorchs)

__all__ = ["TORCH_ADAM_DEFAULTS", "first_step_without_correction"]

_OWN_ADAM = adam_module.Adam    # minigrad's own, whatever optim.Adam is while a check runs
_OWN_ADAMW = adam_module.AdamW

# PyTorch's defaults (torch.optim.Adam): Adam(params) alone is
# Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0).
TORCH_ADAM_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0}

_KEYS = ("exp_avg", "exp_avg_sq", "step")
_OWN_NAMES = [("Adam", "optim.Adam"), ("AdamW", "optim.AdamW")]
_RTOL, _ATOL = 1e-4, 1e-7   # room for a bias correction computed in float32 (0.999 in float32)


def first_step_without_correction(beta1=0.9, beta2=0.999):
    """How many times lr the first step of Adam without bias correction is, for a gradient
    much larger than ε: m = (1 - β1) g and v = (1 - β2) g², so the step is
    lr (1 - β1) / sqrt(1 - β2) (about 3.16 lr with PyTorch's betas)."""
    return (1 - beta1) / math.sqrt(1 - beta2)


def _plug_adam(adam_class):
    """``minigrad.optim.Adam`` is the learner's class inside the block."""
    return mock.patch.object(optim, "Adam", adam_class)


# (what the check says, the settings, zero_grad's set_to_none, two parameter groups?)
_CASES = [
    ("Adam(params, lr=0.2)", dict(lr=0.2), True, False),
    ("Adam(params, lr=0.05, betas=(0.8, 0.99))", dict(lr=0.05, betas=(0.8, 0.99)), True, False),
    ("Adam(params, lr=0.1, eps=0.1)", dict(lr=0.1, eps=0.1), True, False),
    ("Adam(params, lr=0.05, weight_decay=0.1)", dict(lr=0.05, weight_decay=0.1), True, False),
    ("Adam(params, lr=0.1) with zero_grad(set_to_none=False)", dict(lr=0.1), False, False),
    ("Adam([{'params': [w]}, {'params': [b, late, unused], 'lr': 0.02, 'betas': (0.5, 0.9)}], "
     "lr=0.1)", dict(lr=0.1), True, True),
]
_STEPS = 6
_SKIPPED_STEP = 4   # before this step zero_grad() runs but no backward
_LATE_FROM = 3      # the parameter ``late`` takes part in the loss from this step on
_SECOND_GROUP = dict(lr=0.02, betas=(0.5, 0.9))


def _problem(seed):
    """A seeded little regression in float64: w (3, 2) and b (2,); ``late`` (2,), which joins
    the loss at step 3 (no gradient before); ``unused`` (2,), never in the loss."""
    rng = np.random.default_rng(seed)
    x = tensor(rng.normal(size=(5, 3)).round(2), dtype=float64)
    y = tensor(rng.normal(size=(5, 2)).round(2), dtype=float64)
    params = {name: tensor(rng.normal(size=shape).round(2), dtype=float64, requires_grad=True)
              for name, shape in (("w", (3, 2)), ("b", (2,)), ("late", (2,)), ("unused", (2,)))}

    def loss_fn(step):
        w, b = params["w"], params["b"]
        loss = ((x @ w + b - y) ** 2).mean() + 0.1 * (w ** 4).sum()
        if step >= _LATE_FROM:
            loss = loss + ((params["late"] - 1) ** 2).sum() * step
        return loss
    return params, loss_fn


def _own_state(own, param):
    state = own.state.get(param, {})
    if not state:
        return np.zeros(param.shape), np.zeros(param.shape), 0
    return numbers(state["exp_avg"]), numbers(state["exp_avg_sq"]), int(state["step"].item())


# ---------------------------------------------------------------- the mistakes, by their update

def _update(p, g, m0, v0, t0, s, *, t=None, beta1=None, beta2=None, avg1=True, avg2=True,
            correct1=True, correct2=True, eps_inside=False, eps_before_correction=False,
            sqrt=True, lr_times=1, sign=-1, decay="coupled", fresh=False):
    """Adam's update of one parameter from the state before the step, with one idea changed
    (each keyword is a typical mistake); ``s`` holds lr, betas, eps and weight_decay."""
    b1, b2 = s["betas"]
    b1, b2 = (b1 if beta1 is None else beta1), (b2 if beta2 is None else beta2)
    lr, eps, wd = s["lr"], s["eps"], s["weight_decay"]
    if fresh:
        m0, v0 = np.zeros_like(p), np.zeros_like(p)
    t = t0 + 1 if t is None else t
    if wd and decay == "coupled":
        g = g + wd * p
    m = b1 * m0 + ((1 - b1) * g if avg1 else g)
    v = b2 * v0 + ((1 - b2) * g * g if avg2 else g * g)
    m_hat = m / (1 - b1 ** t) if correct1 else m
    bc2 = (1 - b2 ** t) if correct2 else 1.0
    if eps_inside:
        denom = np.sqrt(v / bc2 + eps)
    elif eps_before_correction:
        denom = (np.sqrt(v) + eps) / math.sqrt(bc2)
    else:
        denom = (np.sqrt(v / bc2) if sqrt else v / bc2) + eps
    start = p * (1 - lr * wd) if (wd and decay == "decoupled") else p
    return start + sign * lr ** lr_times * m_hat / denom


_NO_CORRECTION = (" Hint: m and v start at zero, so in the first steps they are too small "
                  "(m by the factor 1 - β1^t, v by 1 - β2^t): without dividing by those "
                  "factors the first step is about 3.16 lr instead of lr. Correct both with "
                  "t, this parameter's own step count.")

_AVERAGE_M = (" Hint: m is a running AVERAGE of the gradients: β1·m + (1 − β1)·g, not "
              "β1·m + g.")
_AVERAGE_V = (" Hint: v is a running AVERAGE of the squared gradients: β2·v + (1 − β2)·g², "
              "not β2·v + g².")
_COUPLED_DECAY = (" Hint: weight_decay adds weight_decay · p to the gradient before m and v "
                  "are updated (Adam's L2, coupled to the gradient).")
_BETAS = (" Hint: betas = (β1, β2): β1 (0.9 by default) averages the gradients, β2 (0.999) "
          "their squares.")

# (the mistake's update, what the check says about it); tried in this order
_MISTAKES = [
    (dict(correct1=False, correct2=False), " Your step has no bias correction." + _NO_CORRECTION),
    (dict(correct1=True, correct2=False), " Your step corrects m but not v." + _NO_CORRECTION),
    (dict(correct1=False, correct2=True), " Your step corrects v but not m." + _NO_CORRECTION),
    (dict(eps_inside=True), " ε sits inside your square root. Hint: PyTorch (and the paper) "
                            "add ε after the square root: the denominator is sqrt(v̂) + ε."),
    (dict(eps_before_correction=True), " ε is added before v's bias correction. Hint: ε is "
                                       "added to sqrt(v̂), the corrected average."),
    (dict(lr_times=2), " It moved lr times too little: lr is applied twice. Hint: the step "
                       "is lr times m̂ / (sqrt(v̂) + ε), with lr once."),
    (dict(sign=+1), " It moved uphill. Hint: a step goes against the gradient."),
    (dict(sqrt=False), " Hint: the denominator is the square ROOT of v̂ (v̂ has the units of "
                       "g², sqrt(v̂) those of g), plus ε."),
    (dict(avg1=False), _AVERAGE_M),
    (dict(avg2=False), _AVERAGE_V),
    (dict(decay="none"), _COUPLED_DECAY),
    (dict(decay="decoupled"), " Your step shrinks the weights directly, p·(1 − lr·weight_decay): "
                              "that is AdamW's decoupled decay. Hint: Adam's weight_decay is "
                              "L2, added to the gradient: g + weight_decay · p."),
]


def _swapped(s):
    return dict(beta1=s["betas"][1], beta2=s["betas"][0])


def _explain(p, g, got, state, s, calls):
    """The hint of the first typical mistake whose update gives ``got``, or ``""``;
    ``state`` is minigrad's (m, v, step count) before the step."""
    m0, v0, t0 = state

    def same(candidate):
        return np.allclose(got, candidate, rtol=_RTOL, atol=_ATOL)
    if np.array_equal(got, p):
        return (" It did not move at all. Hint: `p = p - ...` only gives the name p a new "
                "tensor; change the parameter itself, in place.")
    for mistake, hint in _MISTAKES:
        if same(_update(p, g, m0, v0, t0, s, **mistake)):
            return hint
    if same(_update(p, g, m0, v0, t0, s, **_swapped(s))):
        return _BETAS
    if t0 and (same(_update(p, g, m0, v0, t0, s, fresh=True))
               or same(_update(p, g, m0, v0, 0, s, fresh=True))):
        return (" It moved as a first step would: m and v were lost. Hint: m and v must "
                "live from one step to the next, in self.state[p] ('exp_avg', 'exp_avg_sq').")
    if calls != t0 + 1 and same(_update(p, g, m0, v0, t0, s, t=calls)):
        return (f" Its bias correction used t = {calls}, the number of step() calls, where "
                f"this parameter has had {t0 + 1} step{'s' if t0 else ''} with a gradient. "
                "Hint: keep the step count per parameter, in self.state[p]['step']: a step in "
                "which a parameter has no gradient (.grad None) does not count for it.")
    return ""


# ---------------------------------------------------------------- comparing state

def _moments(p, g, m0, v0, s, decay=True, swap=False, avg1=True, avg2=True):
    """m and v after one step from (m0, v0), with one idea changed."""
    b1, b2 = s["betas"][::-1] if swap else s["betas"]
    if decay and s["weight_decay"]:
        g = g + s["weight_decay"] * p
    return (b1 * m0 + ((1 - b1) * g if avg1 else g),
            b2 * v0 + ((1 - b2) * g * g if avg2 else g * g))


_STATE_MISTAKES = [
    (dict(decay=False), _COUPLED_DECAY),
    (dict(swap=True), _BETAS),
    (dict(avg1=False), _AVERAGE_M),
    (dict(avg2=False), _AVERAGE_V),
]


def _state_hint(key, mine, p, g, m0, v0, t0, s):
    """Why m or v (``key``) came out as ``mine``: the hint of the first typical mistake."""
    index = 0 if key == "exp_avg" else 1
    if g is None:
        return ""
    if np.array_equal(mine, (m0, v0)[index]):
        return (" It did not change in this step: `m = β1·m + ...` only gives the name m a new "
                "tensor. Hint: update exp_avg / exp_avg_sq in self.state[p] (in place, or "
                "store them back).")
    found = [hint for mistake, hint in _STATE_MISTAKES
             if np.allclose(mine, _moments(p, g, m0, v0, s, **mistake)[index], rtol=_RTOL,
                            atol=_ATOL)]
    b = s["betas"][index]
    if np.allclose(mine, _moments(p, g, m0, v0, s)[index] / (1 - b ** (t0 + 1)), rtol=_RTOL,
                   atol=_ATOL):
        found.append(" Hint: keep m and v themselves in the state; the bias-corrected m̂ and "
                     "v̂ are computed from them at each step, not stored.")
    if len(found) > 1:   # on a first step two mistakes can give the same numbers
        return " Two mistakes give these numbers." + " Or:".join(found)
    return "".join(found)


def _compare_state(run):
    """exp_avg, exp_avg_sq and step in optimizer.state[p], as PyTorch keeps them (``run``:
    an ``optimizer_checks.StepRun``); a differing m or v is explained by its mistake."""
    optimizer, own, params, own_params = run.optimizer, run.own, run.params, run.own_params
    label, step = run.label, run.step

    def explain(name, key, mine):
        return _state_hint(key, mine, run.before[name], run.grads[name],
                           *run.own_states[name], run.settings_of(name))
    state = getattr(optimizer, "state", None)
    for name, p in params.items():
        want = own.state.get(own_params[name], {})
        entry = state.get(p, {}) if hasattr(state, "get") else {}
        if not want:
            if entry:
                raise Mismatch(f"{label}, after step {step}: optimizer.state[{name}] holds "
                               f"{sorted(entry)}, but {name} has had no gradient yet. Hint: a "
                               "parameter whose .grad is None is skipped entirely: no state, "
                               "its step count does not grow (PyTorch makes none either).")
            continue
        for key in _KEYS:
            got = entry.get(key) if hasattr(entry, "get") else None
            if got is None:
                raise Mismatch(f"{label}, after step {step}: optimizer.state[{name}] has no "
                               f"{key!r}. Hint: keep each parameter's running averages and "
                               "step count in the state dict the Optimizer base class made, "
                               "self.state[p], under PyTorch's names 'exp_avg' (m), "
                               "'exp_avg_sq' (v) and 'step' (optimizer.state_dict() saves "
                               "them from there).")
            if key != "step" and got is p.grad:
                raise Mismatch(f"{label}, after step {step}: {key} of {name} is its .grad "
                               "tensor itself, which backward() adds into. Hint: m and v are "
                               "tensors of their own, made with zeros_like(p).")
            if getattr(got, "requires_grad", False) or getattr(got, "grad_fn", None):
                raise Mismatch(f"{label}, after step {step}: {key} of {name} requires grad: it "
                               "was computed while autograd recorded, so it holds on to a graph "
                               "that grows with every step. Hint: the whole step runs with "
                               "autograd off (@mg.no_grad()).")
            mine, theirs = numbers(got), numbers(want[key])
            scale = float(np.max(np.abs(theirs))) if np.size(theirs) else 0.0
            if np.shape(mine) != np.shape(theirs) or not np.allclose(
                    mine, theirs, rtol=_RTOL, atol=_RTOL * scale + _ATOL):
                what = {"exp_avg": "m (exp_avg)", "exp_avg_sq": "v (exp_avg_sq)",
                        "step": "the step count"}[key]
                hint = explain(name, key, mine) if key != "step" else ""
                raise Mismatch(f"{label}, after step {step}: {what} of {name} is {show(mine)}; "
                               f"expected {show(theirs)}.{hint}")


def _same(got, want, got_before, want_before, lr):
    """Did the parameter move as minigrad's did in this step (``_same_move``)?"""
    return _same_move(got - got_before, want - want_before, lr)


def _same_move(moved, own_moved, lr):
    """Did the parameter move as minigrad's did in this step? The moves are compared, to
    1e-4 of their size and of lr (Adam's scale of a step), so a bias correction rounded to
    float32 (which lets the two runs drift apart a little) passes, and a wrong idea does
    not."""
    return np.allclose(moved, own_moved, rtol=_RTOL, atol=_RTOL * lr)


# ---------------------------------------------------------------- refusing PyTorch's optimizers

def _refuse_pytorchs(adam_class):
    """Raise ``Mismatch`` when the learner's Adam is, subclasses or calls one of PyTorch's
    optimizers (``optimizer_checks.refuse_pytorchs``)."""
    refuse_pytorchs(ADAM_BUILD, adam_class)


ADAM_BUILD = OptimizerBuild(
    name="Adam", own=_OWN_ADAM,
    own_names=((adam_module, _OWN_NAMES), (optim, _OWN_NAMES)),
    defaults=TORCH_ADAM_DEFAULTS,
    signature="Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0)",
    problem=_problem, cases=tuple(_CASES), second_group=_SECOND_GROUP,
    steps=_STEPS, skipped_step=_SKIPPED_STEP,
    skipped_what=" (zero_grad() ran, then step() without a backward)",
    same=_same, own_state=_own_state, explain=_explain, compare_state=_compare_state,
    untouched_grad="weight decay",
    no_grad_hint=(" Its .grad is None ({name} took no part in the loss yet), so step() must "
                  "leave it alone: no move, no state, no step counted."),
    state_keys={"exp_avg": "exp_avg", "exp_avg_sq": "exp_avg_sq"},
    float32_settings=dict(lr=0.05, weight_decay=0.01),
    float32_tolerance=(_RTOL, 1e-5),
    regression=dict(lr=0.1, epochs=20, optimizer="Adam"), regression_rtol=_RTOL,
    write_yourself="Write section 1's four lines yourself.",
    passed=("{runs} runs of {steps} steps (betas, ε, weight decay, two parameter groups, a "
            "parameter that joins late and one without gradient), m, v and the step count in "
            "optimizer.state, float32 parameters, PyTorch's defaults, and the chapter's "
            "regression"))


@keeps_random_state
def _adam_battery(adam_class, seeds=(0, 1, 2)):
    """Refuse PyTorch's optimizers inside the learner's class (before the runs, and after
    them too: code that imports torch itself has then imported it), then every case on
    several seeded problems, step by step against minigrad's Adam; float32 parameters of a
    model; PyTorch's defaults; zero_grad; the chapter's regression through
    ``teach.training_run`` with the class plugged in as ``optim.Adam``
    (``optimizer_checks.optimizer_battery``). While the learner's code runs, minigrad's own
    Adam and AdamW are out of its reach."""
    return optimizer_battery(ADAM_BUILD, adam_class, seeds, plug=_plug_adam,
                             refuse=_refuse_pytorchs)


register(Piece(name="adam", chapter="08", defines="Adam",
               summary="Adam exactly: bias correction, ε, weight decay",
               plug=_plug_adam, battery=_adam_battery,
               own={"optim.Adam": _OWN_ADAM, "optim.AdamW": _OWN_ADAMW}))
