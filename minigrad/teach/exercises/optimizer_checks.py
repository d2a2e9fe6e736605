"""The optimizer battery that chapter 8's two build exercises share: ``SGD``
(``notebooks/08b_optimizers.ipynb``, ``ch08_build``) and ``Adam`` (``notebooks/08c_adam.ipynb``,
``ch08_adam``).

Each build describes its optimizer in an ``OptimizerBuild`` (minigrad's own class, PyTorch's
defaults, the seeded problem, the cases, how to explain a wrong move and how to compare the
state it keeps); ``optimizer_battery`` then runs the learner's class and minigrad's own side
by side, step by step (zero_grad, backward, step; the parameters stay the same leaf tensors,
their ``.grad`` untouched; each parameter's move; the optimizer's state), checks the
signature and PyTorch's defaults, float32 parameters of a model, ``zero_grad``, and the
chapter's regression with the class plugged in. A class that is, subclasses or calls one of
PyTorch's optimizers is refused (``refuse_pytorchs``): minigrad's optimizers match PyTorch's
step for step, so PyTorch's step inside the learner's would only be compared with itself.
"""

import dataclasses
import dis
import inspect
import re
import sys
from typing import Callable

import numpy as np

from ... import nn
from ...creation import tensor
from ...dtypes import float32
from ...graph import no_grad
from ..build import Mismatch, Piece, attempt, borrowed, own_out_of_reach, same_dtype, show
from ..stepping import training_run

__all__ = ["OptimizerBuild", "optimizer_battery", "refuse_pytorchs", "run_learner",
           "numbers", "beyond_shown", "StepRun"]


@dataclasses.dataclass(frozen=True)
class OptimizerBuild:
    """What one of chapter 8's optimizer builds checks, and how it explains a difference.

    ``problem(seed)`` returns (named float64 parameters, the first named ``"w"``, and
    ``loss_fn(step)``); ``cases`` are (label, settings, set_to_none, two parameter groups?);
    ``same(got, want, got_before, want_before, lr)`` says whether a parameter moved as
    minigrad's did; ``own_state(own, param)`` takes the own optimizer's state of a parameter
    before a step, and ``explain(before, grad, got, own_state, settings, step)`` names the
    mistake of a wrong move (or ``""``); ``compare_state(run)`` compares the state the
    optimizer keeps after a step (``run`` is a ``StepRun``)."""
    name: str
    own: type
    own_names: tuple              # (module, [(attribute, label), ...]) kept out of reach
    defaults: dict                # PyTorch's defaults, by setting
    signature: str                # PyTorch's call with the settings the build takes
    problem: Callable
    cases: tuple
    second_group: dict            # the settings of the second parameter group
    steps: int
    skipped_step: int             # before this step zero_grad() runs but no backward
    skipped_what: str
    same: Callable
    own_state: Callable
    explain: Callable
    compare_state: Callable
    untouched_grad: str           # what step() computes in a new tensor, not in .grad
    no_grad_hint: str             # for a parameter whose .grad is None ({name})
    state_keys: dict              # the state kept in float32 too, and what it is called
    float32_settings: dict
    float32_tolerance: tuple      # (rtol, atol)
    regression: dict              # teach.training_run's keywords for the chapter's run
    regression_rtol: float
    write_yourself: str           # what a PyTorch-forwarding class should write instead
    passed: str                   # what passed, with {runs} and {steps}


@dataclasses.dataclass
class StepRun:
    """One step of a side-by-side run, as ``compare_state`` sees it."""
    optimizer: object
    own: object
    params: dict
    own_params: dict
    label: str
    step: int
    settings_of: Callable         # name -> the settings that hold for that parameter
    before: dict                  # the learner's parameters before the step (arrays)
    grads: dict                   # their gradients (arrays, or None)
    own_states: dict              # own_state(own, param) before the step, by name


def run_learner(what, function, hint=None):
    """``function()`` (a call of the learner's code), or a ``Mismatch`` that names the call,
    the error and the learner's line (``build.attempt``, brief: a hint replaces the rest of
    the error). A name that is not defined gets its own first sentence (chapter 10's
    ``my_pieces`` shows only that)."""
    return attempt(what, function, hint, brief=True)


def recorded_hint(error):
    if isinstance(error, RuntimeError) and ("in-place" in str(error) or "leaf" in str(error)):
        return (" Hint: autograd records what happens to a tensor that requires grad; the "
                "update must not be recorded.")
    return ""


def _settings_hint(build):
    def hint(error):
        if isinstance(error, TypeError) and "Optimizer.__init__()" in str(error):
            return (" Hint: the base class, Optimizer, takes the params and ONE dict of "
                    "defaults (every setting gathered into a single dict), not the settings "
                    "one by one as keywords.")
        if isinstance(error, TypeError):
            return f" Hint: take the settings as PyTorch does: {build.signature}."
        return ""
    return hint


def numbers(value):
    """A tensor or an array as a float64 array (a copy), or None."""
    if value is None:
        return None
    if hasattr(value, "detach"):
        return value.detach().numpy().astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def beyond_shown(got, want):
    """' (equal to 4 decimals; they differ by up to 3e-07)' when ``show`` hides the gap."""
    if show(got) != show(want):
        return ""
    gap = float(np.max(np.abs(np.asarray(got, dtype=float) - np.asarray(want, dtype=float))))
    return f" (equal to 4 decimals; they differ by up to {gap:.1g})"


def _groups(build, params, two_groups):
    """What the optimizer is built from: a list of tensors, or two parameter groups (w
    alone, then every other parameter with the second group's settings)."""
    if two_groups:
        return [{"params": [params["w"]]},
                dict(params=[p for name, p in params.items() if name != "w"],
                     **build.second_group)]
    return list(params.values())


def settings_of(build, settings, two_groups, name):
    """The settings that hold for parameter ``name``: PyTorch's defaults, the case's, and
    the second group's own for any parameter but w."""
    full = dict(build.defaults, **settings)
    if two_groups and name != "w":
        full.update(build.second_group)
    return full


def _snapshot(params):
    return {name: p.detach().numpy().copy() for name, p in params.items()}


def _zero_and_backward(own, optimizer, label, losses, set_to_none=None):
    """zero_grad() on minigrad's own optimizer and the learner's (``set_to_none`` if given),
    then each loss's backward() (``losses``: own and learner's loss functions of no
    argument, or None for a step without backward)."""
    keywords = {} if set_to_none is None else {"set_to_none": set_to_none}
    own.zero_grad(**keywords)
    run_learner(f"{label}: zero_grad({_keywords_shown(keywords)})",
                lambda: optimizer.zero_grad(**keywords))
    for loss in losses or ():
        loss().backward()


def _step_both(own, optimizer, label):
    """step() on minigrad's own optimizer, then on the learner's."""
    own.step()
    run_learner(f"{label}: step()", optimizer.step, recorded_hint)


def _keywords_shown(keywords):
    """``{'lr': 0.05, 'momentum': 0.9}`` as ``lr=0.05, momentum=0.9``."""
    return ", ".join(f"{key}={value}" for key, value in keywords.items())


# ---------------------------------------------------------------- the side-by-side run

def _learners_optimizer(build, label, make):
    """``make()``, the learner's optimizer built as ``label`` says, which must have a list
    of param_groups (what the base class Optimizer makes)."""
    optimizer = run_learner(label, make, _settings_hint(build))
    if not isinstance(getattr(optimizer, "param_groups", None), list):
        raise Mismatch(f"{label} has no list param_groups. Hint: subclass mg.optim.Optimizer "
                       "and hand it params and the defaults.")
    return optimizer


def _trajectory(build, cls, case, seed):
    """The learner's class and minigrad's own side by side on one seeded problem; raise
    Mismatch at the first step where a parameter or the state differs."""
    label, settings, set_to_none, two_groups = case
    own_params, own_loss = build.problem(seed)
    params, loss_fn = build.problem(seed)
    originals = dict(params)
    own = build.own(_groups(build, own_params, two_groups), **settings)
    optimizer = _learners_optimizer(build, label,
                                lambda: cls(_groups(build, params, two_groups), **settings))

    def settings_for(name):
        return settings_of(build, settings, two_groups, name)

    for step in range(1, build.steps + 1):
        _zero_and_backward(own, optimizer, f"{label}, step {step}",
                           None if step == build.skipped_step else
                           (lambda: own_loss(step), lambda: loss_fn(step)), set_to_none)
        run = StepRun(optimizer, own, params, own_params, label, step, settings_for,
                      _snapshot(params), {name: numbers(p.grad) for name, p in params.items()},
                      {name: build.own_state(own, own_params[name]) for name in params})
        own_before = _snapshot(own_params)
        _step_both(own, optimizer, f"{label}, step {step}")
        _same_tensors(optimizer, params, originals, label, step)
        _grads_unchanged(build, run)
        _compare_parameters(build, run, own_before, two_groups)
        build.compare_state(run)


def _compare_parameters(build, run, own_before, two_groups):
    """Each parameter moved as minigrad's did, or a Mismatch that names the mistake."""
    label, step = run.label, run.step
    what = build.skipped_what if step == build.skipped_step else ""
    for name, p in run.params.items():
        want, got = run.own_params[name].detach().numpy(), p.detach().numpy()
        settings = run.settings_of(name)
        if build.same(got, want, run.before[name], own_before[name], settings["lr"]):
            continue
        if run.grads[name] is None:
            hint = build.no_grad_hint.format(name=name)
        elif two_groups and name != "w" and np.array_equal(got, run.before[name]):
            hint = (f" Parameter {name}, of the second group (param_groups[1]), did not "
                    "move at all, while w, of the first, did. Hint: step() must go "
                    "through every group in self.param_groups, not only the first.")
        else:
            hint = build.explain(run.before[name], run.grads[name], got,
                                 run.own_states[name], settings, step)
            if not hint and two_groups and name != "w":
                own = ", ".join(f"{key} {value}" for key, value in build.second_group.items())
                hint = (f" Hint: this parameter's group has settings of its own ({own}): go "
                        "through every group and read each setting from the group.")
        raise Mismatch(f"{label}, step {step}{what}: parameter {name} is {show(got)}; "
                       f"expected {show(want)}{beyond_shown(got, want)}.{hint}")


def _grads_unchanged(build, run):
    """step() reads each .grad and leaves it as it was: backward() adds into it, so a
    changed .grad would leak into later steps whenever gradients accumulate."""
    for name, p in run.params.items():
        before, now = run.grads[name], p.grad
        if before is None or now is None:
            continue
        if not np.array_equal(numbers(now), before):
            raise Mismatch(f"{run.label}, step {run.step}: step() changed {name}.grad from "
                           f"{show(before)} to {show(now)}. Hint: step() reads the gradient "
                           f"and leaves it alone; compute {build.untouched_grad} in a new "
                           "tensor (backward() keeps adding into .grad, and a changed .grad "
                           "would leak into the next steps).")


def _same_tensors(optimizer, params, originals, label, step):
    """The optimizer must keep changing the very tensors it was given, as leaves."""
    held = [p for group in optimizer.param_groups for p in group["params"]]
    if any(not any(h is p for h in held) for p in originals.values()):
        raise Mismatch(f"{label}, step {step}: param_groups now hold other tensors than the "
                       "parameters the optimizer was given. Hint: change each parameter "
                       "itself, in place: the model keeps the old tensors.")
    for name, p in params.items():
        if not p.is_leaf or p.grad_fn is not None:
            raise Mismatch(f"{label}, step {step}: parameter {name} is no longer a leaf: the "
                           "update was recorded. Hint: step() must run with autograd off.")


# ---------------------------------------------------------------- signature, defaults, float32

def _check_signature(build, cls):
    """Every default of the learner's ``__init__`` that PyTorch's optimizer has too is
    PyTorch's (``build.defaults``)."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return
    for name, parameter in signature.parameters.items():
        if name not in build.defaults:
            continue
        torch_default = build.defaults[name]
        if parameter.default is inspect.Parameter.empty:
            raise Mismatch(f"{build.name}(params): {name} has no default in your __init__; "
                           f"PyTorch's {build.name} has {name}={torch_default!r}, so "
                           f"{build.name}(params) alone works. Hint: give every setting "
                           "PyTorch's default.")
        default = parameter.default
        if isinstance(default, list):
            default = tuple(default)
        if (default != torch_default
                or isinstance(default, bool) != isinstance(torch_default, bool)):
            raise Mismatch(f"{build.name}(params): your __init__ has {name}="
                           f"{parameter.default!r} as its default; PyTorch's {build.name} has "
                           f"{name}={torch_default!r}. Hint: code written for PyTorch that "
                           "leaves a setting out must get PyTorch's.")


def _check_defaults(build, cls):
    """``Optimizer(params)`` alone must be PyTorch's: the param group holds PyTorch's
    defaults, and two steps without settings move as minigrad's own do."""
    params, loss_fn = build.problem(0)
    own_params, own_loss = build.problem(0)
    label = f"{build.name}(params), without lr or other settings"
    optimizer = run_learner(label, lambda: cls(list(params.values())), _settings_hint(build))
    groups = getattr(optimizer, "param_groups", None)
    group = groups[0] if isinstance(groups, list) and groups else {}
    for name, default in build.defaults.items():
        value = group.get(name, default) if hasattr(group, "get") else default
        if (tuple(value) if isinstance(value, list) else value) != default:
            raise Mismatch(f"{label} has {name}={value!r} in its param group; PyTorch's "
                           f"default is {name}={default!r}.")
    own = build.own(list(own_params.values()))
    for step in (1, 2):
        before, own_before = _snapshot(params), _snapshot(own_params)
        _zero_and_backward(own, optimizer, f"{label}, step {step}",
                           (lambda: own_loss(step), lambda: loss_fn(step)))
        _step_both(own, optimizer, f"{label}, step {step}")
        for name, p in params.items():
            want, got = own_params[name].detach().numpy(), p.detach().numpy()
            if not build.same(got, want, before[name], own_before[name], build.defaults["lr"]):
                raise Mismatch(f"{label}, step {step}: parameter {name} is {show(got)}; "
                               f"expected {show(want)}, a step with PyTorch's defaults "
                               f"({build.signature}).")


def _float32_layer(weight, bias):
    layer = nn.Linear(3, 2)
    with no_grad():
        layer.weight.copy_(tensor(weight, dtype=float32))
        layer.bias.copy_(tensor(bias, dtype=float32))
    return layer


def _check_float32(build, cls, steps=3):
    """A model's float32 Parameters (an ``nn.Linear(3, 2)``) next to minigrad's own: after
    each step the model holds the same Parameter objects, in float32, its state
    (``build.state_keys``) is float32, and the next forward's loss is float32."""
    rng = np.random.default_rng(8)
    weight, bias = rng.normal(size=(2, 3)), rng.normal(size=2)
    x = tensor(rng.normal(size=(4, 3)), dtype=float32)
    y = tensor(rng.normal(size=(4, 2)), dtype=float32)
    own_layer, layer = _float32_layer(weight, bias), _float32_layer(weight, bias)
    settings = build.float32_settings
    label = (f"{build.name}(model.parameters(), {_keywords_shown(settings)}) on a float32 "
             "nn.Linear(3, 2)")
    own = build.own(own_layer.parameters(), **settings)
    optimizer = _learners_optimizer(build, label, lambda: cls(layer.parameters(), **settings))
    originals = dict(layer.named_parameters())
    own_originals = dict(own_layer.named_parameters())
    rtol, atol = build.float32_tolerance

    def loss_of(model):
        return ((model(x) - y) ** 2).mean()

    for step in range(1, steps + 1):
        _zero_and_backward(own, optimizer, f"{label}, step {step}",
                           (lambda: loss_of(own_layer), lambda: loss_of(layer)))
        _step_both(own, optimizer, f"{label}, step {step}")
        context = f"{label}, after step {step}"
        for name, p in layer.named_parameters():
            if p is not originals[name]:
                raise Mismatch(f"{context}: the model's {name} is another tensor than the "
                               "Parameter it had. Hint: change each parameter itself, in "
                               "place: the model must keep its very Parameter objects.")
            want = own_originals[name]
            same_dtype(f"{context}: parameter {name}", p, want)
            if not np.allclose(p.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol):
                raise Mismatch(f"{context}: parameter {name} is {show(p)}; expected "
                               f"{show(want)}.")
            state = getattr(optimizer, "state", None)
            entry = state.get(p, {}) if hasattr(state, "get") else {}
            for key, called in build.state_keys.items():
                mine = entry.get(key) if hasattr(entry, "get") else None
                theirs = own.state[want].get(key)
                if mine is not None and theirs is not None:
                    same_dtype(f"{context}: {called} of {name}", mine, theirs)
        with no_grad():
            same_dtype(f"{context}: the loss of the next forward pass", loss_of(layer),
                       loss_of(own_layer))


def _check_zero_grad(build, cls):
    """zero_grad(): .grad None by default, a tensor of zeros with set_to_none=False."""
    params, loss_fn = build.problem(0)
    optimizer = cls(list(params.values()), lr=0.1)
    loss_fn(1).backward()
    optimizer.zero_grad(set_to_none=False)
    for name in ("w", "b"):
        grad = params[name].grad
        if grad is None or np.any(grad.numpy() != 0):
            raise Mismatch(f"zero_grad(set_to_none=False) left {name}.grad = {show(grad)}; "
                           "expected a tensor of zeros.")
    loss_fn(1).backward()
    optimizer.zero_grad()
    if any(p.grad is not None for p in params.values()):
        raise Mismatch("zero_grad() left a .grad that is not None; by default (set_to_none="
                       "True) it sets every parameter's .grad to None.")


# ---------------------------------------------------------------- refusing PyTorch's optimizers

def pytorchs_optimizers():
    """PyTorch's optimizers, by the name a learner knows them, if PyTorch is imported: every
    ``torch.optim`` class (Adam, AdamW, SGD, ..., Optimizer) and the functional steps
    (``torch.optim.sgd.sgd``, ``torch.optim.adam.adam``, ...). Empty without PyTorch (the
    check never imports it)."""
    torch = sys.modules.get("torch")
    torch_optim = getattr(torch, "optim", None) if torch is not None else None
    if torch_optim is None:
        return {}
    found = {f"torch.optim.{name}": value for name, value in sorted(vars(torch_optim).items())
             if inspect.isclass(value) and issubclass(value, torch_optim.Optimizer)}
    for module_name in ("adam", "adamw", "sgd"):   # torch.optim deletes these submodule names
        step = getattr(sys.modules.get(f"torch.optim.{module_name}"), module_name, None)
        if callable(step):
            found[f"torch.optim.{module_name}.{module_name}"] = step
    return found


def refuse_pytorchs(build, cls):
    """Raise ``Mismatch`` when the learner's optimizer is, subclasses or calls one of
    PyTorch's optimizers: the check compares it with minigrad's, which matches PyTorch's
    step for step, so PyTorch's step inside it would be compared with itself."""
    theirs = pytorchs_optimizers()
    if not theirs:
        return
    piece = Piece(name=f"{build.name.lower()} (PyTorch's)", chapter="08", defines=build.name,
                  summary="", plug=None, battery=None, own=theirs)
    refused = borrowed(piece, cls)
    label = re.search(r"minigrad's own (torch\.[\w.]+)", refused)
    label = label[1] if label else imported_and_named(cls, theirs)
    if refused or label:
        raise Mismatch(f"it uses PyTorch's own {label}: {build.name} is yours to write, on "
                       f"minigrad's tensors. The check compares yours with minigrad's "
                       f"{build.name}, which matches PyTorch's step for step, so PyTorch's "
                       f"step inside yours would only be compared with itself. "
                       f"{build.write_yourself}")


def imported_and_named(cls, theirs):
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
    for value in vars(cls).values():
        function = inspect.unwrap(getattr(value, "__func__", value))
        if inspect.isfunction(function):
            walk(function.__code__)
    if not any(module.split(".")[0] == "torch" for module in imported):
        return ""
    return next((label for label in theirs if label.rsplit(".", 1)[-1] in names
                 and label != "torch.optim.Optimizer"), "")


# ---------------------------------------------------------------- the battery

def optimizer_battery(build, cls, seeds, plug, refuse):
    """Refuse PyTorch's optimizers inside the learner's class (``refuse(cls)``, before the
    runs and after them too: code that imports torch itself has then imported it); then
    every case on several seeded problems, step by step against minigrad's own; float32
    parameters of a model; PyTorch's defaults; zero_grad; and the chapter's regression
    through ``teach.training_run`` with the class plugged in (``plug(cls)``). While the
    learner's code runs, minigrad's own optimizer is out of its reach."""
    if not isinstance(cls, type):
        raise Mismatch(f"expected a class (class {build.name}(mg.optim.Optimizer): ...), got "
                       f"{type(cls).__name__}.")
    refuse(cls)
    try:
        passed = _runs(build, cls, seeds, plug)
    except Mismatch:
        refuse(cls)
        raise
    refuse(cls)
    return passed


def _runs(build, cls, seeds, plug):
    want = training_run(**build.regression)
    with own_out_of_reach(dict(build.own_names)):
        _check_signature(build, cls)
        for case in build.cases:
            for seed in seeds:
                _trajectory(build, cls, case, seed)
        _check_float32(build, cls)
        _check_defaults(build, cls)
        run_learner("zero_grad()", lambda: _check_zero_grad(build, cls))
    with plug(cls):
        got = run_learner(f"the chapter's regression (teach.training_run) with your "
                          f"{build.name}", lambda: training_run(**build.regression))
    if not np.allclose(got, want, rtol=build.regression_rtol):
        raise Mismatch(f"plugged into the chapter's regression, the losses are "
                       f"{np.round(got, 4).tolist()}; expected {np.round(want, 4).tolist()}.")
    return build.passed.format(runs=len(build.cases) * len(seeds), steps=build.steps)
