"""Chapter 13 exercises: beyond one backward. The chapter is three lectures:
``notebooks/13a_forward_mode_and_jacobians.ipynb`` (exercise 1, a JVP rule: the learner's
``Hypot``, a custom ``autograd.Function`` with ``forward``, ``backward`` and ``jvp``,
``check_hypot``; exercise 2, predict, then run: ``VJP_COUNT``, how many backward passes a
Jacobian takes), ``notebooks/13b_gradients_of_gradients.ipynb`` (exercise 3,
``check_per_sample_norms``: per-sample gradient norms with ``vmap(grad(...))``) and
``notebooks/13c_checkpointing.ipynb`` (the build exercise).

Each check computes the right answer itself with minigrad (no PyTorch), never raises and
gives no solution away; each leaves the default random generator as it found it.

The build exercise (``teach.check_piece("checkpoint", checkpoint)``): the learner's
``checkpoint(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs)``,
PyTorch's ``torch.utils.checkpoint.checkpoint``, a custom Function that saves only its
inputs and recomputes the forward in backward, plugged in behind
``minigrad.utils.checkpoint.checkpoint``. Its battery lives in ``teach.checkpointing``.
"""

import inspect
import math

import numpy as np

from ... import nn
from ...autograd import Function, forward_ad
from ...creation import tensor
from ...dtypes import float64
from ...func import functional_call, grad, jacrev, vjp
from ...nn import functional as F
from ...random import manual_seed
from ..build import Piece, register
from ..checkpointing import OWN_CHECKPOINT, OWN_CLASSES, checkpointing_battery, plug_checkpoint
from ..checks import CheckResult, keeps_random_state, no_answer, not_a_function
from .. import style
from ..plots import Chart
from ..predictions import Prediction
from ...ops.shape import stack


__all__ = ["VJP_COUNT", "check_hypot", "check_per_sample_norms", "count_vjps",
           "jacobian_picture", "tiny_model", "tiny_batch"]


# ------------------------------------------------------------ exercise 1: a JVP rule

_POINTS = [((3.0, -1.0, 0.5), (4.0, 2.0, -1.5)), ((0.2, 5.0), (-0.7, 1.0))]


def _hypot_reference(x, y):
    """sqrt(x² + y²) in float64 with numpy: the values and the partial derivatives."""
    r = np.sqrt(x * x + y * y)
    return r, x / r, y / r


def _tangents(seed, n):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


def _hypot_values(Hypot, x, y, tx, ty):
    """``Hypot.apply`` on dual tensors (forward mode), then a backward: (value, tangent,
    grads) as float64 arrays."""
    a = tensor(x, dtype=float64, requires_grad=True)
    b = tensor(y, dtype=float64, requires_grad=True)
    with forward_ad.dual_level():
        out = Hypot.apply(forward_ad.make_dual(a, tensor(tx, dtype=float64)),
                          forward_ad.make_dual(b, tensor(ty, dtype=float64)))
        primal, tangent = forward_ad.unpack_dual(out)
    return primal, tangent, out


def check_hypot(Hypot):
    """Exercise 1: ``Hypot``, a custom ``Function`` for sqrt(x² + y²) with ``forward``,
    ``backward`` and ``jvp`` (PyTorch's API: ``ctx.save_for_forward``), checked against
    numpy's float64 formulas on dual tensors and with a backward."""
    title = "Hypot"
    if no_answer(Hypot):
        return CheckResult(False, f"{title}: no answer yet. Write the class in the cell above "
                                  "and run it, then run this check again.")
    if not (inspect.isclass(Hypot) and issubclass(Hypot, Function)):
        return CheckResult(False, f"{title}: expected a class, class Hypot(mg.autograd."
                                  f"Function): ..., got {type(Hypot).__name__}.")
    if "jvp" not in vars(Hypot):
        return CheckResult(False, f"{title}: it has no jvp yet. Add a @staticmethod "
                                  "jvp(ctx, x_tangent, y_tangent) that returns the output's "
                                  "tangent.")
    forward = getattr(vars(Hypot).get("forward"), "__func__", vars(Hypot).get("forward"))
    if inspect.isfunction(forward) and "save_for_forward" not in forward.__code__.co_names:
        return CheckResult(False, f"{title}: forward never calls ctx.save_for_forward(...). In "
                                  "PyTorch, ctx.saved_tensors inside jvp holds only what "
                                  "save_for_forward kept (save_for_backward is for backward): "
                                  "without it, jvp finds nothing there.")
    for seed, (xs, ys) in enumerate(_POINTS):
        x, y = np.array(xs), np.array(ys)
        tx, ty = _tangents(seed, len(x))
        r, dx, dy = _hypot_reference(x, y)
        try:
            primal, tangent, out = _hypot_values(Hypot, x, y, tx, ty)
        except Exception as error:  # the learner's code
            hint = ""
            if "tangents" in str(error):
                hint = (" jvp returns one tangent per output (here one tensor), not one per "
                        "input: the inputs' tangents combine into it.")
            elif "saved_tensors" in str(error) or "save_for_forward" in str(error):
                hint = (" jvp reads what forward kept with ctx.save_for_forward(...), as "
                        "backward reads ctx.save_for_backward(...).")
            return CheckResult(False, f"{title}.apply on dual tensors raised "
                                      f"{type(error).__name__}: {error}.{hint}")
        if not np.allclose(primal.detach().numpy(), r, rtol=1e-12):
            shown = np.round(primal.detach().numpy(), 4)
            return CheckResult(False, f"{title}: forward gives {shown} at x={xs}, y={ys}; "
                                      f"expected {np.round(r, 4)}.")
        want = dx * tx + dy * ty
        if tangent is None:
            return CheckResult(False, f"{title}: the output has no tangent: jvp returned None. "
                                      "Return the output's tangent, one tensor.")
        got = tangent.detach().numpy()
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-10, atol=1e-12):
            hint = _jvp_hint(got, x, y, r, tx, ty)
            return CheckResult(False, f"{title}: the tangent is {np.round(got, 4)}; expected "
                                      f"{np.round(want, 4)} (x={xs}, y={ys}).{hint}")
        try:
            weights = tensor(np.arange(1.0, len(x) + 1), dtype=float64)
            a = tensor(x, dtype=float64, requires_grad=True)
            b = tensor(y, dtype=float64, requires_grad=True)
            (Hypot.apply(a, b) * weights).sum().backward()
        except Exception as error:  # the learner's code
            return CheckResult(False, f"a backward through {title} raised "
                                      f"{type(error).__name__}: {error}.")
        w = np.arange(1.0, len(x) + 1)
        for name, leaf, partial in (("x", a, dx), ("y", b, dy)):
            if leaf.grad is None or not np.allclose(leaf.grad.numpy(), w * partial, rtol=1e-10):
                shown = None if leaf.grad is None else np.round(leaf.grad.numpy(), 4)
                return CheckResult(False, f"{title}: backward gives {name}.grad = {shown}; "
                                          f"expected {np.round(w * partial, 4)}. backward "
                                          "returns one gradient per input.")
    return CheckResult(True, f"{title}: correct! Its tangents and its gradients match the "
                             "formulas at 5 points: one forward pass with a tangent gives a "
                             "directional derivative.")


def _jvp_hint(got, x, y, r, tx, ty):
    if got.ndim == 2 or got.shape != x.shape:
        return (" jvp returns one tangent per output (here one tensor), not one per input: "
                "the inputs' tangents combine into it.")
    if np.allclose(got, x / r * tx, rtol=1e-10):
        return " Only x's tangent counts there: y moves too, with its own tangent."
    if np.allclose(got, y / r * ty, rtol=1e-10):
        return " Only y's tangent counts there: x moves too, with its own tangent."
    if np.allclose(got, (x * tx + y * ty), rtol=1e-10):
        return " Almost: what does the square root's derivative divide by?"
    if np.allclose(got, x / r + y / r, rtol=1e-10):
        return (" That is the gradient summed, without the tangents: each partial "
                "derivative multiplies its input's tangent.")
    return ""


# ------------------------------------------------------------ the picture of the two modes

def _grid(ax, left, bottom, rows, cols, colour=None, highlight=None, size=1.0):
    """A matrix of ``rows`` x ``cols`` cells with its lower left corner at (left, bottom);
    ``highlight``: ("row", i) or ("col", j), filled with ``colour``."""
    from matplotlib.patches import Rectangle
    for i in range(rows):
        for j in range(cols):
            lit = highlight is not None and (
                (highlight[0] == "row" and highlight[1] == i) or
                (highlight[0] == "col" and highlight[1] == j))
            ax.add_patch(Rectangle((left + j * size, bottom + (rows - 1 - i) * size), size, size,
                                   facecolor=colour if lit else "white", edgecolor="#444444",
                                   linewidth=1))


def jacobian_picture(outputs=4, inputs=6):
    """The lecture's picture: the Jacobian J (``outputs`` rows, ``inputs`` columns) met by a
    JVP (J t: one column per pass, forward mode) and by a VJP (uᵀ J: one row per pass,
    reverse mode). A ``teach.plots.Chart`` whose text lists what the picture says."""
    import matplotlib
    from matplotlib.figure import Figure
    m, n = outputs, inputs
    with matplotlib.rc_context(style.rc()):
        figure = Figure(figsize=(12, 4.2))
        grid = figure.add_gridspec(1, 2, width_ratios=[n + 5, m + 2 * n + 4])
        for k, mode in enumerate(("forward", "reverse")):
            ax = figure.add_subplot(grid[0, k])
            ax.set_aspect("equal")
            ax.axis("off")
            low = min(0.0, (m - n) / 2)
            if mode == "forward":
                _grid(ax, 0, 0, m, n, style.ORANGE, ("col", 1))
                ax.text(n + 0.6, m / 2, "×", fontsize=20, va="center", ha="center")
                _grid(ax, n + 1.2, (m - n) / 2, n, 1, style.ORANGE, ("row", 1))
                ax.text(n + 2.8, m / 2, "=", fontsize=20, va="center", ha="center")
                _grid(ax, n + 3.4, 0, m, 1, style.ORANGE, ("col", 0))
                ax.text(n / 2, low - 0.9, f"J: {m} outputs × {n} inputs", ha="center")
                ax.text(n + 1.7, low - 0.9, "t = e₂", ha="center")
                ax.text(n + 3.9, low - 0.9, "J t", ha="center")
                ax.set_title(f"forward mode: J t, a column per pass\n{n} JVPs for the whole J",
                             fontsize=13)
                ax.set_xlim(-0.5, n + 4.9)
            else:
                middle = m / 2 - 0.5
                _grid(ax, 0, middle, 1, m, style.BLUE, ("col", 1))
                ax.text(m + 0.6, m / 2, "×", fontsize=20, va="center", ha="center")
                _grid(ax, m + 1.2, 0, m, n, style.BLUE, ("row", 1))
                ax.text(m + n + 1.8, m / 2, "=", fontsize=20, va="center", ha="center")
                _grid(ax, m + n + 2.4, middle, 1, n, style.BLUE, ("row", 0))
                ax.text(m / 2, low - 0.9, "uᵀ = e₂ᵀ", ha="center")
                ax.text(m + 1.2 + n / 2, low - 0.9, f"J: {m} outputs × {n} inputs", ha="center")
                ax.text(m + 2 * n + 2.4 - n / 2, low - 0.9, "uᵀ J", ha="center")
                ax.set_title(f"reverse mode: uᵀ J, a row per pass\n{m} VJPs for the whole J",
                             fontsize=13)
                ax.set_xlim(-0.5, m + 2 * n + 2.9)
            ax.set_ylim(low - 1.6, max(m, (m + n) / 2) + 0.3)
        figure.tight_layout()
    summary = (f"The Jacobian J has {m} rows (outputs) and {n} columns (inputs).\n"
               f"  forward mode: one JVP J t gives one column: {n} passes for J\n"
               f"  reverse mode: one VJP uᵀ J gives one row: {m} passes for J\n"
               "  a loss has 1 row: reverse mode gets the whole gradient in 1 pass")
    return Chart(figure, summary, "Two drawings of a Jacobian matrix: on the left a tangent "
                                  "vector picks one column (forward mode); on the right a "
                                  "cotangent vector picks one row (reverse mode). " + summary)


# ------------------------------------------------------------ exercise 2: predict, then run

def count_vjps(function, x):
    """The Jacobian of ``function`` at ``x`` built row by row, one ``vjp`` per output
    element: ``(jacobian, number of vjp calls)``."""
    out, pullback = vjp(function, x)
    rows, calls = [], 0
    flat = out.reshape(-1)
    for i in range(flat.shape[0]):
        basis = np.zeros(flat.shape[0])
        basis[i] = 1.0
        (row,) = pullback(tensor(basis.reshape(tuple(out.shape)), dtype=out.dtype))
        calls += 1
        rows.append(row.reshape(-1))
    return stack(rows), calls


def _three_to_two_hundred(x):
    return (x[0] * tensor(np.linspace(-1, 1, 200)) + x[1] * x[2]).sin()


def _measure_vjp_count():
    x = tensor([0.3, -0.2, 0.5], dtype=float64)
    jac, calls = count_vjps(_three_to_two_hundred, x)
    same = np.allclose(jac.numpy(), jacrev(_three_to_two_hundred)(x).numpy(), rtol=1e-12)
    return calls, f"{calls} VJPs, a ({jac.shape[0]}, {jac.shape[1]}) Jacobian" + \
        ("" if same else " (not jacrev's)")


VJP_COUNT = Prediction(
    "Exercise 2", _measure_vjp_count,
    hint="A VJP gives one row of the Jacobian: how many rows does it have?")


# ------------------------------------------------------------ exercise 3: per-sample norms

def tiny_model():
    """The lecture's model for per-sample gradients: Linear(5, 8), Tanh, Linear(8, 3)."""
    manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


def tiny_batch(n=6):
    """``n`` examples of 5 numbers and their classes (0, 1 or 2), float32 and int64."""
    rng = np.random.default_rng(1)
    return (tensor(rng.standard_normal((n, 5)).astype(np.float32)),
            tensor(rng.integers(0, 3, n)))


def _reference_norms(model, x, y):
    """The norm of each example's gradient (all parameters together), by a loop."""
    norms = []
    for i in range(x.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        norms.append(math.sqrt(sum(float((p.grad.numpy().astype(float) ** 2).sum())
                                   for p in model.parameters())))
    model.zero_grad()
    return np.array(norms)


@keeps_random_state
def check_per_sample_norms(per_sample_norms):
    """Exercise 3: ``per_sample_norms(model, x, y)`` returns a tensor of shape (n,): the norm
    of each example's gradient of the cross-entropy loss, all parameters together, computed
    with ``vmap(grad(...))`` and ``functional_call``."""
    title = "per_sample_norms"
    refused = not_a_function(title, per_sample_norms)
    if refused is not None:
        return refused
    for n in (6, 4):
        model = tiny_model()
        x, y = tiny_batch(n)
        want = _reference_norms(model, x, y)
        try:
            got = per_sample_norms(model, x, y)
        except Exception as error:  # the learner's code
            return CheckResult(False, f"{title}(model, x, y) raised {type(error).__name__}: "
                                      f"{error}")
        if got is None or not hasattr(got, "shape"):
            return CheckResult(False, f"{title} returned {type(got).__name__}: return a tensor "
                                      "of shape (n,), one norm per example.")
        values = got.detach().numpy().astype(float) if hasattr(got, "detach") else np.asarray(got)
        if tuple(values.shape) != (n,):
            return CheckResult(False, f"{title}: shape {tuple(values.shape)} for a batch of {n}; "
                                      f"expected ({n},), one norm per example.")
        if not np.allclose(values, want, rtol=1e-4, atol=1e-6):
            hint = _norms_hint(values, want, model, x, y)
            return CheckResult(False, f"{title}: got {np.round(values, 4)}, expected "
                                      f"{np.round(want, 4)}.{hint}")
        if any(p.grad is not None and float(abs(p.grad.numpy()).sum()) > 0
               for p in model.parameters()):
            return CheckResult(False, f"{title}: it left gradients in the model's .grad: "
                                      "vmap(grad(...)) returns them and touches no .grad.")
    if "vmap" not in _names_used(per_sample_norms):
        return CheckResult(False, f"{title}: the numbers are right, but it does not use vmap. "
                                  "The exercise is the vectorised way: vmap over grad of the "
                                  "loss of one example.")
    return CheckResult(True, f"{title}: correct! One norm per example, "
                             f"{np.round(want, 3).tolist()} for the last batch, with no loop.")


def _names_used(function, depth=2):
    """The global names ``function``'s code reads, and those of the functions of its own
    module it calls (a helper cell), ``depth`` levels down."""
    names, todo, seen = set(), [(function, 0)], set()
    while todo:
        current, level = todo.pop()
        code = getattr(current, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        stack = [code]
        while stack:
            c = stack.pop()
            names |= set(c.co_names)
            stack.extend(k for k in c.co_consts if inspect.iscode(k))
            for name in c.co_names:
                value = current.__globals__.get(name)
                if level < depth and inspect.isfunction(value) and \
                        value.__module__ == current.__module__:
                    todo.append((value, level + 1))
    return names


def _norms_hint(values, want, model, x, y):
    everything = math.sqrt(sum(float((g.numpy().astype(float) ** 2).sum())
                               for g in _summed_grads(model, x, y)))
    if np.allclose(values, everything, rtol=1e-4):
        return (" Every example got the same number, the norm of the batch's gradient: the "
                "loss was summed or averaged over the batch before differentiating, which "
                "adds the examples' gradients together.")
    if np.allclose(values, want ** 2, rtol=1e-4):
        return " Those are squared norms: take the square root."
    if np.allclose(values, want / x.shape[0], rtol=1e-4):
        return (" Each is divided by the batch size: a loss of one example, as vmap sees it, "
                "is that example's loss.")
    return (" Add up the squares of every parameter's per-example gradient (weights and "
            "biases of both layers), then take the square root, one number per example.")


def _summed_grads(model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p):
        return F.cross_entropy(functional_call(model, p, (x,)), y)
    return list(grad(loss)(params).values())


# ------------------------------------------------------------ build: checkpoint

register(Piece(name="checkpoint", chapter="13", defines="checkpoint",
               summary="activation checkpointing: utils.checkpoint.checkpoint",
               plug=plug_checkpoint, battery=checkpointing_battery,
               own={"utils.checkpoint.checkpoint": OWN_CHECKPOINT, **OWN_CLASSES}))
