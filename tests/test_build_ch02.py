"""Chapter 2's build exercise, ``MulBackward0`` (one op's node): the notebook's class passes
its check, typical wrong classes fail with a message that says what is wrong, and
``teach.use(mul=...)`` makes every ``*`` of tensors use the class, then puts minigrad's back."""

import numpy as np
import pytest

import minigrad as mg
from build_cells import build_cells, solution
from minigrad import teach
from minigrad.ops import Op, arithmetic
from minigrad.teach import build

OWN = arithmetic.MulBackward0


def mul_class(**replacements):
    """The notebook's MulBackward0 with some lines replaced: a wrong answer."""
    source = build_cells("02")[0]
    for old, new in replacements.items():
        assert old in source, old
        source = source.replace(old, new)
    names = {}
    exec(compile(build.PRELUDE + source, "<a wrong MulBackward0>", "exec"), names)
    return names["MulBackward0"]


def message(node_class):
    result = teach.check_piece("mul", node_class)
    assert not result, result
    assert arithmetic.MulBackward0 is OWN  # put back after a failed check too
    return repr(result)


def test_the_notebooks_class_passes():
    result = teach.check_piece("mul", solution("02", "MulBackward0"))
    assert result, result
    assert "second derivative" in repr(result)
    assert teach.check_piece("mul", OWN)  # minigrad's own, which saves only what is needed


def test_swapped_gradients_are_caught():
    text = message(mul_class(**{"return grad * b, grad * a": "return grad * a, grad * b"}))
    assert "x.grad is [2.0]; expected [3.0]" in text
    assert "other factor" in text


def test_saving_nothing_is_caught():
    text = message(mul_class(**{
        "        self.save_for_backward(a, b)\n": "        self.a, self.b = a, b\n",
        "def backward(self, grad, a, b):": "def backward(self, grad):",
        "return grad * b, grad * a": "return grad * self.b, grad * self.a"}))
    assert "saved nothing" in text and "save_for_backward" in text


def test_saving_one_operand_is_caught():
    text = message(mul_class(**{
        "self.save_for_backward(a, b)": "self.save_for_backward(a)",
        "def backward(self, grad, a, b):": "def backward(self, grad, a):",
        "return grad * b, grad * a": "return grad * a, grad * a"}))
    assert "saved [2.0, -1.0, 0.5] but not y's values [3.0, 4.0, -2.0]" in text


def test_returning_one_gradient_is_caught():
    text = message(mul_class(**{"return grad * b, grad * a": "return grad * b"}))
    assert "one gradient per input" in text and "pair" in text


def test_forgetting_the_incoming_gradient_is_caught():
    text = message(mul_class(**{"return grad * b, grad * a": "return b, a"}))
    assert "x.grad is" in text and "chain rule" in text


def test_a_backward_in_numpy_functions_breaks_the_second_derivative():
    text = message(mul_class(**{"return grad * b, grad * a":
                                "return np.multiply(grad, b), np.multiply(grad, a)"}))
    assert "create_graph=True" in text and "grad * b" in text


def test_another_name_or_no_op_class_is_caught():
    wrong = mul_class()
    wrong.__name__ = "Mul"
    assert "call the class that" in message(wrong)
    assert "not a class" in message(lambda a, b: a * b)


def test_not_written_yet_leaves_minigrads_node_in_place():
    result = teach.check_piece("mul", None)
    assert not result and "not written yet" in repr(result)
    with teach.use(mul=None):
        x = mg.tensor([2.0], requires_grad=True)
        assert type((x * 3).grad_fn) is OWN


def test_use_plugs_the_class_into_every_product_and_puts_it_back():
    learner = solution("02", "MulBackward0")
    runs = []

    class MulBackward0(learner):
        def forward(self, a, b):
            runs.append("forward")
            return super().forward(a, b)

        def backward(self, grad, *saved):
            runs.append("backward")
            return super().backward(grad, *saved)

    u = mg.tensor([2.0], requires_grad=True)
    v = mg.tensor([3.0], requires_grad=True)
    with teach.use(mul=MulBackward0):
        uv = u * v
        assert type(uv.grad_fn) is MulBackward0 and isinstance(uv.grad_fn, Op)
    assert arithmetic.MulBackward0 is OWN
    uv.backward()
    assert runs == ["forward", "backward"]
    assert u.grad.tolist() == [3.0] and v.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        with teach.use(mul=MulBackward0):
            mg.ones(2) * mg.ones(3)  # shapes that do not broadcast
    assert arithmetic.MulBackward0 is OWN
    assert type((u * v).grad_fn) is OWN


def test_the_check_keeps_the_random_state_and_is_quick():
    import time
    mg.manual_seed(5)
    expected = mg.rand(3)
    mg.manual_seed(5)
    start = time.perf_counter()
    teach.check_piece("mul", solution("02", "MulBackward0"))
    assert time.perf_counter() - start < 5  # about 0.1 s
    assert mg.equal(mg.rand(3), expected)
    assert np.array_equal(mg.tensor([1.0, 2.0]).numpy(), [1.0, 2.0])
