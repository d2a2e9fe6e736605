"""Chapter 4's exercise checks accept the right answers (in every usual form) and reject
wrong ones and missing ones, without raising."""

import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch04


def test_set_to_none():
    assert ch04.check_set_to_none(12, 24)
    assert ch04.check_set_to_none(mg.tensor([12.0]), mg.tensor([24.0]))
    assert not ch04.check_set_to_none(12, 12)   # what zero_() would have given
    assert not ch04.check_set_to_none(12, 0)
    assert not ch04.check_set_to_none(36, 24)   # thinks None keeps adding
    assert not ch04.check_set_to_none(None, None)


def test_set_to_none_matches_what_the_learner_code_does():
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old_grad = x.grad
    x.grad = None
    z.backward(retain_graph=True)
    assert ch04.check_set_to_none(x.grad, old_grad)
    # the same with zero_() instead is the mistake the check must catch
    x = mg.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old_grad = x.grad
    x.grad.zero_()
    z.backward(retain_graph=True)
    assert not ch04.check_set_to_none(x.grad, old_grad)


def test_two_paths():
    assert ch04.check_two_paths(13, 26)
    assert ch04.check_two_paths(13.0, mg.tensor([26.0]))
    assert not ch04.check_two_paths(12, 24)   # forgot the direct path
    assert not ch04.check_two_paths(1, 2)     # forgot the path through y
    assert not ch04.check_two_paths(13, 13)   # thinks the second call overwrites
    assert not ch04.check_two_paths(14, 28)
    assert not ch04.check_two_paths(MISSING, None)


def test_two_paths_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([2.0], requires_grad=True)
    z = (x * x) * 3 + x
    z.backward(retain_graph=True)
    once = x.grad.item()
    z.backward()
    assert ch04.check_two_paths(once, x.grad.item())


def test_checks_never_raise_on_odd_answers():
    for odd in ([1, 2], mg.ones(2, 2), object(), "twelve", ...):
        assert not ch04.check_set_to_none(odd, odd)
        assert not ch04.check_two_paths(odd, odd)


# ---------------------------------------------------------------- exercise 3: a hook

def run_hook(hook_body, calls=2):
    """Exercise 3's code with ``hook_body(grad, arrived, w)`` as the hook: (arrived, w)."""
    w = mg.tensor([0.5, -2.0], requires_grad=True)
    loss = (w ** 3 - 4 * w).sum()
    arrived = []
    handle = w.register_hook(lambda grad: hook_body(grad, arrived, w))
    for _ in range(calls):
        loss.backward(retain_graph=True)
    handle.remove()
    return arrived, w


def right_hook(grad, arrived, w):
    arrived.append(grad.tolist())
    return grad.clamp(-2.0, 2.0)


def test_hook_reference_numbers():
    assert ch04.hook_quiz_answer() == ([[-3.25, 8.0], [-3.25, 8.0]], [-4.0, 4.0])


def test_hook_right_answers_in_any_form():
    arrived, w = run_hook(right_hook)
    assert ch04.check_clip_hook(arrived, w.grad)
    assert ch04.check_clip_hook([mg.tensor(a) for a in arrived], w.grad.tolist())
    assert ch04.check_clip_hook(tuple(arrived), (-4.0, 4.0))
    result = ch04.check_clip_hook(arrived, w.grad)
    assert "all parts right" in repr(result)


def test_hook_the_examples_numbers_do_not_pass():
    # section 7's numbers: 12 arriving twice, x.grad 24
    assert not ch04.check_clip_hook([[12.0], [12.0]], [24.0])


def test_hook_that_forgets_to_return_the_clipped_gradient():
    def no_return(grad, arrived, w):
        arrived.append(grad.tolist())
        grad.clamp(-2.0, 2.0)           # computed, but not returned
    arrived, w = run_hook(no_return)
    result = ch04.check_clip_hook(arrived, w.grad)
    text = repr(result)
    assert not result and "1 of 2 parts right" in text
    assert "not clipped" in text and "returning" in text


def test_hook_that_reads_grad_instead_of_what_arrived():
    def reads_grad(grad, arrived, w):
        arrived.append(w.grad)          # None on the first call, then the running tensor
        return grad.clamp(-2.0, 2.0)
    arrived, w = run_hook(reads_grad)
    text = repr(ch04.check_clip_hook(arrived, w.grad))
    assert "✗ arrived" in text and "None on the first call" in text


def test_recording_grad_after_each_call_is_a_running_sum():
    w = mg.tensor([0.5, -2.0], requires_grad=True)
    loss = (w ** 3 - 4 * w).sum()
    handle = w.register_hook(lambda grad: grad.clamp(-2.0, 2.0))
    arrived = []
    for _ in range(2):
        loss.backward(retain_graph=True)
        arrived.append(w.grad.tolist())  # .grad, not what arrived: [-2, 2], then [-4, 4]
    handle.remove()
    text = repr(ch04.check_clip_hook(arrived, w.grad))
    assert "✗ arrived" in text and "running sum" in text and "✓ w.grad" in text
    # the same tensor appended twice (no tolist()) is caught too
    text = repr(ch04.check_clip_hook([w.grad, w.grad], w.grad))
    assert "✗ arrived" in text and "running sum" in text


def test_hook_that_records_after_clipping():
    def clips_first(grad, arrived, w):
        grad = grad.clamp(-2.0, 2.0)
        arrived.append(grad.tolist())
        return grad
    arrived, w = run_hook(clips_first)
    text = repr(ch04.check_clip_hook(arrived, w.grad))
    assert "✗ arrived" in text and "before your hook changes it" in text


def test_hook_with_one_backward_call_only():
    arrived, w = run_hook(right_hook, calls=1)
    text = repr(ch04.check_clip_hook(arrived, w.grad))
    assert "1 entries" in text and "one call's clipped gradient" in text


@pytest.mark.parametrize("arrived, w_grad", [
    ([[-3.25, 8.0], [-3.25, 8.0]], [-4.0, 4.0, 0.0]),
    ([[-3.25, 8.0, 1.0], [-3.25, 8.0]], [-4.0, 4.0]),
])
def test_hook_wrong_shapes(arrived, w_grad):
    assert not ch04.check_clip_hook(arrived, w_grad)


def test_hook_messages_do_not_give_the_answer():
    for arrived, w_grad in ([[[0.0, 0.0]] * 2, [0.0, 0.0]], [[[1.0, 1.0]], [1.0, 1.0]]):
        text = repr(ch04.check_clip_hook(arrived, w_grad))
        assert "-3.25" not in text and "[-4.0, 4.0]" not in text


def test_hook_no_answer_and_odd_answers_never_raise():
    result = ch04.check_clip_hook(None, None)
    assert not result and repr(result).count("no answer yet") == 2
    for odd in ("twelve", 3, object(), ..., mg.ones(2, 2), mg.tensor(1.0), [object()],
                [[1, 2], "x"], True):
        assert not ch04.check_clip_hook(odd, odd)


def test_hook_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    w = torch.tensor([0.5, -2.0], requires_grad=True)
    loss = (w ** 3 - 4 * w).sum()
    arrived = []

    def clip_and_record(grad):
        arrived.append(grad.tolist())
        return grad.clamp(-2.0, 2.0)
    handle = w.register_hook(clip_and_record)
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    handle.remove()
    assert ch04.check_clip_hook(arrived, w.grad)
    assert ch04.check_clip_hook([torch.tensor(a) for a in arrived], w.grad)


# ---------------------------------------------------------------- predict, then run (04a)

@pytest.fixture
def fresh():
    from minigrad.teach import predictions
    predictions.reset_all()
    yield
    predictions.reset_all()


def test_set_to_none_prediction_measures_what_minigrad_and_torch_do(fresh):
    import torch
    x = torch.tensor([2.0], requires_grad=True)
    z = x * x * 3
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old = x.grad
    x.grad = None
    z.backward(retain_graph=True)
    want = {(12.0, 24.0): "a", (12.0, 12.0): "b", (36.0, 36.0): "c", (12.0, 0.0): "d"}[
        (x.grad.item(), old.item())]
    assert ch04.SET_TO_NONE.measure()[0] == want
    assert ch04.SET_TO_NONE.lock(want)
    assert ch04.SET_TO_NONE.reveal()


@pytest.mark.parametrize("letter", ["b", "c", "d"])
def test_set_to_none_wrong_letters_get_a_hint(fresh, letter):
    assert ch04.SET_TO_NONE.lock(letter)
    result = ch04.SET_TO_NONE.reveal()
    assert not result and "forget" in result.message


def test_set_to_none_prediction_after_the_reveal_does_not_count(fresh):
    ch04.SET_TO_NONE.reveal()
    assert not ch04.SET_TO_NONE.lock("a")


def test_two_paths_predictions(fresh):
    assert ch04.lock_two_paths(13, 26)
    assert ch04.reveal_two_paths()


@pytest.mark.parametrize("once, twice, wrong", [(12, 24, "two paths"), (13, 13, "not zeroed"),
                                                (1, 2, "two paths")])
def test_two_paths_wrong_predictions_are_named(fresh, once, twice, wrong):
    assert ch04.lock_two_paths(once, twice)
    result = ch04.reveal_two_paths()
    assert not result and wrong in result.message


def test_two_paths_refuses_computed_and_missing_predictions(fresh):
    import minigrad as mg
    assert not ch04.lock_two_paths(None, None)
    assert not ch04.lock_two_paths(mg.tensor(13.0), 26)
# ---------------------------------------------------------------- exercise 3's prediction

def torch_clipped_grad():
    """Exercise 3 run on PyTorch: w.grad[1] after the two clipped backward calls."""
    torch = pytest.importorskip("torch")
    w = torch.tensor(ch04.HOOK_QUIZ_VALUES, requires_grad=True)
    loss = (w ** 3 - 4 * w).sum()
    handle = w.register_hook(lambda grad: grad.clamp(-ch04.HOOK_CLIP, ch04.HOOK_CLIP))
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    handle.remove()
    return w.grad[1].item()


@pytest.fixture
def clip_prediction():
    ch04.clip_prediction.reset()
    yield ch04.clip_prediction
    ch04.clip_prediction.reset()


def test_clip_prediction_measures_what_pytorch_gives():
    assert ch04.clip_prediction.measure()[0] == torch_clipped_grad()


def test_clip_prediction_right_number_locked_first(clip_prediction):
    assert clip_prediction.lock(torch_clipped_grad())
    assert clip_prediction.reveal()


@pytest.mark.parametrize("wrong, words", [
    (16, "what the hook returns"), (2, "is the sum clipped"), (8, "follow one call"),
    (-4, "gradient of w ** 3"),
])
def test_clip_prediction_names_the_mistake_without_the_answer(clip_prediction, wrong, words):
    locked = clip_prediction.lock(wrong)
    assert locked
    result = clip_prediction.reveal()
    assert not result and words in result.message


def test_clip_prediction_refuses_w_grad_itself(clip_prediction):
    w = mg.tensor(ch04.HOOK_QUIZ_VALUES, requires_grad=True)
    (w ** 3 - 4 * w).sum().backward()
    assert not clip_prediction.lock(w.grad[1])
    assert clip_prediction.locked is None
