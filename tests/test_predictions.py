"""``teach.predictions``: a prediction is locked before the answer is shown, computed values
are refused, and the reveal grades the first locked prediction."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.teach.predictions import Prediction, reset_all


def choice(answer="b"):
    return Prediction("Exercise 9", lambda: (answer, "measured"),
                      choices={"a": "up", "b": "down"}, hint="Look at the sign.")


def number(answer=24.0):
    return Prediction("Exercise 8", lambda: (answer, f"x.grad is {answer:g}"))


def test_right_letter_locked_then_revealed_passes():
    p = choice()
    assert p.lock("b")
    result = p.reveal()
    assert result and "right" in result.message


def test_wrong_letter_fails_with_the_hint_and_not_the_answer():
    p = choice()
    assert p.lock(" (A) ")
    result = p.reveal()
    assert not result
    assert "Look at the sign." in result.message and "(b)" not in result.message


@pytest.mark.parametrize("bad", ["z", 1, ["a"]])
def test_a_letter_outside_the_choices_is_refused(bad):
    result = choice().lock(bad)
    assert not result and "not one of the choices" in result.message


@pytest.mark.parametrize("computed", [mg.tensor(24.0), np.float64(24.0), np.array(24.0),
                                      True, print])
def test_a_number_prediction_refuses_computed_values(computed):
    result = number().lock(computed)
    assert not result and "predict" in result.message


def test_none_asks_for_a_prediction():
    result = number().lock(None)
    assert not result and "no prediction yet" in result.message


def test_a_reveal_without_a_lock_fails():
    p = number()
    assert not p.reveal()


def test_after_the_reveal_a_new_prediction_is_refused_and_the_first_stays():
    p = number(24.0)
    assert p.lock(12)
    assert not p.reveal()
    result = p.lock(24)
    assert not result and "shown already" in result.message
    assert not p.reveal()
    assert p.lock(12)  # the same prediction again is no change


def test_a_number_within_tolerance_passes_and_reset_all_forgets():
    p = number(24.0)
    assert p.lock(24)
    assert p.reveal()
    reset_all()
    assert p.locked is None and not p.revealed


def shape(answer=(2, 4, 3)):
    return Prediction("Exercise 1", lambda: (mg.ones(answer).shape, "measured"), shape=True,
                      hint=lambda predicted, true: ("Count the dimensions."
                                                    if len(predicted) != len(true) else None))


def test_a_shape_written_by_hand_is_locked_and_compared_with_the_size():
    p = shape()
    assert p.lock((2, 4, 3))
    assert p.reveal()
    q = shape()
    assert q.lock([2, 4, 3])
    assert q.reveal()


@pytest.mark.parametrize("computed", [mg.ones(2, 4, 3).shape, mg.ones(2, 4, 3).size(),
                                      np.ones((2, 4, 3)).shape[:1] + (np.int64(4), 3),
                                      "(2, 4, 3)", mg.ones(2, 4, 3), (2.0, 4, 3), (-1, 4)])
def test_a_shape_prediction_refuses_computed_or_malformed_shapes(computed):
    result = shape().lock(computed)
    assert not result and "(5, 6, 7)" in result.message


def test_a_hint_function_names_the_mistake_of_that_prediction():
    p = shape()
    assert p.lock((4, 3))
    wrong_length = p.reveal()
    assert not wrong_length and "Count the dimensions." in wrong_length.message
    q = shape()
    assert q.lock((2, 1, 3))
    wrong_size = q.reveal()
    assert not wrong_size and "Count" not in wrong_size.message


def test_a_prediction_is_a_choice_or_a_shape_not_both():
    with pytest.raises(ValueError):
        Prediction("Exercise 1", lambda: ("a", ""), choices={"a": "x"}, shape=True)


def test_measure_leaves_the_default_generator_as_it_found_it():
    def measure():
        return mg.randn(3).shape, "drew three numbers"

    p = Prediction("Exercise 1", measure, shape=True)
    mg.manual_seed(5)
    expected = mg.rand(2).tolist()
    mg.manual_seed(5)
    p.lock((3,))
    assert p.reveal()
    assert mg.rand(2).tolist() == expected


@pytest.mark.parametrize("written, words", [
    ("36", ["'36' is a string", "not a string", "36 without the quotes"]),
    (" 2.5 ", ["is a string", "2.5 without the quotes"]),
    ("about 36", ["'about 36' is a string", "not a string", "one number"]),
    ([-16, -16], ["[-16, -16] is a list", "not a list", "one number"]),
    ((24,), ["(24,) is a tuple", "not a tuple"]),
])
def test_a_number_written_as_a_string_or_a_list_is_refused_for_its_type(written, words):
    """The problem is the type, not a computed value: the message says so."""
    result = number().lock(written)
    assert not result
    for word in words:
        assert word in result.message, result.message
    assert "computing it with the code" not in result.message
    assert "write the number itself" in result.message


def test_a_computed_value_is_still_refused_as_computed():
    result = number().lock(mg.ones(2).shape)
    assert not result and "computing it with the code" in result.message
