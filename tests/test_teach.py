"""The course layer: graph drawings, stepper and widget logic, plots, source, checks."""

import shutil
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, teach
from minigrad.teach import checks, stepping

has_dot = shutil.which("dot") is not None


def seed_graph():
    x = mg.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3
    return x, y, z


def test_import_minigrad_does_not_load_plotting_or_widgets():
    code = ("import sys, minigrad, minigrad.teach; "
            "print(sorted(m for m in ('matplotlib', 'graphviz', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tensor_view_lists_nodes_and_edges():
    x, y, z = seed_graph()
    listing = repr(teach.draw_graph(z, names={"x": x, "y": y, "z": z}))
    assert listing.splitlines() == [
        "computation graph, tensors and operations: 6 nodes, 6 edges",
        "  n0 op mul (MulBackward0)",
        "  n0t tensor z = [12.]",
        "  c0 constant 3 (no grad)",
        "  n1 op mul (MulBackward0)",
        "  n1t tensor y = [4.]",
        "  n2 leaf x = [2.] (requires_grad)",
        "edges:",
        "  n0 -> n0t",
        "  n1t -> n0",
        "  c0 -> n0",
        "  n1 -> n1t",
        "  n2 -> n1",
        "  n2 -> n1",
    ]


def test_grad_fn_view_is_pytorchs_backward_graph():
    x, y, z = seed_graph()
    z.backward(retain_graph=True)
    dot = teach.draw_graph(z, names={"x": x}, view="grad_fn")
    assert "n0 MulBackward0" in dot.listing and "AccumulateGrad for x (1,), grad [12.]" in dot.listing
    assert "n2 -> n1" in dot.listing
    assert "MulBackward0" in dot.source and "0x" not in dot.listing


def test_drawing_is_deterministic_and_big_graphs_show_shapes():
    def draw():
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        loss = nn.CrossEntropyLoss()(model(mg.randn(8, 2)), mg.randint(0, 2, (8,)))
        return teach.draw_graph(loss, names=dict(model.named_parameters()))
    first, second = draw(), draw()
    assert first.source == second.source and first.listing == second.listing
    assert "leaf 0.weight = (16, 2)" in first.listing and "op addmm" in first.listing


def test_highlight_and_stepper_gradients_are_drawn():
    x, y, z = seed_graph()
    steps = teach.backward_steps(z)
    dot = teach.draw_graph(z, names={"x": x, "y": y, "z": z}, highlight=steps[1].node,
                           done=[steps[0].node], grads=steps[1].arrived)
    assert "grad [3.]" in dot.listing and "grad [12.]" not in dot.listing
    assert 'fillcolor="#FBD38D"' in dot.source


def test_a_step_shows_what_each_edge_carried_and_what_waits_in_a_buffer():
    """(a b + a)^2 at a = 2, b = 3, step 3 (mul runs): a's buffer holds the 16 of its first
    path, mul is sending 48 to a and 32 to b, add sent 16 to a and to mul."""
    a = mg.tensor(2.0, requires_grad=True)
    b = mg.tensor(3.0, requires_grad=True)
    f = (a * b + a) ** 2
    step = teach.backward_steps(f)[2]
    assert step.name == "MulBackward0"
    assert [float(g) for *_, g in step.sending] == [48.0, 32.0]
    assert {n.name(): float(g) for n, g in step.waiting.items()} == {"AccumulateGrad": 16.0}
    assert "sends 48., 32. to its 2 input(s)" in step.describe()
    listing = teach.draw_graph(f, {"a": a, "b": b, "f": f}, step=step).listing
    assert "leaf a = 2., grad 16. so far" in listing
    assert listing.count("gradient 16.") == 3
    assert "gradient 48. (sending now)" in listing and "gradient 32. (sending now)" in listing
    last = teach.backward_steps(f)[-1]
    assert last.waiting == {} and len(last.done) == 4


def test_a_constant_the_op_kept_is_drawn_with_its_name_and_value():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    features = mg.tensor([3.0, 4.0])
    listing = teach.draw_graph((x * features).sum(), {"x": x, "features": features}).listing
    assert "features [3., 4.] (no grad)" in listing


def test_the_key_names_each_colour_of_the_view():
    x, y, z = seed_graph()
    assert "leaf that requires grad" in teach.draw_graph(z).source
    assert "AccumulateGrad: writes" in teach.draw_graph(z, view="grad_fn").source
    stepped = teach.draw_graph(z, step=teach.backward_steps(z)[0]).source
    assert "running now" in stepped and "gradient sent back" in stepped
    assert "leaf that requires grad" not in teach.draw_graph(z, legend=False).source


@pytest.mark.skipif(not has_dot, reason="graphviz's dot program is not installed")
def test_renders_to_svg_with_dot(tmp_path):
    x, y, z = seed_graph()
    bundle = teach.draw_graph(z, names={"x": x})._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    assert bundle["text/plain"].startswith("computation graph")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("MINIGRAD_WRITE_FIGURES", "1")
        path = teach.draw_graph(z).save_svg(tmp_path / "new" / "g.svg")
    assert "graphviz version" not in Path(path).read_text()


def test_pictures_are_written_only_when_asked(tmp_path, monkeypatch):
    """Running a chapter (nbval, the student copy, nbgrader) writes no file: only ``make
    notebooks`` and ``make figures`` set MINIGRAD_WRITE_FIGURES=1 (teach.saving)."""
    x, y, z = seed_graph()
    chart = teach.plot_curves({"a": [1.0, 2.0]})
    monkeypatch.delenv("MINIGRAD_WRITE_FIGURES", raising=False)
    assert chart.save(tmp_path / "c.svg") == str(tmp_path / "c.svg")
    teach.draw_graph(z).save_svg(tmp_path / "g.svg")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("MINIGRAD_WRITE_FIGURES", "1")
    chart.save(tmp_path / "sub" / "c.svg")
    assert (tmp_path / "sub" / "c.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_without_dot_the_listing_and_a_hint_are_shown(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    x, y, z = seed_graph()
    bundle = teach.draw_graph(z)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "apt-get install graphviz" in bundle["text/plain"]


def test_stepper_visits_nodes_in_reverse_topological_order_and_changes_nothing():
    x, y, z = seed_graph()
    steps = teach.backward_steps(z)
    assert [s.name for s in steps] == ["MulBackward0", "MulBackward0", "AccumulateGrad"]
    assert [s.grad.tolist() for s in steps] == [[1.0], [3.0], [12.0]]
    assert steps[2].node.variable is x and x.grad is None
    assert "adds [12.] into x.grad" in steps[2].describe({"x": x})
    z.backward()  # the graph was not freed by stepping
    assert x.grad.tolist() == [12.0]


def test_stepper_on_an_mlp_ends_at_every_parameter():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    loss = model(mg.randn(5, 3)).pow(2).mean()
    steps = teach.backward_steps(loss)
    leaves = [s.node.variable for s in steps if s.name == "AccumulateGrad"]
    assert {id(p) for p in leaves} == {id(p) for p in model.parameters()}
    seen = []
    for s in steps:  # each node runs after every node that feeds it
        for nxt in s.node.inputs:
            if nxt is not None:
                assert nxt not in seen
        seen.append(s.node)


def test_accumulation_demo_shows_12_24_36_0():
    assert stepping.accumulation_states() == [12.0, 24.0, 36.0, 0.0]
    assert stepping.accumulation_states(["backward", "none", "backward"]) == [12.0, None, 12.0]


def test_training_run_with_and_without_zero_grad():
    good = stepping.training_run(zero_grad=True)
    bad = stepping.training_run(zero_grad=False)
    assert len(good) == 50 and good[0] == bad[0]
    assert all(b < a for a, b in zip(good, good[1:]))
    assert bad[-1] > 100 * good[-1]
    split = stepping.training_run(zero_grad=True, accumulation_steps=3)
    np.testing.assert_allclose(split, good, rtol=1e-4)


def test_tangent_slope_is_the_derivative():
    value, slope = stepping.tangent_at(lambda x: x ** 3 / 3 - x, 2.0)
    assert value == pytest.approx(8 / 3 - 2) and slope == pytest.approx(3.0)


def test_plots_summarise_their_numbers_and_write_files(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_WRITE_FIGURES", "1")
    chart = teach.plot_losses({"a": [4.0, 2.0, 1.0], "b": [4.0, 5.0, 9.0]}, title="T",
                              path=tmp_path / "c.svg", log=True)
    assert repr(chart) == "T:\n  a: 4 -> 1 (min 1, 3 points)\n  b: 4 -> 9 (min 4, 3 points)"
    assert chart._repr_png_().startswith(b"\x89PNG")
    svg = (tmp_path / "c.svg").read_text()
    assert "<dc:date>" not in svg
    chart.save(tmp_path / "again.svg")
    assert (tmp_path / "again.svg").read_text() == svg  # reproducible
    tangent = teach.plot_tangent(lambda x: x * x, 1.0, path=tmp_path / "t.png")
    assert repr(tangent) == "tangent at x=1: f(x)=1, slope=2"
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")


def test_plot_summary_rounds_to_the_digits_asked_for():
    """A chaotic run's last digits depend on the CPU: the text form can round them away."""
    curves = {"run": [158.76259, 110.92354, 0.0819123]}
    assert repr(teach.plot_losses(curves, title="T")) == "T:\n  run: 158.8 -> 0.08191 (min 0.08191, 3 points)"
    assert repr(teach.plot_losses(curves, title="T", digits=3)) == "T:\n  run: 159 -> 0.0819 (min 0.0819, 3 points)"


def test_show_source_is_the_real_source():
    view = teach.show_source(mg.Tensor.backward)
    text = repr(view)
    assert text.startswith("# minigrad/tensor_backward.py: Tensor.backward\ndef backward(self")
    assert "run_backward" in text and "<span" in view._repr_html_()
    assert repr(teach.show_source(mg.graph.AccumulateGrad)).splitlines()[1] == \
        "class AccumulateGrad(Node):"


def test_checks_accept_right_and_reject_wrong_answers_without_revealing():
    assert checks.check("grad", mg.tensor([12.0]), [12.0])
    wrong = checks.check("grad", mg.tensor([24.0]), [12.0], hint="zero it first")
    assert not wrong and "zero it first" in repr(wrong) and "12" not in repr(wrong)
    assert not checks.check("grad", checks.MISSING, [12.0])
    assert "no answer yet" in repr(checks.check("grad", None, [1.0]))
    assert not checks.check("shape", [1.0, 2.0], [1.0])
    assert checks.check_function("double", lambda v: 2 * v, lambda v: v + v, [1.0, 2.5])
    failing = checks.check_function("double", lambda v: 1 / 0, lambda v: v + v, [1.0])
    assert not failing and "ZeroDivisionError" in repr(failing)


def test_widgets_build_and_react():
    widgets = pytest.importorskip("ipywidgets")
    x, y, z = seed_graph()
    stepper = teach.backward_stepper(z, names={"x": x, "y": y, "z": z})
    slider = stepper.children[0].children[2]
    caption = stepper.children[1]
    assert isinstance(slider, widgets.IntSlider) and slider.max == 3
    slider.value = 3
    assert "AccumulateGrad adds [12.] into x.grad" in caption.value
    stepper.children[0].children[0].click()
    assert slider.value == 2

    demo = teach.accumulation_demo()
    backward, zero, _ = demo.children[0].children
    backward.click()
    backward.click()
    assert "tensor([24.])" in demo.children[1].value
    zero.click()
    assert "x.grad = tensor([0.])" in demo.children[1].value

    explorer = teach.training_explorer(epochs=5)
    explorer.children[1].value = False  # zero_grad off: two curves
    assert isinstance(explorer.children[2], widgets.Output)
    tangent = teach.tangent_explorer()
    tangent.children[0].value = 0.5


def test_show_source_from_a_line():
    view = teach.show_source(mg.graph.backward, start="if not retain_graph")
    assert repr(view).splitlines()[1].strip() == "if not retain_graph:"
    with pytest.raises(ValueError, match="no line"):
        teach.show_source(mg.graph.backward, start="not in there")


def test_charts_and_graphs_carry_a_text_alternative():
    chart = teach.plot_losses({"a": [4.0, 1.0]}, title="T")
    data, metadata = chart._repr_mimebundle_()
    assert data["text/plain"] == repr(chart)
    assert "4 -> 1" in metadata["image/png"]["alt"]
    x, y, z = seed_graph()
    assert teach.draw_graph(z).source.startswith('digraph "computation graph, tensors')
