"""The check of chapter 12's build exercise: a learner's ``clip_grad_norm_``, PyTorch's
``torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=2.0,
error_if_nonfinite=False, foreach=None)``.

``plug_clip(fn)`` swaps it in for ``nn.utils.clip_grad_norm_``; ``clipping_battery(fn)``
runs it next to minigrad's own on the same gradients (lists, a generator, one tensor,
parameters without a gradient, norms 1, 2, 3 and inf, float32 and float64, an inf gradient,
no gradient at all, ``error_if_nonfinite``) and in a short training run, and raises
``build.Mismatch`` at the first difference with a message that names the mistake without
giving the code. ``teach.exercises.ch12`` registers the piece.
"""

import contextlib
import math
import warnings
from unittest import mock

import numpy as np

from .. import nn
from ..creation import tensor
from ..dtypes import float32, float64
from ..nn import functional as F
from ..nn import utils as nn_utils
from ..optim import SGD
from ..random import manual_seed
from .. import Tensor
from .build import Mismatch, attempt, own_out_of_reach, same_dtype, show
from .checks import keeps_random_state

__all__ = ["OWN_CLIP", "clipping_battery", "plug_clip"]

# minigrad's own, whatever nn.utils.clip_grad_norm_ is while a piece is plugged in
OWN_CLIP = nn_utils.clip_grad_norm_
_OUT_OF_REACH = {nn_utils: [("clip_grad_norm_", "nn.utils.clip_grad_norm_")]}


@contextlib.contextmanager
def plug_clip(clip):
    """Inside the block ``nn.utils.clip_grad_norm_`` is the learner's ``clip``."""
    with mock.patch.object(nn_utils, "clip_grad_norm_", clip):
        yield


# ------------------------------------------------------------------ the cases

_SHAPES = [(3, 4), (4,), (2, 3, 2), ()]


def _make(seed, dtype=float32, scale=1.0, without_grad=(), shapes=_SHAPES, inf_at=None):
    """Parameters (leaves that require grad) with seeded gradients; those at the indices
    ``without_grad`` have none (a frozen or unused parameter)."""
    rng = np.random.default_rng(seed)
    params = []
    for i, shape in enumerate(shapes):
        p = tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)
        if i not in without_grad:
            g = rng.standard_normal(shape) * scale
            if inf_at == i:
                g.reshape(-1)[0] = np.inf
            p.grad = tensor(g, dtype=dtype)
        params.append(p)
    return params


_CASES = [
    # (what the message calls it, how to make the parameters, max_norm, keyword arguments,
    #  how they are passed: "list", "generator" or "single")
    ("4 gradients of total norm about 7, max_norm=1.0", dict(seed=1, scale=2.0), 1.0, {}, "list"),
    ("4 gradients of total norm about 0.7, max_norm=5.0 (nothing to clip)",
     dict(seed=2, scale=0.2), 5.0, {}, "list"),
    ("float64 gradients, max_norm=1.0", dict(seed=3, dtype=float64, scale=2.0), 1.0, {}, "list"),
    ("a parameter without a gradient among 4", dict(seed=4, scale=2.0, without_grad=(1,)),
     1.0, {}, "list"),
    ("model.parameters(), a generator", dict(seed=5, scale=2.0), 1.0, {}, "generator"),
    ("one tensor, not a list", dict(seed=6, scale=3.0, shapes=[(5, 3)]), 2.0, {}, "single"),
    ("norm_type=1", dict(seed=7, scale=2.0), 3.0, {"norm_type": 1}, "list"),
    ("norm_type=3", dict(seed=8, dtype=float64, scale=2.0), 1.0, {"norm_type": 3.0}, "list"),
    ("norm_type=inf", dict(seed=9, dtype=float64, scale=2.0), 0.5, {"norm_type": math.inf},
     "list"),
    ("norm_type='inf'", dict(seed=10, scale=2.0), 0.5, {"norm_type": "inf"}, "list"),
    ("max_norm=2 (an int)", dict(seed=11, dtype=float64, scale=2.0), 2, {}, "list"),
    ("an inf in one gradient", dict(seed=12, inf_at=2), 1.0, {}, "list"),
    ("parameters that all have no gradient", dict(seed=13, without_grad=(0, 1, 2, 3)), 1.0,
     {}, "list"),
]


def _passed_as(params, how):
    if how == "single":
        return params[0]
    if how == "generator":
        return (p for p in params)
    return list(params)


def _run_own(case):
    what, made, max_norm, kwargs, how = case
    params = _make(**made)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        total = OWN_CLIP(_passed_as(params, how), max_norm, **kwargs)
    return params, total


def _mine(what, function, hint=None):
    """A call of the learner's function, with minigrad's own out of reach."""
    with own_out_of_reach(_OUT_OF_REACH), np.errstate(all="ignore"):
        return attempt(what, function, hint)


def _error_hint(how):
    def hint(error):
        if (isinstance(error, (RuntimeError, ValueError, IndexError))
                and "stack" in str(error).lower()):
            return (" With no gradient at all there is nothing to stack: PyTorch returns "
                    "the total norm 0 as a tensor, mg.tensor(0.0), and changes nothing.")
        if isinstance(error, AttributeError) and "NoneType" in str(error):
            return (" A parameter may have no gradient (p.grad is None: frozen, or not used "
                    "by the loss): leave it out, as PyTorch does.")
        if how == "single":
            return (" PyTorch also accepts a single tensor instead of a list of them: "
                    "treat it as a list of one.")
        return ""
    return hint


def _numbers(t):
    return t.detach().numpy().astype(float)


def _total_hint(got, grads, max_norm, kwargs, want):
    """What a wrong total norm most likely is (``grads``: the gradients before clipping)."""
    norm_type = float(kwargs.get("norm_type", 2.0))
    flat = np.concatenate([g.reshape(-1) for g in grads]) if grads else np.zeros(0)
    with np.errstate(all="ignore"):
        if math.isclose(got, min(float(want), max_norm), rel_tol=1e-4) and want > max_norm:
            return (" That is the norm after clipping: return the total norm measured "
                    "before the gradients are scaled.")
        if norm_type == 2 and math.isclose(got, float(want) ** 2, rel_tol=1e-4):
            return " That is the square of the norm: the norm is the square root of it."
        if norm_type != 2 and math.isclose(got, float(np.sqrt((flat ** 2).sum())), rel_tol=1e-4):
            return (f" That is the 2-norm: norm_type={kwargs.get('norm_type')!r} asks for "
                    "another one.")
        if math.isinf(norm_type):
            return (" For norm_type=inf the norm is not a sum: it is the largest |g| of all "
                    "the gradients.")
        each = [float((np.abs(g) ** norm_type).sum() ** (1 / norm_type)) for g in grads]
        if each and any(math.isclose(got, e, rel_tol=1e-4) for e in each):
            return (" That is the norm of one gradient: the total norm treats all gradients "
                    "together as one long vector.")
        if each and math.isclose(got, sum(each), rel_tol=1e-4):
            return (" That is the sum of the gradients' norms: combine them as the entries "
                    "of one long vector are combined (the norm of the norms).")
        if flat.size and math.isclose(got, float(np.sqrt((flat ** 2).mean())), rel_tol=1e-4):
            return (" That is a root mean square: the norm adds up the squares, it does not "
                    "average them.")
    return ""


def _grad_hint(got, want, before, total, max_norm, what):
    """What wrong gradients most likely are (arrays per parameter)."""
    coefficient = max_norm / (total + 1e-6)
    if all(np.allclose(g, b, rtol=1e-6, atol=1e-12, equal_nan=True) for g, b in zip(got, before)):
        return (" They were not changed at all. Scale each p.grad in place when the total "
                "norm is above max_norm."
                + (" parameters may be a generator (model.parameters()), which can be read "
                   "only once: make a list of it first." if "generator" in what else ""))
    if total < max_norm:
        return (" The total norm is already below max_norm here: PyTorch never scales "
                "gradients up (the factor is at most 1).")
    with np.errstate(all="ignore"):
        exact = [b * (max_norm / total) for b in before]
        if all(np.allclose(g, e, rtol=1e-12, atol=0) for g, e in zip(got, exact)) and \
                not all(np.allclose(g, w, rtol=1e-12, atol=0) for g, w in zip(got, want)):
            return (" They are scaled by max_norm / total_norm exactly; PyTorch divides by "
                    "total_norm + 1e-6, so that a zero norm never divides by zero.")
        clamped = [np.clip(b, -max_norm, max_norm) for b in before]
        if all(np.allclose(g, c, rtol=1e-6, atol=1e-9) for g, c in zip(got, clamped)):
            return (" Each number was clamped on its own, which changes the gradient's "
                    "direction (that is clip_grad_value_): scale all gradients by one factor.")
        own_norms = [np.sqrt((g ** 2).sum()) for g in got]
        if all(n <= max_norm * (1 + 1e-5) for n in own_norms) and sum(
                math.isclose(n, max_norm, rel_tol=1e-4) for n in own_norms) > 1:
            return (" Each gradient was clipped to max_norm on its own: clip them all by one "
                    "factor, from the total norm of all of them together.")
    return f" (the right factor here is {coefficient:.6g})"


def _check_case(clip, case):
    what, made, max_norm, kwargs, how = case
    own_params, own_total = _run_own(case)
    params = _make(**made)
    before = [None if p.grad is None else _numbers(p.grad) for p in params]
    grads = [p.grad for p in params]
    values = [_numbers(p) for p in params]
    shown = f"clip_grad_norm_ with {what}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        total = _mine(shown, lambda: clip(_passed_as(params, how), max_norm, **kwargs),
                      _error_hint(how))
    if total is None:
        raise Mismatch(f"{shown} returned None: return the total norm of the gradients (before "
                       "clipping), as a tensor, as PyTorch does.")
    if not isinstance(total, Tensor):
        raise Mismatch(f"{shown} returned {type(total).__name__}: return the total norm as a "
                       "tensor (0-dimensional), as PyTorch does, not a Python number.")
    if tuple(total.shape) != ():
        raise Mismatch(f"{shown} returned a tensor of shape {tuple(total.shape)}: the total "
                       "norm is one number, a 0-dimensional tensor.")
    same_dtype(f"the total norm {shown}", total, own_total)
    if total.requires_grad:
        raise Mismatch(f"{shown} returned a total norm that requires grad: it is a measurement, "
                       "not part of a graph (PyTorch's runs under no_grad).")
    got, want = float(total.item()), float(own_total.item())
    rtol = 1e-10 if made.get("dtype") is float64 else 1e-5
    if not (math.isclose(got, want, rel_tol=rtol) or (math.isnan(got) and math.isnan(want))
            or got == want):
        if how == "single" and got == 0:
            hint = (" PyTorch also accepts a single tensor instead of a list of them (iterating "
                    "over a tensor gives its rows, which have no gradient): treat it as a list "
                    "of one.")
        else:
            hint = _total_hint(got, [b for b in before if b is not None], float(max_norm),
                               kwargs, want)
        raise Mismatch(f"{shown} returned the total norm {got:.6g}; expected {want:.6g}.{hint}")
    for p, g, value in zip(params, grads, values):
        if not np.array_equal(_numbers(p), value):
            raise Mismatch(f"{shown} changed the parameters themselves: clip_grad_norm_ scales "
                           "their gradients (p.grad) and leaves the weights to the optimizer.")
        if g is None and p.grad is not None:
            raise Mismatch(f"{shown} gave a gradient to a parameter that had none: leave "
                           "p.grad None where it was None.")
        if g is not None and p.grad is not g:
            raise Mismatch(f"{shown} replaced p.grad by a new tensor: scale the gradient in "
                           "place, as PyTorch does (an in-place multiply), so that everything "
                           "holding that gradient sees the clipped one.")
    got_grads = [_numbers(p.grad) for p in params if p.grad is not None]
    want_grads = [_numbers(p.grad) for p in own_params if p.grad is not None]
    kept = [b for b in before if b is not None]
    for p, own in zip(params, own_params):
        if p.grad is not None:
            same_dtype(f"p.grad after {shown}", p.grad, own.grad)
    tol = (1e-12, 1e-15) if made.get("dtype") is float64 else (1e-6, 1e-9)
    if not all(np.allclose(g, w, rtol=tol[0], atol=tol[1], equal_nan=True)
               for g, w in zip(got_grads, want_grads)):
        hint = _grad_hint(got_grads, want_grads, kept, want, float(max_norm), what) \
            if math.isfinite(want) else ""
        first = next(i for i, (g, w) in enumerate(zip(got_grads, want_grads))
                     if not np.allclose(g, w, rtol=tol[0], atol=tol[1], equal_nan=True))
        raise Mismatch(f"{shown}: the gradients after clipping differ from PyTorch's (the "
                       f"gradient of parameter {first}: got {show(got_grads[first])[:80]}, "
                       f"expected {show(want_grads[first])[:80]}).{hint}")


def _check_nonfinite(clip):
    """``error_if_nonfinite=True`` with an inf gradient: RuntimeError, as PyTorch."""
    params = _make(seed=14, inf_at=0)
    shown = "clip_grad_norm_(..., error_if_nonfinite=True) with an inf in a gradient"
    try:
        with own_out_of_reach(_OUT_OF_REACH), np.errstate(all="ignore"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clip(params, 1.0, error_if_nonfinite=True)
    except RuntimeError:
        return
    except Mismatch:
        raise
    except Exception as error:
        raise Mismatch(f"{shown} raised {type(error).__name__}: {error}. PyTorch raises "
                       "RuntimeError there, saying the total norm is not finite.") from None
    raise Mismatch(f"{shown} did not raise: with error_if_nonfinite=True PyTorch raises "
                   "RuntimeError when the total norm is nan or inf, before changing anything.")


def _tiny_model():
    manual_seed(3)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 2))


def _train(steps=8):
    """The losses of a short run with nn.utils.clip_grad_norm_ (whatever it is now)."""
    model = _tiny_model()
    manual_seed(4)
    x = tensor(np.random.default_rng(4).standard_normal((32, 2)) * 3, dtype=float32)
    y = (x[:, 0] * x[:, 1] > 0).long()
    optimizer = SGD(model.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        losses.append(float(nn_utils.clip_grad_norm_(model.parameters(), max_norm=0.5)))
        optimizer.step()
    return losses


def _check_training(clip):
    """Eight steps of a small network with the piece plugged in behind
    ``nn.utils.clip_grad_norm_``: the same norms as with minigrad's own."""
    want = _train()
    with plug_clip(clip), np.errstate(all="ignore"):  # the plug stands where minigrad's own was
        got = attempt("a training run with nn.utils.clip_grad_norm_ plugged in", _train)
    if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        raise Mismatch("in a training run with your clip_grad_norm_ plugged in behind "
                       "nn.utils.clip_grad_norm_, the norms per step are "
                       f"{np.round(got, 4).tolist()}; "
                       f"with minigrad's own {np.round(want, 4).tolist()}.")


@keeps_random_state
def clipping_battery(clip):
    """Every case of ``_CASES`` against minigrad's own, ``error_if_nonfinite``, then a short
    training run with the piece plugged in."""
    if not callable(clip):
        raise Mismatch(f"expected a function, def clip_grad_norm_(parameters, max_norm, "
                       f"norm_type=2.0, error_if_nonfinite=False, foreach=None): ..., got "
                       f"{type(clip).__name__}.")
    for case in _CASES:
        _check_case(clip, case)
    _check_nonfinite(clip)
    _check_training(clip)
    return (f"{len(_CASES)} cases (a list, a generator, one tensor, parameters without a "
            "gradient, norms 1, 2, 3 and inf, float32 and float64, an inf gradient, no "
            "gradient at all), error_if_nonfinite=True, and 8 training steps with it plugged "
            "in")
