"""Chapter 9's build exercise (the accumulation step, ``accumulated_step``): the notebook's
solution passes its check, the classic accumulation bugs fail it with the message a learner
needs, and ``teach.use(accumulated_step=...)`` really runs the learner's step inside the
training step chapter 10's payoff uses."""

import pytest

import minigrad as mg
from minigrad import nn, optim, teach
from minigrad.teach.exercises import ch09, ch10

from build_cells import solution


@pytest.fixture(scope="module")
def accumulated_step():
    return solution("09", "accumulated_step")


def micro_batches(inputs, targets, accumulation_steps):
    size = len(inputs) // accumulation_steps
    for i in range(accumulation_steps):
        yield inputs[i * size:(i + 1) * size], targets[i * size:(i + 1) * size]


def interleaved(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Any split into equal micro-batches is as good as consecutive slices."""
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        x, y = inputs[i::accumulation_steps], targets[i::accumulation_steps]
        (criterion(model(x), y) * (1 / accumulation_steps)).backward()
    optimizer.step()


def not_divided(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        criterion(model(x), y).backward()
    optimizer.step()


def never_zeroed(model, optimizer, criterion, inputs, targets, accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def zeroed_after_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Clears after its step, so what .grad held before the first call counts."""
    never_zeroed(model, optimizer, criterion, inputs, targets, accumulation_steps)
    optimizer.zero_grad()


def zero_grad_every_micro_batch(model, optimizer, criterion, inputs, targets,
                                accumulation_steps):
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        optimizer.zero_grad()
        (criterion(model(x), y) / accumulation_steps).backward()
    optimizer.step()


def step_every_micro_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()
        optimizer.step()


def whole_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    criterion(model(inputs), targets).backward()
    optimizer.step()


def no_step(model, optimizer, criterion, inputs, targets, accumulation_steps):
    optimizer.zero_grad()
    for x, y in micro_batches(inputs, targets, accumulation_steps):
        (criterion(model(x), y) / accumulation_steps).backward()


def always_four(model, optimizer, criterion, inputs, targets, accumulation_steps):
    ch09.accumulated_step(model, optimizer, criterion, inputs, targets, 4)


def half_the_batch(model, optimizer, criterion, inputs, targets, accumulation_steps):
    """Equal micro-batches that forget half the data: right sizes, wrong update."""
    optimizer.zero_grad()
    size = len(inputs) // accumulation_steps
    for _ in range(accumulation_steps):
        (criterion(model(inputs[:size]), targets[:size]) / accumulation_steps).backward()
    optimizer.step()


def test_the_notebooks_step_passes(accumulated_step):
    result = teach.check_piece("accumulated_step", accumulated_step)
    assert result, result.message
    assert "6 batches" in result.message


def test_the_courses_own_step_and_an_interleaved_split_pass():
    assert teach.check_piece("accumulated_step", ch09.accumulated_step)
    assert teach.check_piece("accumulated_step", interleaved)


@pytest.mark.parametrize("wrong, words", [
    (not_divided, ["3 times the big batch", "scale each loss"]),
    (never_zeroed, ["held before the call", "clear them at the start"]),
    (zeroed_after_step, ["held before the call", "at the start"]),
    (zero_grad_every_micro_batch, ["only the last micro-batch", "once per optimizer step"]),
    (step_every_micro_batch, ["ran 3 times", "only once"]),
    (whole_batch, ["whole batch in one forward pass"]),
    (no_step, ["never ran"]),
    (always_four, ["sizes", "expected 1 micro-batch(es) of 12"]),
    (half_the_batch, ["did not move the way"]),
    (42, ["expected a function"]),
])
def test_a_wrong_step_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("accumulated_step", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


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
