"""Chapter 7's build exercise: the learner's ``LogSoftmaxBackward0(Op)``, plugged in as
``minigrad.ops.softmax.LogSoftmaxBackward0`` (what ``Tensor.log_softmax`` and
``F.cross_entropy`` run) and checked by ``teach.check_piece("log_softmax", ...)``."""


import numpy as np
import pytest

import minigrad as mg
from build_cells import solution
from minigrad import nn, teach
from minigrad.ops import Op
from minigrad.ops import softmax as softmax_ops

LogSoftmaxBackward0 = solution("07", "LogSoftmaxBackward0")
OWN = softmax_ops.LogSoftmaxBackward0


def message(answer):
    result = teach.check_piece("log_softmax", answer)
    assert not result, result.message
    return result.message


# ---------------------------------------------------------------- right answers

def test_the_notebooks_op_passes_its_check():
    result = teach.check_piece("log_softmax", LogSoftmaxBackward0)
    assert result, result.message
    assert "200 random ones" in result.message


def test_another_stable_forward_passes_too():
    class ShiftedLogSumExp(Op):
        """log p = z - (m + log sum exp(z - m)): the same numbers, rounded differently."""

        def forward(self, a, dim):
            self.dim = dim
            m = a.max(axis=dim, keepdims=True)
            out = a - (m + np.log(np.exp(a - m).sum(axis=dim, keepdims=True)))
            self.save_for_backward(out)
            return out

        def backward(self, grad, out):
            return grad - np.exp(out) * grad.sum(axis=self.dim, keepdims=True)

    result = teach.check_piece("log_softmax", ShiftedLogSumExp)
    assert result, result.message


def test_the_check_is_deterministic_and_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    first = teach.check_piece("log_softmax", LogSoftmaxBackward0).message
    assert mg.default_generator.get_state() == state
    assert teach.check_piece("log_softmax", LogSoftmaxBackward0).message == first


# ---------------------------------------------------------------- wrong answers

class Unstable(LogSoftmaxBackward0):
    """Straight from the formula: exp(1000) overflows."""

    def forward(self, a, dim):
        self.dim = dim
        out = np.log(np.exp(a) / np.exp(a).sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out


class NoSoftmaxTerm(LogSoftmaxBackward0):
    def backward(self, grad, out):
        return grad


class NoSumOverTheSlice(LogSoftmaxBackward0):
    def backward(self, grad, out):
        return grad - np.exp(out) * grad


class SumsOverDimZero(LogSoftmaxBackward0):
    def backward(self, grad, out):
        return grad - np.exp(out) * grad.sum(axis=0, keepdims=True)


class AlwaysTheLastDim(LogSoftmaxBackward0):
    def forward(self, a, dim):
        return super().forward(a, a.ndim - 1)


class WrongSign(LogSoftmaxBackward0):
    def backward(self, grad, out):
        return grad + np.exp(out) * grad.sum(axis=self.dim, keepdims=True)


class ChangesItsInput(LogSoftmaxBackward0):
    def forward(self, a, dim):
        a -= a.max(axis=dim, keepdims=True)
        return super().forward(a, dim)


class CallsTheBuiltIn(LogSoftmaxBackward0):
    def forward(self, a, dim):
        return mg.tensor(a).log_softmax(dim).numpy()


class NoKeepdims(LogSoftmaxBackward0):
    def forward(self, a, dim):
        self.dim = dim
        shifted = a - a.max(axis=dim)
        return shifted - np.log(np.exp(shifted).sum(axis=dim))


@pytest.mark.parametrize("answer, words", [
    (Unstable, ["[1000.0, -1000.0]", "not finite", "subtract each slice's max"]),
    (NoSoftmaxTerm, ["gradient that arrived, unchanged", "a second term is missing"]),
    (NoSumOverTheSlice, ["add up the arriving gradients of the whole slice"]),
    (SumsOverDimZero, ["sums along dim=0", "keep the dim forward received"]),
    (AlwaysTheLastDim, ["along dim=0 differs", "take the max and the sum along the dim"]),
    (WrongSign, ["sign of the second term"]),
    (ChangesItsInput, ["changed its input"]),
    (NoKeepdims, ["raised ValueError", "keepdims=True"]),
    (lambda a, dim: a, ["a class that inherits from Op"]),
])
def test_a_wrong_op_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text


# ---------------------------------------------------------------- more wrong answers: what
# students write from 07a and 07b's text (issue 24)

from minigrad.creation import tensor as _make_tensor  # noqa: E402  (read by CallsItAnotherWay)
from minigrad.nn import functional as F  # noqa: E402


class EmptySubclass(OWN):
    pass


class WrapsFLogSoftmax(Op):
    """A thin wrapper: minigrad's own log_softmax on a tensor made from the array."""

    def forward(self, a, dim):
        self.dim = dim
        out = F.log_softmax(mg.tensor(a), dim).numpy()
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad - np.exp(out) * grad.sum(axis=self.dim, keepdims=True)


class CallsOwnOpsForward(Op):
    def forward(self, a, dim):
        return OWN.forward(self, a, dim)

    def backward(self, grad, out):
        return OWN.backward(self, grad, out)


class CallsItAnotherWay(LogSoftmaxBackward0):
    """Through a tensor made by a function the refusal does not know: the plugged op calls
    itself."""

    def forward(self, a, dim):
        return _make_tensor(a).log_softmax(dim).numpy()


class Float64Forward(LogSoftmaxBackward0):
    """Converts the logits "to be safe": a float32 input gives a float64 output."""

    def forward(self, a, dim):
        return super().forward(a.astype(float), dim)


class Float64Backward(LogSoftmaxBackward0):
    """Fills a new array made without a dtype: float64, hidden by the engine's cast."""

    def backward(self, grad, out):
        result = np.zeros(grad.shape)
        result[...] = super().backward(grad, out)
        return result


class LogOfSoftmax(LogSoftmaxBackward0):
    """A stable softmax, then its log: a probability that rounds to 0 gives -inf."""

    def forward(self, a, dim):
        self.dim = dim
        e = np.exp(a - a.max(axis=dim, keepdims=True))
        out = np.log(e / e.sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out


class SoftmaxBackward(LogSoftmaxBackward0):
    """softmax's backward, p * (g - sum(g * p)), for log-softmax."""

    def backward(self, grad, out):
        p = np.exp(out)
        return p * (grad - (grad * p).sum(axis=self.dim, keepdims=True))


class GradMinusProbabilities(LogSoftmaxBackward0):
    """Cross-entropy's gradient with a one-hot target (07a) taken for log-softmax's."""

    def backward(self, grad, out):
        return grad - np.exp(out)


class IgnoresTheArrivingGradient(LogSoftmaxBackward0):
    """1 - p: the derivative of log p_c by z_c alone, without grad."""

    def backward(self, grad, out):
        return 1 - np.exp(out)


class WeightedSum(LogSoftmaxBackward0):
    """sum(grad * p) for sum(grad): softmax's sum in log-softmax's backward."""

    def backward(self, grad, out):
        p = np.exp(out)
        return grad - p * (grad * p).sum(axis=self.dim, keepdims=True)


class SumsEverything(LogSoftmaxBackward0):
    def backward(self, grad, out):
        return grad - np.exp(out) * grad.sum()


class ShiftOnlyOutside(LogSoftmaxBackward0):
    """(z - m) - log(sum(exp(z))): the max subtracted in one place only."""

    def forward(self, a, dim):
        self.dim = dim
        m = a.max(axis=dim, keepdims=True)
        out = (a - m) - np.log(np.exp(a).sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out


class ReturnsProbabilities(LogSoftmaxBackward0):
    def forward(self, a, dim):
        return np.exp(super().forward(a, dim))


class BackwardFromTheLogits(LogSoftmaxBackward0):
    """Saves the logits and takes the softmax of them unshifted in backward."""

    def forward(self, a, dim):
        out = super().forward(a, dim)
        self.save_for_backward(a)
        return out

    def backward(self, grad, a):
        p = np.exp(a) / np.exp(a).sum(axis=self.dim, keepdims=True)
        return grad - p * grad.sum(axis=self.dim, keepdims=True)


class LastAxisBackward(LogSoftmaxBackward0):
    """Sums along the last axis in backward, whatever dim forward received."""

    def backward(self, grad, out):
        return grad - np.exp(out) * grad.sum(axis=-1, keepdims=True)


class KeepdimsOnlyInMax(LogSoftmaxBackward0):
    def forward(self, a, dim):
        self.dim = dim
        shifted = a - a.max(axis=dim, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=dim))
        self.save_for_backward(out)
        return out


class MaxOfTheWholeArray(LogSoftmaxBackward0):
    """a.max() without axis: one shift for every slice, too big for some of them."""

    def forward(self, a, dim):
        self.dim = dim
        shifted = a - a.max()
        out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out


class ForgetsToKeepDim(LogSoftmaxBackward0):
    def forward(self, a, dim):
        shifted = a - a.max(axis=dim, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out


class SavesTheShiftedLogits(LogSoftmaxBackward0):
    """Saves z - m and takes its exp for the softmax: not normalized."""

    def forward(self, a, dim):
        self.dim = dim
        shifted = a - a.max(axis=dim, keepdims=True)
        self.save_for_backward(shifted)
        return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("answer, words", [
    (OWN, ["minigrad's own LogSoftmaxBackward0", "not a piece you wrote"]),
    (KeepdimsOnlyInMax, ["raised ValueError", "keepdims=True"]),
    (MaxOfTheWholeArray, ["[500.0, 501.0]", "not finite", "not the whole array's"]),
    (ForgetsToKeepDim, ["raised AttributeError", "set self.dim = dim in forward"]),
    (SavesTheShiftedLogits, ["gradient differs", "shifted and normalized"]),
    (EmptySubclass, ["subclass of minigrad's own LogSoftmaxBackward0"]),
    (WrapsFLogSoftmax, ["uses minigrad's own", "log_softmax", "Write that part yourself"]),
    (CallsOwnOpsForward, ["uses minigrad's own LogSoftmaxBackward0"]),
    (CallsItAnotherWay, ["never returned", "calls log_softmax"]),
    (Float64Forward, ["is float64, where minigrad's own gives float32",
                      "float32 into float64"]),
    (Float64Backward, ["what your backward returns", "is float64", "float32"]),
    (LogOfSoftmax, ["-inf where minigrad's is finite", "log(softmax(z)) is not log_softmax(z)"]),
    (SoftmaxBackward, ["backward of softmax", "not of log-softmax"]),
    (GradMinusProbabilities, ["add up to 1", "scale with their sum along dim"]),
    (IgnoresTheArrivingGradient, ["gradient differs", "ignores the gradient that arrived",
                                  "whatever arrived", "multiplies"]),
    (WeightedSum, ["gradient differs", "each weighted by its probability",
                   "belongs to softmax's backward", "without any weight"]),
    (SumsEverything, ["over the whole array", "sum along the dim forward received"]),
    (ShiftOnlyOutside, ["off by each slice's max", "in both places"]),
    (ReturnsProbabilities, ["These are the probabilities", "their log"]),
    (BackwardFromTheLogits, ["[1000.0, -1000.0]", "is not finite", "overflows in backward"]),
    (LastAxisBackward, ["along dim=0: the logits' gradient differs",
                        "add up the arriving gradients of the whole slice along dim=0"]),
])
def test_a_typical_wrong_op_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text


def test_minigrads_own_objects_are_listed_for_the_refusal():
    own = teach.build._piece("log_softmax").own.values()
    for obj in (OWN, F.log_softmax, mg.log_softmax, nn.LogSoftmax):
        assert any(obj is value for value in own), obj


def test_the_new_messages_do_not_give_the_backward_formula():
    for answer in (SoftmaxBackward, GradMinusProbabilities, SumsEverything, LastAxisBackward,
                   BackwardFromTheLogits, IgnoresTheArrivingGradient, WeightedSum):
        text = message(answer)
        assert "grad - " not in text and "softmax *" not in text and "p *" not in text, text


def test_an_op_that_calls_minigrads_log_softmax_is_refused_or_told_it_calls_itself():
    """x.log_softmax on a tensor made with mg.tensor: refused as minigrad's own (the refusal
    reads mg.log_softmax among the names the code reads), or, where it is not recognised,
    the plugged op calls itself and the check says so."""
    text = message(CallsTheBuiltIn)
    assert ("uses minigrad's own log_softmax" in text and "Write that part yourself" in text) \
        or ("never returned" in text and "calls log_softmax" in text), text


def test_messages_do_not_give_the_backward_formula():
    for answer in (NoSoftmaxTerm, NoSumOverTheSlice, SumsOverDimZero, WrongSign):
        text = message(answer)
        assert "grad - " not in text and "softmax *" not in text, text


def test_the_unstable_op_fails_without_printing_numpys_warnings(recwarn):
    message(Unstable)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# ---------------------------------------------------------------- not written yet

def test_none_is_not_written_yet_and_minigrads_own_op_runs():
    result = teach.check_piece("log_softmax", None)
    assert not result and "not written yet" in result.message
    with teach.use(log_softmax=None):
        assert type(mg.tensor([1.0, 2.0], requires_grad=True).log_softmax(0).grad_fn) is OWN


# ---------------------------------------------------------------- the plug

def test_use_runs_the_learners_op_in_the_chapters_cross_entropy():
    calls = []

    class Counting(LogSoftmaxBackward0):
        def forward(self, a, dim):
            calls.append(("forward", a.shape, dim))
            return super().forward(a, dim)

        def backward(self, grad, out):
            calls.append(("backward", grad.shape))
            return super().backward(grad, out)

    logits = mg.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], requires_grad=True)
    with teach.use(log_softmax=Counting):
        assert softmax_ops.LogSoftmaxBackward0 is Counting
        loss = nn.CrossEntropyLoss()(logits, mg.tensor([0, 2]))
    loss.backward()
    assert calls == [("forward", (2, 3), 1), ("backward", (2, 3))]
    assert loss.item() == pytest.approx(2.0351, abs=1e-4)
    own = mg.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], requires_grad=True)
    nn.CrossEntropyLoss()(own, mg.tensor([0, 2])).backward()
    np.testing.assert_allclose(logits.grad.numpy(), own.grad.numpy(), rtol=1e-6)


def test_use_puts_minigrads_op_back_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with teach.use(log_softmax=LogSoftmaxBackward0):
            assert softmax_ops.LogSoftmaxBackward0 is LogSoftmaxBackward0
            1 / 0
    assert softmax_ops.LogSoftmaxBackward0 is OWN
    assert type(mg.tensor([1.0], requires_grad=True).log_softmax(0).grad_fn) is OWN


def test_the_check_compares_with_minigrads_own_even_inside_a_use_block():
    with teach.use(log_softmax=NoSoftmaxTerm):
        assert teach.check_piece("log_softmax", LogSoftmaxBackward0)
        assert not teach.check_piece("log_softmax", NoSoftmaxTerm)
