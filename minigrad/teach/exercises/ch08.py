"""Exercise checks for chapter 8 (optimizers and zero_grad):
``from minigrad.teach.exercises import ch08``.

Each function takes the learner's answer, computes the right one itself with minigrad
(the chapter's linear regression: x = 1..11, y = 2x + 1, ``nn.Linear(1, 1, bias=False)``,
MSE, SGD) and returns a ``CheckResult`` that prints ✓ or ✗ with a hint; none raises.
"""


import numpy as np

from ... import nn, optim
from ...creation import from_numpy, tensor
from ...graph import no_grad
from ..checks import CheckResult, check
from ..checks import all_parts as _together, keeps_random_state as _leaves_rng_alone, no_answer as _no_answer, one_number as _one_number
from ..stepping import REGRESSION_X, REGRESSION_Y, training_run

__all__ = ["check_sgd_step", "check_two_epochs_without_zero_grad", "check_learning_rate",
           "GOOD_LOSS", "GOOD_EPOCHS"]

GOOD_LOSS = 0.22    # exercise 3: the loss to beat (the best this model can do is 5/23 ≈ 0.2174)
GOOD_EPOCHS = 20    # ... within this many epochs


# ---------------------------------------------------------------- exercise 1

def _sgd_case(case):
    """Parameters with gradients filled by one backward, for the two test cases.

    Case 0: one weight (the chapter's regression at w = 0.5). Case 1: a weight matrix and a
    bias of a tiny linear model (fixed numbers, no random draws)."""
    if case == 0:
        w = tensor([[0.5]], requires_grad=True)
        params = [w]

        def loss_fn():
            x, y = from_numpy(REGRESSION_X), from_numpy(REGRESSION_Y)
            return ((x @ w.T - y) ** 2).mean()
    else:
        w = tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
        b = tensor([0.1, -0.2], requires_grad=True)
        params = [w, b]
        x = tensor([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [3.0, 0.0, 1.0], [-2.0, 1.0, 0.5]])
        y = tensor([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0], [2.0, -2.0]])

        def loss_fn():
            return ((x @ w.T + b - y) ** 2).mean()
    return params, loss_fn


def _reference_after(case, lr, steps):
    """The parameters' values after ``steps`` rounds of backward + optim.SGD.step +
    zero_grad, as numpy arrays."""
    params, loss_fn = _sgd_case(case)
    optimizer = optim.SGD(params, lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss_fn().backward()
        optimizer.step()
    return [p.detach().numpy().copy() for p in params]


def check_sgd_step(sgd_step):
    """Exercise 1: ``sgd_step(params, lr)`` does one plain SGD update of every parameter in
    place (``p -= lr * p.grad``, without recording it) and then resets each ``.grad``."""
    title = "sgd_step"
    if _no_answer(sgd_step):
        return CheckResult(False, f"{title}: no answer yet. Define the function in the cell above "
                                  "and run it, then run this check again.")
    if not callable(sgd_step):
        return CheckResult(False, f"{title}: expected a function sgd_step(params, lr), got "
                                  f"{type(sgd_step).__name__}. Define it with def in the cell above.")
    for case, lr in ((0, 0.01), (1, 0.1)):
        params, loss_fn = _sgd_case(case)
        originals = list(params)
        loss_fn().backward()
        try:
            sgd_step(params, lr)
        except RuntimeError as error:
            if "in-place" in str(error) or "leaf" in str(error):
                return CheckResult(False, f"{title}: raised RuntimeError: {error}\nHint: autograd "
                                          "records operations on tensors that require grad; the "
                                          "update must not be recorded.")
            return CheckResult(False, f"{title}: raised RuntimeError: {error}")
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{title}: raised {type(error).__name__}: {error}")
        want = _reference_after(case, lr, 1)
        where = f"with {len(params)} parameter(s), lr={lr}"
        if any(p is not q for p, q in zip(params, originals)):
            return CheckResult(False, f"{title} ({where}): the list now holds other tensors than "
                                      "the parameters it was given. Hint: change each parameter "
                                      "itself (in place), as an optimizer does.")
        if any(not p.is_leaf or p.grad_fn is not None for p in params):
            return CheckResult(False, f"{title} ({where}): a parameter is no longer a leaf: the "
                                      "update was recorded in the graph. Hint: do it inside "
                                      "`with mg.no_grad():`.")
        if all(np.array_equal(p.detach().numpy(), s)
               for p, s in zip(params, _reference_after(case, lr, 0))):
            return CheckResult(False, f"{title} ({where}): the parameters did not change. Hint: "
                                      "`p = p - lr * p.grad` only gives the name p a new tensor; "
                                      "the parameter itself must change (in place).")
        if not all(np.allclose(p.detach().numpy(), v, rtol=1e-5, atol=1e-6)
                   for p, v in zip(params, want)):
            return CheckResult(False, f"{title} ({where}): the new values are not those of one SGD "
                                      "step. Hint: each parameter moves against its own gradient, "
                                      "by lr times that gradient.")
        if any(p.grad is not None and np.any(p.grad.detach().numpy() != 0) for p in params):
            return CheckResult(False, f"{title} ({where}): the values are right, but .grad still "
                                      "holds the old gradient, so the next backward() would add "
                                      "to it. Hint: reset it after the update.")
        # a second round: a function that forgets to reset would go wrong here
        loss_fn().backward()
        try:
            sgd_step(params, lr)
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{title}: the second call raised {type(error).__name__}: "
                                      f"{error}")
        if not all(np.allclose(p.detach().numpy(), v, rtol=1e-5, atol=1e-6)
                   for p, v in zip(params, _reference_after(case, lr, 2))):
            return CheckResult(False, f"{title} ({where}): one step is right, two in a row are not.")
    return CheckResult(True, f"{title}: correct! It matches optim.SGD step for step, with one "
                             "parameter and with two.")


# ---------------------------------------------------------------- exercise 2

EXERCISE2_START = 0.0   # the weight both runs start from
EXERCISE2_LR = 0.01


def _two_epochs(zero_grad):
    """The chapter's regression from w = 0 with SGD(lr=0.01), two epochs: .grad after the
    second backward, and the weight after the second step."""
    model = nn.Linear(1, 1, bias=False)
    with no_grad():
        model.weight.fill_(EXERCISE2_START)
    optimizer = optim.SGD(model.parameters(), lr=EXERCISE2_LR)
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
    """Exercise 2: start at w = 0, SGD with lr = 0.01. ``grad_with``: weight.grad after the
    second backward when zero_grad() runs every epoch; ``grad_without``: the same when it
    never runs; ``weight_without``: the weight after the second step without zero_grad."""
    want_with, _ = _two_epochs(zero_grad=True)
    want_without, want_weight = _two_epochs(zero_grad=False)
    return _together("Exercise 2", [
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


# ---------------------------------------------------------------- exercise 3

def _learning_rate_problem(lr):
    """None if ``lr`` is a usable learning rate, else the reason it is not."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating, np.integer)):
        return f"expected a number such as 0.5, got {type(lr).__name__}"
    if not np.isfinite(lr) or lr <= 0:
        return f"{lr!r} is not a positive learning rate"
    return None


@_leaves_rng_alone
def check_learning_rate(lr_good, lr_limit):
    """Exercise 3: ``lr_good``, a learning rate with which the chapter's SGD run (with
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
    return _together("Exercise 3", results)
