"""Chapter 2's build exercise, ``MulBackward0`` (one op's node): the notebook's class passes
its check, typical wrong classes fail with a message that says what is wrong, and
``teach.use(mul=...)`` makes every ``*`` of tensors use the class, then puts minigrad's back."""

import linecache

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
    return cell_class(source)


def cell_class(source, name="MulBackward0"):
    """The class a cell's source defines, compiled as a notebook cell is: its lines can be
    read back (linecache), so a message can name the line of the cell."""
    source = build.PRELUDE + source
    filename = f"<a wrong MulBackward0 {abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    names = {"__name__": "__main__", "arithmetic": arithmetic}
    exec(compile(source, filename, "exec"), names)
    return names[name]


def message(node_class):
    result = teach.check_piece("mul", node_class)
    assert not result, result
    assert arithmetic.MulBackward0 is OWN  # put back after a failed check too
    return repr(result)


def test_the_notebooks_class_passes():
    result = teach.check_piece("mul", solution("02", "MulBackward0"))
    assert result, result
    assert "second derivative" in repr(result)
    # minigrad's own (which saves only what is needed) passes the battery, but the check
    # refuses it as an answer
    assert "second derivative" in build._piece("mul").battery(OWN)
    assert arithmetic.MulBackward0 is OWN and "forward" in vars(OWN)


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
    assert "create_graph=True" in text and "operators that arrays and Tensors share" in text
    assert "grad * b" not in text  # the hint names the operators, not the answer


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


def test_the_check_keeps_the_random_state():
    mg.manual_seed(5)
    expected = mg.rand(3)
    mg.manual_seed(5)
    teach.check_piece("mul", solution("02", "MulBackward0"))
    assert mg.equal(mg.rand(3), expected)
    assert np.array_equal(mg.tensor([1.0, 2.0]).numpy(), [1.0, 2.0])


# ------------------------------------------------------------------ typical wrong answers
# (replacements in the notebook's class, then the words the message must have)
WRONG = {
    "forward makes float64 from a number-safe asarray": (
        {"return a * b": "return np.asarray(a, dtype=float) * b"},
        ["what your forward returns", "of your cell: return np.asarray(a, dtype=float) * b",
         "is float64", "gives float32"]),
    "forward asks numpy for float64": (
        {"return a * b": "return np.multiply(a, b, dtype=np.float64)"},
        ["what your forward returns", "is float64", "gives float32"]),
    "backward makes float64 gradients": (
        {"return grad * b, grad * a":
         "return grad * np.asarray(b, dtype=float), grad * np.asarray(a, dtype=float)"},
        ["the gradient of a your backward returns", "is float64", "gives float32",
         "of your cell: return grad * np.asarray(b, dtype=float)"]),
    "backward with np.dot (a single number)": (
        {"return grad * b, grad * a": "return np.dot(grad, b), np.dot(grad, a)"},
        ["the gradient of a your backward returns", "has shape ()", "single number",
         "element by element", "of your cell: return np.dot(grad, b), np.dot(grad, a))"]),
    "backward with @": (
        {"return grad * b, grad * a": "return grad @ b, grad @ a"},
        ["has shape ()", "single number", "of your cell: return grad @ b, grad @ a)"]),
    "backward sums the gradient": (
        {"return grad * b, grad * a": "return (grad * b).sum(), (grad * a).sum()"},
        ["has shape ()", "single number", ".sum()"]),
    "backward returns a list": (
        {"return grad * b, grad * a": "return [grad * b, grad * a]"},
        ["backward returned a list", "tuple", "one gradient per input",
         "of your cell: return [grad * b, grad * a]"]),
    "backward gives no gradient to b": (
        {"return grad * b, grad * a": "return grad * b, None"},
        ["the gradient of b your backward returns", "is None", "needs a gradient"]),
    "forward forgets its return": (
        {"return a * b": "a * b"},
        ["forward returned None", "end with a return"]),
    "forward with np.dot": (
        {"return a * b": "return np.dot(a, b)"},
        ["forward of a of shape (3,) and b of shape (3,) returned shape ()",
         "element by element", "of your cell: return np.dot(a, b)"]),
    "forward multiplies Tensors": (
        {"return a * b": "return (mg.tensor(a) * mg.tensor(b)).numpy()"},
        ["RecursionError", "forward gets numpy arrays", "multiply those"]),
    "backward reads self.saved, not its arguments": (
        {"def backward(self, grad, a, b):\n":
         "def backward(self, grad, *args):\n        a, b = self.saved\n"},
        ["create_graph=True", "not recorded", "values it gets as arguments"]),
    "saved in the other order": (
        {"self.save_for_backward(a, b)": "self.save_for_backward(b, a)"},
        ["x.grad is", "other factor"]),
}


@pytest.mark.parametrize("case", WRONG)
def test_typical_wrong_answers_are_caught(case):
    replacements, words = WRONG[case]
    text = message(mul_class(**replacements))
    for word in words:
        assert word in text, (word, text)
    theirs = text.split("your cell:")[-1].split(")")[0]  # the learner's own line, quoted
    for answer in ("grad * b, grad * a", "save_for_backward(a, b)"):
        assert answer not in text.replace(theirs, ""), text  # no answer handed over


# ------------------------------------------------------------------ minigrad's own, refused

THIN_WRAPPERS = {
    "calls minigrad's node": ("""
class MulBackward0(Op):
    def forward(self, a, b):
        return arithmetic.MulBackward0.forward(self, a, b)

    def backward(self, grad, a, b):
        return arithmetic.MulBackward0.backward(self, grad, a, b)
""", "minigrad.ops.arithmetic.MulBackward0"),
    "a helper that calls minigrad's node": ("""
def helper(self, a, b):
    return arithmetic.MulBackward0.forward(self, a, b)


class MulBackward0(Op):
    def forward(self, a, b):
        return helper(self, a, b)

    def backward(self, grad, a, b):
        return grad * b, grad * a
""", "minigrad.ops.arithmetic.MulBackward0"),
    "calls mg.mul": ("""
class MulBackward0(Op):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return mg.mul(mg.tensor(a), mg.tensor(b)).numpy()

    def backward(self, grad, a, b):
        return grad * b, grad * a
""", "minigrad.mul"),
}


def test_minigrads_own_node_is_refused():
    text = message(OWN)
    assert "minigrad's own minigrad.ops.arithmetic.MulBackward0" in text
    assert "not a piece you wrote" in text


def test_an_empty_subclass_of_minigrads_node_is_refused():
    text = message(cell_class("class MulBackward0(arithmetic.MulBackward0):\n    pass\n"))
    assert "subclass of minigrad's own minigrad.ops.arithmetic.MulBackward0" in text


THIN_WRAPPERS["a function that makes minigrad's node"] = ("""
def MulBackward0(*args):
    return arithmetic.MulBackward0(*args)
""", "minigrad.ops.arithmetic.MulBackward0")


@pytest.mark.parametrize("case", THIN_WRAPPERS)
def test_a_thin_wrapper_of_minigrads_node_is_refused(case):
    source, label = THIN_WRAPPERS[case]
    text = message(cell_class(source))
    assert f"uses minigrad's own {label}" in text and "Write that part yourself" in text


def test_the_notebooks_class_keeps_float32():
    learner = solution("02", "MulBackward0")
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = mg.tensor([3.0, 4.0], requires_grad=True)
    with teach.use(mul=learner):
        z = x * y
        gx, = mg.autograd.grad((z * x).sum(), (x,), create_graph=True)
    assert z.dtype == mg.float32 and gx.dtype == mg.float32
    assert gx.tolist() == [6.0, 16.0] and gx.grad_fn is not None


def test_the_check_leaves_the_learners_class_as_it_was():
    learner = mul_class(**{"return grad * b, grad * a": "return np.dot(grad, b), np.dot(grad, a)"})
    methods = dict(vars(learner))
    message(learner)
    assert dict(vars(learner)) == methods
    child = cell_class("class MulBackward0(Base):\n    pass\n".replace("Base", "Op"))
    assert "forward" not in vars(child)
    message(child)
    assert "forward" not in vars(child) and "backward" not in vars(child)



def test_the_float32_reference_is_pytorchs():
    """What the check holds a learner's node to on float32 (the product's dtype, the gradient
    that flows on, the second derivative's) is what PyTorch gives."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (mg, torch):
        x = lib.tensor([0.5, -1.0, 0.25], requires_grad=True)
        y = lib.tensor([2.0, 3.0, -1.5], requires_grad=True)
        h = x.exp()
        flowing = []
        h.register_hook(flowing.append)
        z = h * y
        z.backward(lib.tensor([1.0, 2.0, 3.0]))
        gx, = lib.autograd.grad((x * y * x).sum(), (x,), create_graph=True)
        results.append([str(t.dtype).split(".")[-1] for t in (z, flowing[0], x.grad, gx)])
    assert results[0] == results[1] == ["float32"] * 4
