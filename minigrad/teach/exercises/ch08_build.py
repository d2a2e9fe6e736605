"""Chapter 8's build exercise (``notebooks/08b_optimizers.ipynb``): ``SGD``, a subclass of
``optim.Optimizer`` with momentum and weight decay, registered with ``teach.build`` as the
piece ``sgd``.

``teach.use(sgd=...)`` makes ``minigrad.optim.SGD`` the learner's class inside the block. The
check runs the learner's optimizer and minigrad's own side by side on the same problems, step
by step (parameters, momentum buffers, ``zero_grad``, the signature and PyTorch's defaults,
float32), and names the first step and parameter where they differ.
"""

import inspect
from unittest import mock

import numpy as np

from ... import nn, optim
from ...creation import tensor
from ...dtypes import float32, float64
from ...graph import no_grad
from ...optim import sgd as _sgd_module
from ..._tensor import Tensor
from ..build import (
    Mismatch, Piece, not_defined_here, own_out_of_reach, register, same_dtype, show, where)
from ..checks import keeps_random_state
from ..stepping import training_run

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


def run_learner(what, function, hint=None):
    """``function()`` (a call of the learner's code), or a ``Mismatch`` that names the call,
    the error and the learner's line. A name that is not defined gets its own first
    sentence (chapter 10's ``my_pieces`` shows only that): the cell uses a function or a
    class of another cell, and chapter 10 runs the build cell on its own."""
    try:
        return function()
    except Mismatch:
        raise
    except NameError as error:
        raise Mismatch(not_defined_here(what, error)) from None
    except Exception as error:  # the learner's code: report it, never crash the check
        extra = hint(error) if hint is not None else ""
        text = str(error)
        if extra:  # the hint says what to do: the error's first sentence is enough
            text = text.split(". ")[0]
        raise Mismatch(f"{what} raised {type(error).__name__}: {text.rstrip('.')}"
                       f"{where(error)}.{extra or ''}") from None


def _recorded_hint(error):
    if isinstance(error, RuntimeError) and ("in-place" in str(error) or "leaf" in str(error)):
        return (" Hint: autograd records what happens to a tensor that requires grad; the "
                "update must not be recorded.")
    return ""


def _settings_hint(error):
    if isinstance(error, TypeError) and "Optimizer.__init__()" in str(error):
        return (" Hint: the base class, Optimizer, takes the params and ONE dict of defaults "
                "(every setting gathered into a single dict), not the settings one by one as "
                "keywords.")
    if isinstance(error, TypeError):
        return (" Hint: take the settings as PyTorch does: SGD(params, lr=0.001, momentum=0, "
                "weight_decay=0).")
    return ""


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
    (named parameters, loss function)."""
    rng = np.random.default_rng(seed)
    x = tensor(rng.normal(size=(5, 3)).round(2), dtype=float64)
    y = tensor(rng.normal(size=(5, 2)).round(2), dtype=float64)
    params = {name: tensor(rng.normal(size=shape).round(2), dtype=float64, requires_grad=True)
              for name, shape in (("w", (3, 2)), ("b", (2,)), ("unused", (2,)))}

    def loss_fn():
        w, b = params["w"], params["b"]
        return ((x @ w + b - y) ** 2).mean() + 0.1 * (w ** 4).sum()
    return params, loss_fn


def _groups(params, two_groups):
    """What the optimizer is built from: a list of tensors, or two parameter groups."""
    if two_groups:
        return [{"params": [params["w"]]},
                {"params": [params["b"], params["unused"]], "lr": 0.02, "momentum": 0.5}]
    return list(params.values())


def _own_buffers(optimizer, params):
    return {name: optimizer.state[p]["momentum_buffer"].detach().numpy().copy()
            for name, p in params.items()
            if "momentum_buffer" in optimizer.state.get(p, {})}


def _sgd_hint(before, after, grad, settings, step, buffer_before):
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


def _sgd_trajectory(sgd_class, case, seed):
    """Run the learner's class and minigrad's own side by side on one seeded problem;
    raise Mismatch at the first step where a parameter or a buffer differs."""
    label, settings, set_to_none, two_groups = case
    own_params, own_loss = _sgd_problem(seed)
    params, loss_fn = _sgd_problem(seed)
    originals = dict(params)
    own = _OWN_SGD(_groups(own_params, two_groups), **settings)
    optimizer = run_learner(label, lambda: sgd_class(_groups(params, two_groups), **settings),
                            _settings_hint)
    if not isinstance(getattr(optimizer, "param_groups", None), list):
        raise Mismatch(f"{label} has no list param_groups. Hint: subclass "
                       "mg.optim.Optimizer and hand it params and the defaults.")
    for step in range(1, _SGD_STEPS + 1):
        own.zero_grad(set_to_none=set_to_none)
        run_learner(f"{label}, step {step}: zero_grad(set_to_none={set_to_none})",
                    lambda: optimizer.zero_grad(set_to_none=set_to_none))
        if step != _SKIPPED_STEP:
            own_loss().backward()
            loss_fn().backward()
        before = {name: p.detach().numpy().copy() for name, p in params.items()}
        grads = {name: None if p.grad is None else p.grad.numpy().copy()
                 for name, p in params.items()}
        buffers_before = _own_buffers(own, own_params)
        own.step()
        run_learner(f"{label}, step {step}: step()", optimizer.step, _recorded_hint)
        _same_tensors(optimizer, params, originals, label, step)
        _grads_unchanged(params, grads, label, step)
        what = (" (zero_grad() ran, then step() without a backward: no parameter has a "
                "gradient)" if step == _SKIPPED_STEP else "")
        for name, p in params.items():
            want, got = own_params[name].detach().numpy(), p.detach().numpy()
            if np.allclose(got, want, rtol=1e-10, atol=1e-12):
                continue
            if grads[name] is None:
                hint = (" Its .grad is None: it took no part, so step() must leave it alone "
                        "(not even weight decay or momentum moves it).")
            elif two_groups and name != "w" and np.array_equal(got, before[name]):
                hint = (f" Parameter {name}, of the second group (param_groups[1]), did not "
                        "move at all, while w, of the first, did. Hint: step() must go "
                        "through every group in self.param_groups, not only the first.")
            else:
                hint = _sgd_hint(before[name], got, grads[name],
                                 _group_settings(settings, two_groups, name), step,
                                 buffers_before.get(name))
                if not hint and two_groups and name != "w":
                    hint = (" Hint: this parameter's group has settings of its own (lr 0.02, "
                            "momentum 0.5): read each setting from the group.")
            raise Mismatch(f"{label}, step {step}{what}: parameter {name} is {show(got)}; "
                           f"expected {show(want)}.{hint}")
        _compare_buffers(optimizer, own, params, own_params, label, step,
                         lambda name: _group_settings(settings, two_groups, name), before)


def _grads_unchanged(params, grads, label, step):
    """step() reads each .grad and leaves it was: backward() adds into it, so a
    changed .grad would leak into later steps whenever gradients accumulate."""
    for name, p in params.items():
        before, now = grads[name], p.grad
        if before is None or now is None:
            continue
        if not np.array_equal(now.detach().numpy(), before):
            raise Mismatch(f"{label}, step {step}: step() changed {name}.grad from "
                           f"{show(before)} to {show(now.detach().numpy())}. Hint: step() "
                           "reads the gradient and leaves it alone; compute weight decay and "
                           "momentum in a new tensor (backward() keeps adding into .grad, and "
                           "a changed .grad would leak into the next steps).")


def _group_settings(settings, two_groups, name):
    """The settings that hold for parameter ``name`` (its group's own, or the defaults)."""
    if two_groups and name != "w":
        return dict(settings, lr=0.02, momentum=0.5)
    return settings


def _same_tensors(optimizer, params, originals, label, step):
    """The optimizer must keep changing the very tensors it was given."""
    held = [p for group in optimizer.param_groups for p in group["params"]]
    if any(not any(h is p for h in held) for p in originals.values()):
        raise Mismatch(f"{label}, step {step}: param_groups now hold other tensors than the "
                       "parameters the optimizer was given. Hint: change each parameter "
                       "itself, in place: the model keeps the old tensors.")
    for name, p in params.items():
        if not p.is_leaf or p.grad_fn is not None:
            raise Mismatch(f"{label}, step {step}: parameter {name} is no longer a leaf: the "
                           "update was recorded. Hint: step() must run with autograd off.")


def _compare_buffers(optimizer, own, params, own_params, label, step, settings_of=None,
                     before=None):
    """Each momentum buffer must sit in optimizer.state[p]['momentum_buffer'], as PyTorch's."""
    want = _own_buffers(own, own_params)
    state = getattr(optimizer, "state", None)
    for name, buffer in want.items():
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
            decay = settings_of(name).get("weight_decay", 0) if settings_of else 0
            hint = ""
            if decay and before is not None and np.allclose(
                    got, buffer - decay * before[name], rtol=1e-10, atol=1e-12):
                hint = (" It lacks exactly the weight decay. Hint: the decay goes into the "
                        "gradient before the buffer: the buffer adds up the decayed gradients "
                        "(gradient plus weight_decay times the parameter), not the plain ones.")
            raise Mismatch(f"{label}, after step {step}: the momentum buffer of {name} is "
                           f"{show(got)}; expected {show(buffer)}.{hint}")


def _check_zero_grad(sgd_class):
    """zero_grad(): .grad None by default, a tensor of zeros with set_to_none=False."""
    params, loss_fn = _sgd_problem(0)
    optimizer = sgd_class(list(params.values()), lr=0.1)
    loss_fn().backward()
    optimizer.zero_grad(set_to_none=False)
    for name in ("w", "b"):
        grad = params[name].grad
        if grad is None or np.any(grad.numpy() != 0):
            raise Mismatch(f"zero_grad(set_to_none=False) left {name}.grad = {show(grad)}; "
                           "expected a tensor of zeros.")
    loss_fn().backward()
    optimizer.zero_grad()
    if any(p.grad is not None for p in params.values()):
        raise Mismatch("zero_grad() left a .grad that is not None; by default (set_to_none="
                       "True) it sets every parameter's .grad to None.")


def _check_signature(sgd_class):
    """Every default of the learner's ``__init__`` that PyTorch's SGD has too is PyTorch's
    (``TORCH_SGD_DEFAULTS``)."""
    try:
        signature = inspect.signature(sgd_class)
    except (TypeError, ValueError):
        signature = None
    for name, parameter in (signature.parameters.items() if signature else ()):
        if name not in TORCH_SGD_DEFAULTS:
            continue
        torch_default = TORCH_SGD_DEFAULTS[name]
        if parameter.default is inspect.Parameter.empty:
            raise Mismatch(f"SGD(params): {name} has no default in your __init__; PyTorch's "
                           f"SGD has {name}={torch_default!r}, so SGD(params) alone works. "
                           "Hint: give every setting PyTorch's default.")
        if (parameter.default != torch_default
                or isinstance(parameter.default, bool) != isinstance(torch_default, bool)):
            raise Mismatch(f"SGD(params): your __init__ has {name}={parameter.default!r} as its "
                           f"default; PyTorch's SGD has {name}={torch_default!r}. Hint: code "
                           "written for PyTorch that leaves a setting out must get PyTorch's.")


def _check_defaults(sgd_class):
    """``SGD(params)`` alone must be PyTorch's ``SGD(params)``: the param group holds
    PyTorch's defaults, and a step without settings moves as minigrad's own does."""
    params, loss_fn = _sgd_problem(0)
    own_params, own_loss = _sgd_problem(0)
    label = "SGD(params), without lr or other settings"
    optimizer = run_learner(label, lambda: sgd_class(list(params.values())), _settings_hint)
    groups = getattr(optimizer, "param_groups", None)
    group = groups[0] if isinstance(groups, list) and groups else {}
    for name in ("lr", "momentum", "weight_decay"):
        if name in group and group[name] != TORCH_SGD_DEFAULTS[name]:
            raise Mismatch(f"{label} has {name}={group[name]!r} in its param group; PyTorch's "
                           f"default is {name}={TORCH_SGD_DEFAULTS[name]!r}.")
    own = _OWN_SGD(list(own_params.values()))
    own_loss().backward()
    loss_fn().backward()
    own.step()
    run_learner(f"{label}: step()", optimizer.step, _recorded_hint)
    for name, p in params.items():
        want, got = own_params[name].detach().numpy(), p.detach().numpy()
        if not np.allclose(got, want, rtol=1e-10, atol=1e-12):
            raise Mismatch(f"{label}, step 1: parameter {name} is {show(got)}; expected "
                           f"{show(want)}, a step with PyTorch's default lr=0.001.")


_FLOAT32_SETTINGS = dict(lr=0.05, momentum=0.9, weight_decay=0.01)


def _float32_layer(weight, bias):
    layer = nn.Linear(3, 2)
    with no_grad():
        layer.weight.copy_(tensor(weight, dtype=float32))
        layer.bias.copy_(tensor(bias, dtype=float32))
    return layer


def _check_float32(sgd_class, steps=3):
    """A model's float32 Parameters (an ``nn.Linear(3, 2)``), momentum and weight decay,
    next to minigrad's own: after each step the model holds the same Parameter objects, in
    float32, with float32 momentum buffers, and the next forward's loss is float32."""
    rng = np.random.default_rng(8)
    weight, bias = rng.normal(size=(2, 3)), rng.normal(size=2)
    x = tensor(rng.normal(size=(4, 3)), dtype=float32)
    y = tensor(rng.normal(size=(4, 2)), dtype=float32)
    own_layer, layer = _float32_layer(weight, bias), _float32_layer(weight, bias)
    label = ("SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01) on a float32 "
             "nn.Linear(3, 2)")
    own = _OWN_SGD(own_layer.parameters(), **_FLOAT32_SETTINGS)
    optimizer = run_learner(label, lambda: sgd_class(layer.parameters(), **_FLOAT32_SETTINGS),
                            _settings_hint)
    originals = dict(layer.named_parameters())
    own_originals = dict(own_layer.named_parameters())

    def loss_of(model):
        return ((model(x) - y) ** 2).mean()

    for step in range(1, steps + 1):
        own.zero_grad()
        run_learner(f"{label}, step {step}: zero_grad()", optimizer.zero_grad)
        loss_of(own_layer).backward()
        loss_of(layer).backward()
        own.step()
        run_learner(f"{label}, step {step}: step()", optimizer.step, _recorded_hint)
        context = f"{label}, after step {step}"
        for name, p in layer.named_parameters():
            if p is not originals[name]:
                raise Mismatch(f"{context}: the model's {name} is another tensor than the "
                               "Parameter it had. Hint: change each parameter itself, in "
                               "place: the model must keep its very Parameter objects.")
            want = own_originals[name]
            same_dtype(f"{context}: parameter {name}", p, want)
            if not np.allclose(p.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6):
                raise Mismatch(f"{context}: parameter {name} is {show(p)}; expected "
                               f"{show(want)}.")
            buffer = own.state[want]["momentum_buffer"]
            entry = optimizer.state.get(p, {}) if hasattr(optimizer.state, "get") else {}
            mine = entry.get("momentum_buffer") if hasattr(entry, "get") else None
            if mine is not None:
                same_dtype(f"{context}: the momentum buffer of {name}", mine, buffer)
        with no_grad():
            same_dtype(f"{context}: the loss of the next forward pass", loss_of(layer),
                       loss_of(own_layer))


@keeps_random_state
def _sgd_battery(sgd_class, seeds=(0, 1, 2)):
    """Every case on several seeded problems, step by step against minigrad's SGD; float32
    parameters of a model; PyTorch's defaults; then zero_grad; then the chapter's
    regression through ``teach.training_run`` with the class plugged in. While the
    learner's code runs, minigrad's own SGD is out of its reach."""
    if not isinstance(sgd_class, type):
        raise Mismatch(f"expected a class (class SGD(mg.optim.Optimizer): ...), got "
                       f"{type(sgd_class).__name__}.")
    want = training_run(lr=0.01, epochs=10)
    with own_out_of_reach({_sgd_module: [("SGD", "optim.SGD")]}):
        with own_out_of_reach({optim: [("SGD", "optim.SGD")]}):
            _check_signature(sgd_class)
            for case in _SGD_CASES:
                for seed in seeds:
                    _sgd_trajectory(sgd_class, case, seed)
            _check_float32(sgd_class)
            _check_defaults(sgd_class)
            run_learner("zero_grad()", lambda: _check_zero_grad(sgd_class))
        with _plug_sgd(sgd_class):
            got = run_learner("the chapter's regression (teach.training_run) with your SGD",
                              lambda: training_run(lr=0.01, epochs=10))
    if not np.allclose(got, want, rtol=1e-5):
        raise Mismatch(f"plugged into the chapter's regression, the losses are "
                       f"{np.round(got, 4).tolist()}; expected {np.round(want, 4).tolist()}.")
    runs = len(_SGD_CASES) * len(seeds)
    return (f"{runs} runs of {_SGD_STEPS} steps (momentum, weight decay, two parameter groups, "
            "a parameter without gradient), float32 parameters, PyTorch's defaults, "
            "zero_grad, and the chapter's regression")


register(Piece(name="sgd", chapter="08", defines="SGD",
               summary="the optimizer: SGD.step with momentum, zero_grad",
               plug=_plug_sgd, battery=_sgd_battery, own={"optim.SGD": _OWN_SGD}))
