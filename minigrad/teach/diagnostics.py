"""Charts of a network's insides (chapter 12): the histograms of activations or gradients
per layer that practitioners look at, next to ``plots.plot_curves`` for std-per-layer and
per-step charts.

Like every chart of the course, ``plot_histograms`` returns a ``plots.Chart``: JupyterLab
shows the picture, its text form lists the numbers it shows (rounded), which nbval compares.
"""

import numpy as np

from . import style
from .plots import Chart

__all__ = ["plot_histograms"]


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
