"""Chapter 3's exercise checks accept the right answers and reject wrong ones, without raising."""

import math

import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch03


# ---------------------------------------------------------------- exercise 1: the neuron

def neuron_by_hand():
    x, w, b, target = (ch03.NEURON[k] for k in ("x", "w", "b", "target"))
    y = math.tanh(w * x + b)
    grad_z = 2 * (y - target) * (1 - y ** 2)
    return grad_z * x, grad_z


def test_neuron_accepts_the_chain_rule_by_hand():
    grad_w, grad_b = neuron_by_hand()
    result = ch03.check_neuron_gradients(grad_w, grad_b)
    assert result and "correct" in repr(result)


def test_neuron_accepts_backward_and_tensors():
    w, b, loss = ch03.neuron_graph()
    loss.backward()
    assert ch03.check_neuron_gradients(w.grad, b.grad)
    assert ch03.check_neuron_gradients(w.grad.item(), b.grad.item())


def test_neuron_rejects_missing_swapped_and_wrong_answers():
    grad_w, grad_b = neuron_by_hand()
    assert "no answer yet" in repr(ch03.check_neuron_gradients(None, None))
    assert "no answer yet" in repr(ch03.check_neuron_gradients(MISSING, grad_b))
    swapped = ch03.check_neuron_gradients(grad_b, grad_w)
    assert not swapped and "swapped" in repr(swapped)
    # forgetting tanh's derivative, or the factor 2 of the square
    x, w, b, target = (ch03.NEURON[k] for k in ("x", "w", "b", "target"))
    y = math.tanh(w * x + b)
    assert not ch03.check_neuron_gradients(2 * (y - target) * x, 2 * (y - target))
    assert not ch03.check_neuron_gradients(grad_w / 2, grad_b / 2)
    assert not ch03.check_neuron_gradients("four", grad_b)


def test_neuron_hint_does_not_give_the_numbers():
    grad_w, grad_b = neuron_by_hand()
    text = repr(ch03.check_neuron_gradients(grad_w + 1, grad_b))
    assert f"{grad_w:.3f}" not in text and f"{grad_b:.3f}" not in text


# ---------------------------------------------------------------- exercise 2: the order

RIGHT_ORDER = ["PowBackward0", "AddBackward0", "ExpBackward0", "MulBackward0",
               "AccumulateGrad", "AccumulateGrad"]


def test_order_accepts_the_engines_order_and_pytorch_names():
    out = ch03.order_graph()
    names = [type(n).__name__ for n in mg.graph.execution_order([out.grad_fn])]
    assert names == RIGHT_ORDER
    assert ch03.check_backward_order(RIGHT_ORDER)
    assert ch03.check_backward_order(tuple(RIGHT_ORDER))
    pytorch = RIGHT_ORDER[:4] + ["torch::autograd::AccumulateGrad"] * 2
    assert ch03.check_backward_order(pytorch)


def test_order_rejects_wrong_orders_with_a_reason():
    assert "no answer yet" in repr(ch03.check_backward_order(None))
    swapped = ["PowBackward0", "AddBackward0", "MulBackward0", "ExpBackward0",
               "AccumulateGrad", "AccumulateGrad"]
    result = ch03.check_backward_order(swapped)
    assert not result and "MulBackward0" in repr(result)
    reversed_order = list(reversed(RIGHT_ORDER))
    assert not ch03.check_backward_order(reversed_order)
    leaves_early = ["PowBackward0", "AccumulateGrad", "AddBackward0", "ExpBackward0",
                    "MulBackward0", "AccumulateGrad"]
    assert not ch03.check_backward_order(leaves_early)
    short = ch03.check_backward_order(RIGHT_ORDER[:4])
    assert not short and "6 nodes" in repr(short)
    unknown = ch03.check_backward_order(["SumBackward0"] + RIGHT_ORDER[1:])
    assert not unknown and "SumBackward0" in repr(unknown)
    assert not ch03.check_backward_order("PowBackward0")
    assert not ch03.check_backward_order([1, 2, 3])


# ---------------------------------------------------------------- exercise 3: the sigmoid

class GoodSigmoid(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)


class BuggySigmoid(GoodSigmoid):
    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


class ForgetsGradOutput(GoodSigmoid):
    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return y * (1 - y)


class WrongForward(GoodSigmoid):
    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y


class CrashingBackward(GoodSigmoid):
    @staticmethod
    def backward(ctx, grad_output):
        raise ValueError("oops")


def test_sigmoid_accepts_a_correct_function():
    result = ch03.check_sigmoid(GoodSigmoid)
    assert result and "gradcheck passes" in repr(result)


def test_sigmoid_rejects_wrong_backwards_and_forwards_without_raising():
    assert "no answer yet" in repr(ch03.check_sigmoid(None))
    assert "gradcheck" in repr(ch03.check_sigmoid(BuggySigmoid))
    assert not ch03.check_sigmoid(ForgetsGradOutput)
    assert "forward" in repr(ch03.check_sigmoid(WrongForward))
    crashed = ch03.check_sigmoid(CrashingBackward)
    assert not crashed and "ValueError" in repr(crashed)
    assert not ch03.check_sigmoid(lambda x: x.sigmoid())
    assert not ch03.check_sigmoid(int)
