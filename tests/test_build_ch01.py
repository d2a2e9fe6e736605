"""Chapter 1's build exercise, ``Dual`` (forward mode): the notebook's class passes its check,
typical wrong classes fail with a message that names the operation, the point and the rule,
and ``teach.use(dual=...)`` puts a class into forward mode (chapter 3's section 8) and back."""

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
    names = {}
    exec(compile(build.PRELUDE + source, "<a wrong Dual>", "exec"), names)
    return names["Dual"]


def message(dual):
    result = teach.check_piece("dual", dual)
    assert not result, result
    return repr(result)


def test_the_notebooks_dual_passes():
    result = teach.check_piece("dual", solution("01", "Dual"))
    assert result, result
    assert "200 random compositions" in repr(result)


def test_the_reference_in_the_package_passes():
    assert teach.check_piece("dual", ch01.Dual)


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
    assert "(x * y).sin()" in text and "chain rule" in text


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
    teach.check_piece("dual", ch01.Dual)
    assert mg.equal(mg.rand(3), expected)
