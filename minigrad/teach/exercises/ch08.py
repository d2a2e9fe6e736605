"""Exercise checks for chapter 8 (optimizers and zero_grad), in two parts:
``notebooks/08a_zero_grad.ipynb`` (exercises 1 and 2) and ``notebooks/08b_optimizers.ipynb``
(exercises 3 and 4, and the build piece ``sgd``): ``from minigrad.teach.exercises import ch08``.

Each function takes the learner's answer, computes the right one itself with minigrad
(the chapter's linear regression: x = 1..11, y = 2x + 1, ``nn.Linear(1, 1, bias=False)``,
MSE, SGD) and returns a ``CheckResult`` that prints ✓ or ✗ with a hint; none raises.
"""


import inspect
from unittest import mock

import numpy as np

from ... import nn, optim
from ...creation import from_numpy, tensor
from ...dtypes import float32, float64
from ...graph import no_grad
from ...optim import sgd as _sgd_module
from ..._tensor import Tensor
from ..build import Mismatch, Piece, not_defined_here, own_out_of_reach, register, same_dtype, where
from ..build import show as _show
from ..checks import CheckResult, check, not_a_function
from ..checks import all_parts as _together, keeps_random_state as _leaves_rng_alone, no_answer as _no_answer, one_number as _one_number
from ..stepping import REGRESSION_X, REGRESSION_Y, training_run

__all__ = ["check_two_epochs_without_zero_grad", "check_learning_rate", "check_fixed_loop",
           "check_train_last_layer", "GOOD_LOSS", "GOOD_EPOCHS"]

GOOD_LOSS = 0.22    # exercise 2: the loss to beat (the best this model can do is 5/23 ≈ 0.2174)
GOOD_EPOCHS = 20    # ... within this many epochs


# ---------------------------------------------------------------- exercise 1

EXERCISE1_START = 0.0   # the weight both runs start from
EXERCISE1_LR = 0.01


def _two_epochs(zero_grad):
    """The chapter's regression from w = 0 with SGD(lr=0.01), two epochs: .grad after the
    second backward, and the weight after the second step."""
    model = nn.Linear(1, 1, bias=False)
    with no_grad():
        model.weight.fill_(EXERCISE1_START)
    optimizer = optim.SGD(model.parameters(), lr=EXERCISE1_LR)
    criterion = nn.MSELoss()
    for _ in range(2):
        if zero_grad:
            optimizer.zero_grad()
        loss = criterion(model(from_numpy(REGRESSION_X)), from_numpy(REGRESSION_Y))
        loss.backward()
        grad = model.weight.grad.item()
        optimizer.step()
    return grad, model.weight.item()


@_leaves_rng_alone
def check_two_epochs_without_zero_grad(grad_with, grad_without, weight_without):
    """Exercise 1: start at w = 0, SGD with lr = 0.01. ``grad_with``: weight.grad after the
    second backward when zero_grad() runs every epoch; ``grad_without``: the same when it
    never runs; ``weight_without``: the weight after the second step without zero_grad."""
    want_with, _ = _two_epochs(zero_grad=True)
    want_without, want_weight = _two_epochs(zero_grad=False)
    return _together("Exercise 1", [
        check("weight.grad in epoch 2 with zero_grad()", _one_number(grad_with), want_with,
              tol=1e-3,
              hint="with zero_grad() the .grad of epoch 2 is just the gradient at the weight "
                   "epoch 1 left behind. Find that weight first: w1 = w0 - lr * g(w0)."),
        check("weight.grad in epoch 2 without zero_grad()", _one_number(grad_without),
              want_without, tol=1e-3,
              hint="the first step is the same in both runs, and so is the weight it reaches; "
                   "but nothing cleared epoch 1's gradient before epoch 2's backward()."),
        check("weight after the second step without zero_grad()", _one_number(weight_without),
              want_weight, tol=1e-3,
              hint="step() uses whatever .grad holds at that moment: w2 = w1 - lr * weight.grad."),
    ])


# ---------------------------------------------------------------- exercise 2

def _learning_rate_problem(lr):
    """None if ``lr`` is a usable learning rate, else the reason it is not."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating, np.integer)):
        return f"expected a number such as 0.5, got {type(lr).__name__}"
    if not np.isfinite(lr) or lr <= 0:
        return f"{lr!r} is not a positive learning rate"
    return None


@_leaves_rng_alone
def check_learning_rate(lr_good, lr_limit):
    """Exercise 2: ``lr_good``, a learning rate with which the chapter's SGD run (with
    zero_grad) gets the loss below 0.22 within 20 epochs; ``lr_limit``, the learning rate
    above which plain SGD on this problem no longer converges (2 / 92)."""
    results = []
    name = f"lr_good (loss below {GOOD_LOSS} within {GOOD_EPOCHS} epochs)"
    if _no_answer(lr_good):
        results.append(check(name, lr_good, 0.0))  # the "no answer yet" message
    elif _learning_rate_problem(lr_good):
        results.append(CheckResult(False, f"{name}: {_learning_rate_problem(lr_good)}."))
    else:
        losses = training_run(lr=float(lr_good), zero_grad=True, epochs=GOOD_EPOCHS)
        last = losses[-1]
        if np.isfinite(last) and last < GOOD_LOSS:
            results.append(CheckResult(True, f"{name}: correct! lr={float(lr_good):g} reaches "
                                             f"{last:.4f} in epoch {GOOD_EPOCHS}."))
        elif not np.isfinite(last) or last > losses[0]:
            results.append(CheckResult(False, f"{name}: with lr={float(lr_good):g} the loss grows "
                                              "instead of falling: the steps overshoot. Try a "
                                              "smaller one."))
        else:
            results.append(CheckResult(False, f"{name}: with lr={float(lr_good):g} the loss is "
                                              f"still {last:.4f} in epoch {GOOD_EPOCHS}: it falls, "
                                              "but too slowly. Try a bigger one."))
    h = 2 * float(np.mean(REGRESSION_X.astype(np.float64) ** 2))   # the curvature, 92
    results.append(check("lr_limit", _one_number(lr_limit), 2 / h, tol=2e-4,
                         hint="each step multiplies the distance to the best weight by "
                              "(1 - 92 * lr). The steps shrink that distance as long as this "
                              "factor lies between -1 and 1."))
    return _together("Exercise 2", results)


# ---------------------------------------------------------------- exercise 3: the seed loop, fixed

# (samples, learning rate, does W/b arrive with a .grad left over from earlier code?)
_LOOP_CASES = [(5, 0.05, False), (7, 0.02, True)]


def _loop_problem(n, seed):
    """Seeded data (n, 4), targets (n, 3) and fresh leaves W (4, 3), b (3,), in float64."""
    rng = np.random.default_rng(seed)
    data = tensor(rng.normal(size=(n, 4)), dtype=float64)
    targets = tensor(rng.normal(size=(n, 3)), dtype=float64)
    W = tensor(rng.normal(size=(4, 3)), dtype=float64, requires_grad=True)
    b = tensor(rng.normal(size=(3,)), dtype=float64, requires_grad=True)
    return data, targets, W, b


def _numpy_descent(data, targets, W, b, lr, reduce="sum", zero="before", stale=None):
    """The fixed vanilla loop in plain numpy (and its typical wrong variants): W, b after
    one step per sample. ``zero``: clear the gradients "before" each backward, "after" each
    update, or never (None); ``stale``: the (W, b) gradients the tensors arrived with."""
    W, b = W.copy(), b.copy()
    gW, gb = stale if stale is not None else (np.zeros_like(W), np.zeros_like(b))
    for x, t in zip(data, targets):
        if zero == "before":
            gW, gb = np.zeros_like(W), np.zeros_like(b)
        d = 2 * (x @ W + b - t) / (3 if reduce == "mean" else 1)
        gW, gb = gW + np.outer(x, d), gb + d
        W, b = W - lr * gW, b - lr * gb
        if zero == "after":
            gW, gb = np.zeros_like(W), np.zeros_like(b)
    return W, b


_LOOP_ERRORS = [
    ("scalar outputs", "the loss of one sample is still three squared errors; backward() "
                       "starts from one number (bug a)."),
    ("'NoneType'", "before the first backward() there is no .grad to zero: it is None "
                   "(bug b)."),
    ("in-place", "the update of W or b is being recorded: a leaf that requires grad may not "
                 "be changed in place while autograd watches (bug c; 08a, section 5)."),
]


def _loop_failure(name, error):
    """The learner's function raised: name the bug by the message."""
    text = f"{type(error).__name__}: {str(error).split(', but')[0].split('. ')[0].rstrip('.')}"
    for words, hint in _LOOP_ERRORS:
        if words in str(error):
            return CheckResult(False, f"{name} raised {text}. Hint: {hint}")
    return CheckResult(False, f"{name} raised {text}.")


def _loop_mismatch(name, got, start, variants):
    """Why W, b ended up where they did: a hint that names the idea, not the code."""
    (W0, b0), (W, b) = start, got
    if np.array_equal(W, W0) and np.array_equal(b, b0):
        return (f"{name}: W and b did not move. Hint: `W = W - ...` only gives the name W a new "
                "tensor; the caller's W must change itself, in place.")
    if np.array_equal(b, b0) or np.array_equal(W, W0):
        which = "b" if np.array_equal(b, b0) else "W"
        return f"{name}: {which} did not move. Hint: both parameters take a step."
    for label, (vW, vb) in variants.items():
        if np.allclose(W, vW) and np.allclose(b, vb):
            return f"{name}: W and b are off. Hint: {label}"
    return (f"{name}: W is {np.round(W, 4).tolist()}, which is not right yet. Hint: one step "
            "per sample, against the gradient of that sample's loss.")


@_leaves_rng_alone
def check_fixed_loop(gradient_descent):
    """Exercise 3: ``gradient_descent(data, targets, W, b, learning_rate)``, the source's
    vanilla loop with its three bugs fixed: one step per sample on the sum of its squared
    errors; W and b change in place; a .grad they arrive with does not count."""
    title = "gradient_descent"
    failed = not_a_function(title, gradient_descent)
    if failed is not None:
        return failed
    for seed, (n, lr, stale) in enumerate(_LOOP_CASES):
        data, targets, W, b = _loop_problem(n, seed)
        name = f"{title} on {n} samples, learning_rate={lr}" + (
            ", W and b arriving with an old .grad" if stale else "")
        old = None
        if stale:
            ((data[0] @ W + b) ** 2).sum().backward()      # a gradient from earlier code
            old = (W.grad.numpy().copy(), b.grad.numpy().copy())
        start = (W.detach().numpy().copy(), b.detach().numpy().copy())
        try:
            gradient_descent(data, targets, W, b, lr)
        except Exception as error:  # the learner's code: report, never crash the notebook
            return _loop_failure(name, error)
        if not (W.is_leaf and b.is_leaf and W.requires_grad and b.requires_grad):
            return CheckResult(False, f"{name}: W or b is no longer a leaf that requires grad. "
                                      "Hint: the update must not be recorded, and the "
                                      "parameters must stay trainable.")
        args = (data.numpy(), targets.numpy(), *start, lr)
        want = _numpy_descent(*args)
        got = (W.detach().numpy(), b.detach().numpy())
        if np.allclose(got[0], want[0], atol=1e-9) and np.allclose(got[1], want[1], atol=1e-9):
            continue
        variants = {
            "the loss of a sample is the sum of its three squared errors, not their mean.":
                _numpy_descent(*args, reduce="mean"),
            "each step must use the gradient of its own sample only: .grad still held the "
            "earlier samples' gradients (a running sum).": _numpy_descent(*args, zero=None),
        }
        if stale:
            variants["the .grad W and b arrived with counted in the first step: clear the "
                     "gradients before each backward(), not after it."] = \
                _numpy_descent(*args, zero="after", stale=old)
        return CheckResult(False, _loop_mismatch(name, got, start, variants))
    return CheckResult(True, f"{title}: correct on {len(_LOOP_CASES)} runs! One number per "
                             "sample, nothing to zero before the first backward(), and the "
                             "update outside the graph.")


# ---------------------------------------------------------------- exercise 4: the last layer only

_FREEZE_CASES = [(0.05, 4), (0.1, 2)]   # (lr, steps)


def _deep_model(seed):
    """A model deeper than the chapter's: three Linear layers, float64, seeded weights."""
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(),
                          nn.Linear(4, 2)).double()
    rng = np.random.default_rng(seed)
    with no_grad():
        for p in model.parameters():
            p.copy_(tensor(rng.normal(size=tuple(p.shape)), dtype=float64))
    inputs = tensor(rng.normal(size=(6, 3)), dtype=float64)
    targets = tensor(rng.normal(size=(6, 2)), dtype=float64)
    return model, inputs, targets


def _train_last_layer_reference(model, inputs, targets, lr, steps):
    """Freeze all but the last layer; SGD with momentum 0.9 on the MSE, full batch."""
    model.requires_grad_(False)
    model[-1].requires_grad_(True)
    optimizer = _sgd_module.SGD(model.parameters(), lr=lr, momentum=0.9)
    criterion = nn.MSELoss()
    for _ in range(steps):
        optimizer.zero_grad()
        criterion(model(inputs), targets).backward()
        optimizer.step()


def _frozen_problem(name, p, start):
    """What is wrong with a parameter that should be frozen (None if nothing)."""
    if not np.array_equal(p.detach().numpy(), start):
        return (f"parameter {name} moved, but only the last layer may train. Hint: freeze "
                "every layer but the last (this model is deeper than section 8's).")
    if p.requires_grad:
        return (f"parameter {name} did not move, but it still requires grad"
                + (" and backward() filled its .grad" if p.grad is not None else "")
                + ": its gradient is computed at every step for nothing. Hint: freeze it, so "
                  "that backward() does not even reach it.")
    if p.grad is not None:
        return f"parameter {name} is frozen but has a .grad. Hint: freeze it before training."
    return None


@_leaves_rng_alone
def check_train_last_layer(train_last_layer):
    """Exercise 4: ``train_last_layer(model, inputs, targets, lr, steps)`` freezes all but
    the last layer of an ``nn.Sequential`` and trains it with SGD (momentum 0.9) on the MSE."""
    title = "train_last_layer"
    failed = not_a_function(title, train_last_layer)
    if failed is not None:
        return failed
    for seed, (lr, steps) in enumerate(_FREEZE_CASES):
        model, inputs, targets = _deep_model(seed)
        reference, _, _ = _deep_model(seed)
        _train_last_layer_reference(reference, inputs, targets, lr, steps)
        start = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
        where = f"{title}(model, inputs, targets, lr={lr}, steps={steps})"
        try:
            train_last_layer(model, inputs, targets, lr, steps)
        except Exception as error:  # the learner's code: report, never crash the notebook
            hint = (" Hint: nothing requires grad any more; the last layer must keep "
                    "training." if "does not require grad" in str(error) else "")
            first = str(error).split(". ")[0].rstrip(".")
            return CheckResult(False, f"{where} raised {type(error).__name__}: {first}.{hint}")
        last = {f"{len(model) - 1}.{n}" for n, _ in model[-1].named_parameters()}
        own = dict(reference.named_parameters())
        for name, p in model.named_parameters():
            if name not in last:
                problem = _frozen_problem(name, p, start[name])
                if problem:
                    return CheckResult(False, f"{where}: {problem}")
                continue
            if not p.requires_grad:
                return CheckResult(False, f"{where}: the last layer's {name} no longer "
                                          "requires grad. Hint: only the layers before it "
                                          "are frozen.")
            if not np.allclose(p.detach().numpy(), own[name].detach().numpy(), atol=1e-9):
                moved = not np.array_equal(p.detach().numpy(), start[name])
                return CheckResult(False, f"{where}: the last layer's {name} is "
                                          f"{_show(p)}, not where {steps} steps take it."
                                          + (" Hint: SGD(model.parameters(), lr=lr, "
                                             "momentum=0.9) on nn.MSELoss(), one zero_grad, "
                                             "backward and step per step." if moved else
                                             " It did not move at all."))
    return CheckResult(True, f"{title}: correct on {len(_FREEZE_CASES)} deeper models! The "
                             "frozen layers kept their weights and got no .grad; only the "
                             "last layer trained.")


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
            raise Mismatch(f"{label}, step {step}{what}: parameter {name} is {_show(got)}; "
                           f"expected {_show(want)}.{hint}")
        _compare_buffers(optimizer, own, params, own_params, label, step,
                         lambda name: _group_settings(settings, two_groups, name), before)


def _grads_unchanged(params, grads, label, step):
    """step() reads each .grad and leaves it as it was: backward() adds into it, so a
    changed .grad would leak into later steps whenever gradients accumulate."""
    for name, p in params.items():
        before, now = grads[name], p.grad
        if before is None or now is None:
            continue
        if not np.array_equal(now.detach().numpy(), before):
            raise Mismatch(f"{label}, step {step}: step() changed {name}.grad from "
                           f"{_show(before)} to {_show(now.detach().numpy())}. Hint: step() "
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
                           f"{_show(got)}; expected {_show(buffer)}.{hint}")


def _check_zero_grad(sgd_class):
    """zero_grad(): .grad None by default, a tensor of zeros with set_to_none=False."""
    params, loss_fn = _sgd_problem(0)
    optimizer = sgd_class(list(params.values()), lr=0.1)
    loss_fn().backward()
    optimizer.zero_grad(set_to_none=False)
    for name in ("w", "b"):
        grad = params[name].grad
        if grad is None or np.any(grad.numpy() != 0):
            raise Mismatch(f"zero_grad(set_to_none=False) left {name}.grad = {_show(grad)}; "
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
            raise Mismatch(f"{label}, step 1: parameter {name} is {_show(got)}; expected "
                           f"{_show(want)}, a step with PyTorch's default lr=0.001.")


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
        where = f"{label}, after step {step}"
        for name, p in layer.named_parameters():
            if p is not originals[name]:
                raise Mismatch(f"{where}: the model's {name} is another tensor than the "
                               "Parameter it had. Hint: change each parameter itself, in "
                               "place: the model must keep its very Parameter objects.")
            want = own_originals[name]
            same_dtype(f"{where}: parameter {name}", p, want)
            if not np.allclose(p.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6):
                raise Mismatch(f"{where}: parameter {name} is {_show(p)}; expected "
                               f"{_show(want)}.")
            buffer = own.state[want]["momentum_buffer"]
            entry = optimizer.state.get(p, {}) if hasattr(optimizer.state, "get") else {}
            mine = entry.get("momentum_buffer") if hasattr(entry, "get") else None
            if mine is not None:
                same_dtype(f"{where}: the momentum buffer of {name}", mine, buffer)
        with no_grad():
            same_dtype(f"{where}: the loss of the next forward pass", loss_of(layer),
                       loss_of(own_layer))


@_leaves_rng_alone
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
