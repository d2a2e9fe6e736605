"""The capstone (``notebooks/15_capstone_your_own_engine.ipynb``): the learner's engine and
SGD, written from a blank cell, checked by ``teach.exercises.capstone``. The notebook's own
answers pass and agree with PyTorch; typical wrong engines and optimizers (each a small
change of the notebook's answer) are caught with a message that names the mistake;
minigrad's and PyTorch's own objects are refused; the stand-in that runs while nothing is
written passes the same batteries."""

import importlib.util
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from build_cells import build_cells, solution

import minigrad as mg
from minigrad.teach.exercises import capstone, capstone_battery

ENGINE_SOURCE, SGD_SOURCE = build_cells("15")
Tensor = solution("15", "Tensor")
SGD = solution("15", "SGD")


def changed(source, old, new, name):
    """The notebook's answer with ``old`` replaced by ``new`` (which must be there)."""
    assert old in source, f"the mutation no longer applies: {old!r}"
    scope = {"__name__": "__main__"}
    exec(compile("import numpy as np\n" + source.replace(old, new), "<wrong answer>", "exec"),
         scope)
    return scope[name]


def wrong_engine(old, new):
    return changed(ENGINE_SOURCE, old, new, "Tensor")


def wrong_sgd(old, new):
    return changed(SGD_SOURCE, old, new, "SGD")


# ----------------------------------------------------------------- right answers

def test_the_notebooks_engine_and_sgd_pass():
    result = capstone.check_engine(Tensor)
    assert result, result.message
    assert "80 random ones" in result.message and "5000-op chain" in result.message
    result = capstone.check_sgd(SGD, Tensor)
    assert result, result.message
    assert "chapter 8's regression" in result.message
    assert capstone.check_sgd(SGD), "SGD alone steps plain data/grad parameters"


def test_the_check_leaves_the_random_stream_alone_and_repeats_itself():
    state = mg.default_generator.get_state()
    first = capstone.check_engine(Tensor).message
    assert mg.default_generator.get_state() == state
    assert capstone.check_engine(Tensor).message == first


def test_the_stand_in_passes_the_same_batteries():
    """minigrad's own engine behind the spec's interface: a right engine built nothing like
    the notebook's answer passes too (the batteries test behaviour, not a shape of code)."""
    assert "80 random ones" in capstone_battery.engine_battery(capstone.StandInTensor)
    assert "4 steps" in capstone_battery.sgd_battery(capstone.StandInSGD, capstone.StandInTensor)
    assert "4 steps" in capstone_battery.sgd_battery(capstone.StandInSGD, Tensor)


def _torch_run(program, values, seed):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = program(*leaves)
    out.backward(torch.tensor(seed, dtype=torch.float64))
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in leaves]


def _cases():
    rng = np.random.default_rng(5)
    cases = [(text, program, shapes) for text, program, shapes, _ in capstone_battery.OP_CASES]
    cases += capstone_battery.EXAMPLES
    cases += [capstone_battery.random_program(rng) for _ in range(30)]
    return cases


@pytest.mark.parametrize("case", _cases(), ids=lambda case: case[0][:40])
def test_the_notebooks_engine_agrees_with_pytorch(case):
    """Values and every leaf's gradient (None for a leaf no path reaches) from a random
    output gradient, against torch in float64."""
    text, program, shapes = case
    rng = np.random.default_rng(len(text))
    values = [rng.uniform(-1.5, 1.5, size=s).round(2) for s in shapes]
    probe = program(*[torch.tensor(v) for v in values])
    seed = rng.uniform(0.3, 2.5, size=tuple(probe.shape))
    want_value, want = _torch_run(program, values, seed)
    leaves = [Tensor(v) for v in values]
    out = program(*leaves)
    out.backward(seed.copy())
    np.testing.assert_allclose(out.data, want_value, rtol=1e-12, atol=1e-12)
    for t, w in zip(leaves, want):
        if w is None:
            assert t.grad is None
        else:
            assert t.grad.dtype == np.float64
            np.testing.assert_allclose(t.grad, w, rtol=1e-10, atol=1e-12)


def test_the_digits_model_gradients_agree_three_ways(capsys):
    params = capstone.init_params(seed=0)
    x, y, _, _ = capstone.digits(seed=0)
    x, y = x[:16], y[:16]
    mine = {k: Tensor(v) for k, v in params.items()}
    hidden = (Tensor(x) @ mine["W1"] + mine["b1"]).relu()
    logits = (hidden @ mine["W2"] + mine["b2"]).data
    scores = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(scores, torch.tensor(y)).backward()
    out = hidden @ mine["W2"] + mine["b2"]
    out.backward(scores.grad.numpy())  # the loss's gradient, from torch: the rest is the engine
    grads = {k: t.grad for k, t in mine.items()}
    assert capstone.three_ways(grads, params, x, y)
    assert "yours vs PyTorch : max |difference| < 1e-12: True" in capsys.readouterr().out
    grads["b2"] = grads["b2"] + 1e-9
    assert not capstone.three_ways(grads, params, x, y)
    assert ": False" in capsys.readouterr().out


# ----------------------------------------------------------------- wrong engines

WRONG_ENGINES = {
    "no sum where a tensor is reused": (
        "buffers[id(x)] = g if id(x) not in buffers else buffers[id(x)] + g",
        "buffers[id(x)] = g", "sum of the gradients from all its uses"),
    "a leaf's grad replaced, not added to": (
        "t.grad = total.copy() if t.grad is None else t.grad + total",
        "t.grad = total.copy()", "never replaces it"),
    "broadcasting not summed back": (
        "        while grad.ndim > len(shape):", "        return grad\n        while grad.ndim > len(shape):",
        "sum over the broadcast axes"),
    "the given grad ignored (always ones)": (
        "np.ones_like(self.data) if grad is None\n                   else np.asarray(grad, dtype=np.float64)",
        "np.ones_like(self.data)", "start the walk from the grad argument"),
    "a product's gradients swapped": (
        "Tensor._sum_to(g * b.data, a.data.shape)", "Tensor._sum_to(g * a.data, a.data.shape)",
        "scaled by the other input's value"),
    "a matrix product's gradient not transposed": (
        "(g @ b.data.T, a.data.T @ g)", "(g @ b.data, a.data.T @ g)", "matrix product"),
    "relu's gradient 1 at 0": ("(a.data > 0)", "(a.data >= 0)", "exactly 0"),
    "relu's forward wrong": ("np.maximum(a.data, 0.0)", "np.abs(a.data)",
                             "forward computation is off"),
    "a recursive ordering": (
        "        order, seen, stack = [], set(), [(self, False)]\n",
        "        order, seen, stack = [], set(), []\n"
        "        def visit(t):\n"
        "            if id(t) not in seen:\n"
        "                seen.add(id(t))\n"
        "                for x in t.inputs:\n"
        "                    visit(x)\n"
        "                order.append(t)\n"
        "        visit(self)\n", "not with recursion"),
    "leaves' backward_fn called": ("if not t.inputs:", "if t is None:", "has no backward_fn"),
    "inputs kept as arrays": ("(a, b),\n                      lambda g: (Tensor._sum_to(g, a.data.shape)",
                              "(a.data, b.data),\n                      lambda g: (Tensor._sum_to(g, a.data.shape)",
                              "themselves"),
    "integer data kept": ("self.data = np.asarray(data, dtype=np.float64)",
                          "self.data = np.asarray(data)", "float64 numpy array"),
    "a leaf's grad shares the gradient's array": (
        "t.grad = total.copy() if t.grad is None else t.grad + total",
        "if t.grad is None:\n                    t.grad = total\n"
        "                else:\n                    t.grad += total", "array of its own"),
    "a buffer added into in place (a + b hands one array to both inputs)": (
        "buffers[id(x)] = g if id(x) not in buffers else buffers[id(x)] + g",
        "if id(x) in buffers:\n                    buffers[id(x)] += g\n"
        "                else:\n                    buffers[id(x)] = g",
        "an in-place += changed an array another tensor's gradient also holds: make a new "
        "array when adding"),
    "inner tensors keep their totals in .grad": (
        "            for x, g in zip(t.inputs, t.backward_fn(total)):",
        "            t.grad = total\n"
        "            for x, g in zip(t.inputs, t.backward_fn(total)):",
        "(an inner tensor, not a leaf) has .grad"),
}

# Whole walks written differently (the backward method replaced).
PER_PATH = '''
    def backward(self, grad=None):
        grad = np.ones_like(self.data) if grad is None else np.asarray(grad, dtype=np.float64)
        if not self.inputs:
            self.grad = grad.copy() if self.grad is None else self.grad + grad
            return
        for x, g in zip(self.inputs, self.backward_fn(grad)):
            x.backward(g)
'''
BREADTH_FIRST = '''
    def backward(self, grad=None):
        from collections import deque
        buffers = {id(self): np.ones_like(self.data) if grad is None else np.array(grad)}
        queue, seen = deque([self]), {id(self)}
        while queue:
            t = queue.popleft()
            total = buffers.pop(id(t))
            if not t.inputs:
                t.grad = total.copy() if t.grad is None else t.grad + total
                continue
            for x, g in zip(t.inputs, t.backward_fn(total)):
                buffers[id(x)] = g if id(x) not in buffers else buffers[id(x)] + g
                if id(x) not in seen:
                    seen.add(id(x))
                    queue.append(x)
'''
# The walks below start as the right one does: a topological order, built without recursion.
TOPOLOGICAL_ORDER = '''
    def backward(self, grad=None):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            t, expanded = stack.pop()
            if expanded:
                order.append(t)
            elif id(t) not in seen:
                seen.add(id(t))
                stack.append((t, True))
                stack.extend((x, False) for x in t.inputs if id(x) not in seen)
'''
GRAD_AS_BUFFER = TOPOLOGICAL_ORDER + '''        self.grad = np.ones_like(self.data) if grad is None else np.array(grad)
        for t in reversed(order):
            if t.inputs and t.grad is not None:
                for x, g in zip(t.inputs, t.backward_fn(t.grad)):
                    x.grad = g.copy() if x.grad is None else x.grad + g
'''
# The inner tensors' buffers kept under another name (.total), never reset: one backward()
# is right, a second one through the same graph starts from the first one's totals.
KEPT_TOTALS = TOPOLOGICAL_ORDER + '''        self.total = np.ones_like(self.data) if grad is None else np.array(grad)
        for t in reversed(order):
            total = getattr(t, "total", None)
            if total is None:
                continue
            if not t.inputs:
                t.grad = total.copy() if t.grad is None else t.grad + total
                t.total = None
                continue
            for x, g in zip(t.inputs, t.backward_fn(total)):
                x.total = g.copy() if getattr(x, "total", None) is None else x.total + g
'''
WALKS = {"a walk along every path (no buffers)": (PER_PATH, "ran twice"),
         "breadth-first, not a topological order": (BREADTH_FIRST, "topological order"),
         "inner tensors' .grad as buffers": (GRAD_AS_BUFFER, "expected None. Rule 6"),
         "inner totals kept under another name, never reset": (KEPT_TOTALS, "from zero")}


def with_walk(walk):
    start = ENGINE_SOURCE.index("    def backward(self, grad=None):")
    return wrong_engine(ENGINE_SOURCE[start:], walk.strip("\n") + "\n")


def engine_message(engine):
    result = capstone.check_engine(engine)
    assert not result, "a wrong engine passed"
    return result.message


@pytest.mark.parametrize("mistake", WRONG_ENGINES)
def test_a_wrong_engine_is_caught_and_named(mistake):
    old, new, expected = WRONG_ENGINES[mistake]
    message = engine_message(wrong_engine(old, new))
    assert expected in message, message


@pytest.mark.parametrize("mistake", WALKS)
def test_a_wrong_walk_is_caught_and_named(mistake):
    walk, expected = WALKS[mistake]
    message = engine_message(with_walk(walk))
    assert expected in message, message


def test_the_messages_name_the_mistake_without_the_code():
    """No message shows a line of the answer (the learner's own line, from ``where``, is
    theirs)."""
    answer_lines = {line.strip() for line in ENGINE_SOURCE.splitlines() if len(line.strip()) > 20}
    for mistake, (old, new, _) in WRONG_ENGINES.items():
        message = engine_message(wrong_engine(old, new))
        shown = [line for line in answer_lines if line in message and line not in new]
        assert not shown, (mistake, shown)


def test_a_learner_engine_that_raises_is_reported_not_raised():
    broken = wrong_engine("return Tensor(a.data @ b.data", "return Tensor(a.data @ b.nope")
    message = engine_message(broken)
    assert "raised AttributeError" in message and "a @ b" in message


def test_a_missing_or_odd_answer():
    assert "not written yet" in capstone.check_engine(None).message
    assert "not written yet" in capstone.check_sgd(None, Tensor).message
    assert "expected a class" in capstone.check_engine(lambda data: data).message
    assert "expected a class" in capstone.check_sgd(42).message


# ----------------------------------------------------------------- wrong optimizers

WRONG_SGDS = {
    "a step uphill": ("p.data -= self.lr * p.grad", "p.data += self.lr * p.grad", "moved up the gradient"),
    "lr forgotten": ("p.data -= self.lr * p.grad", "p.data -= p.grad", "whole gradient"),
    "zero_grad leaves zeros": ("p.grad = None", "p.grad = np.zeros_like(p.data)", "expected None"),
    "zero_grad does nothing": ("p.grad = None", "pass", "expected None"),
    "no skip of a parameter without gradient": (
        "            if p.grad is not None:\n                p.data -= self.lr * p.grad",
        "            p.data -= self.lr * p.grad", "raised TypeError"),
    "step changes the gradient": ("p.data -= self.lr * p.grad",
                                  "p.grad *= self.lr\n                p.data -= p.grad",
                                  "changed"),
}


@pytest.mark.parametrize("mistake", WRONG_SGDS)
def test_a_wrong_sgd_is_caught_and_named(mistake):
    old, new, expected = WRONG_SGDS[mistake]
    result = capstone.check_sgd(wrong_sgd(old, new), Tensor)
    assert not result and expected in result.message, result.message


# ----------------------------------------------------------------- borrowed engines

def test_minigrads_and_pytorchs_own_objects_are_refused():
    class Subclass(mg.Tensor):
        pass

    class Wrapper:
        def __init__(self, data, inputs=(), backward_fn=None, op=""):
            self.value = mg.tensor(data, requires_grad=True)

    class TorchWrapper:
        def __init__(self, data, inputs=(), backward_fn=None, op=""):
            self.value = torch.tensor(data, requires_grad=True)

    class OnOptim:
        def __init__(self, params, lr):
            self.inner = mg.optim.SGD(params, lr=lr)

    class Sub(mg.optim.SGD):
        pass
    for engine, said in ((mg.Tensor, "mg.Tensor"), (Subclass, "subclass"),
                         (Wrapper, "mg.tensor"), (TorchWrapper, "torch.tensor"),
                         (capstone.StandInTensor, "StandInTensor")):
        message = engine_message(engine)
        assert said in message and ("yourself" in message or "scratch" in message), message
    for optimizer, said in ((mg.optim.SGD, "optim.SGD"), (OnOptim, "optim.SGD"),
                            (Sub, "subclass"), (capstone.StandInSGD, "StandInSGD")):
        message = capstone.check_sgd(optimizer, Tensor).message
        assert said in message, message


# ----------------------------------------------------------------- the lecture's helpers

def test_the_stand_in_runs_while_nothing_is_written(capsys):
    assert capstone.engine_or_stand_in(None) is capstone.StandInTensor
    assert capstone.sgd_or_stand_in(None) is capstone.StandInSGD
    said = capsys.readouterr().out
    assert "Tensor is not written yet" in said and "SGD is not written yet" in said
    assert capstone.engine_or_stand_in(Tensor) is Tensor and capstone.sgd_or_stand_in(SGD) is SGD


def test_the_graph_drawing_lists_the_learners_graph():
    x, w = Tensor(np.ones((1, 2))), Tensor(np.ones((2, 3)))
    h = x @ w
    out = h.relu() * h
    drawing = capstone.draw_engine_graph(out, names={"x": x, "w": w, "out": out})
    listing = drawing.listing
    assert listing.startswith("your engine's graph: 5 tensors, 3 ops")
    assert "x: a leaf, shape 1x2" in listing and "out = *(" in listing
    assert listing == capstone.draw_engine_graph(out, names={"x": x, "w": w, "out": out}).listing
    assert "->" in drawing.source


def test_the_digits_split_is_seeded_and_whole():
    x_train, y_train, x_test, y_test = capstone.digits(seed=0)
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)
    assert x_train.dtype == np.float64 and 0 <= x_train.min() and x_train.max() <= 1
    again = capstone.digits(seed=0)
    assert np.array_equal(again[1], y_train) and np.array_equal(again[3], y_test)
    params = capstone.init_params(seed=0)
    assert [(k, v.shape) for k, v in params.items()] == [
        ("W1", (64, 32)), ("b1", (32,)), ("W2", (32, 10)), ("b2", (10,))]


def test_the_battery_module_needs_nothing_of_the_learner_but_the_spec():
    source = inspect.getsource(capstone_battery)
    for name in ("._sum_to", "_as_tensor"):  # the notebook answer's own helpers
        assert name not in source


def _stand_in_digits_run(Engine, n=16):
    params = capstone.init_params(seed=0)
    x, y, _, _ = capstone.digits(seed=0)
    mine = {k: Engine(v) for k, v in params.items()}
    hidden = (Engine(x[:n]) @ mine["W1"] + mine["b1"]).relu()
    out = hidden @ mine["W2"] + mine["b2"]
    scores = torch.tensor(out.data, requires_grad=True)
    torch.nn.functional.cross_entropy(scores, torch.tensor(y[:n])).backward()
    out.backward(scores.grad.numpy())
    return mine, params, x[:n], y[:n], (hidden, out)


def test_three_ways_says_stand_in_when_minigrad_meets_itself(capsys):
    """The stand-in's gradients are minigrad's: the lines say so instead of 'yours'."""
    mine, params, x, y, _ = _stand_in_digits_run(capstone.StandInTensor)
    assert capstone.three_ways(mine, params, x, y)
    said = capsys.readouterr().out
    assert "yours (stand-in) vs minigrad" in said and "compared with itself" in said
    mine, params, x, y, _ = _stand_in_digits_run(Tensor)
    assert capstone.three_ways(mine, params, x, y)  # the learner's tensors, not arrays
    said = capsys.readouterr().out
    assert "stand-in" not in said and "yours vs minigrad: max |difference| < 1e-12: True" in said


def test_the_stand_ins_inner_tensors_have_no_grad_and_no_warning(recwarn):
    _, _, _, _, inner = _stand_in_digits_run(capstone.StandInTensor)
    assert all(t.grad is None for t in inner)
    assert not [w for w in recwarn if "not a leaf" in str(w.message)]


def test_the_stand_ins_graph_and_chart_say_whose_they_are():
    assert capstone.engine_name(capstone.StandInTensor) != capstone.engine_name(Tensor)
    assert capstone.engine_name(Tensor) == "your engine"
    for Engine, said in ((capstone.StandInTensor, "the stand-in's graph"),
                         (Tensor, "your engine's graph")):
        x, w = Engine(np.ones((1, 2))), Engine(np.ones((2, 3)))
        assert capstone.draw_engine_graph((x @ w).relu()).listing.startswith(said)


def test_the_student_copy_clears_every_output_the_reference_engine_made():
    """Every code cell after the engine build that runs on ``Engine`` (yours, or the
    stand-in) or shows what it made loses its stored output in the student copy: there it
    would be the reference engine's."""
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("make_student", root / "scripts" / "make_student.py")
    make_student = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_student)
    cells = json.loads((root / "notebooks" / "15_capstone_your_own_engine.ipynb").read_text())["cells"]
    runs_yours = [c for c in cells if c["cell_type"] == "code" and any(
        word in "".join(c["source"]) for word in ("Engine", "losses", "draw_engine_graph"))]
    assert len(runs_yours) >= 5
    for cell in runs_yours:
        assert make_student.clears_output(cell), "".join(cell["source"])[:80]
