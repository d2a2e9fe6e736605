"""Chapter 12 exercises: why deep networks train or don't. The chapter is two lectures:
``notebooks/12a_signals_through_depth.ipynb`` (exercise 1, a prediction locked in before the
measurement reveals it: ``depth_prediction``, a ``teach.predictions.Prediction``; exercise 2,
``check_relu_init``) and ``notebooks/12b_diagnosing_training.ipynb`` (the build exercise and
exercise 3, ``check_deep_model``).

Each check computes the right answer itself with minigrad, never raises and gives no
solution away; each leaves the default random generator as it found it.

The build exercise (``teach.check_piece("clip_grad_norm", clip_grad_norm_)``): the learner's
``clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
foreach=None)``, PyTorch's ``torch.nn.utils.clip_grad_norm_``, plugged in behind
``nn.utils.clip_grad_norm_``. Its battery lives in ``teach.clipping``.
"""

import math
import sys
from unittest import mock

from ... import nn
from ...creation import randn
from ...graph import no_grad
from ...nn import functional as F
from ...nn import init as nn_init
from ...optim import SGD
from ...random import manual_seed
from ..build import Piece, register
from ..checks import CheckResult, keeps_random_state, not_a_function
from ..clipping import OWN_CLIP, clipping_battery, plug_clip
from ..predictions import Prediction

__all__ = [
    "DEPTH_CHOICES",
    "check_deep_model",
    "check_relu_init",
    "depth_prediction",
    "layer_stds",
    "relu_mlp",
    "two_rings",
]


# ------------------------------------------------------------ the chapter's network and data

def relu_mlp(depth=10, width=100, seed=0):
    """The chapter's deep network: ``depth`` blocks of ``nn.Linear(width, width)`` and
    ``nn.ReLU()`` in one ``nn.Sequential``, with PyTorch's default initialisation."""
    manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers)


def layer_stds(model, x):
    """The standard deviation of the output of each ``nn.ReLU`` of ``model`` for the input
    ``x``, measured with forward hooks (removed afterwards)."""
    stds = []
    def measure(module, inputs, output):
        stds.append(output.std().item())

    handles = [m.register_forward_hook(measure)
               for m in model.modules() if isinstance(m, nn.ReLU)]
    try:
        with no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return stds


# ------------------------------------------------------------ exercise 1: predict, then run

DEPTH_CHOICES = {
    "a": "it stays about the same from layer 1 to layer 10",
    "b": "it shrinks, layer after layer, to a small fraction of layer 1's",
    "c": "it grows, layer after layer, to many times layer 1's",
}


def _depth_answer():
    """The right letter, measured on the lecture's network (seeded), and what was seen."""
    manual_seed(1)
    x = randn(512, 100)
    stds = layer_stds(relu_mlp(), x)
    shown = f"layer 1: {stds[0]:.2f}, layer 10: {stds[-1]:.2f}"
    if stds[-1] < stds[0] / 3:
        return "b", shown
    if stds[-1] > stds[0] * 3:
        return "c", shown
    return "a", shown


depth_prediction = Prediction(
    "Exercise 1", _depth_answer, choices=DEPTH_CHOICES,
    hint="Look at the chart: which way does each layer move the std, and by about how much?")
"""Exercise 1: what the activations' std does through the default-initialised 10-layer ReLU
network. ``depth_prediction.lock(letter)`` before the measurement, ``.reveal()`` after it."""


# ------------------------------------------------------------ exercise 2: an init for ReLU

_WIDTHS = [(40, 120), (120, 60), (60, 60), (60, 90), (90, 30), (30, 80), (80, 80), (80, 50),
           (50, 70), (70, 40), (40, 100), (100, 60)]


def _uneven_mlp(seed):
    """12 Linear + ReLU blocks whose widths change (so fan_in and fan_out differ)."""
    manual_seed(seed)
    layers = []
    for fan_in, fan_out in _WIDTHS:
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    return nn.Sequential(*layers)


def _refusing(original):
    """``original`` (an ``nn.init.kaiming_*``) for minigrad's own callers (``nn.Linear``'s
    default initialisation); ``_UsedKaiming`` for the learner's code."""
    def refuse(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if not caller.startswith("minigrad."):
            raise _UsedKaiming()
        return original(*args, **kwargs)
    return refuse


class _UsedKaiming(Exception):
    pass


@keeps_random_state
def check_relu_init(init_for_relu):
    """Exercise 2: ``init_for_relu(model)`` gives every ``nn.Linear`` of ``model`` a weight
    drawn from a normal distribution with mean 0 and the std that keeps the activations'
    size through ReLU layers (worked out, not taken from ``nn.init.kaiming_*``), and a zero
    bias."""
    title = "init_for_relu"
    failed = not_a_function(title, init_for_relu)
    if failed is not None:
        return failed
    model = _uneven_mlp(seed=5)
    before = [m.weight.detach().clone() for m in model.modules() if isinstance(m, nn.Linear)]
    try:
        with mock.patch.object(nn_init, "kaiming_normal_", _refusing(nn_init.kaiming_normal_)), \
                mock.patch.object(nn_init, "kaiming_uniform_", _refusing(nn_init.kaiming_uniform_)):
            init_for_relu(model)
    except _UsedKaiming:
        return CheckResult(False, f"{title}: it calls nn.init.kaiming_normal_ or "
                                  "kaiming_uniform_, which work it out for you. Work out the std "
                                  "yourself and draw with nn.init.normal_.")
    except Exception as error:  # the learner's code
        return CheckResult(False, f"{title}(model) raised {type(error).__name__}: {error}")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if all(layer.weight.equal(old) for layer, old in zip(linears, before)):
        return CheckResult(False, f"{title}: no weight changed yet. Draw each Linear's weight "
                                  "in place, with nn.init.normal_(layer.weight, ...), for every "
                                  "nn.Linear in model.modules().")
    for i, layer in enumerate(linears, start=1):
        fan_out, fan_in = layer.weight.shape
        w = layer.weight.detach().numpy().astype(float)
        want = math.sqrt(2.0 / fan_in)
        std = float(w.std())
        where = f"Linear {i} of 12 ({fan_in} in, {fan_out} out)"
        if abs(float(w.mean())) > 0.25 * want:
            return CheckResult(False, f"{title}: the weights of {where} have mean "
                                      f"{w.mean():.3f}; draw them around 0.")
        if abs(std - want) <= 0.15 * want:
            if layer.bias is not None and abs(layer.bias.detach().numpy()).max() > 0:
                return CheckResult(False, f"{title}: {where} still has a bias that is not zero. "
                                          "Set every bias to zero as well.")
            continue
        if abs(std - math.sqrt(2.0 / fan_out)) <= 0.1 * want and fan_in != fan_out:
            hint = ("it matches the number of outputs, not of inputs. Each output adds up "
                    "one product per input: the input count sets the variance forward.")
        elif abs(std - math.sqrt(1.0 / fan_in)) <= 0.1 * want:
            hint = ("that keeps the size through a Linear layer alone, but ReLU sets half "
                    "of the values to 0: what does that do to the mean of the squares?")
        elif abs(std - 1 / math.sqrt(3 * fan_in)) <= 0.1 * want and i > 1:
            hint = ("those look like the default initialisation: the function must draw new "
                    "weights for every Linear layer.")
        elif std < want:
            hint = "too small: the activations would shrink layer after layer."
        else:
            hint = "too large: the activations would grow layer after layer."
        return CheckResult(False, f"{title}: the weights of {where} have std {std:.3f}; "
                                  f"not right yet. Hint: {hint}")
    manual_seed(2)
    stds = layer_stds(model, randn(1000, 40))
    return CheckResult(True, f"{title}: correct! Through 12 ReLU layers of changing widths the "
                             f"std goes {stds[0]:.2f} → {stds[-1]:.2f}: the signal keeps "
                             "its size.")


# ------------------------------------------------------------ exercise 3: make it train

def two_rings(n=256, seed=0):
    """The chapter's data: ``n`` points of the plane (a float32 (n, 2) tensor) and their
    class (int64): 1 outside the circle of radius 1.18, 0 inside (about half each)."""
    manual_seed(seed)
    x = randn(n, 2)
    y = ((x ** 2).sum(1).sqrt() > 1.18).long()
    return x, y


@keeps_random_state
def check_deep_model(make_model):
    """Exercise 3: ``make_model()`` returns a network of at least 10 ``nn.Linear`` layers
    (2 inputs, 2 outputs) that reaches a loss below 0.2 on ``two_rings()`` in 60 steps of
    ``optim.SGD(lr=0.1, momentum=0.9)``, the lecture's training loop."""
    title = "make_model"
    failed = not_a_function(title, make_model)
    if failed is not None:
        return failed
    try:
        model = make_model()
    except Exception as error:  # the learner's code
        return CheckResult(False, f"{title}() raised {type(error).__name__}: {error}")
    if model is None:
        return CheckResult(False, f"{title}() returned None: build the network and return it "
                                  "(return nn.Sequential(...)).")
    if not isinstance(model, nn.Module):
        return CheckResult(False, f"{title}() returned {type(model).__name__}; return the "
                                  "network, an nn.Module (nn.Sequential(...)).")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if len(linears) < 10:
        return CheckResult(False, f"{title}: the network has {len(linears)} Linear layers; "
                                  "the exercise is about a deep one: keep at least 10.")
    x, y = two_rings()
    optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    losses = []
    try:
        for _ in range(60):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    except Exception as error:  # the learner's network
        return CheckResult(False, f"training {title}() raised {type(error).__name__}: {error} "
                                  "(2 inputs, 2 outputs: one score per class).")
    last = min(losses[-5:])
    if not math.isfinite(last):
        return CheckResult(False, f"{title}: the loss became {last}: the updates grew without "
                                  "bound. Look at the gradient norms per layer.")
    if last >= 0.2:
        flat = abs(losses[-1] - losses[0]) < 0.05
        hint = ("the loss hardly moved: the early layers get almost no gradient. What keeps "
                "the signal's size through depth?" if flat else
                "it learns, but not enough yet: look at the chart of gradient norms per layer.")
        return CheckResult(False, f"{title}: after 60 steps the loss is {last:.2f} (it must "
                                  f"be below 0.2). Hint: {hint}")
    return CheckResult(True, f"{title}: correct! {len(linears)} Linear layers, and the loss "
                             f"goes {losses[0]:.2f} → {last:.2f} in 60 steps.")


# ------------------------------------------------------------ build: clip_grad_norm_

register(Piece(name="clip_grad_norm", chapter="12", defines="clip_grad_norm_",
               summary="gradient clipping: nn.utils.clip_grad_norm_",
               plug=plug_clip, battery=clipping_battery,
               own={"nn.utils.clip_grad_norm_": OWN_CLIP}))
