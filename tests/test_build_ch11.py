"""Chapter 11's build exercise: the learner's ``Softplus(mg.autograd.Function)``, plugged in
behind ``nn.functional.softplus`` and ``nn.Softplus`` by ``teach.use(softplus=...)`` and
checked by ``teach.check_piece("softplus", ...)`` (gradcheck included)."""

import inspect
import linecache

import numpy as np
import pytest

import minigrad as mg
from build_cells import solution
from minigrad import nn, teach
from minigrad.nn import activations_more
from minigrad.nn import functional as F
from minigrad.ops import activations as activation_ops
from minigrad.teach import build
from minigrad.teach.exercises import ch11

Softplus = solution("11", "Softplus")
OWN = activations_more.softplus


def message(answer):
    result = teach.check_piece("softplus", answer)
    assert not result, result.message
    return result.message


# ---------------------------------------------------------------- right answers

def test_the_notebooks_softplus_passes_its_check():
    result = teach.check_piece("softplus", Softplus)
    assert result, result.message
    assert "gradcheck" in result.message and "±1000" in result.message


def test_a_softplus_that_saves_its_output_passes_too():
    class SavingTheOutput(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * (1 - (-y).exp())     # sigma(x) = 1 - exp(-softplus(x))

    result = teach.check_piece("softplus", SavingTheOutput)
    assert result, result.message


def test_a_slope_computed_in_forward_and_saved_passes_too():
    """As the lecture's Swish: a tensor computed in forward and saved is a constant to a
    second derivative with respect to x, in PyTorch too; the check does not ask for one."""
    answer = cell(HEAD + """        ctx.save_for_backward(x.sigmoid())
        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()

    @staticmethod
    def backward(ctx, grad_output):
        (slope,) = ctx.saved_tensors
        return grad_output * slope
""")
    result = teach.check_piece("softplus", answer)
    assert result, result.message
    assert "create_graph=True" in result.message


def test_the_check_is_deterministic_and_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    first = teach.check_piece("softplus", Softplus).message
    assert mg.default_generator.get_state() == state
    assert teach.check_piece("softplus", Softplus).message == first


# ---------------------------------------------------------------- wrong answers

class Textbook(Softplus):
    """log(1 + e^x) as written: inf at x = 100 in float32."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (1 + x.exp()).log()


class TextbookBackward(Softplus):
    """e^x / (1 + e^x): inf / inf = nan at x = 1000."""

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.exp() / (1 + x.exp())


class SigmoidOfMinusX(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (-x).sigmoid()


class SigmoidOfTheOutput(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y.sigmoid()


class ForgetsGradOutput(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return x.sigmoid()


class ReturnsNone(Softplus):
    @staticmethod
    def backward(ctx, grad_output):
        return None


class WrongForward(Softplus):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)


class ChangesItsInput(Softplus):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
        x.mul_(0)
        return y


class OneSided(Softplus):
    """x + log(1 + e^-x): inf at x = -1000."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x + (1 + (-x).exp()).log()


class WholeTensorMax(Softplus):
    """The max trick with the whole tensor's max: log(0) = -inf far below it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        m = x.max().clamp(min=0)
        return m + ((-m).exp() + (x - m).exp()).log()


def cell(source, name="Softplus", imports=("mg", "np", "nn", "F")):
    """``name`` as a notebook cell defines it (after ``imports``): its lines can be named in
    a message."""
    filename = f"<ipython-input-{abs(hash(source))}>"
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    known = {"mg": mg, "np": np, "nn": nn, "F": F}
    names = {"__name__": "__main__"} | {name: known[name] for name in imports}
    exec(compile(source, filename, "exec"), names)
    return names[name]


HEAD = """class Softplus(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
"""
STABLE_FORWARD = """        ctx.save_for_backward(x)
        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
"""
SIGMOID_BACKWARD = """
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.sigmoid()
"""

# forward calls F.softplus: before, a bare RecursionError once plugged in
CallsFSoftplus = cell(HEAD + """        ctx.save_for_backward(x)
        return F.softplus(x)
""" + SIGMOID_BACKWARD)
# the same through a path the refusal by names does not follow
CallsMgNnFunctionalSoftplus = cell(HEAD + """        ctx.save_for_backward(x)
        return mg.nn.functional.softplus(x)
""" + SIGMOID_BACKWARD, imports=("mg",))
CallsNnSoftplus = cell(HEAD + """        ctx.save_for_backward(x)
        return nn.Softplus()(x)
""" + SIGMOID_BACKWARD)
# float64 slips: x.numpy().astype(float) (or np.float64 / Python floats) in forward or backward
Float64Forward = cell(HEAD + """        ctx.save_for_backward(x)
        a = x.detach().numpy().astype(float)
        return mg.tensor(np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a))))
""" + SIGMOID_BACKWARD)
Float64Backward = cell(HEAD + STABLE_FORWARD + """
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = 1 / (1 + np.exp(-x.numpy().astype(float)))
        return grad_output * mg.tensor(s)
""")
# the gradient left as a numpy array: PyTorch refuses it, create_graph loses it
NumpyBackward = cell(HEAD + STABLE_FORWARD + """
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output.numpy() / (1 + np.exp(-x.numpy()))
""")
# a numpy array kept from forward as an attribute, then returned as the gradient
SavesNumpySlope = cell(HEAD + """        ctx.slope = 1 / (1 + np.exp(-x.detach().numpy()))
        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.slope * grad_output.numpy()
""")
# the gradient made anew from numbers: right values, but not recorded under create_graph
DetachedBackward = cell(HEAD + STABLE_FORWARD + """
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        g = grad_output.detach().numpy() / (1 + np.exp(-x.detach().numpy()))
        return mg.tensor(g)
""")
# a numpy slope kept from forward, and grad_output through numpy
NumpyRoundTrip = cell(HEAD + """        ctx.slope = 1 / (1 + np.exp(-x.detach().numpy()))
        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()

    @staticmethod
    def backward(ctx, grad_output):
        return mg.tensor(grad_output.numpy() * ctx.slope)
""")
ForgetsToSave = cell(HEAD + """        return x.clamp(min=0) + (1 + (-x.abs()).exp()).log()
""" + SIGMOID_BACKWARD)
ForgetsAbs = cell(HEAD + """        ctx.save_for_backward(x)
        return x.clamp(min=0) + (1 + (-x).exp()).log()
""" + SIGMOID_BACKWARD)
AbsInsteadOfClamp = cell(HEAD + """        ctx.save_for_backward(x)
        return x.abs() + (1 + (-x.abs()).exp()).log()
""" + SIGMOID_BACKWARD)
ReturnsAnArray = cell(HEAD + """        ctx.save_for_backward(x)
        a = x.detach().numpy()
        return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))
""" + SIGMOID_BACKWARD)
BetaTwo = cell("""class Softplus(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta=2.0):
        ctx.save_for_backward(x)
        ctx.beta = beta
        z = x * beta
        return (z.clamp(min=0) + (1 + (-z.abs()).exp()).log()) / beta

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x * ctx.beta).sigmoid(), None
""")


@pytest.mark.parametrize("answer, words", [
    (Textbook, ["at x = [-1000.0", "not finite", "exp only ever sees numbers ≤ 0"]),
    (OneSided, ["gives [inf, inf, 0.0", "large NEGATIVE x", "x = -1000, -100",
                "exp only ever sees numbers ≤ 0"]),
    (WholeTensorMax, ["gives [-inf", "log(0)", "underflowed", "each entry's own large part",
                      "not one number for the whole tensor"]),
    (ForgetsAbs, ["at x = [-4.0, -0.5, 0.0, 0.7, 3.0]", "which is not log(1 + e^x)"]),
    (AbsInsteadOfClamp, ["which is not log(1 + e^x)", "expected"]),
    (CallsFSoftplus, ["minigrad's own F.softplus", "the very piece you are asked to write"]),
    (CallsNnSoftplus, ["minigrad's own nn.Softplus", "the very piece you are asked to write"]),
    (CallsMgNnFunctionalSoftplus, ["minigrad's own F.softplus", "compare minigrad with itself"]),
    (Float64Forward, ["the output of your forward", "(float32) is float64",
                      "float32 inputs", "input's dtype"]),
    (Float64Backward, ["the gradient your backward returns", "(float32) is float64",
                       "input's dtype"]),
    (NumpyBackward, ["returned ndarray, not a tensor", "tensor operations", "grad_output"]),
    (SavesNumpySlope, ["returned ndarray, not a tensor", "ctx.saved_tensors",
                       "create_graph=True"]),
    (DetachedBackward, ["create_graph=True", "not recorded", "tensor operations"]),
    (NumpyRoundTrip, ["create_graph=True", "raised RuntimeError",
                      "line 9 of your cell: return mg.tensor(grad_output.numpy() * ctx.slope)",
                      "not numpy"]),
    (ForgetsToSave, ["raised ValueError", "line 8 of your cell: (x,) = ctx.saved_tensors"]),
    (ReturnsAnArray, ["Softplus.forward must return a Tensor, not ndarray"]),
    (BetaTwo, ["default beta=2.0 is not PyTorch's", "beta=1"]),
    (TextbookBackward, ["x.grad is [0.0, 0.0, 0.0, 1.0, nan, nan]", "stays finite"]),
    (SigmoidOfMinusX, ["falls where the curve rises"]),
    (SigmoidOfTheOutput, ["your backward gives the slope", "chain rule"]),
    (ForgetsGradOutput, ["multiply it by grad_output"]),
    (ReturnsNone, ["x.grad is None"]),
    (WrongForward, ["which is not log(1 + e^x)"]),
    (ChangesItsInput, ["changed x"]),
    (Softplus.apply, ["a class that inherits from mg.autograd.Function"]),
])
def test_a_wrong_softplus_fails_with_what_to_look_at(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text
    assert "sigmoid" not in text  # the derivative is not given away


# ---------------------------------------------------------------- minigrad's own, refused

class EmptySubclassOfNnSoftplus(nn.Softplus):
    pass


class EmptySubclassOfTheOp(activation_ops.SoftplusBackward0):
    pass


def thin_wrapper(x):
    return F.softplus(x)


class ThinWrapperModule(nn.Module):
    def forward(self, x):
        return activations_more.softplus(x)


class CallsTheOp(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return activation_ops.SoftplusBackward0.run((x,), x.detach().numpy(), 1.0, 20.0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.sigmoid()


def _helper(x):          # the learner's own helper, which calls minigrad's softplus
    return F.softplus(x)


class CallsItThroughAHelper(CallsTheOp):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _helper(x)


@pytest.mark.parametrize("answer, words", [
    (F.softplus, ["this is minigrad's own F.softplus", "not a piece you wrote"]),
    (nn.Softplus, ["this is minigrad's own nn.Softplus", "not a piece you wrote"]),
    (activation_ops.SoftplusBackward0, ["this is minigrad's own SoftplusBackward0"]),
    (EmptySubclassOfNnSoftplus, ["a subclass of minigrad's own nn.Softplus"]),
    (EmptySubclassOfTheOp, ["a subclass of minigrad's own SoftplusBackward0"]),
    (thin_wrapper, ["it uses minigrad's own F.softplus", "the very piece you are asked"]),
    (ThinWrapperModule, ["it uses minigrad's own F.softplus"]),
    (CallsTheOp, ["it uses minigrad's own SoftplusBackward0"]),
    (CallsItThroughAHelper, ["it uses minigrad's own F.softplus"]),
])
def test_minigrads_own_softplus_is_refused_with_a_message_that_says_so(answer, words):
    text = message(answer)
    for word in words:
        assert word in text, text
    assert "RecursionError" not in text


def test_every_public_way_to_minigrads_softplus_is_listed_as_its_own():
    own = build._piece("softplus").own.values()
    for obj in (F.softplus, mg.nn.functional.softplus, nn.Softplus, activations_more.softplus,
                activations_more.Softplus, activation_ops.SoftplusBackward0):
        assert any(obj is value for value in own), obj


def test_the_defaults_a_forward_may_take_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name, want in ch11.TORCH_DEFAULTS.items():
        assert inspect.signature(torch.nn.Softplus).parameters[name].default == want
        assert inspect.signature(nn.Softplus).parameters[name].default == want


def test_a_forward_with_pytorchs_defaults_passes():
    answer = cell(HEAD.replace("(ctx, x)", "(ctx, x, beta=1.0, threshold=20.0)")
                  + STABLE_FORWARD + SIGMOID_BACKWARD.replace(
                      "x.sigmoid()", "x.sigmoid(), None, None"))
    result = teach.check_piece("softplus", answer)
    assert result, result.message


def test_float32_in_float32_out_for_the_value_and_the_gradient():
    x = mg.tensor([-3.0, 0.0, 2.0], requires_grad=True)
    y = Softplus.apply(x)
    y.backward(mg.tensor([1.0, 2.0, 3.0]))
    assert y.dtype == mg.float32 and x.grad.dtype == mg.float32


# ---------------------------------------------------------------- not written yet

def test_none_is_not_written_yet_and_minigrads_own_softplus_runs():
    result = teach.check_piece("softplus", None)
    assert not result and "not written yet" in result.message
    x = mg.tensor([0.0], requires_grad=True)
    with teach.use(softplus=None):
        assert F.softplus is OWN
        assert type(nn.Softplus()(x).grad_fn).__name__ == "SoftplusBackward0"


# ---------------------------------------------------------------- the plug

def test_use_runs_the_learners_function_in_nn_softplus_and_f_softplus():
    calls = []

    class Counting(Softplus):
        @staticmethod
        def forward(ctx, x):
            calls.append(tuple(x.shape))
            return Softplus.forward(ctx, x)

    x = mg.tensor([-2.0, 0.0, 100.0], requires_grad=True)
    with teach.use(softplus=Counting):
        y = nn.Softplus()(x)
        y2 = F.softplus(x, beta=2.0)
        assert mg.nn.functional.softplus is not OWN
    assert calls == [(3,), (3,)]
    assert type(y.grad_fn).__name__ == "CountingBackward"
    (y.sum() + y2.sum()).backward()
    own_x = mg.tensor([-2.0, 0.0, 100.0], requires_grad=True)
    own_y, own_y2 = nn.Softplus()(own_x), F.softplus(own_x, beta=2.0)
    (own_y.sum() + own_y2.sum()).backward()
    np.testing.assert_allclose(y.detach().numpy(), [0.1269, 0.6931, 100.0], atol=1e-4)
    np.testing.assert_allclose(y2.detach().numpy(), own_y2.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), own_x.grad.numpy(), rtol=1e-5)


def test_use_puts_minigrads_softplus_back_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with teach.use(softplus=Softplus):
            assert nn.Softplus._fn is not OWN
            1 / 0
    assert F.softplus is OWN and activations_more.softplus is OWN
    assert nn.Softplus._fn is OWN
    assert type(nn.Softplus()(mg.tensor([1.0], requires_grad=True)).grad_fn).__name__ == \
        "SoftplusBackward0"


def test_the_check_compares_with_minigrads_own_even_inside_a_use_block():
    with teach.use(softplus=ForgetsGradOutput):
        assert teach.check_piece("softplus", Softplus)
        assert not teach.check_piece("softplus", ForgetsGradOutput)
