"""The rules of a backward (minigrad/ops/op.py, "Rules of a backward"), enforced: an op written
from outside that saves a float computed in forward and uses it in backward gets a clear
error under create_graph instead of a wrong second derivative; declaring the value a constant,
or recomputing it from the inputs, gives PyTorch's second derivatives; what may be used
(inputs, the output, integer masks) still can."""

import pickle

import numpy as np
import pytest

import minigrad as mg
from double_backward import assert_second_derivatives_match
from minigrad.ops import Op, formulas
from minigrad.ops.saved import ComputedInForward

X = np.array([2.0, -0.5, 1.5])


# --------------------------------------------------------------------- ops written from outside

class CubeBackward0(Op):
    """a ** 3, the wrong way: backward uses 3 a^2, an array forward computed."""

    def forward(self, a):
        self.save_for_backward(a, 3 * a * a)
        return a ** 3

    def backward(self, grad, a, three_a_squared):
        return grad * three_a_squared


class RecomputingCubeBackward0(CubeBackward0):
    """The same op, fixed by rule 3's first way: on Tensors, 3 a^2 is recomputed from a."""

    def backward(self, grad, a, three_a_squared):
        if not formulas.is_array(grad):
            three_a_squared = 3 * a * a
        return grad * three_a_squared


class DeclaredCubeBackward0(CubeBackward0):
    """The same op, 3 a^2 declared a constant (rule 3's second way): what PyTorch does with a
    Function that saves an intermediate (a constant under create_graph)."""
    constants = (1,)


class NoisySquareBackward0(Op):
    """a * a * noise, the noise a draw made in forward: a true constant of the graph."""

    def forward(self, a, seed):
        noise = np.random.default_rng(seed).uniform(0.5, 1.5, a.shape)
        self.save_for_backward(a, noise)
        return a * a * noise

    def backward(self, grad, a, noise):
        return grad * 2 * a * noise


class DeclaredNoisySquareBackward0(NoisySquareBackward0):
    constants = (1,)


class NormBackward0(Op):
    """sqrt(sum a^2): saves the norm forward computed, a numpy float (not an array)."""

    def forward(self, a):
        norm = np.sqrt((a * a).sum())
        self.save_for_backward(a, norm)
        return np.asarray(norm)

    def backward(self, grad, a, norm):
        return grad * a / norm


class TransposeSavingBackward0(Op):
    """sum(a * a.T) for a square a: saves a.T, a view of the input, not the input."""

    def forward(self, a):
        self.save_for_backward(a, a.T)
        return np.asarray((a * a.T).sum())

    def backward(self, grad, a, a_transposed):
        return 2 * grad * a_transposed


class MaskedBackward0(Op):
    """a where a > 0, else 0 (relu): saves the bool mask forward computed, which needs no
    declaration, and the output, which may be used."""

    def forward(self, a):
        mask = a > 0
        out = a * mask
        self.save_for_backward(mask, out)
        return out

    def backward(self, grad, mask, out):
        return formulas.keep_where(mask, grad)


class ExpBackward0(Op):
    """exp(a), backward from the saved output: allowed, and twice differentiable."""

    def forward(self, a):
        out = np.exp(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad, out):
        return grad * out


def cube_of(op):
    return lambda lib, x: op.run((x,)) if lib is mg else x ** 3


def torch_cube_saving_its_derivative(torch):
    """x ** 3 as a PyTorch Function that saves 3 x^2 (no input, no output): PyTorch treats it
    as a constant under create_graph, the meaning of ``constants = (1,)``."""

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            three_x_squared = 3 * x * x
            ctx.save_for_backward(three_x_squared)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (three_x_squared,) = ctx.saved_tensors
            return grad * three_x_squared

    return Cube


def second_derivative_of_sum(y, x):
    (first,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    return first, mg.autograd.grad(first.sum(), x)[0]


# --------------------------------------------------------------------- the wrong op

def test_the_wrong_op_raises_under_create_graph_naming_the_op_the_value_and_the_fixes():
    x = mg.tensor(X, requires_grad=True)
    y = CubeBackward0.run((x,))
    with pytest.raises(RuntimeError) as error:
        mg.autograd.grad(y.sum(), x, create_graph=True)
    message = str(error.value)
    for part in ("CubeBackward0.backward used saved value 1 (`three_a_squared`)",
                 "create_graph=True", "CubeBackward0.forward computed",
                 "a value computed in forward is a constant to autograd",
                 "recompute it in backward", "formulas.is_array(grad)",
                 "declare it on the class: `constants = (1,)`"):
        assert part in message


def test_the_wrong_op_raises_on_backward_with_create_graph_too():
    x = mg.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"CubeBackward0\.backward used saved value 1"):
        CubeBackward0.run((x,)).sum().backward(create_graph=True)


def test_the_wrong_op_still_gives_the_right_first_derivative_without_create_graph(torch):
    x = mg.tensor(X, requires_grad=True)
    CubeBackward0.run((x,)).sum().backward()
    t = torch.tensor(X, requires_grad=True)
    (t ** 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    (first,) = mg.autograd.grad(CubeBackward0.run((x,)).sum(), x)  # create_graph=False
    np.testing.assert_allclose(first.numpy(), t.grad.numpy(), rtol=1e-12)


def test_the_plain_path_hands_backward_arrays_and_no_stand_in():
    seen = []

    class Spy(CubeBackward0):
        def backward(self, grad, a, three_a_squared):
            seen.append(type(three_a_squared))
            return grad * three_a_squared

    x = mg.tensor(X, requires_grad=True)
    Spy.run((x,)).sum().backward()
    assert seen == [np.ndarray]


# --------------------------------------------------------------------- the two fixes

def test_recomputing_from_the_input_gives_pytorchs_second_derivative(torch):
    assert_second_derivatives_match(torch, cube_of(RecomputingCubeBackward0), X)
    x = mg.tensor(X, requires_grad=True)
    _, second = second_derivative_of_sum(RecomputingCubeBackward0.run((x,)), x)
    np.testing.assert_allclose(second.numpy(), 6 * X, rtol=1e-12)


def test_declaring_the_value_a_constant_gives_pytorchs_second_derivative_for_it(torch):
    cube = torch_cube_saving_its_derivative(torch)

    def fn(lib, x):  # plus x^2, so that the first derivative has a graph in both
        y = DeclaredCubeBackward0.run((x,)) if lib is mg else cube.apply(x)
        return y + x * x

    assert_second_derivatives_match(torch, fn, X)


def test_a_declared_random_draw_is_a_constant_as_in_pytorch(torch):
    noise = np.random.default_rng(7).uniform(0.5, 1.5, X.shape)

    def fn(lib, x):
        if lib is mg:
            return DeclaredNoisySquareBackward0.run((x,), seed=7)
        return x * x * lib.tensor(noise)

    assert_second_derivatives_match(torch, fn, X)
    x = mg.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"NoisySquareBackward0\.backward .* value 1 \(`noise`\)"):
        mg.autograd.grad(NoisySquareBackward0.run((x,), seed=7).sum(), x,
                         create_graph=True)


# --------------------------------------------------------------------- what is computed, what is not

def test_a_numpy_float_forward_computed_is_refused_too():
    x = mg.tensor(X, requires_grad=True)
    y = NormBackward0.run((x,))
    (first,) = mg.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(first.numpy(), X / np.linalg.norm(X), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"NormBackward0\.backward used saved value 1 \(`norm`\)"):
        mg.autograd.grad(y, x, create_graph=True)


def test_a_saved_view_of_an_input_is_refused_as_computed():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = mg.tensor(a, requires_grad=True)
    y = TransposeSavingBackward0.run((x,))
    (first,) = mg.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(first.numpy(), 2 * a.T, rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"TransposeSavingBackward0.* value 1 \(`a_transposed`\)"):
        mg.autograd.grad(y, x, create_graph=True)


def test_a_computed_bool_mask_and_the_output_may_be_used(torch):
    def relu(lib, x):  # plus x^3: a second derivative that is not 0
        return (MaskedBackward0.run((x,)) if lib is mg else lib.relu(x)) + x * x * x

    def exp(lib, x):
        return ExpBackward0.run((x,)) if lib is mg else x.exp()

    assert_second_derivatives_match(torch, relu, X)
    assert_second_derivatives_match(torch, exp, X)


# --------------------------------------------------------------------- the stand-in refuses every use

@pytest.fixture(scope="module")
def stand_in():
    """What CubeBackward0's backward really receives for 3 a^2 under create_graph."""
    caught = []

    class CatchingBackward0(CubeBackward0):
        def backward(self, grad, a, three_a_squared):
            caught.append(three_a_squared)
            return grad * 3 * a * a

    x = mg.tensor(X, requires_grad=True)
    mg.autograd.grad(CatchingBackward0.run((x,)).sum(), x, create_graph=True)
    return caught[0]


def _set_item(v):
    v[0] = 1.0


def _in_place(v):
    v += 1


def _set_attribute(v):
    v.shape = (3,)


USES = {
    "+": lambda v: v + 1, "+ on the right": lambda v: 1 + v, "-": lambda v: v - 1,
    "- on the right": lambda v: 1 - v, "*": lambda v: v * 2, "* on the right": lambda v: 2 * v,
    "/": lambda v: v / 2, "/ on the right": lambda v: 2 / v, "//": lambda v: v // 2,
    "%": lambda v: v % 2, "**": lambda v: v ** 2, "** on the right": lambda v: 2 ** v,
    "@": lambda v: v @ X, "@ on the right of an array": lambda v: X @ v,
    "array +": lambda v: X + v, "array *": lambda v: X * v,
    "tensor *": lambda v: mg.tensor(X) * v, "* tensor": lambda v: v * mg.tensor(X),
    "tensor + (grad)": lambda v: mg.tensor(X, requires_grad=True) + v,
    "+=": _in_place, "unary -": lambda v: -v, "abs": abs, "~": lambda v: ~v,
    "np.exp": np.exp, "np.add": lambda v: np.add(X, v), "np.sum": np.sum,
    "np.asarray": np.asarray, "np.where": lambda v: np.where(X > 0, v, 0),
    "np.concatenate": lambda v: np.concatenate([X, v]), "np.stack": lambda v: np.stack([v, X]),
    "mg.tensor": mg.tensor, "formulas.sum_to": lambda v: formulas.sum_to(v, ()),
    "attribute": lambda v: v.shape, "method": lambda v: v.sum(),
    "set attribute": _set_attribute, "indexing": lambda v: v[0], "item assignment": _set_item,
    "<": lambda v: v < 1, "==": lambda v: v == 1, "!=": lambda v: v != 1, ">=": lambda v: v >= 1,
    "bool": bool, "if": lambda v: 1 if v else 0, "len": len, "iter": list,
    "in": lambda v: 1.0 in v, "float": float, "int": int, "round": round, "hash": hash,
    "str": str, "format": lambda v: f"{v:.2f}", "call": lambda v: v(),
    "pickle": pickle.dumps, "isinstance": lambda v: isinstance(v, mg.Tensor),
}


@pytest.mark.parametrize("use", list(USES), ids=list(USES))
def test_the_stand_in_refuses_every_use(stand_in, use):
    with pytest.raises(RuntimeError, match=r"CatchingBackward0\.backward used saved value 1"):
        USES[use](stand_in)


def test_the_stand_in_says_how_it_was_used():
    v = ComputedInForward(CubeBackward0, 1)
    with pytest.raises(RuntimeError, match=r"\(how: \* \(on the right\)\)"):
        2 * v
    with pytest.raises(RuntimeError, match=r"\(how: \.shape\)"):
        v.shape  # noqa: B018
    with pytest.raises(RuntimeError, match=r"\(how: numpy exp\)"):
        np.exp(v)


def test_the_stand_in_repr_explains_instead_of_failing(stand_in):
    # A traceback or a debugger shows it: repr is the one thing it answers.
    text = repr(stand_in)
    assert text.startswith("<ComputedInForward: CatchingBackward0.backward used saved value 1")
    assert "constants = (1,)" in text


class ScaleBackward0(Op):
    """a * w, w a float array given without a tensor: an input, a constant, not computed."""

    def forward(self, a, w):
        self.save_for_backward(w)
        return a * w

    def backward(self, grad, w):
        return grad * w, None


def test_a_saved_float_input_that_came_without_a_tensor_is_a_constant(torch):
    w = np.array([0.5, 3.0, -1.0])
    def scaled_square(lib, x):  # times x: a second derivative that is not 0
        return (ScaleBackward0.run((x, None), x.detach().numpy(), w) if lib is mg
                else x * lib.tensor(w)) * x

    assert_second_derivatives_match(torch, scaled_square, X)
