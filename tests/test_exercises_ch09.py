"""Chapter 9's exercise checks accept the right answers and reject wrong ones, without raising."""

import math

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch09


# ---------------------------------------------------------------- exercise 1: the scales

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


# ---------------------------------------------------------------- exercise 2: steps per epoch

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
    ch09.check_loss_scales(lambda sizes: [n / sum(sizes) for n in sizes])
    ch09.check_steps_per_epoch(96, 42, 10)
    assert mg.randn(3).tolist() == expected.tolist()


# ---------------------------------------------------------------- exercise 3: one shared weight

def _by_hand(derivative=True, carry=True, state_before=True, reverse=False):
    def step_contributions(w, xs, h0):
        hs = [h0]
        for x in xs:
            hs.append(math.tanh(w * hs[-1] + x))
        shares, grad_h = [0.0] * len(xs), 1.0
        for t in range(len(xs), 0, -1):
            grad_a = grad_h * ((1 - hs[t] ** 2) if derivative else 1.0)
            shares[t - 1] = grad_a * (hs[t - 1] if state_before else hs[t])
            grad_h = grad_a * w if carry else 0.0
        return shares[::-1] if reverse else shares
    return step_contributions


def test_step_shares_add_up_to_w_grad():
    for w, xs, h0 in [(0.9, [0.2, -0.4, 0.3], 1.0)] + ch09._RNN_CASES:
        shares, total = ch09.step_shares(w, xs, h0)
        assert len(shares) == len(xs)
        assert math.isclose(sum(shares), total, rel_tol=1e-12)
        assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(shares, _by_hand()(w, xs, h0)))


def test_step_contributions_accepts_by_hand_and_by_hooks():
    assert ch09.check_step_contributions(_by_hand())
    assert ch09.check_step_contributions(lambda w, xs, h0: ch09.step_shares(w, xs, h0)[0])
    assert ch09.check_step_contributions(lambda w, xs, h0: mg.tensor(_by_hand()(w, xs, h0)))


def test_step_contributions_rejects_the_usual_mistakes():
    for answer, words in [
        (_by_hand(derivative=False), "through tanh"),
        (_by_hand(carry=False), "carry the gradient"),
        (_by_hand(state_before=False), "h_(t-1), not the one it makes"),
        (_by_hand(reverse=True), "from the last time step"),
        (lambda w, xs, h0: sum(_by_hand()(w, xs, h0)), "w.grad itself"),
        (lambda w, xs, h0: _by_hand()(w, xs, h0)[:-1], "one per time step"),
    ]:
        result = ch09.check_step_contributions(answer)
        assert not result and words in result.message, result.message


def test_step_contributions_missing_odd_or_crashing():
    for answer in (None, MISSING, ...):
        assert "no answer yet" in ch09.check_step_contributions(answer).message
    assert "expected a function" in ch09.check_step_contributions([0.2, 0.5]).message
    assert "ZeroDivisionError" in ch09.check_step_contributions(lambda *a: 1 / 0).message
    assert "expected a list" in ch09.check_step_contributions(lambda *a: "three").message


def test_step_contributions_keeps_the_random_state():
    mg.manual_seed(5)
    expected = mg.randn(2)
    mg.manual_seed(5)
    ch09.check_step_contributions(_by_hand())
    assert mg.equal(mg.randn(2), expected)
