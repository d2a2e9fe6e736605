"""Chapter 9's exercise checks accept the right answers and reject wrong ones, without raising."""

import math

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch09


# ---------------------------------------------------------------- exercise 1: the loop

def micro_batches(inputs, targets, accumulation_steps):
    size = len(inputs) // accumulation_steps
    for i in range(accumulation_steps):
        start = i * size
        yield inputs[start:start + size], targets[start:start + size]


def accumulated_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
    optimizer.step()


def zero_grad_after_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """The google-research order: zero_grad() right after step(), with model.zero_grad()."""
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()
    model.zero_grad()


def interleaved(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Any split into equal micro-batches is as good as consecutive slices."""
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        x, y = inputs[i::accumulation_steps], targets[i::accumulation_steps]
        (criterion(model(x), y) * (1 / accumulation_steps)).backward()
    optimizer.step()


def test_accumulated_step_accepts_right_loops():
    assert ch09.check_accumulated_step(accumulated_step)
    assert ch09.check_accumulated_step(zero_grad_after_step)
    assert ch09.check_accumulated_step(interleaved)


def not_divided(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        criterion(model(x), y).backward()
    optimizer.step()


def zero_grad_every_micro_batch(model, optimizer, criterion, inputs, targets,
                                accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        optimizer.zero_grad()
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def never_zeroed(model, optimizer, criterion, inputs, targets, accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def whole_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    criterion(model(inputs), targets).backward()
    optimizer.step()


def step_every_micro_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        optimizer.zero_grad()
        (criterion(model(x), y) / accumulation_steps).backward()
        optimizer.step()


def no_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()


def always_four(model, optimizer, criterion, inputs, targets, accumulation_steps):
    accumulated_step(model, optimizer, criterion, inputs, targets, 4)


def half_the_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Equal micro-batches that forget half the data: right sizes, wrong update."""
    optimizer.zero_grad()
    size = len(inputs) // accumulation_steps
    for i in range(accumulation_steps):
        x, y = inputs[:size], targets[:size]
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def test_accumulated_step_rejects_each_bug_with_its_hint():
    cases = {
        not_divided: "times the big batch",
        zero_grad_every_micro_batch: "only the last micro-batch",
        never_zeroed: "second was not",
        whole_batch: "whole batch in one forward pass",
        step_every_micro_batch: "ran 3 times",
        no_step: "never ran",
        always_four: "sizes",
        half_the_batch: "did not move the way",
    }
    for function, words in cases.items():
        result = ch09.check_accumulated_step(function)
        assert not result, function.__name__
        assert words in result.message, (function.__name__, result.message)
        assert "Hint" in result.message


def test_accumulated_step_without_an_answer_or_with_a_crash():
    for answer in (None, MISSING, ...):
        result = ch09.check_accumulated_step(answer)
        assert not result and "no answer yet" in result.message
    result = ch09.check_accumulated_step(42)
    assert not result and "expected a function" in result.message

    def crashes(*args):
        raise ValueError("oops")

    result = ch09.check_accumulated_step(crashes)
    assert not result and "ValueError: oops" in result.message


# ---------------------------------------------------------------- exercise 2: the scales

def test_loss_scales_accepts_each_micro_batch_share():
    assert ch09.check_loss_scales(lambda sizes: [n / sum(sizes) for n in sizes])
    assert ch09.check_loss_scales(lambda sizes: tuple(n / sum(sizes) for n in sizes))
    assert ch09.check_loss_scales(lambda sizes: mg.tensor(sizes) / sum(sizes))  # float32


def test_loss_scales_rejects_wrong_factors_with_hints():
    equal = ch09.check_loss_scales(lambda sizes: [1 / len(sizes)] * len(sizes))
    assert not equal and "same share" in equal.message
    own_size = ch09.check_loss_scales(lambda sizes: [1 / n for n in sizes])
    assert not own_size and "own" in own_size.message
    fixed_total = ch09.check_loss_scales(lambda sizes: [n / 50 for n in sizes])
    assert not fixed_total and "add up" in fixed_total.message
    too_few = ch09.check_loss_scales(lambda sizes: [0.25])
    assert not too_few and "one per micro-batch" in too_few.message
    assert not ch09.check_loss_scales(lambda sizes: "a quarter each")
    # the hints never give the formula's numbers away
    assert "0.32" not in equal.message and "0.04" not in equal.message


def test_loss_scales_without_an_answer_or_with_a_crash():
    for answer in (None, MISSING, ...):
        result = ch09.check_loss_scales(answer)
        assert not result and "no answer yet" in result.message
    result = ch09.check_loss_scales([0.25, 0.25, 0.25, 0.25])
    assert not result and "expected a function" in result.message
    result = ch09.check_loss_scales(lambda sizes: 1 / 0)
    assert not result and "ZeroDivisionError" in result.message


def test_the_right_scales_really_give_the_big_batch_gradient():
    assert ch09._scales_are_right([16, 16, 16, 2], [0.32, 0.32, 0.32, 0.04])
    assert not ch09._scales_are_right([16, 16, 16, 2], [0.25, 0.25, 0.25, 0.25])


# ---------------------------------------------------------------- exercise 3: steps per epoch

def test_steps_per_epoch_accepts_the_counts():
    micro = math.ceil(ch09.N_EXAMPLES / ch09.TRAIN_BATCH_SIZE)
    assert ch09.check_steps_per_epoch(ch09.TRAIN_BATCH_SIZE * ch09.ACCUMULATION_STEPS, micro,
                                      micro // ch09.ACCUMULATION_STEPS)
    assert ch09.check_steps_per_epoch(96, 42, 10)
    assert ch09.check_steps_per_epoch(mg.tensor(96), 42.0, mg.tensor(10))


def test_steps_per_epoch_rejects_the_usual_mistakes():
    floor_and_ceil = ch09.check_steps_per_epoch(96, 41, 11)
    assert not floor_and_ceil
    assert "drop_last" in floor_and_ceil.message and "(step + 1) % 4" in floor_and_ceil.message
    batch_only = ch09.check_steps_per_epoch(24, 42, 10)
    assert not batch_only and "1 of 3" not in batch_only.message and "2 of 3" in batch_only.message
    assert not ch09.check_steps_per_epoch(96, 42, 42)
    assert not ch09.check_steps_per_epoch("96", 42, 10)
    result = ch09.check_steps_per_epoch(None, None, None)
    assert not result and result.message.count("no answer yet") == 3


def test_checks_leave_the_default_random_stream_alone():
    mg.manual_seed(0)
    expected = mg.randn(3)
    mg.manual_seed(0)
    ch09.check_accumulated_step(accumulated_step)
    ch09.check_accumulated_step(not_divided)
    ch09.check_loss_scales(lambda sizes: [n / sum(sizes) for n in sizes])
    ch09.check_steps_per_epoch(96, 42, 10)
    assert mg.randn(3).tolist() == expected.tolist()
