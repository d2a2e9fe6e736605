"""Charts of a network's insides (chapter 12): the histograms of activations or gradients
per layer that practitioners look at, per-layer numbers per training step, and the losses of
several training runs.

Each returns a ``plots.Chart``: JupyterLab shows the picture, its text form is what nbval
compares. A training run of a deep network is chaotic (a spike, a unit that dies), so its
later steps differ in their digits from one CPU's rounding to another's: the text forms of
``plot_per_step`` and ``plot_runs`` state only what holds on every CPU (the first step's
numbers, rounded; whether a run ends stuck or trained).
"""

import math

import numpy as np

from . import style
from .plots import Chart, plot_curves

__all__ = ["plot_histograms", "plot_per_step", "plot_runs"]

STUCK = math.log(2)  # the loss of a 50/50 guess between two classes


def plot_per_step(curves, title, ylabel, log=True):
    """One line per layer over the training steps (``{"layer 1": [...], ...}``); the text
    gives each layer's value at step 1 (1 significant digit) and how many steps are drawn."""
    chart = plot_curves(curves, title=title, xlabel="step", ylabel=ylabel, log=log)
    steps = max(len(values) for values in curves.values())
    lines = [f"{title} ({steps} steps; at step 1):"]
    lines += [f"  {name}: {float(values[0]):.0e}" for name, values in curves.items()]
    chart.summary = "\n".join(lines)
    chart.alt = "Line chart per layer over the steps. " + chart.summary
    return chart


def _ending(values):
    last = float(values[-1])
    if not math.isfinite(last):
        return "ends not finite (diverged)"
    if abs(last - STUCK) < 0.05:
        return "ends near ln 2 = 0.69 (stuck at a 50/50 guess)"
    if last < 0.1:
        return "ends below 0.1 (trained)"
    return "ends between 0.1 and the start"


def plot_runs(runs, title, ylabel="training loss", log=True):
    """The loss curves of several training runs (``{"name": [losses]}``); the text gives
    each run's first loss (2 decimals) and how it ends: stuck near ln 2, or below 0.1."""
    chart = plot_curves(runs, title=title, xlabel="step", ylabel=ylabel, log=log)
    lines = [f"{title}:"]
    lines += [f"  {name}: starts at {float(values[0]):.2f}, {_ending(values)}"
              for name, values in runs.items()]
    chart.summary = "\n".join(lines)
    chart.alt = "Line chart of the loss per step. " + chart.summary
    return chart


def plot_histograms(groups, title=None, xlabel="value", bins=41, span=None, digits=2,
                    path=None):
    """One row of histograms per named group of layers:
    ``{"default init": {"layer 1": tensor, "layer 10": tensor}, "Kaiming": {...}}``.

    Every panel of a row shares the x range ``(-span, span)`` (default: the largest absolute
    value in the row; from 0 when no value is negative, as after a ReLU), so that a
    narrowing distribution looks narrower. The text form gives
    each panel's std and the share of exact zeros (ReLU's), rounded to ``digits`` significant
    digits."""
    import matplotlib
    from matplotlib.figure import Figure
    rows = list(groups.items())
    columns = max(len(panels) for _, panels in rows)
    lines = [f"{title or 'histograms'}:"]
    with matplotlib.rc_context(style.rc()):
        fig = Figure(figsize=(2.3 * columns, 1.9 * len(rows) + 0.4))
        axes = fig.subplots(len(rows), columns, squeeze=False)
        for r, (row_name, panels) in enumerate(rows):
            arrays = {name: _numbers(values) for name, values in panels.items()}
            width = span or max(float(np.abs(a).max()) for a in arrays.values()) or 1.0
            low = 0.0 if all((a >= 0).all() for a in arrays.values()) else -width
            edges = np.linspace(low, width, bins + 1)
            for c, (name, values) in enumerate(arrays.items()):
                ax = axes[r][c]
                ax.hist(values, bins=edges, color=style.PALETTE[r % len(style.PALETTE)])
                ax.set_yticks([])
                ax.set_title(f"{row_name}: {name}" if c == 0 else name, fontsize=9)
                ax.tick_params(labelsize=8)
                if r == len(rows) - 1:
                    ax.set_xlabel(xlabel, fontsize=9)
                zeros = float((values == 0).mean())
                lines.append(f"  {row_name}, {name}: std {values.std():.{digits}g}, "
                             f"{zeros:.0%} zeros")
            for c in range(len(arrays), columns):
                axes[r][c].set_visible(False)
        if title:
            fig.suptitle(title)
        fig.tight_layout()
    summary = "\n".join(lines)
    chart = Chart(fig, summary, "Histograms per layer. " + summary)
    if path:
        chart.save(path)
    return chart


def _numbers(values):
    if hasattr(values, "detach"):
        values = values.detach().numpy()
    return np.asarray(values, dtype=float).reshape(-1)
