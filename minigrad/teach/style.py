"""One look for every picture of the course: readable on a projector, colour-blind safe."""

# Okabe & Ito's palette: distinguishable with every common form of colour blindness.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
BLUE, ORANGE, GREEN, PINK, SKY, VERMILION, YELLOW, BLACK = PALETTE
GREY = "#999999"

RC = {
    "figure.figsize": (8, 4.5),  # 16:9, fits a 1280x800 slide
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 13,
    "axes.titlesize": 15,
    "axes.labelsize": 13,
    "legend.fontsize": 12,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 2.5,
    "axes.prop_cycle": None,  # filled in by apply()
    "svg.hashsalt": "minigrad",  # SVG ids do not change from run to run
    "svg.fonttype": "none",
}


def rc():
    """matplotlib settings for the course (use with ``matplotlib.rc_context(rc())``)."""
    from cycler import cycler
    settings = dict(RC)
    settings["axes.prop_cycle"] = cycler(color=PALETTE)
    return settings
