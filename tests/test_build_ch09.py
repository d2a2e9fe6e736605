"""Chapter 9's build exercise (the accumulation step, ``accumulated_step``): the notebook's
solution passes its check, the classic accumulation bugs fail it with the message a learner
needs, and ``teach.use(accumulated_step=...)`` really runs the learner's step inside the
training step chapter 10's payoff uses."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim, teach
from minigrad.teach.exercises import ch09, ch10

from build_cells import solution


@pytest.fixture(scope="module")
def accumulated_step():
    return solution("09", "accumulated_step")


def micro_batches(inputs, targets, accumulation_steps):
    """Consecutive micro-batches of at most ceil(n / accumulation_steps) rows."""
    size = math.ceil(len(inputs) / accumulation_steps)
    for start in range(0, len(inputs), size):
        yield inputs[start:start + size], targets[start:start + size]


def share(x, inputs):
    return len(x) / len(inputs)


def interleaved(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Any split into micro-batches that are small enough is as good as consecutive slices."""
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        x, y = inputs[i::accumulation_steps], targets[i::accumulation_steps]
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def array_split(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """numpy's split: sizes that differ by one at most (3, 3, 2, 2 for 10 rows in 4)."""
    optimizer.zero_grad()
    for rows in np.array_split(np.arange(len(inputs)), accumulation_steps):
        first, last = int(rows[0]), int(rows[-1]) + 1
        (criterion(model(inputs[first:last]), targets[first:last])
         * (len(rows) / len(inputs))).backward()
    optimizer.step()


def not_divided(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        criterion(model(x), y).backward()
    optimizer.step()


def never_zeroed(model, optimizer, criterion, inputs, targets, accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def zeroed_after_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Clears after its step, so what .grad held before the first call counts."""
    never_zeroed(model, optimizer, criterion, inputs, targets, accumulation_steps)
    optimizer.zero_grad()


def zero_grad_every_micro_batch(model, optimizer, criterion, inputs, targets,
                                accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        optimizer.zero_grad()
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def step_every_micro_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) * share(x, inputs)).backward()
        optimizer.step()


def whole_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    criterion(model(inputs), targets).backward()
    optimizer.step()


def no_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) * share(x, inputs)).backward()


def always_four(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Four micro-batches whatever accumulation_steps says."""
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, 4):
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def half_the_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Equal micro-batches that forget half the data: right sizes, the same rows again."""
    optimizer.zero_grad()
    size = len(inputs) // accumulation_steps
    for _ in range(accumulation_steps):
        (criterion(model(inputs[:size]), targets[:size]) / accumulation_steps).backward()
    optimizer.step()


def one_graph(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """The losses added up, backward() once: the same numbers, every graph alive at once."""
    optimizer.zero_grad()
    total = 0
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        total = total + criterion(model(x), y) * share(x, inputs)
    total.backward()
    optimizer.step()


def forwards_first(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """All forward passes into a list, then a backward() on each: the same memory problem."""
    optimizer.zero_grad()
    losses = [criterion(model(x), y) * share(x, inputs)
              for x, y in micro_batches(inputs, targets, accumulation_steps)]
    for loss in losses:
        loss.backward()
    optimizer.step()


def lectures_loop(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Section 2's equal slices: len(inputs) // accumulation_steps rows, the rest dropped."""
    size = len(inputs) // accumulation_steps
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        start = i * size
        (criterion(model(inputs[start:start + size]), targets[start:start + size])
         / accumulation_steps).backward()
    optimizer.step()


def divided_by_steps(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Every row, but each loss divided by accumulation_steps: wrong for a smaller last one."""
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def divided_by_count(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Each loss divided by the number of micro-batches: the same share for all."""
    optimizer.zero_grad()
    parts = list(micro_batches(inputs, targets, accumulation_steps))
    for x, y in parts:
        (criterion(model(x), y) / len(parts)).backward()
    optimizer.step()


def floor_size_range(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """n // k rows each over range(0, n, size): the rest becomes one micro-batch too many."""
    n = len(inputs)
    size = n // accumulation_steps
    optimizer.zero_grad()
    for start in range(0, n, size):
        x, y = inputs[start:start + size], targets[start:start + size]
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def one_row_too_many(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """n // k + 1 rows each: big enough, but more than the memory allows when k divides n."""
    n = len(inputs)
    size = n // accumulation_steps + 1
    optimizer.zero_grad()
    for start in range(0, n, size):
        x, y = inputs[start:start + size], targets[start:start + size]
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def times_its_rows(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Each loss times its size, not its share: the sum over the batch, not the mean."""
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) * len(x)).backward()
    optimizer.step()


def float64_shares(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """The shares in a float64 numpy array, made tensors: a float32 graph then carries
    float64 gradients."""
    parts = list(micro_batches(inputs, targets, accumulation_steps))
    shares = np.array([len(x) for x, _ in parts]) / len(inputs)
    optimizer.zero_grad()
    for (x, y), weight in zip(parts, shares):
        (criterion(model(x), y) * mg.tensor(weight)).backward()
    optimizer.step()


def empty_last(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """k slices of ceil(n / k) rows: the last is empty when the rows run out (9 rows in 4)."""
    size = math.ceil(len(inputs) / accumulation_steps)
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        x, y = inputs[i * size:(i + 1) * size], targets[i * size:(i + 1) * size]
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def steps_as_size(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """accumulation_steps read as the micro-batch's size."""
    k = accumulation_steps
    optimizer.zero_grad()
    for start in range(0, len(inputs), k):
        x, y = inputs[start:start + k], targets[start:start + k]
        (criterion(model(x), y) * share(x, inputs)).backward()
    optimizer.step()


def full_share_over_steps(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """len(x) / size / k: the share of a full micro-batch, wrong for a smaller last one."""
    size = math.ceil(len(inputs) / accumulation_steps)
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) * (len(x) / size / accumulation_steps)).backward()
    optimizer.step()


def divided_by_its_rows(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Each mean loss divided by its own number of rows."""
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / len(x)).backward()
    optimizer.step()


def calls_the_courses_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    ch09.accumulated_step(model, optimizer, criterion, inputs, targets, accumulation_steps)


def calls_the_training_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    ch10.training_step(model, optimizer, criterion, inputs, targets, accumulation_steps)


def test_the_notebooks_step_passes(accumulated_step):
    result = teach.check_piece("accumulated_step", accumulated_step)
    assert result, result.message
    assert "10 batches" in result.message and "do not divide evenly" in result.message
    assert "float32" in result.message and "before the next forward" in result.message


def test_the_courses_own_step_passes_the_battery_and_other_splits_pass_the_check():
    assert "10 batches" in ch09._accumulation_battery(ch09.accumulated_step)
    assert teach.check_piece("accumulated_step", interleaved)
    assert teach.check_piece("accumulated_step", array_split)


@pytest.mark.parametrize("own, words", [
    (ch09.accumulated_step, ["this is minigrad's own ch09.accumulated_step"]),
    (calls_the_courses_step, ["uses minigrad's own ch09.accumulated_step"]),
    (calls_the_training_step, ["uses minigrad's own ch09.training_step"]),
])
def test_the_courses_own_step_is_refused(own, words):
    result = teach.check_piece("accumulated_step", own)
    assert not result
    for word in words + ["minigrad with itself"]:
        assert word in result.message, result.message


@pytest.mark.parametrize("wrong, words", [
    (not_divided, ["3 times the big batch", "scale each loss"]),
    (never_zeroed, ["held before the call", "clear them at the start"]),
    (zeroed_after_step, ["held before the call", "at the start"]),
    (zero_grad_every_micro_batch, ["only the last micro-batch", "once per optimizer step"]),
    (step_every_micro_batch, ["ran 3 times", "only once"]),
    (whole_batch, ["whole batch in one forward pass", "at most"]),
    (no_step, ["never ran"]),
    (always_four, ["4 forward passes", "accumulation_steps is 1"]),
    (half_the_batch, ["more than once", "exactly one micro-batch"]),
    (one_graph, ["micro-batch 2's forward pass ran before micro-batch 1's backward()",
                 "alive at once", "memory", "not once on losses added up"]),
    (forwards_first, ["forward pass ran before", "alive at once"]),
    (lectures_loop, ["saw 8 of the 10 rows", "never reached the model", "left over"]),
    (divided_by_steps, ["weighed the same", "[3, 3, 3, 1]", "share of the rows",
                        "exercise 1"]),
    (divided_by_count, ["weighed the same", "share of the rows"]),
    (floor_size_range, ["5 forward passes", "accumulation_steps is 4", "round the micro-batch "
                        "size up"]),
    (one_row_too_many, ["saw 5 rows", "more than ceil(12 / 3) = 4", "memory"]),
    (times_its_rows, ["multiplied by its number of rows", "12 times the batch's mean"]),
    (float64_shares, ["a loss you called backward() on is float64", "float32",
                      "float64 constant"]),
    (empty_last, ["a batch of 9", "a forward pass got 0 rows", "[3, 3, 3, 0]", "nan",
                  "never run the model on 0 rows"]),
    (steps_as_size, ["12 forward passes of 1 row each", "NUMBER of micro-batches",
                     "not the number of rows"]),
    (full_share_over_steps, ["a batch of 10", "add up to 0.833", "share of the rows",
                             "3/10, 3/10, 3/10, 1/10"]),
    (divided_by_its_rows, ["divided by its own number of rows", "share of the rows",
                           "divided by the number of rows in the whole batch"]),
    (42, ["expected a function"]),
])
def test_a_wrong_step_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("accumulated_step", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_a_float32_step_keeps_float32():
    """The battery's float32 batches: the gradients through the graph, the parameters and
    their .grad stay float32 with the notebook's step, as with one ordinary step."""
    mg.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = mg.randn(10, 3), mg.randn(10, 1)
    solution("09", "accumulated_step")(model, optimizer, nn.MSELoss(), x, y, 4)
    assert {str(p.dtype) for p in model.parameters()} == {"minigrad.float32"}
    assert {str(p.grad.dtype) for p in model.parameters()} == {"minigrad.float32"}


def test_an_uneven_batch_gives_the_big_batchs_step_as_in_pytorch(accumulated_step):
    """10 rows in 4 micro-batches (3, 3, 3, 1), each loss weighted by its share: the same
    step as one on the whole batch, in PyTorch too."""
    torch = pytest.importorskip("torch")
    mg.manual_seed(1)
    model = nn.Linear(3, 1).double()
    x, y = mg.randn(10, 3, dtype=mg.float64), mg.randn(10, 1, dtype=mg.float64)
    twin = torch.nn.Linear(3, 1).double()
    with torch.no_grad():
        twin.weight.copy_(torch.from_numpy(model.weight.detach().numpy()))
        twin.bias.copy_(torch.from_numpy(model.bias.detach().numpy()))
    accumulated_step(model, optim.SGD(model.parameters(), lr=0.1), nn.MSELoss(), x, y, 4)
    big = torch.optim.SGD(twin.parameters(), lr=0.1)
    torch.nn.functional.mse_loss(twin(torch.from_numpy(x.numpy())),
                                 torch.from_numpy(y.numpy())).backward()
    big.step()
    assert np.allclose(model.weight.detach().numpy(), twin.weight.detach().numpy(),
                       rtol=1e-12, atol=1e-14)


def test_a_step_that_raises_is_reported_not_raised():
    def crashes(*args):
        raise ValueError("oops")
    result = teach.check_piece("accumulated_step", crashes)
    assert not result and "ValueError: oops" in result.message


def tiny_training(step=None):
    """Two training steps of a small float64 model through ch10.training_step."""
    mg.manual_seed(0)
    model = nn.Linear(3, 1).double()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = mg.randn(8, 3, dtype=mg.float64), mg.randn(8, 1, dtype=mg.float64)
    with teach.use(accumulated_step=step):
        for _ in range(2):
            ch10.training_step(model, optimizer, nn.MSELoss(), x, y, accumulation_steps=2)
    return model.weight.detach().numpy()


def test_not_written_yet_leaves_the_courses_own_step():
    result = teach.check_piece("accumulated_step", None)
    assert not result and "not written yet" in result.message
    own = ch09.accumulated_step
    assert (tiny_training(None) == tiny_training(own)).all()


def test_use_runs_the_learners_step_and_puts_the_courses_back(accumulated_step):
    calls = []

    def counted(*args):
        calls.append(args[-1])
        return accumulated_step(*args)

    own = ch09.accumulated_step
    weights = tiny_training(counted)
    assert calls == [2, 2]
    assert ch09.accumulated_step is own
    assert abs(weights - tiny_training(None)).max() < 1e-12
    with pytest.raises(ZeroDivisionError):
        with teach.use(accumulated_step=counted):
            1 / 0
    assert ch09.accumulated_step is own


def test_the_check_leaves_the_random_state_alone(accumulated_step):
    mg.manual_seed(5)
    want = mg.rand(3)
    mg.manual_seed(5)
    teach.check_piece("accumulated_step", accumulated_step)
    assert mg.equal(mg.rand(3), want)


def test_losses_added_up_give_the_right_numbers_and_are_still_refused():
    """The one-graph step lands where the big batch's step does (so a comparison of the
    numbers alone would pass it); the check refuses it for the memory it keeps."""
    mg.manual_seed(2)
    x, y = mg.randn(10, 3, dtype=mg.float64), mg.randn(10, 1, dtype=mg.float64)
    landed = []
    for step in (one_graph, solution("09", "accumulated_step")):
        mg.manual_seed(3)
        model = nn.Linear(3, 1).double()
        step(model, optim.SGD(model.parameters(), lr=0.1), nn.MSELoss(), x, y, 4)
        landed.append(model.weight.detach().numpy())
    assert np.allclose(*landed, rtol=1e-12, atol=1e-14)
    result = teach.check_piece("accumulated_step", one_graph)
    assert not result and "alive at once" in result.message
