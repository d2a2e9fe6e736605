"""Charts for the course (chapters 1, 8–11): loss curves, tangent lines, any curves.

Each function returns a ``Chart``: JupyterLab shows the picture, and its plain-text form
lists the numbers the picture shows (first and last value of each curve, ...), which is what
nbval compares. ``path=`` also writes the figure (.svg or .png) reproducibly.
"""

import io

import numpy as np

from ..creation import tensor
from ..dtypes import float64
from . import saving, style
from .stepping import tangent_at

__all__ = ["Chart", "plot_losses", "plot_curves", "plot_tangent", "plot_function"]


def _number(v, digits=4):
    return f"{v:.{digits}g}"


class Chart:
    """A matplotlib figure plus a text summary of what it shows.

    JupyterLab shows the PNG; the summary is the text form (what nbval compares) and the
    picture's alt text (what slide decks and screen readers show)."""

    def __init__(self, figure, summary, alt=None):
        self.figure = figure
        self.summary = summary
        self.alt = alt or summary

    def _png(self):
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    def _repr_png_(self):
        return self._png()

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"image/png": self._png(), "text/plain": self.summary}
        return data, {"image/png": {"alt": self.alt}}

    def __repr__(self):
        return self.summary

    def save(self, path):
        """Write the chart to ``path`` under ``make notebooks`` / ``make figures`` (see
        ``teach.saving``); elsewhere write nothing. Returns ``path``."""
        target = saving.figure_file(path)
        if target is not None:
            metadata = {"Date": None} if target.suffix == ".svg" else {"Software": None}
            import matplotlib
            with matplotlib.rc_context(style.rc()):
                self.figure.savefig(target, bbox_inches="tight", metadata=metadata)
        return str(path)


def _figure(figsize=None):
    import matplotlib
    from matplotlib.figure import Figure
    with matplotlib.rc_context(style.rc()):
        fig = Figure(figsize=figsize or style.RC["figure.figsize"])
        ax = fig.add_subplot()
    return fig, ax


def plot_curves(curves, title=None, xlabel="step", ylabel="value", path=None, log=False,
                alt=None, xs=None, xlog=False, styles=None, markers=False, ylim=None, digits=4):
    """Several named curves on one chart: ``{"with zero_grad": [...], "without": [...]}``.

    xs       the x values (shared by all curves; default 1, 2, ..., n)
    log      log-scale y axis; ``xlog`` the same for x
    styles   {curve name: matplotlib line style}, e.g. {"central": "--"}
    markers  draw a dot at every point
    ylim     (low, high) for the y axis, e.g. (0, None) to start at zero
    digits   significant digits of the numbers in the text form: fewer for a chaotic run,
             whose last digits depend on the CPU's rounding
    """
    import matplotlib
    styles = styles or {}
    with matplotlib.rc_context(style.rc()):
        fig, ax = _figure()
        lines = []
        for i, (name, values) in enumerate(curves.items()):
            values = [float(v) for v in values]
            x_values = np.arange(1, len(values) + 1) if xs is None else np.asarray(xs, dtype=float)
            ax.plot(x_values, values, label=name, color=style.PALETTE[i % len(style.PALETTE)],
                    linestyle=styles.get(name, "-"), marker="o" if markers else None)
            first, last, low = (_number(v, digits) for v in (values[0], values[-1], min(values)))
            lines.append(f"  {name}: {first} -> {last} (min {low}, {len(values)} points)")
        if log:
            ax.set_yscale("log")
        if xlog:
            ax.set_xscale("log")
        if xs is not None and len(xs) <= 12:  # few points: label exactly those
            ax.set_xticks(np.asarray(xs, dtype=float), [f"{v:g}" for v in xs])
            ax.minorticks_off()
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel + (" (log scale)" if xlog else ""))
        ax.set_ylabel(ylabel + (" (log scale)" if log else ""))
        if title:
            ax.set_title(title)
        if len(curves) > 1:
            ax.legend(frameon=False)
        fig.tight_layout()
    summary = "\n".join([f"{title or ylabel}:"] + lines)
    chart = Chart(fig, summary, alt or f"Line chart of {ylabel} against {xlabel}. " + summary)
    if path:
        chart.save(path)
    return chart


def plot_losses(curves, title=None, path=None, log=False, digits=4):
    """Loss per epoch for one or several runs (a list, or a dict of named lists)."""
    if not isinstance(curves, dict):
        curves = {"loss": curves}
    return plot_curves(curves, title=title or "Training loss", xlabel="epoch", ylabel="loss",
                       path=path, log=log, digits=digits)


def plot_function(f, xs, title=None, path=None, label="f(x)", xlabel="x"):
    """A function of one number drawn over ``xs`` (f takes and returns floats)."""
    import matplotlib
    xs = np.asarray(xs, dtype=float)
    ys = np.array([float(f(x)) for x in xs])
    with matplotlib.rc_context(style.rc()):
        fig, ax = _figure()
        ax.plot(xs, ys, color=style.BLUE, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        if title:
            ax.set_title(title)
        fig.tight_layout()
    chart = Chart(fig, f"{title or label}: {len(xs)} points from x={_number(xs[0])} to "
                       f"x={_number(xs[-1])}, y from {_number(ys.min())} to {_number(ys.max())}")
    if path:
        chart.save(path)
    return chart


def plot_tangent(f, x0, slope=None, xs=None, title=None, path=None, xlabel="x", ylabel="f(x)"):
    """f and its tangent line at x0 (slope from autograd unless given)."""
    import matplotlib
    value, auto_slope = tangent_at(f, x0)
    slope = auto_slope if slope is None else slope
    xs = np.linspace(x0 - 3, x0 + 3, 121) if xs is None else np.asarray(xs, dtype=float)
    ys = np.array([float(f(tensor(float(x), dtype=float64))) for x in xs])
    with matplotlib.rc_context(style.rc()):
        fig, ax = _figure()
        ax.plot(xs, ys, color=style.BLUE, label=ylabel)
        shown = f"{slope:.3f}".replace("-0.000", "0.000")  # rounding noise is not a sign
        ax.plot(xs, value + slope * (xs - x0), color=style.ORANGE, linestyle="--",
                label=f"tangent, slope {shown}")
        ax.plot([x0], [value], "o", color=style.BLACK, markersize=8)
        span = ys.max() - ys.min()
        ax.set_ylim(ys.min() - 0.1 * span - 1e-9, ys.max() + 0.1 * span + 1e-9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title or f"The tangent at {xlabel} = {x0:g}")
        ax.legend(frameon=False)
        fig.tight_layout()
    chart = Chart(fig, f"tangent at x={_number(x0)}: f(x)={_number(value)}, slope={_number(slope)}")
    if path:
        chart.save(path)
    return chart
