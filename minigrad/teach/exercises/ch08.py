"""Exercise checks for chapter 8 (optimizers and zero_grad), in three parts:
``notebooks/08a_zero_grad.ipynb`` (exercises 1 and 2), ``notebooks/08b_optimizers.ipynb``
(exercises 3 and 4) and ``notebooks/08c_adam.ipynb`` (two predictions, ``FIRST_ADAM_STEP``
and ``BOWL_WINNER``: predict, then run): ``from minigrad.teach.exercises import ch08``.
The chapter's build piece ``sgd`` (also in part 2) is checked by ``ch08_build``; its second
build piece ``adam`` (part 3, ``notebooks/08c_adam.ipynb``) by ``ch08_adam``, registered when
this module loads.

Each function takes the learner's answer, computes the right one itself with minigrad
(the chapter's linear regression: x = 1..11, y = 2x + 1, ``nn.Linear(1, 1, bias=False)``,
MSE, SGD) and returns a ``CheckResult`` that prints ✓ or ✗ with a hint; none raises.
"""

import math

import numpy as np

from ... import nn, optim
from ...creation import from_numpy, tensor
from ...dtypes import float64
from ...graph import no_grad
from ...optim import sgd as _sgd_module
from ...optim.adam import Adam as OwnAdam
from ..build import show
from ..predictions import Prediction
from ..checks import (
    CheckResult, all_parts, check, keeps_random_state, no_answer, not_a_function, one_number)
from ...random import manual_seed
from ..stepping import REGRESSION_X, REGRESSION_Y, training_run
from . import ch08_adam  # registers the build piece "adam"
from .ch08_build import TORCH_SGD_DEFAULTS  # also read as ch08.TORCH_SGD_DEFAULTS

__all__ = ["check_two_epochs_without_zero_grad", "check_learning_rate", "check_fixed_loop",
           "check_train_last_layer", "GOOD_LOSS", "GOOD_EPOCHS", "TORCH_SGD_DEFAULTS",
           "FIRST_ADAM_STEP", "BOWL_WINNER", "BOWL", "bowl_runs"]

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


@keeps_random_state
def check_two_epochs_without_zero_grad(grad_with, grad_without, weight_without):
    """Exercise 1: start at w = 0, SGD with lr = 0.01. ``grad_with``: weight.grad after the
    second backward when zero_grad() runs every epoch; ``grad_without``: the same when it
    never runs; ``weight_without``: the weight after the second step without zero_grad."""
    want_with, _ = _two_epochs(zero_grad=True)
    want_without, want_weight = _two_epochs(zero_grad=False)
    return all_parts("Exercise 1", [
        check("weight.grad in epoch 2 with zero_grad()", one_number(grad_with), want_with,
              tol=1e-3,
              hint="with zero_grad() the .grad of epoch 2 is just the gradient at the weight "
                   "epoch 1 left behind. Find that weight first: w1 = w0 - lr * g(w0)."),
        check("weight.grad in epoch 2 without zero_grad()", one_number(grad_without),
              want_without, tol=1e-3,
              hint="the first step is the same in both runs, and so is the weight it reaches; "
                   "but nothing cleared epoch 1's gradient before epoch 2's backward()."),
        check("weight after the second step without zero_grad()", one_number(weight_without),
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


@keeps_random_state
def check_learning_rate(lr_good, lr_limit):
    """Exercise 2: ``lr_good``, a learning rate with which the chapter's SGD run (with
    zero_grad) gets the loss below 0.22 within 20 epochs; ``lr_limit``, the learning rate
    above which plain SGD on this problem no longer converges (2 / 92)."""
    results = []
    name = f"lr_good (loss below {GOOD_LOSS} within {GOOD_EPOCHS} epochs)"
    if no_answer(lr_good):
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
    results.append(check("lr_limit", one_number(lr_limit), 2 / h, tol=2e-4,
                         hint="each step multiplies the distance to the best weight by "
                              "(1 - 92 * lr). The steps shrink that distance as long as this "
                              "factor lies between -1 and 1."))
    return all_parts("Exercise 2", results)


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


@keeps_random_state
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


@keeps_random_state
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
                                          f"{show(p)}, not where {steps} steps take it."
                                          + (" Hint: SGD(model.parameters(), lr=lr, "
                                             "momentum=0.9) on nn.MSELoss(), one zero_grad, "
                                             "backward and step per step." if moved else
                                             " It did not move at all."))
    return CheckResult(True, f"{title}: correct on {len(_FREEZE_CASES)} deeper models! The "
                             "frozen layers kept their weights and got no .grad; only the "
                             "last layer trained.")


# ---------------------------------------------------------------- 08c: predict, then run

FIRST_STEP_LR = 0.1   # prediction 1: optim.Adam(model.parameters(), lr=0.1)


@keeps_random_state
def _first_adam_run():
    """The chapter's weight before and after one step of optim.Adam(lr=0.1) from the seeded
    start of 08a, and the gradient there (about -170.8)."""
    manual_seed(0)
    model = nn.Linear(1, 1, bias=False)
    optimizer = OwnAdam(model.parameters(), lr=FIRST_STEP_LR)   # minigrad's own, always
    before = model.weight.item()
    nn.MSELoss()(model(from_numpy(REGRESSION_X)), from_numpy(REGRESSION_Y)).backward()
    grad = model.weight.grad.item()
    optimizer.step()
    return before, grad, model.weight.item()


def _first_adam_step():
    """How far (and which way) the weight moves in Adam's first step."""
    before, _, after = _first_adam_run()
    moved = after - before
    return moved, f"w moved by {moved:.4f}, that is {moved / FIRST_STEP_LR:.4f} lr"


def _near(value, target, rel=0.05):
    return math.isclose(value, target, rel_tol=rel)


def _first_step_hint(predicted, answer):
    """The mistake a wrong prediction of Adam's first step shows, named without the answer."""
    _, grad, _ = _first_adam_run()
    size = abs(predicted)
    if _near(size, FIRST_STEP_LR * ch08_adam.first_step_without_correction()):
        return ("That is the step without bias correction: m and v start at zero, and "
                "section 1's line 3 divides them by 1 - β^t before the step.")
    if _near(predicted, -answer, rel=1e-3):
        return "Right size, wrong sign: which way does w move when g < 0?"
    if _near(size, FIRST_STEP_LR * abs(grad)):
        return ("That is SGD's step, lr times g, not Adam's: Adam divides m̂ by "
                "sqrt(v̂) + ε.")
    if _near(size, 1.0):
        return ("Answer in units of w, not of lr: how far does w itself move?")
    return ("Look at m̂ and v̂ after one step: what is m̂ / sqrt(v̂) when m̂ = g and "
            "v̂ = g²?")


FIRST_ADAM_STEP = Prediction(
    "Prediction 1 (Adam's first step)", _first_adam_step, tol=1e-3, hint=_first_step_hint)

# The ill-conditioned bowl of 08c, section 3: f(x, y) = (x² + 40 y²) / 2 from (-4.5, 1), 50
# steps, each optimizer with a reasonable learning rate (not each one's best: better settings
# exist for all three, and momentum stays ahead; tests/test_exercises_ch08.py measures them).
BOWL = {"curvatures": (1.0, 40.0), "start": (-4.5, 1.0), "steps": 50,
        "runs": {"SGD": ("SGD", dict(lr=0.045)),
                 "SGD + momentum": ("SGD", dict(lr=0.02, momentum=0.8)),
                 "Adam": ("Adam", dict(lr=0.3))}}


def bowl_runs(lib=None):
    """The three runs on the bowl with ``lib`` (minigrad's optim, or torch): {name: the
    points visited, an array (steps + 1, 2)}."""
    library_optim = optim if lib is None else lib.optim
    make = tensor if lib is None else lib.tensor
    a, b = BOWL["curvatures"]
    paths = {}
    for name, (kind, settings) in BOWL["runs"].items():
        p = make(list(BOWL["start"]), dtype=float64 if lib is None else lib.float64,
                 requires_grad=True)
        optimizer = getattr(library_optim, kind)([p], **settings)
        points = [p.detach().numpy().copy()]
        for _ in range(BOWL["steps"]):
            optimizer.zero_grad()
            (0.5 * (a * p[0] ** 2 + b * p[1] ** 2)).backward()
            optimizer.step()
            points.append(p.detach().numpy().copy())
        paths[name] = np.array(points)
    return paths


def _bowl_winner():
    a, b = BOWL["curvatures"]
    final = {name: 0.5 * (a * path[-1][0] ** 2 + b * path[-1][1] ** 2)
             for name, path in bowl_runs().items()}
    best = min(final, key=final.get)
    letter = {"SGD": "a", "SGD + momentum": "b", "Adam": "c"}[best]
    shown = ", ".join(f"{name} {value:.2g}" for name, value in final.items())
    return letter, f"the bowl's value after {BOWL['steps']} steps: {shown}"


BOWL_WINNER = Prediction(
    "Prediction 2 (the bowl)", _bowl_winner,
    choices={"a": "plain SGD", "b": "SGD with momentum", "c": "Adam"},
    hint="Which method can take long steps along the flat valley without zig-zagging "
         "across the steep walls, and which one's steps stay a sizeable fraction of lr near "
         "the minimum?")
