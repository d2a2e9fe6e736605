"""Exercise checks for chapter 9 (accumulation for big batches), in two parts:
``notebooks/09a_micro_batches.ipynb`` (the build piece ``accumulated_step``, exercises 1
and 2) and ``notebooks/09b_memory_and_shared_weights.ipynb`` (exercise 3):
``from minigrad.teach.exercises import ch09``.

Each function takes the learner's answer, works out the right one itself with minigrad (a
real model, optimizer and DataLoader) and returns a ``CheckResult`` that prints ✓ or ✗ with
a hint; none of them raises, and none changes the default random stream.
"""

import contextlib
import functools
import math
import sys
from unittest import mock

import numpy as np

from ... import nn
from ...optim import sgd as _sgd_module
from ...creation import randn, tensor, zeros
from ...dtypes import float32, float64
from ...graph import no_grad
from ...random import Generator
from ... import Tensor
from ...utils.data import DataLoader, TensorDataset
from ..build import Mismatch, Piece, register, same_dtype
from ..checks import CheckResult, all_parts, check, keeps_random_state, no_answer, not_a_function

__all__ = ["accumulated_step", "training_step", "check_loss_scales", "check_steps_per_epoch",
           "check_step_contributions", "step_shares",
           "N_EXAMPLES", "TRAIN_BATCH_SIZE", "ACCUMULATION_STEPS"]

# Exercise 2's training run (the names of the google-research script's arguments).
N_EXAMPLES = 1000
TRAIN_BATCH_SIZE = 24
ACCUMULATION_STEPS = 4


# ----------------------------------------------------------- exercise 1: the scale factors

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


def _numbers_returned(where, call, count, each):
    """Call the learner's function: ``(its answer as a flat float array, None)``, or ``(None,
    the CheckResult that says why there is none)``; ``each`` names what one number is for."""
    try:
        got = call()
    except Exception as error:  # the learner's code: report, never crash the notebook
        return None, CheckResult(False, f"{where} raised {type(error).__name__}: {error}")
    if isinstance(got, Tensor):
        got = got.tolist()
    try:
        return np.asarray(got, dtype=float).reshape(-1), None
    except (TypeError, ValueError):
        return None, CheckResult(False, f"{where} returned {got!r}; expected a list of "
                                        f"{count} numbers, one per {each}.")


def check_loss_scales(loss_scales):
    """Exercise 1: ``loss_scales(micro_batch_sizes)`` returns, for each micro-batch, the
    number to multiply its mean loss by so that the accumulated gradient is the gradient
    of the mean loss over the whole batch."""
    title = "loss_scales"
    failed = not_a_function(title, loss_scales)
    if failed is not None:
        return failed
    cases = ([16, 16, 16, 16], [16, 16, 16, 2], [10, 5], [7], [3, 1, 4, 1, 5])
    for sizes in cases:
        want = _reference_scales(sizes)
        where = f"{title}({sizes})"
        values, problem = _numbers_returned(where, lambda: loss_scales(list(sizes)),
                                            len(sizes), "micro-batch")
        if problem is not None:
            return problem
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


# ----------------------------------------------------------- exercise 2: steps per epoch

def _count_epoch():
    """Run one epoch's bookkeeping of the google-research loop on a real DataLoader."""
    dataset = TensorDataset(zeros(N_EXAMPLES, 1))
    loader = DataLoader(dataset, batch_size=TRAIN_BATCH_SIZE)  # drop_last=False: the default
    micro_batches = steps = 0
    for i, (_batch,) in enumerate(loader):
        micro_batches += 1
        if (i + 1) % ACCUMULATION_STEPS == 0:
            steps += 1
    assert micro_batches == len(loader)
    return TRAIN_BATCH_SIZE * ACCUMULATION_STEPS, micro_batches, steps


def _whole_number(answer):
    """An integer-valued answer as a float (so 42, 42.0 and tensor(42) all count)."""
    if no_answer(answer) or isinstance(answer, (bool, str, bytes)):
        return answer
    if isinstance(answer, Tensor):
        return answer.item() if answer.numel() == 1 else answer
    return answer


def check_steps_per_epoch(effective_batch_size, micro_batches_per_epoch,
                          optimizer_steps_per_epoch):
    """Exercise 2: 1,000 examples, train_batch_size 24 (a DataLoader without drop_last),
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
    return all_parts("Exercise 2", [
        check("effective batch size", _whole_number(effective_batch_size), want_batch, tol=0,
              hint="one optimizer step uses the gradients of gradient_accumulation_steps "
                   "micro-batches of train_batch_size examples each."),
        micro_result,
        steps_result,
    ])


# ----------------------------------------------------------- exercise 3: one weight, every step

# (w, the inputs x_1..x_T, h_0): other lengths and numbers than the chapter's
_RNN_CASES = [(0.6, [0.4, -0.3, 0.1, 0.5], 0.5), (-0.8, [1.0, 0.2], 1.0), (1.1, [0.3], -0.5),
              (0.5, [-0.2, 0.6, -0.1, 0.3, 0.2], 0.8)]


def step_shares(w, xs, h0):
    """What each time step's use of the shared weight adds into w.grad, for
    h_t = tanh(w h_{t-1} + x_t) and the loss h_T; measured with minigrad: a clone of w per
    step and a hook on each clone. Returns (the list of shares, w.grad)."""
    weight = tensor(float(w), dtype=float64, requires_grad=True)
    h = tensor(float(h0), dtype=float64)
    shares = {}
    for t, x in enumerate(xs, start=1):
        w_t = weight.clone()                       # step t's use of w
        w_t.register_hook(lambda grad, t=t: shares.update({t: grad.item()}))
        h = (w_t * h + float(x)).tanh()
    h.backward()
    return [shares[t] for t in range(1, len(xs) + 1)], weight.grad.item()


def _rnn_variants(w, xs, h0):
    """Typical wrong answers, computed by hand: {hint: shares}."""
    hs = [h0]
    for x in xs:
        hs.append(math.tanh(w * hs[-1] + x))
    T = len(xs)

    def walk(derivative=True, carry=True, state_before=True):
        shares, grad_h = [0.0] * T, 1.0
        for t in range(T, 0, -1):
            grad_a = grad_h * ((1 - hs[t] ** 2) if derivative else 1.0)
            shares[t - 1] = grad_a * (hs[t - 1] if state_before else hs[t])
            grad_h = grad_a * w if carry else 0.0
        return shares
    return {
        "the gradient passes through tanh at every step: multiply by its derivative, "
        "1 - tanh(a)^2 = 1 - h_t^2.": walk(derivative=False),
        "an earlier step reaches the loss through every later step: carry the gradient "
        "from h_t back to h_(t-1) (through the w that multiplies it).": walk(carry=False),
        "step t multiplies w by the state it receives, h_(t-1), not the one it makes.":
            walk(state_before=False),
    }


@keeps_random_state
def check_step_contributions(step_contributions):
    """Exercise 3: ``step_contributions(w, xs, h0)`` returns, for h_t = tanh(w h_{t-1} + x_t)
    and the loss h_T, the list of what each time step adds into w.grad (their sum)."""
    title = "step_contributions"
    failed = not_a_function(title, step_contributions)
    if failed is not None:
        return failed
    for w, xs, h0 in _RNN_CASES:
        want, total = step_shares(w, xs, h0)
        where = f"{title}({w}, {xs}, {h0})"
        values, problem = _numbers_returned(
            where, lambda: step_contributions(w, list(xs), h0), len(xs), "time step")
        if problem is not None:
            return problem
        if values.size == 1 and len(xs) > 1 and np.isclose(values[0], total, atol=1e-6):
            return CheckResult(False, f"{where} returned one number, w.grad itself. Hint: the "
                                      "exercise asks for its parts, one per time step, in "
                                      "order; they add up to it.")
        if values.size != len(xs):
            return CheckResult(False, f"{where} returned {values.size} number(s); expected "
                                      f"{len(xs)}, one per time step.")
        if np.allclose(values, want, rtol=1e-5, atol=1e-7):
            continue
        if len(xs) > 1 and np.allclose(values[::-1], want, rtol=1e-5, atol=1e-7):
            return CheckResult(False, f"{where}: the right numbers, from the last time step to "
                                      "the first. Hint: list them as the steps run, step 1 "
                                      "first.")
        for hint, variant in _rnn_variants(w, xs, h0).items():
            if np.allclose(values, variant, rtol=1e-5, atol=1e-7):
                return CheckResult(False, f"{where} = {np.round(values, 4).tolist()} is not "
                                          f"right yet. Hint: {hint}")
        return CheckResult(False, f"{where} = {np.round(values, 4).tolist()} is not right yet. "
                                  "Hint: walk back from L = h_T, as backward() does: at each "
                                  "step, through tanh, then split into what goes to w and "
                                  "what goes on to h_(t-1).")
    return CheckResult(True, f"{title}: correct on {len(_RNN_CASES)} sequences (1 to 5 time "
                             "steps)! Each step's share, and together w.grad.")


# ----------------------------------------------------------- build: the accumulation step

def accumulated_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """The course's own accumulation step (minigrad has none, nor has PyTorch: it is a loop
    one writes): ONE optimizer step on the batch ``(inputs, targets)``, its gradient summed
    over micro-batches of at most ``ceil(len(inputs) / accumulation_steps)`` rows (the last
    one takes the rows left over), each mean loss weighted by its share of the rows and
    each ``backward()`` run before the next forward pass. ``training_step`` runs it unless
    ``teach.use(accumulated_step=...)`` plugs a learner's in."""
    n = len(inputs)
    size = -(-n // accumulation_steps)
    optimizer.zero_grad()
    for first in range(0, n, size):
        last = min(first + size, n)
        share = (last - first) / n
        (criterion(model(inputs[first:last]), targets[first:last]) * share).backward()
    optimizer.step()


def training_step(model, optimizer, criterion, inputs, targets, accumulation_steps=1):
    """One training step on a batch, as chapter 10's payoff trains: it runs whichever
    ``accumulated_step`` is plugged in (the learner's inside ``teach.use``)."""
    return accumulated_step(model, optimizer, criterion, inputs, targets, accumulation_steps)


_OWN_STEP = {"ch09.accumulated_step": accumulated_step, "ch09.training_step": training_step}


def _plug_accumulated_step(function):
    """``ch09.accumulated_step``, which ``training_step`` looks up at every call, is the
    learner's inside the block."""
    return mock.patch.object(sys.modules[__name__], "accumulated_step", function)


class _Recorder(nn.Module):
    """The check's model, which also writes down what it sees: the rows of every forward
    pass and, in the order they ran, every forward pass and every backward() that reaches
    its output (with the gradient that arrives there)."""

    def __init__(self, seed, dtype=float64):
        super().__init__()
        generator = Generator().manual_seed(seed)
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        self.net = net.double() if dtype is float64 else net.float()
        with no_grad():
            for p in self.net.parameters():
                p.copy_(randn(*p.shape, generator=generator, dtype=dtype))
        self.forget()

    def forget(self):
        self.seen, self.rows, self.events, self.arrived = [], [], [], []

    def forward(self, x):
        k = len(self.seen)
        self.seen.append(len(x))
        self.rows.append(x.detach().numpy().copy())
        self.events.append(("forward", k))
        out = self.net(x)
        if out.requires_grad:
            out.register_hook(functools.partial(self._backward_reached, k, out.dtype))
        return out

    def _backward_reached(self, k, dtype, grad):
        self.events.append(("backward", k))
        self.arrived.append((dtype, grad))


class _CountingSGD(_sgd_module.SGD):
    """minigrad's own SGD, counting how often ``step()`` runs."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.steps = 0

    def step(self, closure=None):
        self.steps += 1
        return super().step(closure)


_LR = 0.1
# (examples in the batch, accumulation_steps, dtype): one micro-batch, equal micro-batches,
# batches that do not divide evenly (a smaller last micro-batch), and two in float32
_ACCUMULATION_CASES = [(12, 1, float64), (12, 3, float64), (10, 4, float64), (9, 4, float64),
                       (7, 2, float64), (16, 4, float64), (20, 3, float64), (24, 6, float64),
                       (10, 4, float32), (13, 3, float32)]
_TOLERANCE = {float64: dict(rtol=1e-9, atol=1e-12), float32: dict(rtol=1e-5, atol=1e-6)}


def _values(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _gradients(model, inputs, targets, criterion):
    """The gradient of the mean loss over ``inputs`` at the model's current parameters
    (.grad is left empty)."""
    model.zero_grad()
    criterion(model(inputs), targets).backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    return grads


def _moved_by(before, after, grads, dtype=float64):
    """Did every parameter move by ``-lr * grad``?"""
    tol = dict(rtol=1e-7, atol=1e-10) if dtype is float64 else dict(rtol=1e-4, atol=1e-6)
    return all(np.allclose(a - b, -_LR * g, **tol) for b, a, g in zip(before, after, grads))


def _weighted(parts, weights):
    """sum_m weights[m] * parts[m], parameter by parameter."""
    return [sum(w * part[i] for w, part in zip(weights, parts)) for i in range(len(parts[0]))]


def _diagnose(seed, dtype, before, after, batch, leftover, steps, sizes):
    """Why did one call not match one big-batch step? A hint, never the code. ``sizes``:
    the micro-batch sizes the learner's model saw (taken as consecutive slices)."""
    inputs, targets = batch
    criterion = nn.MSELoss()
    probe = _Recorder(seed, dtype)                  # a model at the call's starting point
    with no_grad():
        for p, value in zip(probe.parameters(), before):
            p.copy_(tensor(value, dtype=dtype))
    full = _gradients(probe, inputs, targets, criterion)
    left = _gradients(probe, *leftover, criterion)
    n, m = len(inputs), len(sizes)
    parts, first = [], 0
    for size in sizes:
        parts.append(_gradients(probe, inputs[first:first + size], targets[first:first + size],
                                criterion))
        first += size

    def moved(grads, with_leftover=False):
        if with_leftover:
            grads = [g + extra for g, extra in zip(grads, left)]
        return _moved_by(before, after, grads, dtype)

    def either(grads):
        return moved(grads) or moved(grads, with_leftover=True)

    if moved(full, with_leftover=True):
        return ("the gradient that .grad held before the call (from an earlier backward) "
                "was added into this step. Hint: start the step from clean gradients: clear "
                "them at the start of the call.")
    if m > 1 and either(_weighted(parts, [1.0] * m)):
        return (f"your update is the sum of the {m} micro-batches' mean-loss gradients, about "
                f"{m} times the big batch's. Hint: each micro-batch's mean loss is one share "
                "of the batch's mean loss; backward() adds the gradients of all "
                "micro-batches, so scale each loss before backward().")
    if m > 1 and (either(_weighted(parts, [1 / steps] * m))
                  or either(_weighted(parts, [1 / m] * m))):
        return (f"each micro-batch's loss weighed the same, but the micro-batches had "
                f"{sizes} rows" + ("" if m == steps else
                                   f" ({m} micro-batches for accumulation_steps={steps})")
                + ": in the batch's mean, a micro-batch weighs what its share of the rows is. "
                "Hint: exercise 1's scale factors, one per micro-batch, from its size.")
    shares = ", ".join(f"{size}/{n}" for size in sizes)
    need = (" The weight each micro-batch's mean loss needs is its share of the rows: its "
            f"number of rows divided by the number of rows in the whole batch ({shares} "
            "here), so that the weights add up to 1.")
    full = -(-n // steps)
    if m > 1 and len(set(sizes)) > 1 and either(
            _weighted(parts, [size / full / steps for size in sizes])):
        return (f"each loss was weighted by its rows divided by the full micro-batch's "
                f"{full}, divided by accumulation_steps: right only when every micro-batch is "
                f"full; with micro-batches of {sizes} rows, those weights add up to "
                f"{sum(sizes) / full / steps:.3g}, not 1." + need)
    if any(size > 1 for size in sizes) and either(
            _weighted(parts, [1 / size for size in sizes])):
        return ("each loss was divided by its own number of rows, but a mean loss is already "
                "divided by it: that weighs a micro-batch the less, the more rows it has."
                + need)
    if either(_weighted(parts, [float(size) for size in sizes])):
        return (f"each loss was multiplied by its number of rows: that adds up the losses of "
                f"all {n} rows, {n} times the batch's mean loss. Hint: a share of the rows is "
                "a fraction of the batch.")
    if m > 1 and any(moved(_weighted(parts, [0.0] * (m - 1) + [w]))
                     for w in (1.0, 1 / steps, sizes[-1] / n)):
        return ("only the last micro-batch's gradient reached the step. Hint: something "
                "cleared .grad between the micro-batches; clear it once per optimizer step, "
                "not once per micro-batch.")
    return ("the parameters did not move the way one step on the whole batch moves them. "
            "Hint: every micro-batch needs its forward pass, its loss weighted by its share "
            "of the rows (its rows divided by the batch's) and its backward(); then one "
            "optimizer.step().")


def _coverage(inputs, rows):
    """(rows of the batch the model never saw, rows it saw more than once or that are not
    rows of the batch)."""
    want = {}
    for row in inputs.detach().numpy():
        want[row.tobytes()] = want.get(row.tobytes(), 0) + 1
    got = {}
    for part in rows:
        for row in part:
            got[row.tobytes()] = got.get(row.tobytes(), 0) + 1
    missing = sum(count for key, count in want.items() if key not in got)
    extra = sum(count - want.get(key, 0) for key, count in got.items() if count > want.get(key, 0))
    return missing, extra


def _order_problem(events):
    """The first micro-batch (counted from 0) whose forward pass ran before the previous
    micro-batch's backward() reached the model, or None."""
    done = set()
    for kind, k in events:
        if kind == "backward":
            done.add(k)
        elif k > 0 and k - 1 not in done:
            return k
    return None


@contextlib.contextmanager
def _watching_backward():
    """Inside the block, every ``Tensor.backward()`` call notes the tensor it was called on
    (the list the block gets): a float64 loss in a float32 step is seen there."""
    own, called = Tensor.backward, []

    def backward(self, *args, **kwargs):
        called.append(self)
        return own(self, *args, **kwargs)
    with mock.patch.object(Tensor, "backward", backward):
        yield called


def _one_call(function, model, optimizer, batch, steps):
    """Call the learner's step once; raise Mismatch on what it did to the forward passes
    (which rows, how many at a time, in which order with the backward passes) and to
    optimizer.step()."""
    inputs, targets = batch
    n = len(inputs)
    limit = -(-n // steps)
    where = f"accumulated_step(..., a batch of {n}, accumulation_steps={steps})"
    model.forget()
    optimizer.steps = 0
    with _watching_backward() as losses:
        function(model, optimizer, nn.MSELoss(), inputs, targets, steps)
    for loss in losses:
        same_dtype(f"{where}: a loss you called backward() on", loss,
                   zeros(1, dtype=inputs.dtype))
    seen = model.seen
    if not seen:
        raise Mismatch(f"{where}: the model never ran. Hint: each micro-batch needs a "
                       "forward pass, model(micro-batch's inputs).")
    if 0 in seen:
        raise Mismatch(f"{where}: a forward pass got 0 rows (micro-batches of {seen} rows): "
                       "its mean loss is nan (the mean of no rows, 0 / 0), and a forward pass "
                       "on nothing adds nothing but that nan. Hint: with micro-batches of "
                       f"ceil({n} / {steps}) = {limit} rows, the rows can run out before "
                       f"{steps} micro-batches; stop when they do, never run the model on 0 "
                       "rows.")
    for part in model.rows:
        same_dtype(f"{where}: a micro-batch the model saw", part, inputs.detach().numpy())
    if steps > 1 and seen == [n]:
        raise Mismatch(f"{where}: the model saw the whole batch in one forward pass. Hint: "
                       f"cut it into micro-batches of at most ceil(len(inputs) / "
                       f"accumulation_steps) = {limit} rows.")
    missing, extra = _coverage(inputs, model.rows)
    if extra:
        raise Mismatch(f"{where}: the forward passes (micro-batches of {seen} rows) saw "
                       f"{extra} row(s) more than once" + (f", and {missing} never" if missing
                                                           else "")
                       + ". Hint: each row of the batch belongs to exactly one micro-batch: "
                       "slice from where the previous micro-batch ended.")
    if missing:
        raise Mismatch(f"{where}: the forward passes (micro-batches of {seen} rows) saw "
                       f"{n - missing} of the {n} rows; {missing} never reached the model. "
                       "Hint: when len(inputs) is not a multiple of accumulation_steps, the "
                       "rows left over after the equal slices belong to the batch too.")
    if max(seen) > limit:
        raise Mismatch(f"{where}: a forward pass saw {max(seen)} rows (micro-batches of "
                       f"{seen}), more than ceil({n} / {steps}) = {limit}: more memory than "
                       "accumulation_steps micro-batches need. Hint: round the micro-batch "
                       "size up, not down.")
    if len(seen) > steps and steps != limit and all(size == steps for size in seen[:-1]):
        raise Mismatch(f"{where}: {len(seen)} forward passes of {steps} row"
                       f"{'s' if steps != 1 else ''} each (micro-"
                       f"batches of {seen} rows). Hint: accumulation_steps is the NUMBER of "
                       f"micro-batches ({steps} here), not the number of rows in each: each "
                       f"has at most ceil({n} / {steps}) = {limit} rows.")
    if len(seen) > steps:
        raise Mismatch(f"{where}: {len(seen)} forward passes (micro-batches of {seen} rows) "
                       f"where accumulation_steps is {steps}. Hint: with len(inputs) // "
                       "accumulation_steps rows each, the rows left over make one more "
                       "micro-batch; round the micro-batch size up instead.")
    late = _order_problem(model.events)
    if late is not None:
        raise Mismatch(f"{where}: micro-batch {late + 1}'s forward pass ran before micro-batch "
                       f"{late}'s backward(). The numbers may still come out right, but then "
                       "the graphs (the saved activations) of several micro-batches are alive "
                       "at once: the memory of the big batch, which accumulation is there to "
                       "save. Hint: backward() on each micro-batch's loss before the next "
                       "micro-batch's forward pass, not once on losses added up.")
    if optimizer.steps == 0:
        raise Mismatch(f"{where}: optimizer.step() never ran, so the parameters did not "
                       "change. Hint: step once, after the last micro-batch.")
    if optimizer.steps > 1:
        raise Mismatch(f"{where}: optimizer.step() ran {optimizer.steps} times in one call. "
                       "Hint: backward() on every micro-batch, step() only once, after the "
                       "last.")
    return where


def _same_dtypes(where, model, reference):
    """What flows through the graph and what the step leaves keep minigrad's own dtypes:
    the gradient reaching the model's output, the parameters and their .grad."""
    for dtype, grad in model.arrived:
        same_dtype(f"{where}: the gradient that reached the model's output", grad,
                   zeros(1, dtype=dtype))
    for (name, p), r in zip(model.named_parameters(), reference.parameters()):
        same_dtype(f"{where}: parameter {name} after the step", p, r)
        if p.grad is not None:
            same_dtype(f"{where}: {name}.grad", p.grad, r.grad)


def _accumulation_case(function, n, steps, seed, dtype=float64):
    """Two calls in a row on a model whose .grad holds a leftover gradient, each compared
    with one ordinary step on the whole batch."""
    data = Generator().manual_seed(seed)
    model, reference = _Recorder(seed + 10, dtype), _Recorder(seed + 10, dtype)
    optimizer = _CountingSGD(model.parameters(), lr=_LR)
    reference_optimizer = _sgd_module.SGD(reference.parameters(), lr=_LR)
    criterion = nn.MSELoss()
    leftover = (randn(5, 3, generator=data, dtype=dtype),
                randn(5, 1, generator=data, dtype=dtype))
    criterion(model(leftover[0]), leftover[1]).backward()   # what earlier code left in .grad
    for call in (1, 2):
        batch = (randn(n, 3, generator=data, dtype=dtype),
                 randn(n, 1, generator=data, dtype=dtype))
        before = _values(model)
        where = _one_call(function, model, optimizer, batch, steps)
        sizes = list(model.seen)
        reference_optimizer.zero_grad()
        criterion(reference(batch[0]), batch[1]).backward()
        reference_optimizer.step()
        _same_dtypes(where, model, reference)
        if all(np.allclose(a, r, **_TOLERANCE[dtype])
               for a, r in zip(_values(model), _values(reference))):
            continue
        if call == 2:
            raise Mismatch(f"{where}: the first call was right, the second was not. Hint: the "
                           "first call's gradients were still in .grad when the second "
                           "began; clear them once per optimizer step.")
        raise Mismatch(f"{where}, first call: " + _diagnose(
            seed + 10, dtype, before, _values(model), batch, leftover, steps, sizes))


@keeps_random_state
def _accumulation_battery(function):
    """The cases of ``_ACCUMULATION_CASES``, two calls each; then the chapter's kind of
    training step through ``training_step`` with the function plugged in."""
    if not callable(function):
        raise Mismatch(f"expected a function (def accumulated_step(...): ...), got "
                       f"{type(function).__name__}.")
    for seed, (n, steps, dtype) in enumerate(_ACCUMULATION_CASES, start=1):
        _accumulation_case(function, n, steps, seed, dtype)
    model = _Recorder(99)
    optimizer = _CountingSGD(model.parameters(), lr=_LR)
    batch = (randn(10, 3, generator=Generator().manual_seed(99), dtype=float64),
             randn(10, 1, generator=Generator().manual_seed(98), dtype=float64))
    with _plug_accumulated_step(function):
        training_step(model, optimizer, nn.MSELoss(), *batch, accumulation_steps=4)
    if sum(model.seen) != 10 or max(model.seen) > 3 or optimizer.steps != 1:
        raise Mismatch("plugged into training_step, it did not run the micro-batches: the "
                       f"model saw {model.seen}, step() ran {optimizer.steps} time(s).")
    uneven = sum(n % steps != 0 for n, steps, _ in _ACCUMULATION_CASES)
    singles = sum(dtype is float32 for _, _, dtype in _ACCUMULATION_CASES)
    return (f"{len(_ACCUMULATION_CASES)} batches (1 to 6 micro-batches; {uneven} that do not "
            f"divide evenly; {singles} in float32), two calls each, compared with one step "
            "on the whole batch, each backward() before the next forward pass")


register(Piece(name="accumulated_step", chapter="09", defines="accumulated_step",
               summary="the accumulation step: micro-batches, one optimizer step",
               plug=_plug_accumulated_step, battery=_accumulation_battery, own=_OWN_STEP))
