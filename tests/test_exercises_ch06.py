"""Chapter 6's exercise checks accept the right answers and reject wrong ones, without raising."""

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch06


# ---------------------------------------------------------------- exercise 1: parameter count

def test_parameter_count_accepts_the_count():
    assert ch06.check_parameter_count((3 * 8 + 8) + (8 * 8 + 8) + (8 * 1 + 1))
    assert ch06.check_parameter_count(113.0)
    assert ch06.check_parameter_count(mg.tensor(113))


def test_parameter_count_rejects_wrong_counts_with_a_hint():
    weights_only = ch06.check_parameter_count(3 * 8 + 8 * 8 + 8 * 1)
    assert not weights_only and "bias" in weights_only.message
    off_by_one = ch06.check_parameter_count(112)
    assert not off_by_one and "Hint" in off_by_one.message
    assert "113" not in off_by_one.message  # the hint does not give the answer away


def test_parameter_count_without_an_answer_or_with_nonsense():
    for answer in (None, MISSING, ...):
        result = ch06.check_parameter_count(answer)
        assert not result and "no answer yet" in result.message
    assert not ch06.check_parameter_count("113 parameters")


# ---------------------------------------------------------------- exercise 2: names

RIGHT_NAMES = ["0.weight", "0.bias", "2.0.weight", "2.0.bias", "3.weight"]


def test_parameter_names_accepts_the_names_in_order():
    assert ch06.check_parameter_names(RIGHT_NAMES)
    assert ch06.check_parameter_names(tuple(RIGHT_NAMES))
    model = ch06.exercise_nested_model()
    assert ch06.check_parameter_names([name for name, _ in model.named_parameters()])


def test_parameter_names_rejects_wrong_names():
    wrong_order = ch06.check_parameter_names(RIGHT_NAMES[::-1])
    assert not wrong_order and "order" in wrong_order.message
    with_last_bias = ch06.check_parameter_names(RIGHT_NAMES + ["3.bias"])
    assert not with_last_bias and "bias" in with_last_bias.message
    renumbered = ["0.weight", "0.bias", "1.weight", "1.bias", "2.weight"]
    result = ch06.check_parameter_names(renumbered)
    assert not result and "1.weight" in result.message
    assert not ch06.check_parameter_names("0.weight")
    assert not ch06.check_parameter_names([0, 1])
    assert not ch06.check_parameter_names(None)


def test_checks_leave_the_default_random_stream_alone():
    mg.manual_seed(0)
    expected = mg.randn(3)
    mg.manual_seed(0)
    ch06.check_parameter_count(113)
    ch06.check_parameter_names(RIGHT_NAMES)
    assert mg.randn(3).tolist() == expected.tolist()
