"""``make figures``: the pictures the README and the slides use, written to ``figures/``.

    python -m minigrad.teach.figures [output folder]
"""

import os
import sys
from pathlib import Path

from .. import creation, nn
from ..random import manual_seed
from . import saving
from .drawing import draw_graph
from .plots import plot_losses
from .stepping import training_run


def computation_graph(folder):
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3
    z.backward(retain_graph=True)
    return draw_graph(z, names={"x": x, "y": y, "z": z}).save_svg(folder / "computation_graph.svg")


def mlp_graph(folder):
    manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss = nn.CrossEntropyLoss()(model(creation.randn(8, 2)), creation.randint(0, 2, (8,)))
    names = dict(model.named_parameters())
    names["loss"] = loss
    return draw_graph(loss, names=names, view="grad_fn").save_svg(folder / "mlp_grad_fn_graph.svg")


def zero_grad_curves(folder):
    curves = {"with optimizer.zero_grad()": training_run(zero_grad=True),
              "without zero_grad()": training_run(zero_grad=False)}
    chart = plot_losses(curves, title="Linear regression, SGD lr=0.001: loss per epoch", log=True)
    chart.save(folder / "zero_grad_loss_curves.svg")
    return chart


def main(folder="figures"):
    os.environ[saving.ENVIRONMENT_VARIABLE] = "1"  # this command is for writing them
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    for make in (computation_graph, mlp_graph, zero_grad_curves):
        result = make(folder)
        print(f"{make.__name__}: {result if isinstance(result, (str, Path)) else 'written'}")


if __name__ == "__main__":
    main(*sys.argv[1:])
