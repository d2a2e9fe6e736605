"""Chapter 8's second build exercise (``notebooks/08c_adam.ipynb``): ``Adam``, a subclass of
``optim.Optimizer`` with bias correction, ε and weight decay (PyTorch's coupled L2), registered
with ``teach.build`` as the piece ``adam``. A class that is, subclasses or calls minigrad's own
Adam, or one of PyTorch's optimizers, is refused.

``teach.use(adam=...)`` makes ``minigrad.optim.Adam`` the learner's class inside the block. The
check runs the learner's optimizer and minigrad's own ``optim.Adam`` (PyTorch's update, which
minigrad's tests compare with ``torch.optim.Adam``) side by side, step by step: parameters,
the state PyTorch keeps (``exp_avg``, ``exp_avg_sq``, ``step``), two parameter groups, a
parameter that joins late and one that never gets a gradient, float32, PyTorch's defaults.
At the first difference it names the mistake whose update the learner's step matches (no bias
correction, ε inside the square root, a step counter shared by all parameters, ...), without
giving the code.
"""

import dis
import inspect
import math
import re
import sys
from unittest import mock

import numpy as np

from ... import nn, optim
from ...creation import tensor
from ...dtypes import float32, float64
from ...graph import no_grad
from ...optim import adam as adam_module
from ..build import (
    Mismatch, Piece, borrowed, own_out_of_reach, register, same_dtype, show)
from ..checks import keeps_random_state
from ..stepping import training_run
from .ch08_build import run_learner

__all__ = ["TORCH_ADAM_DEFAULTS", "first_step_without_correction"]

_OWN_ADAM = adam_module.Adam    # minigrad's own, whatever optim.Adam is while a check runs
_OWN_ADAMW = adam_module.AdamW

# PyTorch's defaults (torch.optim.Adam): Adam(params) alone is
# Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0).
TORCH_ADAM_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0}

_KEYS = ("exp_avg", "exp_avg_sq", "step")
_RTOL, _ATOL = 1e-4, 1e-7   # room for a bias correction computed in float32 (0.999 in float32)


def first_step_without_correction(beta1=0.9, beta2=0.999):
    """How many times lr the first step of Adam without bias correction is, for a gradient
    much larger than ε: m = (1 - β1) g and v = (1 - β2) g², so the step is
    lr (1 - β1) / sqrt(1 - β2) (about 3.16 lr with PyTorch's betas)."""
    return (1 - beta1) / math.sqrt(1 - beta2)


def _plug_adam(adam_class):
    """``minigrad.optim.Adam`` is the learner's class inside the block."""
    return mock.patch.object(optim, "Adam", adam_class)


def _recorded_hint(error):
    if isinstance(error, RuntimeError) and ("in-place" in str(error) or "leaf" in str(error)):
        return (" Hint: autograd records what happens to a tensor that requires grad; the "
                "update must not be recorded.")
    return ""


def _settings_hint(error):
    if isinstance(error, TypeError) and "Optimizer.__init__()" in str(error):
        return (" Hint: the base class, Optimizer, takes the params and ONE dict of defaults "
                "(every setting gathered into a single dict), not the settings one by one.")
    if isinstance(error, TypeError):
        return (" Hint: take the settings as PyTorch does: Adam(params, lr=0.001, "
                "betas=(0.9, 0.999), eps=1e-08, weight_decay=0).")
    return ""


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


def _groups(params, two_groups):
    if two_groups:
        return [{"params": [params["w"]]},
                dict(_SECOND_GROUP, params=[params["b"], params["late"], params["unused"]])]
    return list(params.values())


def _settings_of(settings, two_groups, name):
    full = dict(TORCH_ADAM_DEFAULTS, **settings)
    if two_groups and name != "w":
        full.update(_SECOND_GROUP)
    return full


def _numbers(value):
    if value is None:
        return None
    if hasattr(value, "detach"):
        return value.detach().numpy().astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def _own_state(own, param):
    state = own.state.get(param, {})
    if not state:
        return np.zeros(param.shape), np.zeros(param.shape), 0
    return _numbers(state["exp_avg"]), _numbers(state["exp_avg_sq"]), int(state["step"].item())


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
    (dict(avg1=False), " Hint: m is a running AVERAGE of the gradients: β1·m + (1 − β1)·g, "
                       "not β1·m + g."),
    (dict(avg2=False), " Hint: v is a running AVERAGE of the squared gradients: "
                       "β2·v + (1 − β2)·g², not β2·v + g²."),
    (dict(decay="none"), " Hint: weight_decay adds weight_decay · p to the gradient before m "
                         "and v are updated (Adam's L2, coupled to the gradient)."),
    (dict(decay="decoupled"), " Your step shrinks the weights directly, p·(1 − lr·weight_decay): "
                              "that is AdamW's decoupled decay. Hint: Adam's weight_decay is "
                              "L2, added to the gradient: g + weight_decay · p."),
]


def _swapped(s):
    return dict(beta1=s["betas"][1], beta2=s["betas"][0])


def _explain(p, g, got, m0, v0, t0, s, calls):
    """The hint of the first typical mistake whose update gives ``got``, or ``""``."""
    def same(candidate):
        return np.allclose(got, candidate, rtol=_RTOL, atol=_ATOL)
    if np.array_equal(got, p):
        return (" It did not move at all. Hint: `p = p - ...` only gives the name p a new "
                "tensor; change the parameter itself, in place.")
    for mistake, hint in _MISTAKES:
        if same(_update(p, g, m0, v0, t0, s, **mistake)):
            return hint
    if same(_update(p, g, m0, v0, t0, s, **_swapped(s))):
        return (" Hint: betas = (β1, β2): β1 (0.9 by default) averages the gradients, β2 "
                "(0.999) their squares.")
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
    (dict(decay=False), " Hint: weight_decay adds weight_decay · p to the gradient before m "
                        "and v are updated (Adam's L2, coupled to the gradient)."),
    (dict(swap=True), " Hint: betas = (β1, β2): β1 (0.9 by default) averages the gradients, "
                      "β2 (0.999) their squares."),
    (dict(avg1=False), " Hint: m is a running AVERAGE of the gradients: β1·m + (1 − β1)·g, "
                       "not β1·m + g."),
    (dict(avg2=False), " Hint: v is a running AVERAGE of the squared gradients: "
                       "β2·v + (1 − β2)·g², not β2·v + g²."),
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


def _compare_state(optimizer, own, params, own_params, label, step, explain):
    """exp_avg, exp_avg_sq and step in optimizer.state[p], as PyTorch keeps them;
    ``explain(name, key, mine)`` says why a differing m or v differs."""
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
            mine, theirs = _numbers(got), _numbers(want[key])
            scale = float(np.max(np.abs(theirs))) if np.size(theirs) else 0.0
            if np.shape(mine) != np.shape(theirs) or not np.allclose(
                    mine, theirs, rtol=_RTOL, atol=_RTOL * scale + _ATOL):
                what = {"exp_avg": "m (exp_avg)", "exp_avg_sq": "v (exp_avg_sq)",
                        "step": "the step count"}[key]
                hint = explain(name, key, mine) if key != "step" else ""
                raise Mismatch(f"{label}, after step {step}: {what} of {name} is {show(mine)}; "
                               f"expected {show(theirs)}.{hint}")


def _same_move(moved, own_moved, lr):
    """Did the parameter move as minigrad's did in this step? The moves are compared, to
    1e-4 of their size and of lr (Adam's scale of a step), so a bias correction rounded to
    float32 (which lets the two runs drift apart a little) passes, and a wrong idea does
    not."""
    return np.allclose(moved, own_moved, rtol=_RTOL, atol=_RTOL * lr)


def _beyond_shown(got, want):
    """' (equal to 4 decimals; they differ by up to 3e-07)' when ``show`` hides the gap."""
    if show(got) != show(want):
        return ""
    gap = float(np.max(np.abs(np.asarray(got, dtype=float) - np.asarray(want, dtype=float))))
    return f" (equal to 4 decimals; they differ by up to {gap:.1g})"


def _trajectory(adam_class, case, seed):
    """The learner's class and minigrad's own side by side on one seeded problem; raise
    Mismatch at the first step where a parameter or the state differs."""
    label, settings, set_to_none, two_groups = case
    own_params, own_loss = _problem(seed)
    params, loss_fn = _problem(seed)
    own = _OWN_ADAM(_groups(own_params, two_groups), **settings)
    optimizer = run_learner(label, lambda: adam_class(_groups(params, two_groups), **settings),
                            _settings_hint)
    if not isinstance(getattr(optimizer, "param_groups", None), list):
        raise Mismatch(f"{label} has no list param_groups. Hint: subclass mg.optim.Optimizer "
                       "and hand it params and the defaults.")
    for step in range(1, _STEPS + 1):
        own.zero_grad(set_to_none=set_to_none)
        run_learner(f"{label}, step {step}: zero_grad(set_to_none={set_to_none})",
                    lambda: optimizer.zero_grad(set_to_none=set_to_none))
        if step != _SKIPPED_STEP:
            own_loss(step).backward()
            loss_fn(step).backward()
        before = {name: p.detach().numpy().copy() for name, p in params.items()}
        own_before = {name: p.detach().numpy().copy() for name, p in own_params.items()}
        grads = {name: _numbers(p.grad) for name, p in params.items()}
        states = {name: _own_state(own, own_params[name]) for name in params}
        own.step()
        run_learner(f"{label}, step {step}: step()", optimizer.step, _recorded_hint)
        for name, p in params.items():
            if not p.is_leaf or p.grad_fn is not None:
                raise Mismatch(f"{label}, step {step}: parameter {name} is no longer a leaf: "
                               "the update was recorded. Hint: step() must run with autograd "
                               "off.")
            if grads[name] is not None and not np.array_equal(_numbers(p.grad), grads[name]):
                raise Mismatch(f"{label}, step {step}: step() changed {name}.grad. Hint: step() "
                               "reads the gradient and leaves it alone; compute weight decay in "
                               "a new tensor (backward() keeps adding into .grad).")
        what = (" (zero_grad() ran, then step() without a backward)"
                if step == _SKIPPED_STEP else "")
        for name, p in params.items():
            want, got = own_params[name].detach().numpy(), p.detach().numpy()
            lr = _settings_of(settings, two_groups, name)["lr"]
            if _same_move(got - before[name], want - own_before[name], lr):
                continue
            if grads[name] is None:
                hint = (f" Its .grad is None ({name} took no part in the loss yet), so step() "
                        "must leave it alone: no move, no state, no step counted.")
            elif two_groups and name != "w" and np.array_equal(got, before[name]):
                hint = (f" Parameter {name}, of the second group (param_groups[1]), did not "
                        "move at all, while w, of the first, did. Hint: step() must go "
                        "through every group in self.param_groups, not only the first.")
            else:
                hint = _explain(before[name], grads[name], got, *states[name],
                                _settings_of(settings, two_groups, name), step)
                if not hint and two_groups and name != "w":
                    hint = (" Hint: this parameter's group has settings of its own (lr 0.02, "
                            "betas (0.5, 0.9)): go through every group and read each setting "
                            "from the group.")
            raise Mismatch(f"{label}, step {step}{what}: parameter {name} is {show(got)}; "
                           f"expected {show(want)}{_beyond_shown(got, want)}.{hint}")

        def explain(name, key, mine):
            return _state_hint(key, mine, before[name], grads[name], *states[name],
                               _settings_of(settings, two_groups, name))
        _compare_state(optimizer, own, params, own_params, label, step, explain)


# ---------------------------------------------------------------- defaults, float32

def _check_signature(adam_class):
    try:
        signature = inspect.signature(adam_class)
    except (TypeError, ValueError):
        return
    for name, parameter in signature.parameters.items():
        if name not in TORCH_ADAM_DEFAULTS:
            continue
        torch_default = TORCH_ADAM_DEFAULTS[name]
        if parameter.default is inspect.Parameter.empty:
            raise Mismatch(f"Adam(params): {name} has no default in your __init__; PyTorch's "
                           f"Adam has {name}={torch_default!r}, so Adam(params) alone works. "
                           "Hint: give every setting PyTorch's default.")
        default = parameter.default
        if isinstance(default, list):
            default = tuple(default)
        if default != torch_default:
            raise Mismatch(f"Adam(params): your __init__ has {name}={parameter.default!r} as "
                           f"its default; PyTorch's Adam has {name}={torch_default!r}. Hint: "
                           "code written for PyTorch that leaves a setting out must get "
                           "PyTorch's.")


def _check_defaults(adam_class):
    """``Adam(params)`` alone steps as PyTorch's ``Adam(params)``."""
    params, loss_fn = _problem(0)
    own_params, own_loss = _problem(0)
    label = "Adam(params), without lr or other settings"
    optimizer = run_learner(label, lambda: adam_class(list(params.values())), _settings_hint)
    own = _OWN_ADAM(list(own_params.values()))
    for step in (1, 2):
        before = {name: p.detach().numpy().copy() for name, p in params.items()}
        own_before = {name: p.detach().numpy().copy() for name, p in own_params.items()}
        own.zero_grad()
        optimizer.zero_grad()
        own_loss(step).backward()
        loss_fn(step).backward()
        own.step()
        run_learner(f"{label}: step()", optimizer.step, _recorded_hint)
        for name, p in params.items():
            want, got = own_params[name].detach().numpy(), p.detach().numpy()
            if not _same_move(got - before[name], want - own_before[name],
                              TORCH_ADAM_DEFAULTS["lr"]):
                raise Mismatch(f"{label}, step {step}: parameter {name} is {show(got)}; "
                               f"expected {show(want)}, a step with PyTorch's defaults "
                               f"{TORCH_ADAM_DEFAULTS}.")


def _float32_layer(weight, bias):
    layer = nn.Linear(3, 2)
    with no_grad():
        layer.weight.copy_(tensor(weight, dtype=float32))
        layer.bias.copy_(tensor(bias, dtype=float32))
    return layer


def _check_float32(adam_class, steps=3):
    """A float32 nn.Linear(3, 2): the model keeps its Parameter objects, in float32, and m and
    v are float32 too."""
    rng = np.random.default_rng(8)
    weight, bias = rng.normal(size=(2, 3)), rng.normal(size=2)
    x = tensor(rng.normal(size=(4, 3)), dtype=float32)
    y = tensor(rng.normal(size=(4, 2)), dtype=float32)
    own_layer, layer = _float32_layer(weight, bias), _float32_layer(weight, bias)
    settings = dict(lr=0.05, weight_decay=0.01)
    label = "Adam(model.parameters(), lr=0.05, weight_decay=0.01) on a float32 nn.Linear(3, 2)"
    own = _OWN_ADAM(own_layer.parameters(), **settings)
    optimizer = run_learner(label, lambda: adam_class(layer.parameters(), **settings),
                            _settings_hint)
    originals = dict(layer.named_parameters())
    own_originals = dict(own_layer.named_parameters())
    for step in range(1, steps + 1):
        own.zero_grad()
        run_learner(f"{label}, step {step}: zero_grad()", optimizer.zero_grad)
        ((own_layer(x) - y) ** 2).mean().backward()
        ((layer(x) - y) ** 2).mean().backward()
        own.step()
        run_learner(f"{label}, step {step}: step()", optimizer.step, _recorded_hint)
        context = f"{label}, after step {step}"
        for name, p in layer.named_parameters():
            if p is not originals[name]:
                raise Mismatch(f"{context}: the model's {name} is another tensor than the "
                               "Parameter it had. Hint: change each parameter itself, in place.")
            want = own_originals[name]
            same_dtype(f"{context}: parameter {name}", p, want)
            if not np.allclose(p.detach().numpy(), want.detach().numpy(), rtol=_RTOL, atol=1e-5):
                raise Mismatch(f"{context}: parameter {name} is {show(p)}; expected "
                               f"{show(want)}.")
            entry = optimizer.state.get(p, {}) if hasattr(optimizer.state, "get") else {}
            for key in ("exp_avg", "exp_avg_sq"):
                mine = entry.get(key) if hasattr(entry, "get") else None
                if mine is not None:
                    same_dtype(f"{context}: {key} of {name}", mine, own.state[want][key])


# ---------------------------------------------------------------- refusing PyTorch's optimizers

def _pytorchs_optimizers():
    """PyTorch's optimizers, by the name a learner knows them, if PyTorch is imported: every
    ``torch.optim`` class (Adam, AdamW, SGD, ..., Optimizer) and the functional Adam and
    AdamW steps. Empty without PyTorch (the check never imports it)."""
    torch = sys.modules.get("torch")
    torch_optim = getattr(torch, "optim", None) if torch is not None else None
    if torch_optim is None:
        return {}
    own = {f"torch.optim.{name}": value for name, value in sorted(vars(torch_optim).items())
           if inspect.isclass(value) and issubclass(value, torch_optim.Optimizer)}
    for module_name in ("adam", "adamw"):   # torch.optim deletes these submodule names
        step = getattr(sys.modules.get(f"torch.optim.{module_name}"), module_name, None)
        if callable(step):
            own[f"torch.optim.{module_name}.{module_name}"] = step
    return own


def _refuse_pytorchs(adam_class):
    """Raise ``Mismatch`` when the learner's Adam is, subclasses or calls one of PyTorch's
    optimizers: the check compares it with minigrad's Adam, which matches PyTorch's step for
    step, so PyTorch's step inside it would be compared with itself."""
    own = _pytorchs_optimizers()
    if not own:
        return
    piece = Piece(name="adam (PyTorch's)", chapter="08", defines="Adam", summary="",
                  plug=None, battery=None, own=own)
    refused = borrowed(piece, adam_class)
    label = re.search(r"minigrad's own (torch\.[\w.]+)", refused)
    label = label[1] if label else _imported_and_named(adam_class, own)
    if refused or label:
        raise Mismatch(f"it uses PyTorch's own {label}: Adam is yours to write, on "
                       "minigrad's tensors. The check compares yours with minigrad's Adam, "
                       "which matches PyTorch's step for step, so PyTorch's step inside yours "
                       "would only be compared with itself. Write section 1's four lines "
                       "yourself.")


def _imported_and_named(adam_class, own):
    """The label of a PyTorch optimizer that the class's own methods import torch for and
    name (``import torch`` inside a method, then ``torch.optim.Adam``: a local name that
    ``borrowed`` does not follow), or ``""``."""
    names, imported = set(), set()

    def walk(code):
        names.update(code.co_names)
        imported.update(instruction.argval for instruction in dis.get_instructions(code)
                        if instruction.opname == "IMPORT_NAME")
        for const in code.co_consts:
            if inspect.iscode(const):
                walk(const)
    for value in vars(adam_class).values():
        function = inspect.unwrap(getattr(value, "__func__", value))
        if inspect.isfunction(function):
            walk(function.__code__)
    if not any(module.split(".")[0] == "torch" for module in imported):
        return ""
    return next((label for label in own if label.rsplit(".", 1)[-1] in names
                 and label != "torch.optim.Optimizer"), "")


@keeps_random_state
def _adam_battery(adam_class, seeds=(0, 1, 2)):
    """Refuse PyTorch's optimizers inside the learner's class (before the runs, and after
    them too: code that imports torch itself has then imported it), then ``_adam_runs``."""
    if not isinstance(adam_class, type):
        raise Mismatch(f"expected a class (class Adam(mg.optim.Optimizer): ...), got "
                       f"{type(adam_class).__name__}.")
    _refuse_pytorchs(adam_class)
    try:
        passed = _adam_runs(adam_class, seeds)
    except Mismatch:
        _refuse_pytorchs(adam_class)
        raise
    _refuse_pytorchs(adam_class)
    return passed


def _adam_runs(adam_class, seeds):
    """Every case on several seeded problems, step by step against minigrad's Adam; float32
    parameters of a model; PyTorch's defaults; then the chapter's regression through
    ``teach.training_run`` with the class plugged in as ``optim.Adam``. While the learner's
    code runs, minigrad's own Adam and AdamW are out of its reach."""
    want = training_run(lr=0.1, epochs=20, optimizer="Adam")
    refused = [("Adam", "optim.Adam"), ("AdamW", "optim.AdamW")]
    with own_out_of_reach({adam_module: refused, optim: refused}):
        _check_signature(adam_class)
        for case in _CASES:
            for seed in seeds:
                _trajectory(adam_class, case, seed)
        _check_float32(adam_class)
        _check_defaults(adam_class)
    with _plug_adam(adam_class):
        got = run_learner("the chapter's regression (teach.training_run) with your Adam",
                          lambda: training_run(lr=0.1, epochs=20, optimizer="Adam"))
    if not np.allclose(got, want, rtol=_RTOL):
        raise Mismatch(f"plugged into the chapter's regression, the losses are "
                       f"{np.round(got, 4).tolist()}; expected {np.round(want, 4).tolist()}.")
    runs = len(_CASES) * len(seeds)
    return (f"{runs} runs of {_STEPS} steps (betas, ε, weight decay, two parameter groups, a "
            "parameter that joins late and one without gradient), m, v and the step count in "
            "optimizer.state, float32 parameters, PyTorch's defaults, and the chapter's "
            "regression")


register(Piece(name="adam", chapter="08", defines="Adam",
               summary="Adam exactly: bias correction, ε, weight decay",
               plug=_plug_adam, battery=_adam_battery,
               own={"optim.Adam": _OWN_ADAM, "optim.AdamW": _OWN_ADAMW}))
