"""Chapter 6's exercise checks accept the right answers and reject wrong ones, without raising."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch06


# ---------------------------------------------------------------- exercise 1: registration

REGISTERED = {"features.weight": (3, 4), "gain": (3,), "head.weight": (2, 3), "head.bias": (2,)}


def test_registered_parameters_accepts_the_dictionary_in_any_order_and_spelling():
    assert ch06.check_registered_parameters(REGISTERED)
    assert ch06.check_registered_parameters(dict(reversed(list(REGISTERED.items()))))
    as_lists = {name: list(shape) for name, shape in REGISTERED.items()}
    assert ch06.check_registered_parameters(as_lists)
    assert ch06.check_registered_parameters(dict(REGISTERED, gain=3, **{"head.bias": mg.Size([2])}))
    model = ch06.Scorer()
    assert ch06.check_registered_parameters({n: p.shape for n, p in model.named_parameters()})


def test_registered_parameters_names_the_idea_each_wrong_answer_misses():
    def message(answer):
        result = ch06.check_registered_parameters(answer)
        assert not result
        return result.message

    assert "plain tensor" in message(dict(REGISTERED, offset=(3,)))      # section 3's bug
    assert "bias" in message(dict(REGISTERED, **{"features.bias": (3,)}))  # bias=False
    unprefixed = {"weight": (3, 4), "gain": (3,), "bias": (2,)}
    assert "path" in message(unprefixed)                                 # section 4's names
    without_gain = {k: v for k, v in REGISTERED.items() if k != "gain"}
    assert "nn.Parameter" in message(without_gain)                       # section 3
    transposed = dict(REGISTERED, **{"features.weight": (4, 3)})
    assert "(out_features, in_features)" in message(transposed)          # section 1
    assert "not right yet" in message(dict(REGISTERED, **{"head.bias": (3,)}))
    assert "no parameter called" in message(dict(REGISTERED, **{"linear.weight": (1, 1)}))
    assert "missing" in message({"features.weight": (3, 4)})
    assert "tuple" in message(dict(REGISTERED, gain="3"))
    for wrong in (["features.weight", "gain"], "gain", {1: (3,)}):
        assert "dictionary" in message(wrong)


def test_registered_parameters_hints_do_not_give_the_shapes_away():
    for wrong in ({"features.weight": (4, 3)}, dict(REGISTERED, **{"head.weight": (3, 2)}),
                  dict(REGISTERED, **{"head.bias": (3,)})):
        message = ch06.check_registered_parameters(wrong).message
        assert "(2, 3)" not in message and "(3, 4)" not in message and "(2,)" not in message


def test_registered_parameters_without_an_answer():
    for answer in (None, MISSING, ...):
        result = ch06.check_registered_parameters(answer)
        assert not result and "no answer yet" in result.message


# ---------------------------------------------------------------- exercise 2: parameter count

@pytest.fixture
def count():
    ch06.count_prediction.reset()
    yield ch06.count_prediction
    ch06.count_prediction.reset()


def test_parameter_count_is_pytorchs():
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    net = tnn.Sequential(tnn.Linear(3, 8), tnn.Tanh(), tnn.Linear(8, 8), tnn.Tanh(), tnn.Linear(8, 1))
    assert ch06.count_prediction.measure()[0] == sum(p.numel() for p in net.parameters())


@pytest.mark.parametrize("written", [(3 * 8 + 8) + (8 * 8 + 8) + (8 * 1 + 1), 113.0])
def test_parameter_count_locked_first_is_right(count, written):
    assert count.lock(written)
    assert count.reveal()


def test_parameter_count_wrong_counts_get_a_hint_not_the_answer(count):
    assert count.lock(3 * 8 + 8 * 8 + 8 * 1)
    weights_only = count.reveal()
    assert not weights_only and "bias" in weights_only.message and "weight matrices" in weights_only.message
    count.reset()
    assert count.lock(112)
    off_by_one = count.reveal()
    assert not off_by_one and "Hint" in off_by_one.message and "weight matrices" not in off_by_one.message


@pytest.mark.parametrize("answer", [None, MISSING, ..., "113 parameters", mg.tensor(113),
                                    sum(p.numel() for p in ch06.exercise_mlp().parameters())
                                    * np.int64(1)])
def test_parameter_count_refuses_no_answer_and_computed_counts(count, answer):
    assert not count.lock(answer)
    assert count.locked is None


# ---------------------------------------------------------------- exercise 3: names

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
    ch06.count_prediction.lock(113)
    ch06.count_prediction.reveal()
    ch06.count_prediction.reset()
    ch06.check_parameter_names(RIGHT_NAMES)
    ch06.check_registered_parameters(REGISTERED)
    assert mg.randn(3).tolist() == expected.tolist()


def test_06b_shows_none_of_exercise_3s_nested_names_before_the_exercise():
    """The title cell's learning goals once named "2.0.bias", one of the answers."""
    import json
    from pathlib import Path
    path = Path(__file__).parent.parent / "notebooks" / "06b_sequential_and_state.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    before = []
    for cell in cells:
        text = "".join(cell["source"])
        if "Exercise 3" in text:
            break
        before.append(text)
    shown = "\n".join(before)
    for name in RIGHT_NAMES:
        if "." in name[2:]:  # the nested ones, the exercise's point
            assert f'"{name}"' not in shown, name
