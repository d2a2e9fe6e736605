"""Chapter 1's build exercise, ``Dual`` (forward mode): the notebook's class passes its check,
typical wrong classes fail with a message that names the operation, the point and the rule,
and ``teach.use(dual=...)`` puts a class into forward mode (chapter 3's section 8) and back."""

import re

import pytest

import minigrad as mg
from build_cells import build_cells, solution
from minigrad import teach
from minigrad.teach import build
from minigrad.teach.exercises import ch01

REFERENCE = ch01.Dual


def dual_class(**replacements):
    """The notebook's Dual with some lines of its source replaced: a wrong answer."""
    source = build_cells("01")[0]
    for old, new in replacements.items():
        assert old in source, old
        source = source.replace(old, new)
    return from_source(source)


def from_source(source):
    """Run a cell's source as the notebook would: its lines known to linecache, as IPython
    does, so that a check can quote the learner's line."""
    import linecache
    filename = "<a wrong Dual>"
    source = source  # the cell alone: line numbers count from its first line
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    names = {}
    exec(build.PRELUDE, names)
    exec(compile(source, filename, "exec"), names)
    return names["Dual"]


def message(dual):
    result = teach.check_piece("dual", dual)
    assert not result, result
    return repr(result)


def test_the_notebooks_dual_passes():
    result = teach.check_piece("dual", solution("01", "Dual"))
    assert result, result
    assert "200 random compositions" in repr(result)


def test_the_reference_in_the_package_passes_the_battery():
    assert "200 random compositions" in ch01._dual_battery(ch01.Dual)


def test_a_product_rule_without_the_values_is_caught():
    text = message(dual_class(**{
        "self.tangent * other.value + self.value * other.tangent":
            "self.tangent * other.tangent"}))
    assert "x * y at x = 2.0, y = 3.0" in text
    assert "expected 4.0" in text and "is 0.5" in text
    assert "product rule" in text


def test_a_number_on_the_left_is_caught():
    text = message(dual_class(**{"return Dual.of(other) - self": "return self - other"}))
    assert "3.0 - x" in text and "expected 1.0" in text


def test_a_missing_reflected_method_is_named():
    text = message(dual_class(**{"    __rmul__ = __mul__\n": ""}))
    assert "3.0 * x" in text and "TypeError" in text and "__rmul__" in text


def test_a_chain_rule_without_the_incoming_tangent_is_caught():
    text = message(dual_class(**{
        "math.cos(self.value) * self.tangent": "math.cos(self.value)"}))
    assert "the tangent of y.sin() at y = 3.0 (tangent 0.5)" in text and "chain rule" in text


def test_a_wrong_power_rule_is_caught():
    text = message(dual_class(**{"p * self.value ** (p - 1)": "p * self.value ** p"}))
    assert "the tangent of x ** 3 at x = 2.0 (tangent 1.0) is 24.0; expected 12.0" in text
    assert "power rule" in text


def test_an_operation_that_changes_its_operand_is_caught():
    text = message(dual_class(**{
        "        other = Dual.of(other)\n        return Dual(self.value + other.value, "
        "self.tangent + other.tangent)":
            "        other = Dual.of(other)\n        self.value += other.value\n"
            "        self.tangent += other.tangent\n        return self"}))
    assert "changed its input x" in text


def test_not_written_yet_leaves_minigrads_dual_in_place():
    result = teach.check_piece("dual", None)
    assert not result and "not written yet" in repr(result)
    with teach.use(dual=None):
        assert ch01.Dual is REFERENCE
        assert ch01.forward_mode_derivative(lambda x: x * x * x / 3 - x, 2.0) == 3.0


def test_use_plugs_the_class_into_forward_mode_and_puts_it_back():
    made = []
    learner = solution("01", "Dual")

    def counting(value, tangent=0.0):
        made.append((value, tangent))
        return learner(value, tangent)

    with teach.use(dual=counting):
        gradient = ch01.forward_mode_gradient(lambda v: v[0] * v[1].sin(), [2.0, 1.0])
    assert made[:2] == [(2.0, 1.0), (1.0, 0.0)] and len(made) == 4  # 2 passes, 2 inputs
    assert gradient == pytest.approx([0.8414709848, 1.0806046117])
    assert ch01.Dual is REFERENCE
    with pytest.raises(ZeroDivisionError):
        with teach.use(dual=counting):
            ch01.forward_mode_derivative(lambda x: 1 / x, 0.0)
    assert ch01.Dual is REFERENCE


def test_chapter_3s_neuron_by_forward_mode_matches_backward():
    """Section 8's loss, a loop over scalars, gives the same gradient both ways."""
    inputs, target = [0.5, -1.0, 0.25], 0.5

    def loss_fn(w):
        total = 0.0
        for w_i, x_i in zip(w, inputs):
            total = total + w_i * x_i
        return (total.tanh() - target) ** 2
    values = [0.3, -0.2, 0.9]
    with teach.use(dual=solution("01", "Dual")):
        forward = ch01.forward_mode_gradient(loss_fn, values)
    w = [mg.tensor(v, dtype=mg.float64, requires_grad=True) for v in values]
    loss_fn(w).backward()
    assert forward == pytest.approx([t.grad.item() for t in w], rel=1e-12)


def test_the_check_keeps_the_random_state():
    mg.manual_seed(5)
    expected = mg.rand(3)
    mg.manual_seed(5)
    assert teach.check_piece("dual", solution("01", "Dual"))
    assert mg.equal(mg.rand(3), expected)


# ---------------------------------------------------------------- minigrad's own is refused

def learner_code(source):
    """A class or function ``Dual`` written in a cell (after the notebook's imports)."""
    names = {"__name__": "__build__"}
    exec(compile(build.PRELUDE + "from minigrad.teach.exercises import ch01\n" + source,
                 "<a learner's cell>", "exec"), names)
    return names["Dual"]


OWN_HANDED_IN = {
    "the reference itself": (lambda: ch01.Dual, "minigrad's own teach.exercises.ch01.Dual"),
    "an empty subclass": (lambda: learner_code("class Dual(ch01.Dual):\n    pass\n"),
                          "subclass of minigrad's own teach.exercises.ch01.Dual"),
    "a function that makes minigrad's": (
        lambda: learner_code("def Dual(value, tangent=0.0):\n"
                             "    return ch01.Dual(value, tangent)\n"),
        "uses minigrad's own teach.exercises.ch01.Dual"),
    "a class that wraps minigrad's": (
        lambda: learner_code(
            "def inner(value, tangent):\n    return ch01.Dual(value, tangent)\n\n"
            "class Dual:\n    def __init__(self, value, tangent=0.0):\n"
            "        self.d = inner(value, tangent)\n"
            "        self.value, self.tangent = value, tangent\n"),
        "uses minigrad's own teach.exercises.ch01.Dual"),
    "a class that asks forward mode": (
        lambda: learner_code(
            "class Dual:\n    def __init__(self, value, tangent=0.0):\n"
            "        self.value, self.tangent = value, tangent\n"
            "    def sin(self):\n"
            "        slope = ch01.forward_mode_derivative(lambda u: u.sin(), self.value)\n"
            "        return Dual(math.sin(self.value), slope * self.tangent)\n"),
        "uses minigrad's own teach.exercises.ch01."),
    "a class that asks jvp": (
        lambda: learner_code(
            "from minigrad.autograd.functional import jvp\n\n"
            "class Dual:\n    def __init__(self, value, tangent=0.0):\n"
            "        self.value, self.tangent = value, tangent\n"
            "    def sin(self):\n"
            "        x = mg.tensor(self.value, dtype=mg.float64)\n"
            "        v = mg.tensor(self.tangent, dtype=mg.float64)\n"
            "        out, t = jvp(mg.sin, x, v)\n"
            "        return Dual(out.item(), t.item())\n"),
        "uses minigrad's own autograd.functional.jvp"),
}


@pytest.mark.parametrize("handed_in", list(OWN_HANDED_IN))
def test_minigrads_own_dual_is_refused(handed_in):
    make, words = OWN_HANDED_IN[handed_in]
    text = message(make())
    assert words in text, text
    assert "Write" in text


# ------------------------------------------------------------- the mistakes students make

def without(method):
    """The notebook's source without one method (a `def` block or a one-line alias)."""
    source = build_cells("01")[0]
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines)
                 if line.strip().startswith((f"def {method}(", f"{method} =")))
    end = start + 1
    if lines[start].strip().startswith("def "):
        while end < len(lines) and (not lines[end].strip() or lines[end].startswith("        ")):
            end += 1
    return "\n".join(lines[:start] + lines[end:])


WRONG = {
    # (how the class is made wrong, words the message must hold)
    "product rule without the values": (
        {"self.tangent * other.value + self.value * other.tangent": "self.tangent * other.tangent"},
        ["x * y at x = 2.0, y = 3.0", "product rule"]),
    "product rule with one term": (
        {"self.tangent * other.value + self.value * other.tangent": "self.tangent * other.value"},
        ["x * y", "product rule"]),
    "power rule without the base's tangent": (
        {"p * self.value ** (p - 1) * self.tangent": "p * self.value ** (p - 1)"},
        ["the tangent of y ** 3 at y = 3.0 (tangent 0.5)", "power rule", "tangent of the base"]),
    "power rule with p instead of p - 1": (
        {"p * self.value ** (p - 1)": "p * self.value ** p"},
        ["the tangent of x ** 3 at x = 2.0 (tangent 1.0) is 24.0; expected 12.0", "power rule"]),
    "__rsub__ as self - other": (
        {"return Dual.of(other) - self": "return self - other"},
        ["the value of 3.0 - x", "expected 1.0", "x.__rsub__(3.0)", "the number first"]),
    "__rtruediv__ as self / other": (
        {"return Dual.of(other) / self": "return self / other"},
        ["the value of 4.0 / x", "expected 2.0", "x.__rtruediv__(4.0)", "the order matters"]),
    "a number with tangent 1": (
        {"else Dual(other)": "else Dual(other, 1.0)"},
        ["x + 3.0", "A number is a constant"]),
    "a difference that adds the tangents": (
        {"return self + -Dual.of(other)":
             "other = Dual.of(other)\n        return Dual(self.value - other.value, "
             "self.tangent + other.tangent)"},
        ["the tangent of x - y", "minus the tangent of v"]),
    "a quotient rule with the sign swapped": (
        {"return self * Dual.of(other) ** -1":
             "other = Dual.of(other)\n        return Dual(self.value / other.value, "
             "(self.value * other.tangent - self.tangent * other.value) / other.value ** 2)"},
        ["the tangent of x / y", "quotient rule"]),
    "a quotient rule without the square": (
        {"return self * Dual.of(other) ** -1":
             "other = Dual.of(other)\n        return Dual(self.value / other.value, "
             "(self.tangent * other.value - self.value * other.tangent) / other.value)"},
        ["the tangent of x / y", "quotient rule"]),
    "sin without the incoming tangent": (
        {"math.cos(self.value) * self.tangent": "math.cos(self.value)"},
        ["the tangent of y.sin() at y = 3.0 (tangent 0.5)", "derivative of sin is cos",
         "times the tangent that came in"]),
    "sin's derivative with the wrong sign": (
        {"math.cos(self.value) * self.tangent": "-math.cos(self.value) * self.tangent"},
        ["x.sin()", "derivative of sin is cos"]),
    "exp without the incoming tangent": (
        {"math.exp(self.value) * self.tangent": "math.exp(self.value)"},
        ["y.exp()", "derivative of exp is exp"]),
    "tanh's derivative as (1 - tanh) ** 2": (
        {"(1 - t * t) * self.tangent": "(1 - t) ** 2 * self.tangent"},
        ["x.tanh()", "derivative of tanh is 1 - tanh**2"]),
    "tangent defaults to 1": (
        {"tangent=0.0": "tangent=1.0"},
        ["Dual(2.0) has tangent 1.0", "constant"]),
    "no default tangent": (
        {"tangent=0.0": "tangent"},
        ["Dual(2.0) raised TypeError", "default 0.0"]),
    "value and tangent swapped": (
        {"self.value = value\n        self.tangent = tangent":
             "self.value = tangent\n        self.tangent = value"},
        ["Dual(2.0, 0.5).value is 0.5", "the first argument is the value"]),
    "float() turns float32 into float64": (
        {"self.value = value\n        self.tangent = tangent":
             "self.value = float(value)\n        self.tangent = float(tangent)"},
        ["on float32 numbers", "is float, where minigrad's own gives float32", "float(...)"]),
    "a number used as a Dual": (
        {"        other = Dual.of(other)\n        return Dual(self.value + other.value":
             "        return Dual(self.value + other.value"},
        ["x + 3.0", "AttributeError", "(line 17 of your cell: return Dual(self.value + other.value",
         "turn a number into Dual(number) first"]),
    "an operation that changes its operand": (
        {"        other = Dual.of(other)\n        return Dual(self.value + other.value, "
         "self.tangent + other.tangent)":
             "        other = Dual.of(other)\n        self.value += other.value\n"
             "        self.tangent += other.tangent\n        return self"},
        ["changed its input x", "return a new Dual"]),
    "negation that returns a tuple": (
        {"return Dual(-self.value, -self.tangent)": "return -self.value, -self.tangent"},
        ["-x", "returned tuple (-2.0, -1.0), not a Dual"]),
}

MISSING_METHODS = {
    "__radd__": ["3.0 + x", "TypeError", "define __radd__"],
    "__rsub__": ["3.0 - x", "TypeError", "define __rsub__", "x.__rsub__(3.0)"],
    "__rmul__": ["3.0 * x", "TypeError", "define __rmul__"],
    "__rtruediv__": ["4.0 / x", "TypeError", "define __rtruediv__", "x.__rtruediv__(4.0)"],
    "__neg__": ["-x", "TypeError", "define __neg__"],
    "__pow__": ["x ** 3", "TypeError", "define __pow__"],
    "tanh": ["x.tanh()", "AttributeError", "Define the method tanh(self)"],
}


@pytest.mark.parametrize("mistake", list(WRONG))
def test_a_typical_wrong_dual_is_caught_with_the_words_a_student_needs(mistake):
    replacements, words = WRONG[mistake]
    text = message(dual_class(**replacements))
    for word in words:
        assert word in text, (word, text)


@pytest.mark.parametrize("method", list(MISSING_METHODS))
def test_a_missing_method_is_named(method):
    text = message(from_source(without(method)))
    for word in MISSING_METHODS[method]:
        assert word in text, (word, text)


def test_a_power_rule_bug_is_not_called_a_quotient_rule_bug():
    """Division by u * v ** -1 uses the power rule: a wrong power rule is reported there."""
    text = message(dual_class(**{"p * self.value ** (p - 1) * self.tangent":
                                     "p * self.value ** (p - 1)"}))
    assert "power rule" in text and "quotient" not in text and " / " not in text.split(";")[0]


def test_the_messages_hand_over_no_code():
    """A failing check names the rule, never a line of the solution."""
    solution_lines = {line.strip() for line in build_cells("01")[0].split("\n")
                      if len(line.strip()) > 25 and not line.strip().startswith(("#", '"""'))}
    for mistake in WRONG:
        text = message(dual_class(**WRONG[mistake][0]))
        text = re.sub(r"\(line \d+ of your cell: .*?\)", "", text)  # the learner's own line
        for line in solution_lines:
            assert line not in text, (mistake, line)


def test_the_build_is_homework_with_its_minutes_stated():
    import json
    from build_cells import NOTEBOOKS
    cells = json.loads((NOTEBOOKS / "01b_exact_derivatives.ipynb").read_text())["cells"]
    build_cell = next(c for c in cells if "build" in c["metadata"].get("tags", []))
    assert build_cell["metadata"]["minigrad"]["homework"] is True
    assert build_cell["metadata"]["minigrad"]["build_minutes"] >= 20
    assert "*homework:* the build, about" in "".join(cells[0]["source"])
    reflected = next(i for i, c in enumerate(cells) if "__rsub__" in "".join(c["source"]))
    assert reflected < cells.index(build_cell)


def test_the_checks_expected_tangents_are_pytorchs_forward_mode():
    """What the check expects (minigrad's backward()) is what torch.autograd.forward_ad gives,
    and PyTorch's forward mode keeps float32 in float32, as the check asks of a Dual."""
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as fwAD
    for text, point, _ in ch01._OPERATOR_CASES + ch01._CHAPTER_CASES:
        with fwAD.dual_level():
            inputs = {name: fwAD.make_dual(torch.tensor(value, dtype=torch.float64),
                                           torch.tensor(tangent, dtype=torch.float64))
                      for name, (value, tangent) in point.items()}
            out = fwAD.unpack_dual(eval(text, {}, inputs))  # noqa: S307 - the battery's own
            want = ch01._backward_says(text, point)
            assert out.primal.item() == pytest.approx(want[0], rel=1e-12), text
            assert out.tangent.item() == pytest.approx(want[1], rel=1e-12, abs=1e-15), text
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.tensor(2.0), torch.tensor(1.0))
        out = fwAD.unpack_dual(4.0 / x)
        assert out.primal.dtype == out.tangent.dtype == torch.float32
