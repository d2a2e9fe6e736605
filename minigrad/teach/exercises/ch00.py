"""Chapter 0 exercises (``notebooks/00_welcome.ipynb``): a first prediction locked in before
the widget shows the answer (``grad_prediction``), a first tensor, a first model output, a
first training step.

Each check takes the learner's answer, works out the right one itself with minigrad and
returns a ``CheckResult`` (it prints ✓ or ✗ with a hint and never raises). The prediction is
a ``teach.predictions.Prediction``: ``lock`` the number first, press the widget, ``reveal``.
"""

from ... import Tensor, creation, nn, optim
from ...graph import no_grad
from ...random import default_generator
from ..checks import CheckResult, check, no_answer, not_a_function
from ..predictions import Prediction

__all__ = ["check_product", "check_prediction", "check_training_step", "grad_prediction",
           "PRESSES"]


# ------------------------------------------------------------------ the widget: predict, then run

PRESSES = 3  # the widget's button "z = 3*x*x; z.backward()", pressed this many times


def _grad_after_presses():
    """x.grad after PRESSES times ``z = 3 * x * x; z.backward()`` at x = 2, measured."""
    x = creation.tensor([2.0], requires_grad=True)
    seen = []
    for _ in range(PRESSES):
        z = 3 * x * x
        z.backward()
        seen.append(f"{x.grad.item():g}")
    return x.grad.item(), f"x.grad went {', '.join(seen)}"


grad_prediction = Prediction(
    "x.grad after three presses", _grad_after_presses,
    hint="Each press runs backward() once more on a new z: does .grad start again from "
         "nothing, or keep what it held? Remember the presses cell above.")
"""The widget of section 2: what ``x.grad`` holds after three presses of its backward
button, locked in as a number before pressing."""



def check_product(product):
    """Exercise 1: ``product`` is 3 * 4 computed with tensors: a tensor holding 12."""
    name = "product"
    if no_answer(product):
        return check(name, product, 12)
    if not isinstance(product, Tensor):
        return CheckResult(False, f"{name}: {product!r} is of type {type(product).__name__}, "
                                  "not a tensor. Hint: turn the numbers into tensors first, then "
                                  "multiply the tensors.")
    if product.numel() != 1:
        return CheckResult(False, f"{name}: your tensor holds {product.numel()} numbers; the "
                                  "answer is a single number.")
    expected = creation.tensor(3.0) * creation.tensor(4.0)
    return check(name, product.reshape(()), expected,
                 hint="multiply a tensor holding 3 by a tensor holding 4.")


def check_prediction(prediction, model):
    """Exercise 2: ``prediction`` is what the trained ``model`` says for x = 3: a tensor of
    shape (1, 1) from a batch of one sample with one feature, or of shape (1,) from one
    sample given without a batch dimension (``nn.Linear`` takes both, as in PyTorch)."""
    name = "prediction"
    if no_answer(prediction):
        return check(name, prediction, 7.0)
    if not isinstance(prediction, Tensor):
        return CheckResult(False, f"{name}: {prediction!r} is of type "
                                  f"{type(prediction).__name__}, not a tensor: keep what the "
                                  "model returns.")
    x = [3.0] if tuple(prediction.shape) == (1,) else [[3.0]]
    with no_grad():
        expected = model(creation.tensor(x))
    return check(name, prediction, expected, tol=1e-5,
                 hint="give the model a batch of one sample with one feature, x = 3, and "
                      "keep its output as it is.")


def _toy_problem():
    """Two identical models (weight 0.5, bias 0), their optimizers and a small data set.
    Uses no random numbers, so checking does not move the notebook's random stream."""
    state = default_generator.get_state()
    models = [nn.Linear(1, 1), nn.Linear(1, 1)]
    default_generator.set_state(state)
    for model in models:
        with no_grad():
            model.weight.fill_(0.5)
            model.bias.fill_(0.0)
    optimizers = [optim.SGD(model.parameters(), lr=0.1) for model in models]
    inputs = creation.linspace(-2, 2, 8).reshape(8, 1)
    targets = 2 * inputs + 1
    return models, optimizers, inputs, targets


def _reference_step(model, criterion, optimizer, inputs, targets):
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def _parameters(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _same(a, b, tol=1e-6):
    return all(abs(x - y).max() <= tol for x, y in zip(a, b))


def check_training_step(training_step, steps=3):
    """Exercise 3: ``training_step(model, criterion, optimizer, inputs, targets)`` does one
    step of the training loop and returns the loss as a number. Run ``steps`` times on a fresh
    model, it must give the same losses and parameters as the loop of the chapter."""
    name = "training_step"
    failed = not_a_function(name, training_step)
    if failed is not None:
        return failed
    (model, reference), (optimizer, reference_optimizer), inputs, targets = _toy_problem()
    criterion = nn.MSELoss()
    for step in range(1, steps + 1):
        before = _parameters(model)
        try:
            loss = training_step(model, criterion, optimizer, inputs, targets)
        except Exception as error:  # the learner's code: report it, never crash the notebook
            return CheckResult(False, f"{name}: step {step} raised {type(error).__name__}: {error}")
        want = _reference_step(reference, criterion, reference_optimizer, inputs, targets)
        if no_answer(loss):
            return CheckResult(False, f"{name}: returned {loss!r}. Return this step's loss as "
                                      "a Python number.")
        result = check(f"{name}: the loss returned at step {step}", loss, want, tol=1e-5,
                       hint="return the loss of this step's prediction, computed before the "
                            "parameters change.")
        if not result:
            return result
        if _same(before, _parameters(model), tol=0.0):
            if all(p.grad is None for p in model.parameters()):
                return CheckResult(False, f"{name}: after step {step} the parameters have not "
                                          "changed, and they hold no gradient. Hint: the "
                                          "optimizer can only use gradients that are there when "
                                          "it updates.")
            return CheckResult(False, f"{name}: after step {step} the parameters have not "
                                      "changed. Hint: something must ask the optimizer to update "
                                      "them, after the gradients are computed.")
        if not _same(_parameters(model), _parameters(reference)):
            if step > 1:
                return CheckResult(False, f"{name}: step 1 is right but step {step} is not. "
                                          "Hint: are the gradients of the previous step still "
                                          "in .grad when the new ones arrive?")
            return CheckResult(False, f"{name}: after step 1 the parameters are not where one "
                                      "step of SGD takes them. Hint: the order is forward, loss, "
                                      "backward, update.")
    return CheckResult(True, f"{name}: correct! {steps} steps match the training loop, step "
                             "for step.")
