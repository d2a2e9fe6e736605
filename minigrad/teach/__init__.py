"""``minigrad.teach``: the course layer — graph drawings, plots, widgets, source display and
exercise checks (every chapter).

The only part of minigrad that uses graphviz, matplotlib and ipywidgets. Each is imported
when first needed, so ``import minigrad`` (and even ``import minigrad.teach``) stays light.
"""

import importlib

_EXPORTS = {
    "draw_graph": "drawing", "GraphDiagram": "drawing", "side_by_side": "drawing",
    "plot_losses": "plots", "plot_curves": "plots", "plot_tangent": "plots",
    "plot_function": "plots", "Chart": "plots",
    "show_source": "source",
    "check": "checks", "check_function": "checks",
    "backward_steps": "stepping", "accumulation_states": "stepping",
    "training_run": "stepping", "tangent_at": "stepping",
    "backward_stepper": "widgets", "accumulation_demo": "widgets",
    "training_explorer": "widgets", "tangent_explorer": "widgets",
    "use": "build", "check_piece": "build", "my_pieces": "build",
    "GradientTape": "tape",
}
_MODULES = {"drawing", "plots", "source", "checks", "stepping", "widgets", "style", "exercises",
            "build", "tape", "diagnostics", "clipping"}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(__all__) | _MODULES)
