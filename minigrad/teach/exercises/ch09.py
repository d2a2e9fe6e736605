"""Exercise checks for chapter 9 (accumulation for big batches):
``from minigrad.teach.exercises import ch09``.

Each function takes the learner's answer, works out the right one itself with minigrad (a
real model, optimizer and DataLoader) and returns a ``CheckResult`` that prints ✓ or ✗ with
a hint; none of them raises, and none changes the default random stream.
"""

import math

import numpy as np

from ... import nn, optim
from ...creation import randn, tensor, zeros
from ...dtypes import float64
from ...graph import no_grad
from ...random import Generator
from ...tensor import Tensor
from ...utils.data import DataLoader, TensorDataset
from ..checks import CheckResult, check
from ..checks import all_parts as _together, keeps_random_state as _leaves_rng_alone, no_answer as _no_answer

__all__ = ["check_accumulated_step", "check_loss_scales", "check_steps_per_epoch",
           "N_EXAMPLES", "TRAIN_BATCH_SIZE", "ACCUMULATION_STEPS"]

# Exercise 3's training run (the names of the google-research script's arguments).
N_EXAMPLES = 1000
TRAIN_BATCH_SIZE = 24
ACCUMULATION_STEPS = 4


# ----------------------------------------------------------- exercise 1: the accumulation loop

class _Recorder(nn.Module):
    """The exercise's model, which also writes down the batch size of every forward pass."""

    def __init__(self, generator):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
        with no_grad():
            for _, p in self.net.named_parameters():
                p.copy_(randn(*p.shape, generator=generator, dtype=float64))
        self.seen = []

    def forward(self, x):
        self.seen.append(len(x))
        return self.net(x)


class _CountingSGD(optim.SGD):
    """SGD that counts how often ``step()`` runs."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.steps = 0

    def step(self, closure=None):
        self.steps += 1
        return super().step(closure)


_LR = 0.1


def _values(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _gradients(model, inputs, targets, criterion):
    """The gradient of the mean loss over ``inputs`` at the model's current parameters."""
    model.zero_grad()
    criterion(model(inputs), targets).backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    return grads


def _moved_by(before, after, lr, grads):
    """Did every parameter move by ``-lr * grad``?"""
    return all(np.allclose(a - b, -lr * g, rtol=1e-7, atol=1e-10)
               for b, a, g in zip(before, after, grads))


def _diagnose(before, after, inputs, targets, criterion, steps):
    """Why did one call not match one big-batch step? A hint, never the code."""
    n = len(inputs)
    micro = n // steps
    probe = _Recorder(Generator().manual_seed(0))  # a model at the call's starting point
    with no_grad():
        for p, value in zip(probe.parameters(), before):
            p.copy_(tensor(value, dtype=float64))
    full = _gradients(probe, inputs, targets, criterion)
    last = _gradients(probe, inputs[n - micro:], targets[n - micro:], criterion)
    if _moved_by(before, after, _LR, [steps * g for g in full]):
        return (f"your update is {steps} times the big batch's. Hint: each micro-batch's "
                "mean loss is one share of the batch's mean loss; backward() adds the "
                "gradients of all micro-batches, so scale each loss before backward().")
    if (_moved_by(before, after, _LR, [g / steps for g in last])
            or _moved_by(before, after, _LR, last)):
        return ("only the last micro-batch's gradient reached the step. Hint: something "
                "cleared .grad between the micro-batches; clear it once per optimizer step, "
                "not once per micro-batch.")
    return ("the parameters did not move the way one step on the whole batch moves them. "
            "Hint: every micro-batch needs its forward pass, its scaled loss and its "
            "backward(); then one optimizer.step().")


@_leaves_rng_alone
def check_accumulated_step(accumulated_step):
    """Exercise 1: ``accumulated_step(model, optimizer, criterion, inputs, targets,
    accumulation_steps)`` makes ONE optimizer step on the whole batch, computing the gradient
    in ``accumulation_steps`` equal micro-batches. It must give the big-batch step, call after
    call."""
    title = "accumulated_step"
    if _no_answer(accumulated_step):
        return CheckResult(False, f"{title}: no answer yet. Define the function in the cell above "
                                  "and run it, then run this check again.")
    if not callable(accumulated_step):
        return CheckResult(False, f"{title}: expected a function (def {title}(...): ...), "
                                  f"got {type(accumulated_step).__name__}.")
    criterion = nn.MSELoss()
    for n, steps, seed in ((12, 3, 1), (16, 4, 2)):
        data = Generator().manual_seed(seed)
        model = _Recorder(Generator().manual_seed(seed + 10))
        reference = _Recorder(Generator().manual_seed(seed + 10))
        optimizer = _CountingSGD(model.parameters(), lr=_LR)
        reference_optimizer = optim.SGD(reference.parameters(), lr=_LR)
        for call in (1, 2):
            inputs = randn(n, 3, generator=data, dtype=float64)
            targets = randn(n, 1, generator=data, dtype=float64)
            where = f"{title}(..., a batch of {n}, accumulation_steps={steps})"
            before = _values(model)
            model.seen, optimizer.steps = [], 0
            try:
                accumulated_step(model, optimizer, criterion, inputs, targets, steps)
            except Exception as error:  # the learner's code: report, never crash the notebook
                return CheckResult(False, f"{where} raised {type(error).__name__}: {error}")
            after = _values(model)
            # what one step on the whole batch does
            reference_optimizer.zero_grad()
            criterion(reference(inputs), targets).backward()
            reference_optimizer.step()
            reference_optimizer.zero_grad()
            if model.seen == [n]:
                return CheckResult(False, f"{where}: the model saw the whole batch in one "
                                          "forward pass. Hint: cut it into accumulation_steps "
                                          "slices of len(inputs) // accumulation_steps rows.")
            if model.seen != [n // steps] * steps:
                return CheckResult(False, f"{where}: the forward passes saw batches of sizes "
                                          f"{model.seen}; expected {steps} micro-batches of "
                                          f"{n // steps}. Hint: slice rows start:start + size, "
                                          "with start = i * size.")
            if optimizer.steps == 0:
                return CheckResult(False, f"{where}: optimizer.step() never ran, so the "
                                          "parameters did not change. Hint: step once, after "
                                          "the last micro-batch.")
            if optimizer.steps > 1:
                return CheckResult(False, f"{where}: optimizer.step() ran {optimizer.steps} "
                                          "times in one call. Hint: backward() on every "
                                          "micro-batch, step() only once, after the last.")
            if all(np.allclose(a, r, rtol=1e-7, atol=1e-10)
                   for a, r in zip(after, _values(reference))):
                continue
            if call == 2:
                return CheckResult(False, f"{where}: the first call was right, the second was "
                                          "not. Hint: the first call's gradients were still in "
                                          ".grad when the second began; clear them once per "
                                          "optimizer step.")
            return CheckResult(False, f"{where}: "
                               + _diagnose(before, after, inputs, targets, criterion,
                                           steps))
    return CheckResult(True, f"{title}: correct! One step on micro-batches equals one step on "
                             "the whole batch, call after call.")


# ----------------------------------------------------------- exercise 2: the scale factors

def _reference_scales(micro_batch_sizes):
    """Each micro-batch's share of the batch: the gradient of the batch's mean loss is the
    sum of the micro-batch means' gradients, each times that share (verified below)."""
    total = sum(micro_batch_sizes)
    return [size / total for size in micro_batch_sizes]


def _scales_are_right(micro_batch_sizes, scales):
    """Prove it with minigrad: scaled micro-batch backward passes give the big batch's
    gradient of the mean loss."""
    generator = Generator().manual_seed(3)
    n = sum(micro_batch_sizes)
    inputs = randn(n, 2, generator=generator, dtype=float64)
    targets = randn(n, 1, generator=generator, dtype=float64)
    weight = randn(2, 1, generator=generator, dtype=float64).requires_grad_()
    ((inputs @ weight - targets) ** 2).mean().backward()
    full = weight.grad.numpy().copy()
    weight.grad = None
    start = 0
    for size, scale in zip(micro_batch_sizes, scales):
        rows = slice(start, start + size)
        (((inputs[rows] @ weight - targets[rows]) ** 2).mean() * scale).backward()
        start += size
    return np.allclose(weight.grad.numpy(), full, rtol=1e-6, atol=1e-9)


def check_loss_scales(loss_scales):
    """Exercise 2: ``loss_scales(micro_batch_sizes)`` returns, for each micro-batch, the
    number to multiply its mean loss by so that the accumulated gradient is the gradient
    of the mean loss over the whole batch."""
    title = "loss_scales"
    if _no_answer(loss_scales):
        return CheckResult(False, f"{title}: no answer yet. Define the function in the cell above "
                                  "and run it, then run this check again.")
    if not callable(loss_scales):
        return CheckResult(False, f"{title}: expected a function (def {title}(...): ...), "
                                  f"got {type(loss_scales).__name__}.")
    cases = ([16, 16, 16, 16], [16, 16, 16, 2], [10, 5], [7], [3, 1, 4, 1, 5])
    for sizes in cases:
        want = _reference_scales(sizes)
        where = f"{title}({sizes})"
        try:
            got = loss_scales(list(sizes))
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{where} raised {type(error).__name__}: {error}")
        if isinstance(got, Tensor):
            got = got.tolist()
        try:
            values = np.asarray(got, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            return CheckResult(False, f"{where} returned {got!r}; expected a list of "
                                      f"{len(sizes)} numbers, one per micro-batch.")
        if values.size != len(sizes):
            return CheckResult(False, f"{where} returned {values.size} number(s); expected "
                                      f"{len(sizes)}, one per micro-batch.")
        if (np.allclose(values, want, rtol=1e-6, atol=1e-9)
                and _scales_are_right(sizes, values.tolist())):
            continue
        if np.allclose(values, 1 / len(sizes)):
            return CheckResult(False, f"{where} gives every micro-batch the same share. Hint: "
                                      "that is right only when all micro-batches are equal; "
                                      "here a small one would count as much as a full one.")
        if np.allclose(values, [1 / s for s in sizes]):
            return CheckResult(False, f"{where}: a mean loss is already divided by its own "
                                      "micro-batch's size. Hint: what share of the whole "
                                      "batch's examples does each micro-batch hold?")
        if not np.isclose(values.sum(), 1.0):
            return CheckResult(False, f"{where}: your factors add up to {values.sum():.4g}. "
                                      "Hint: together the micro-batches make one whole batch, "
                                      "so their shares must add up to 1.")
        return CheckResult(False, f"{where} = {values.tolist()} is not right yet. Hint: a "
                                  "bigger micro-batch holds more of the batch's examples and "
                                  "must weigh more.")
    return CheckResult(True, f"{title}: correct on all {len(cases)} splits! Each micro-batch "
                             "weighs what its share of the examples is.")


# ----------------------------------------------------------- exercise 3: steps per epoch

def _count_epoch():
    """Run one epoch's bookkeeping of the google-research loop on a real DataLoader."""
    dataset = TensorDataset(zeros(N_EXAMPLES, 1))
    loader = DataLoader(dataset, batch_size=TRAIN_BATCH_SIZE)  # drop_last=False: the default
    micro_batches = steps = 0
    for i, (batch,) in enumerate(loader):
        micro_batches += 1
        if (i + 1) % ACCUMULATION_STEPS == 0:
            steps += 1
    assert micro_batches == len(loader)
    return TRAIN_BATCH_SIZE * ACCUMULATION_STEPS, micro_batches, steps


def _whole_number(answer):
    """An integer-valued answer as a float (so 42, 42.0 and tensor(42) all count)."""
    if _no_answer(answer) or isinstance(answer, (bool, str, bytes)):
        return answer
    if isinstance(answer, Tensor):
        return answer.item() if answer.numel() == 1 else answer
    return answer


def check_steps_per_epoch(effective_batch_size, micro_batches_per_epoch,
                          optimizer_steps_per_epoch):
    """Exercise 3: 1,000 examples, train_batch_size 24 (a DataLoader without drop_last),
    gradient_accumulation_steps 4 and the loop that steps when (step + 1) % 4 == 0."""
    want_batch, want_micro, want_steps = _count_epoch()
    micro = _whole_number(micro_batches_per_epoch)
    steps = _whole_number(optimizer_steps_per_epoch)
    micro_result = check("micro-batches per epoch", micro, want_micro, tol=0,
                         hint="every forward pass takes train_batch_size examples, and the "
                              "DataLoader keeps a last, smaller batch unless drop_last=True.")
    if isinstance(micro, (int, float)) and micro == math.floor(N_EXAMPLES / TRAIN_BATCH_SIZE):
        micro_result = CheckResult(False, f"micro-batches per epoch: {micro:g} leaves out the "
                                          "last, smaller micro-batch. Hint: a DataLoader "
                                          "keeps it unless drop_last=True.")
    steps_result = check("optimizer steps per epoch", steps, want_steps, tol=0,
                         hint="step() runs only after micro-batches number 4, 8, 12, ...; "
                              "count how many of those an epoch reaches.")
    if (isinstance(steps, (int, float))
            and steps == math.ceil(N_EXAMPLES / (TRAIN_BATCH_SIZE * ACCUMULATION_STEPS))
            and steps != want_steps):
        steps_result = CheckResult(False, f"optimizer steps per epoch: {steps:g} counts a step "
                                          "for the micro-batches left over at the end. Hint: "
                                          "the loop steps only when (step + 1) % 4 == 0.")
    return _together("Exercise 3", [
        check("effective batch size", _whole_number(effective_batch_size), want_batch, tol=0,
              hint="one optimizer step uses the gradients of gradient_accumulation_steps "
                   "micro-batches of train_batch_size examples each."),
        micro_result,
        steps_result,
    ])
