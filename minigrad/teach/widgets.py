"""Interactive widgets (chapters 1, 3, 4, 8): each returns an ipywidgets box.

The logic they show lives in ``stepping`` and is tested without a browser; here is only
the wiring of sliders and buttons to it.
"""

import ipywidgets as widgets
import numpy as np
from IPython.display import display

from ..creation import tensor as make_tensor
from .drawing import draw_graph
from .plots import plot_losses, plot_tangent
from .stepping import backward_steps, training_run

__all__ = ["backward_stepper", "accumulation_demo", "training_explorer", "tangent_explorer"]


def _show(output, obj):
    with output:
        output.clear_output(wait=True)
        display(obj)


def backward_stepper(root, names=None, view="tensors"):
    """Step through ``root.backward()`` node by node: the node being processed is orange,
    finished ones green, each box shows the gradient that has reached it so far, and each
    edge the gradient sent back along it.
    Nothing is changed: no ``.grad`` is written and the graph is not freed."""
    steps = backward_steps(root)
    slider = widgets.IntSlider(value=0, min=0, max=len(steps), description="step",
                               continuous_update=True)
    back = widgets.Button(description="◀ back", layout=widgets.Layout(width="90px"))
    forward = widgets.Button(description="next ▶", layout=widgets.Layout(width="90px"),
                             button_style="primary")
    caption = widgets.HTML()
    picture = widgets.Output()

    def render(change=None):
        k = slider.value
        if k == 0:
            caption.value = (f"<b>before backward()</b>: {len(steps)} nodes will run, "
                             "from the output back to the leaves")
            _show(picture, draw_graph(root, names, view=view, grads={}))
            return
        step = steps[k - 1]
        caption.value = step.describe(names)
        _show(picture, draw_graph(root, names, view=view, step=step))

    back.on_click(lambda _: setattr(slider, "value", max(0, slider.value - 1)))
    forward.on_click(lambda _: setattr(slider, "value", min(len(steps), slider.value + 1)))
    slider.observe(render, names="value")
    render()
    return widgets.VBox([widgets.HBox([back, forward, slider]), caption, picture])


def accumulation_demo():
    """Press the backward button and watch ``x.grad`` go 12, 24, 36; press ``zero_()`` to
    reset. The tensors are real: x = 2, and each press computes z = 3 * x * x afresh and
    runs ``z.backward()``, as each step of a training loop does."""
    state = {}

    def reset():
        state["x"] = make_tensor([2.0], requires_grad=True)
        state["history"] = []

    backward = widgets.Button(description="z = 3*x*x; z.backward()", button_style="primary",
                              layout=widgets.Layout(width="210px"))
    zero = widgets.Button(description="x.grad.zero_()", button_style="warning")
    restart = widgets.Button(description="start again")
    shown = widgets.HTML()

    def refresh():
        grad = state["x"].grad
        lines = "<br>".join(state["history"][-6:])
        shown.value = (f"<pre style='font-size: 1.3em'>x.grad = {grad!r}</pre>"
                       f"<div style='color: #555'>{lines}</div>")

    def on_backward(_):
        x = state["x"]
        z = 3 * x * x
        z.backward()
        state["history"].append(f"z.backward() → x.grad = {x.grad!r}")
        refresh()

    def on_zero(_):
        if state["x"].grad is not None:
            state["x"].grad.zero_()
        state["history"].append(f"zero_() → x.grad = {state['x'].grad!r}")
        refresh()

    def on_restart(_):
        reset()
        refresh()

    backward.on_click(on_backward)
    zero.on_click(on_zero)
    restart.on_click(on_restart)
    reset()
    refresh()
    return widgets.VBox([widgets.HBox([backward, zero, restart]), shown])


def training_explorer(epochs=50):
    """Learning rate, zero_grad on/off and accumulation steps against the loss curve of the
    seeds' linear regression (``stepping.training_run``)."""
    wide = {"description_width": "initial"}  # show the whole label, not "micro-bat..."
    lr = widgets.FloatLogSlider(value=0.001, base=10, min=-4, max=-1.5, step=0.125,
                                description="learning rate", readout_format=".4f", style=wide)
    zero_grad = widgets.Checkbox(value=True, description="call optimizer.zero_grad()",
                                 style=wide, indent=False)
    accumulation = widgets.IntSlider(value=1, min=1, max=4, description="micro-batches",
                                     style=wide)
    picture = widgets.Output()

    def render(change=None):
        curves = {"this run": training_run(lr.value, zero_grad.value, accumulation.value, epochs)}
        if not zero_grad.value:
            curves["with zero_grad()"] = training_run(lr.value, True, accumulation.value, epochs)
        _show(picture, plot_losses(curves, title="Loss per epoch", log=True))

    for control in (lr, zero_grad, accumulation):
        control.observe(render, names="value")
    render()
    return widgets.VBox([widgets.HBox([lr, accumulation]), zero_grad, picture])


def tangent_explorer(f=None, low=-3.0, high=3.0):
    """Slide x0 and see f's tangent line there, with the slope autograd computes."""
    if f is None:
        def f(x):
            return x ** 3 / 3 - x
    x0 = widgets.FloatSlider(value=1.0, min=low, max=high, step=0.1, description="x0")
    picture = widgets.Output()

    def render(change=None):
        _show(picture, plot_tangent(f, x0.value, xs=np.linspace(low, high, 121)))

    x0.observe(render, names="value")
    render()
    return widgets.VBox([x0, picture])
