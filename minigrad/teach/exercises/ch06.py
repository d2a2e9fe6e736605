"""Exercise checks for chapter 6 (modules), both parts (``notebooks/06a_*.ipynb`` and
``notebooks/06b_*.ipynb``): ``from minigrad.teach.exercises import ch06``.

Exercise 1 (part 1) asks which tensors a module registers; exercises 2 and 3 (part 2) count
and name the parameters of ``nn.Sequential`` models. Each function takes the learner's
answer, builds the right answer itself with minigrad and returns a ``CheckResult`` (prints ✓
or ✗ with a hint); none of them raises.

The build exercise (``teach.check_piece("linear", Linear)``): the learner's own
``class Linear(nn.Module)``, plugged in as ``minigrad.nn.Linear``.
"""

import contextlib
import inspect
import math
import warnings
from unittest import mock

import numpy as np

from ... import creation, dtypes, nn
from ...nn import functional as F
from ...graph import no_grad
from ...nn.layers import Linear as _OwnLinear  # minigrad's own, whatever nn.Linear is now
from ...random import manual_seed
from ... import Tensor
from ..build import Mismatch, Piece, attempt, register, same_dtype
from ..checks import CheckResult, keeps_random_state, no_answer
from ..predictions import Prediction

__all__ = ["Scorer", "check_registered_parameters", "exercise_mlp", "exercise_nested_model",
           "count_prediction", "check_parameter_names"]


# ---------------------------------------------------------------- exercise 1: registration

class Scorer(nn.Module):
    """Exercise 1's module, as the notebook prints it: a Linear without bias, a Parameter,
    a plain tensor that requires grad (not registered), and a Linear with bias."""

    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 3, bias=False)
        self.gain = nn.Parameter(creation.ones(3))
        self.offset = creation.zeros(3, requires_grad=True)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.features(x) * self.gain + self.offset)


def _as_shape(shape):
    """(3, 4) from (3, 4), [3, 4], mg.Size([3, 4]); (3,) from 3; None if it is no shape."""
    if isinstance(shape, bool):
        return None
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        return None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        return None
    return tuple(int(d) for d in dims)


@keeps_random_state
def check_registered_parameters(registered):
    """Exercise 1: ``{name: shape}`` of what ``Scorer().named_parameters()`` lists (any
    order). Each wrong answer gets the hint of the section whose idea it misses."""
    title = "registered parameters"
    if no_answer(registered):
        return CheckResult(False, f"{title}: no answer yet. Write the dictionary in the cell "
                                  "above and run it, then run this check again.")
    if not isinstance(registered, dict) or not all(isinstance(k, str) for k in registered):
        return CheckResult(False, f"{title}: expected a dictionary from name to shape, such as "
                                  "{'layer.weight': (5, 7), 'layer.bias': (5,)}.")
    expected = {name: tuple(p.shape) for name, p in Scorer().named_parameters()}
    names = set(registered)
    if any(name.split(".")[-1] == "offset" for name in names):
        return CheckResult(False, f"{title}: offset is not registered. Hint: a plain tensor "
                                  "assigned as an attribute is not a Parameter, even with "
                                  "requires_grad=True (section 3): an optimizer would never "
                                  "update it.")
    if "features.bias" in names:
        return CheckResult(False, f"{title}: look again at how features is made: does that "
                                  "layer have a bias?")
    bare = sorted(name for name in names if name in ("weight", "bias"))
    if bare:
        return CheckResult(False, f"{title}: {bare[0]!r} alone does not say which layer it "
                                  "belongs to. Hint: a sub-module's parameters are named by "
                                  "their path: the attribute name, a dot, then the parameter's "
                                  "name (section 4).")
    unknown = sorted(names - set(expected))
    if unknown:
        return CheckResult(False, f"{title}: Scorer has no parameter called {unknown[0]!r}. "
                                  "Hint: a name is the attribute name in __init__, and for a "
                                  "sub-module a dot and the parameter's own name.")
    missing = [name for name in expected if name not in names]
    if missing == ["gain"]:
        return CheckResult(False, f"{title}: one registered tensor is missing. Hint: what "
                                  "does assigning an nn.Parameter as an attribute do "
                                  "(section 3)?")
    if missing:
        return CheckResult(False, f"{title}: {len(missing)} registered tensor(s) missing. "
                                  "Hint: every nn.Parameter and every parameter of a "
                                  "sub-module assigned in __init__ is registered.")
    for name, want in expected.items():
        got = _as_shape(registered[name])
        if got is None:
            return CheckResult(False, f"{title}: the shape of {name!r} should be a tuple of "
                                      "sizes, such as (5, 7) or (5,).")
        if got != want:
            if got == want[::-1]:
                return CheckResult(False, f"{title}: the shape of {name!r} is the wrong way "
                                          "round. Hint: a Linear's weight has shape "
                                          "(out_features, in_features), outputs first "
                                          "(section 1).")
            return CheckResult(False, f"{title}: the shape of {name!r} is not right yet. "
                                      "Hint: nn.Linear(in, out) holds a weight (out, in) and "
                                      "a bias (out,).")
    return CheckResult(True, f"{title}: correct!")


# ---------------------------------------------------------------- exercises 2 and 3


def exercise_mlp():
    """Exercise 2's network: 3 inputs, two hidden layers of 8, one output."""
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))


def _count_answer():
    """How many numbers ``exercise_mlp()`` learns, counted with ``parameters()``."""
    count = sum(p.numel() for p in exercise_mlp().parameters())
    return count, f"sum(p.numel() for p in net.parameters()) is {count}"


def _count_hint(predicted, answer):
    weights_only = sum(p.numel() for name, p in exercise_mlp().named_parameters()
                       if name.endswith("weight"))
    if predicted == weights_only:
        return "Hint: you counted the weight matrices only; every Linear here also has a bias."
    return ("Hint: a Linear(n_in, n_out) holds a weight of shape (n_out, n_in) and a bias of "
            "shape (n_out,); Tanh learns nothing.")


count_prediction = Prediction("Exercise 2", _count_answer, tol=0, hint=_count_hint)
"""Exercise 2, predict, then run: how many numbers ``exercise_mlp()`` learns, worked out from
the layer sizes and locked in (``count_prediction.lock(...)``, arithmetic on numbers is
fine) before ``parameters()`` counts them; ``count_prediction.reveal()`` compares."""


def exercise_nested_model():
    """Exercise 3's model: a Sequential with a Sequential inside."""
    return nn.Sequential(
        nn.Linear(4, 3),
        nn.ReLU(),
        nn.Sequential(nn.Linear(3, 3), nn.Tanh()),
        nn.Linear(3, 1, bias=False),
    )


@keeps_random_state
def check_parameter_names(names):
    """Exercise 3: the names ``named_parameters()`` gives, in order."""
    title = "parameter names"
    if no_answer(names):
        return CheckResult(False, f"{title}: no answer yet. Write the list in the cell above "
                                  "and run it, then run this check again.")
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        return CheckResult(False, f"{title}: expected a list of strings such as "
                                  "['a.weight', ...].")
    names = list(names)
    expected = [name for name, _ in exercise_nested_model().named_parameters()]
    if names == expected:
        return CheckResult(True, f"{title}: correct!")
    if sorted(names) == sorted(expected):
        return CheckResult(False, f"{title}: the right names, in the wrong order. Hint: "
                                  "named_parameters() walks the modules in the order they were "
                                  "added, and a layer's weight comes before its bias.")
    if len(names) != len(expected):
        return CheckResult(False, f"{title}: {len(names)} name(s), but the model has "
                                  f"{len(expected)} parameter tensors. Hint: ReLU and Tanh hold "
                                  "no parameters, and look at the last layer's bias argument.")
    wrong = [n for n, e in zip(names, expected) if n != e]
    return CheckResult(False, f"{title}: {wrong[0]!r} is not right yet. Hint: a name is the "
                              "path of positions from the outer Sequential down to the layer, "
                              "joined by dots, then the parameter's own name.")


# ---------------------------------------------------------------- build: nn.Linear

_SIZES = [(5, 2), (3, 8), (16, 4), (1, 1), (64, 10)]  # (in_features, out_features)
_BATCHES = [(), (4,), (2, 3)]  # leading shapes of the inputs: one sample, a batch, a grid
_SEEDS = [0, 1, 7]

# PyTorch's signature, written down: nn.Linear(in_features, out_features, bias=True,
# device=None, dtype=None) (tests compare it with the installed torch's).
PYTORCH_LINEAR_SIGNATURE = (
    "__init__(self, in_features, out_features, bias=True, device=None, dtype=None)")
PYTORCH_LINEAR_ARGUMENTS = ("in_features", "out_features")
PYTORCH_LINEAR_DEFAULTS = {"bias": True, "device": None, "dtype": None}


@contextlib.contextmanager
def _plug_linear(Linear):
    """``minigrad.nn.Linear`` is the learner's class inside the block: every
    ``nn.Linear(...)`` (the chapters' models, ``nn.Sequential(nn.Linear(2, 16), ...)``)
    builds one of the learner's layers."""
    with mock.patch.object(nn, "Linear", Linear):
        yield


def _bool_hint(error):
    if "ambiguous" in str(error):
        return (" Hint: a tensor of several numbers is neither true nor false: test "
                "'self.bias is not None', not 'if self.bias'.")
    if "bias" in str(error) and isinstance(error, AttributeError):
        return " Hint: with bias=False set self.bias = None, so that the attribute still exists."
    if "before Module.__init__" in str(error) or "_parameters" in str(error):
        return " Hint: call super().__init__() first in __init__."
    return ""


def _build(Linear, n_in, n_out, bias=True, **keywords):
    args = f"{n_in}, {n_out}" + ("" if bias else ", bias=False") + "".join(
        f", {k}={_show_dtype(v)}" for k, v in keywords.items())
    return attempt(f"Linear({args})", lambda: Linear(n_in, n_out, bias=bias, **keywords),
                    _bool_hint)


def _show_dtype(value):
    """mg.float64, as a learner writes it in a call."""
    return str(value).replace("minigrad.", "mg.") if value is not None else "None"


def _dtype_name(value):
    """float64, as build.same_dtype names a dtype."""
    return str(value).replace("minigrad.", "")


def _check_signature(Linear):
    """``__init__`` takes nn.Linear's arguments, with PyTorch's defaults."""
    try:
        signature = inspect.signature(Linear)
    except (TypeError, ValueError):
        return
    params = signature.parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return  # **kwargs: the calls below show what it does with them
    positional = [name for name, p in params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if tuple(positional[:2]) != PYTORCH_LINEAR_ARGUMENTS and not any(
            p.kind is p.VAR_POSITIONAL for p in params.values()):
        raise Mismatch(f"Linear{signature} does not take nn.Linear's arguments "
                       f"{', '.join(PYTORCH_LINEAR_ARGUMENTS)} first: code calls "
                       "nn.Linear(in_features=2, out_features=16) too. nn.Linear's is "
                       f"{PYTORCH_LINEAR_SIGNATURE}.")
    for name, default in PYTORCH_LINEAR_DEFAULTS.items():
        if name not in params:
            raise Mismatch(f"Linear{signature} has no keyword {name}: nn.Linear's is "
                           f"{PYTORCH_LINEAR_SIGNATURE}, and code written for PyTorch passes "
                           f"{name}=... .")
        if params[name].default is not default:
            got = ("no default" if params[name].default is inspect.Parameter.empty
                   else f"the default {params[name].default!r}")
            raise Mismatch(f"Linear's {name} has {got}; nn.Linear's is {name}={default!r} "
                           f"({PYTORCH_LINEAR_SIGNATURE}): nn.Linear(5, 2) must build the "
                           "same layer as PyTorch's.")


def _first_difference(got, want, rtol, atol):
    """'at [0, 1]: expected 0.1234, got 0.5678' for the first element that differs."""
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    where = f" at {list(index)}" if index else ""
    return f"{where}: expected {float(want[index]):.6g}, got {float(got[index]):.6g}"


def _not_registered(layer, call, names):
    """A Mismatch when some of ``names`` are attributes of ``layer`` but no Parameters (plain
    tensors that require grad, numpy arrays): the module does not register them."""
    found = [(name, vars(layer)[name]) for name in names
             if vars(layer).get(name) is not None and name not in layer._parameters]
    if not found:
        return None
    if len(found) > 1:
        what = f"{call}.{found[0][0]} and .{found[1][0]} are plain tensors"
        if not all(isinstance(value, Tensor) for _, value in found):
            what = f"{call}.{found[0][0]} and .{found[1][0]} are no Parameters"
        return Mismatch(f"{what}, not nn.Parameters, so the module does not register them: "
                        "parameters() does not list them, an optimizer would never update "
                        "them and state_dict() would not save them (06a, section 3). Wrap "
                        "each in nn.Parameter(...) when you assign it.")
    name, value = found[0]
    kind = "a plain tensor" if isinstance(value, Tensor) else f"a {type(value).__name__}"
    return Mismatch(f"{call}.{name} is {kind}, not an nn.Parameter, so the module does not "
                    f"register it: parameters() does not list it, an optimizer would never "
                    f"update it and state_dict() would not save it (06a, section 3). Wrap it "
                    "in nn.Parameter(...) when you assign it.")


def _check_registered(layer, n_in, n_out, bias, dtype=None):
    """Its parameters: names (in order), Parameters, shapes, dtype; no bias if not asked."""
    call = f"Linear({n_in}, {n_out}" + ("" if bias else ", bias=False") + (
        f", dtype={_show_dtype(dtype)})" if dtype is not None else ")")
    names = [name for name, _ in layer.named_parameters()]
    want = ["weight", "bias"] if bias else ["weight"]
    unregistered = _not_registered(layer, call, [name for name in want if name not in names])
    if unregistered:
        raise unregistered
    if not names:
        raise Mismatch(f"{call} has no parameters. Assign them in __init__, after "
                       "super().__init__(): self.weight = nn.Parameter(...), and the bias.")
    if names != want:
        if sorted(names) == sorted(want):
            hint = ("named_parameters() lists them in the order they were assigned: the "
                    "weight first, then the bias, as in nn.Linear.")
        elif bias and "bias" not in names:
            hint = "with bias=True the layer also has a bias parameter, of shape (out_features,)."
        elif not bias and "bias" in names:
            hint = "with bias=False there is no bias parameter: set self.bias = None."
        else:
            hint = "name them weight and bias: state_dict keys and checkpoints use these names."
        raise Mismatch(f"{call}.named_parameters() gives {names}; expected {want}: {hint}")
    params = dict(layer.named_parameters())
    shapes = {"weight": ((n_out, n_in), "(out_features, in_features): one row per output, "
                         "and forward uses weight.T"),
              "bias": ((n_out,), "(out_features,)")}
    wanted_dtype = dtype or dtypes.float32
    for name in want:
        shape, (wanted, meaning) = tuple(params[name].shape), shapes[name]
        if shape != wanted:
            raise Mismatch(f"{call}.{name} has shape {shape}; nn.Linear's is {wanted}, "
                           f"{meaning}.")
        if params[name].dtype != wanted_dtype:
            if dtype is None:
                raise Mismatch(f"{call}.{name} is {_dtype_name(params[name].dtype)}; "
                               "nn.Linear's parameters are float32, the default dtype (make "
                               "them with minigrad's functions, not from float64 numpy "
                               "arrays or Python floats).")
            raise Mismatch(f"{call}.{name} is {_dtype_name(params[name].dtype)}: with "
                           f"dtype={_show_dtype(dtype)} nn.Linear makes its parameters of "
                           "that dtype. Pass dtype on to the tensors you create (None means "
                           "the default, float32).")
    if not bias and getattr(layer, "bias", "missing") is not None:
        raise Mismatch(f"{call}.bias should be None, as in nn.Linear (code such as "
                       "'if layer.bias is not None' relies on it): set self.bias = None.")


def _check_defaults(Linear):
    """nn.Linear's defaults: a bias without asking, keywords in_features, out_features,
    device and dtype; dtype=float64 gives float64 parameters and outputs."""
    _check_signature(Linear)
    layer = attempt("Linear(3, 2)", lambda: Linear(3, 2), _bool_hint)
    if getattr(layer, "bias", None) is None and not any(
            name == "bias" for name, _ in layer.named_parameters()):
        unregistered = _not_registered(layer, "Linear(3, 2)", ["bias"])
        if unregistered:
            raise unregistered
        raise Mismatch("Linear(3, 2) has no bias: nn.Linear has one unless you pass "
                       "bias=False (the default is bias=True).")
    attempt("Linear(in_features=3, out_features=2, bias=True, device=None, dtype=None)",
             lambda: Linear(in_features=3, out_features=2, bias=True, device=None, dtype=None),
             _bool_hint)
    for bias in (True, False):
        layer = _build(Linear, 3, 2, bias, dtype=dtypes.float64)
        _check_registered(layer, 3, 2, bias, dtype=dtypes.float64)
        x = creation.randn(4, 3, dtype=dtypes.float64)
        out = attempt("Linear(3, 2, dtype=mg.float64) on a float64 input", lambda: layer(x))
        if isinstance(out, Tensor):
            same_dtype("Linear(3, 2, dtype=mg.float64)'s output on a float64 input", out, x)


def _inputs(rng, lead, n_in):
    values = rng.standard_normal(lead + (n_in,)).astype(np.float32)
    return creation.tensor(values, requires_grad=True)


def _compare(what, got, want, rtol=1e-5, atol=1e-6):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if got.shape != want.shape:
        raise Mismatch(f"{what} has shape {got.shape}; expected {want.shape}.")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        return _first_difference(got, want, rtol, atol)
    return None


def _forward_hint(error):
    text = str(error)
    if "ambiguous" in text:
        return _bool_hint(error)
    if "matmul" in text or "shapes" in text or "mismatch" in text or "size" in text:
        return (" Hint: forward must work for any leading dimensions: the input's last dimension "
                "is in_features (matmul with the weight's transpose).")
    return ""


def _check_forward(Linear, rng, n_in, n_out, bias):
    """Same weights as minigrad's Linear (copied in), inputs of every leading shape: the same
    outputs, and the same gradients for the weight, the bias and the input, all float32."""
    own = _OwnLinear(n_in, n_out, bias=bias)
    layer = _build(Linear, n_in, n_out, bias)
    params = dict(layer.named_parameters())
    with no_grad():
        for name, p in own.named_parameters():
            params[name].copy_(p)
    call = f"Linear({n_in}, {n_out}" + (")" if bias else ", bias=False)")
    for lead in _BATCHES:
        x = _inputs(rng, lead, n_in)
        x_own = x.detach().clone().requires_grad_()
        shape = tuple(x.shape)
        out = attempt(f"{call} on an input of shape {shape}", lambda: layer(x), _forward_hint)
        want = own(x_own)
        if not isinstance(out, Tensor):
            raise Mismatch(f"{call} on an input of shape {shape} returned "
                           f"{type(out).__name__}; forward must return the output tensor.")
        if tuple(out.shape) != tuple(want.shape):
            raise Mismatch(f"{call} on an input of shape {shape} gives shape "
                           f"{tuple(out.shape)}; expected {tuple(want.shape)} (the leading "
                           "dimensions stay, the last becomes out_features).")
        same_dtype(f"{call}'s output on a float32 input of shape {shape}", out, want)
        difference = _compare("the output", out.detach().numpy(), want.detach().numpy())
        if difference:
            hint = ""
            if bias and np.allclose(out.detach().numpy() + own.bias.detach().numpy(),
                                    want.detach().numpy(), rtol=1e-5, atol=1e-6):
                hint = " The output lacks exactly the bias: forward must add it."
            raise Mismatch(f"{call} on an input of shape {shape}: the output differs from "
                           f"nn.Linear's with the same weight and bias{difference}.{hint}")
        if not out.requires_grad:
            raise Mismatch(f"{call}: the output does not require grad, so no gradient can "
                           "reach the parameters. Compute it from input and self.weight "
                           "with tensor operations (no .detach(), no numpy).")
        upstream = creation.tensor(rng.standard_normal(tuple(want.shape)).astype(np.float32))
        attempt(f"backward through {call}", lambda: out.backward(upstream))
        want.backward(upstream)
        grads = [(f"{name}.grad", params[name].grad, p.grad)
                 for name, p in own.named_parameters()] + [("the input's grad", x.grad,
                                                            x_own.grad)]
        for what, got, expected in grads:
            if got is None:
                raise Mismatch(f"{call} on an input of shape {shape}: {what} is None after "
                               "backward(). Every parameter must take part in forward.")
            same_dtype(f"{call} on a float32 input of shape {shape}: {what}", got, expected)
            difference = _compare(what, got.numpy(), expected.numpy(), atol=1e-5)
            if difference:
                raise Mismatch(f"{call} on an input of shape {shape}: {what} differs from "
                               f"nn.Linear's{difference}.")
        for p in list(params.values()) + list(own.parameters()):
            p.grad = None


def _draws(n_in, n_out, seed, bound, order=("weight", "bias")):
    """What uniform draws in ±bound give after ``manual_seed(seed)``, in ``order``."""
    manual_seed(seed)
    shapes = {"weight": (n_out, n_in), "bias": (n_out,)}
    return {name: creation.empty(*shapes[name]).uniform_(-bound, bound).numpy()
            for name in order}


def _init_hint(name, got, n_in, n_out, seed):
    """What a wrong first draw most likely does, from the numbers it gave."""
    bound = 1 / math.sqrt(n_in)

    def close(candidate):
        return candidate.shape == got.shape and np.allclose(got, candidate, rtol=0, atol=1e-6)
    if got.size > 1 and not got.any():
        return (f" It is all zeros: nn.Linear draws its {name} too, uniform in "
                "±1/sqrt(in_features).")
    if got.size > 1 and (got >= 0).all():
        return " Every value is ≥ 0: draw between -bound and +bound, not from 0."
    if n_out != n_in and close(_draws(n_in, n_out, seed, 1 / math.sqrt(n_out))[name]):
        return (" The bound is 1/sqrt(out_features): nn.Linear's is 1/sqrt(in_features), "
                "the number of inputs each output adds up (section 5).")
    if name == "weight" and n_in > 1 and n_out > 1:
        manual_seed(seed)
        drawn = creation.empty(n_in, n_out).uniform_(-bound, bound).numpy().T
        if close(drawn):
            return (" Your layer draws the weight as (in_features, out_features) and "
                    "transposes it: nn.Linear draws it in its own shape, (out_features, "
                    "in_features), the weight first, then the bias.")
    if name == "bias" or n_out > 1:
        flipped = _draws(n_in, n_out, seed, bound, order=("bias", "weight"))
        if close(flipped[name]):
            return (" Your layer draws the bias before the weight: nn.Linear draws the weight "
                    "first, then the bias, and a seed gives the same numbers only in that "
                    "order.")
    return (" Draw both uniform in ±1/sqrt(in_features) from minigrad's generator (mg.rand, "
            "or a tensor's uniform_), the weight first, then the bias, so that a seed gives "
            "the same layer as nn.Linear.")


def _uniform_within_bound(Linear, seed, n=100):
    """Do the learner's Linear(n, n)'s draws (in = out, so either bound is 1/sqrt(n)) all
    stay within ±1/sqrt(n)?"""
    manual_seed(seed)
    layer = _build(Linear, n, n)
    bound = (1 + 1e-6) / math.sqrt(n)
    return all(np.abs(p.detach().numpy()).max(initial=0) <= bound
               for p in layer.parameters())


def _check_init(Linear, n_in, n_out, seed):
    """After ``manual_seed(seed)``, the same numbers as minigrad's own Linear draws."""
    manual_seed(seed)
    own = _OwnLinear(n_in, n_out)
    manual_seed(seed)
    layer = _build(Linear, n_in, n_out)
    bound = 1 / math.sqrt(n_in)
    params = dict(layer.named_parameters())
    for name, p in own.named_parameters():
        got = params[name].detach().numpy()
        top = np.abs(got).max(initial=0)
        if top > bound * (1 + 1e-6):
            hint = ""
            if not _uniform_within_bound(Linear, seed):
                hint = (" The draw is not uniform within ±bound: with as many inputs as "
                        "outputs (both bounds the same) your layer still goes beyond it. A "
                        "uniform draw never leaves ±bound, and nn.Linear draws uniform (a "
                        "normal draw, with the bound as its spread, goes beyond it).")
            elif n_out < n_in and top <= (1 + 1e-6) / math.sqrt(n_out):
                hint = (" The bound is 1/sqrt(out_features) there: nn.Linear's is "
                        "1/sqrt(in_features), the number of inputs each output adds up.")
            raise Mismatch(f"after mg.manual_seed({seed}), Linear({n_in}, {n_out}).{name} "
                           f"goes from {got.min():.4f} to {got.max():.4f}, beyond "
                           f"±1/sqrt(in_features) = ±{bound:.4f} (section 5).{hint}")
        difference = _compare(name, got, p.detach().numpy(), rtol=0, atol=1e-6)
        if difference:
            raise Mismatch(f"after mg.manual_seed({seed}), Linear({n_in}, {n_out}).{name} is "
                           f"not what nn.Linear draws{difference}."
                           f"{_init_hint(name, got, n_in, n_out, seed)}")


def _check_plugged(Linear):
    """Section 6's MLP built with ``nn.Linear`` while the piece is plugged in: the learner's
    layers, the same names, loss and gradients as with minigrad's own."""
    def run(plugged):
        manual_seed(0)
        with _plug_linear(Linear) if plugged else contextlib.nullcontext():
            mlp = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        x = creation.randn(8, 2)
        y = creation.randint(0, 2, (8,))
        loss = nn.CrossEntropyLoss()(mlp(x), y)
        loss.backward()
        return mlp, loss
    own, own_loss = run(False)
    mlp, loss = attempt("section 6's MLP built with your Linear", lambda: run(True))
    if not all(type(mlp[i]) is Linear for i in (0, 2)):
        raise Mismatch("inside teach.use(linear=Linear), nn.Linear(2, 16) did not build "
                       "your class.")
    names = [name for name, _ in mlp.named_parameters()]
    want = [name for name, _ in own.named_parameters()]
    if names != want:
        raise Mismatch(f"section 6's MLP with your Linear has the parameters {names}; "
                       f"expected {want}.")
    same_dtype("section 6's MLP with your Linear: the loss", loss, own_loss)
    difference = _compare("the loss", loss.item(), own_loss.item())
    if difference:
        raise Mismatch(f"section 6's MLP with your Linear, after mg.manual_seed(0), gives "
                       f"a loss that differs{difference}.")


@keeps_random_state
def _linear_battery(Linear):
    """Registration, shapes, forward and gradients (against minigrad's Linear with the same
    weights), bias=False, PyTorch's defaults and dtype keyword, the initial values after a
    seed, and a model built with it."""
    if not (isinstance(Linear, type) and issubclass(Linear, nn.Module)):
        raise Mismatch(f"expected a class that inherits from nn.Module (class "
                       f"Linear(nn.Module): ...), got {type(Linear).__name__}.")
    rng = np.random.default_rng(6)
    # minigrad's own Linear for the expected results, even inside a teach.use(...) block
    with warnings.catch_warnings(), _plug_linear(_OwnLinear):
        warnings.simplefilter("ignore")
        for n_in, n_out in _SIZES:
            for bias in (True, False):
                _check_registered(_build(Linear, n_in, n_out, bias), n_in, n_out, bias)
        for n_in, n_out in _SIZES:
            for bias in (True, False):
                _check_forward(Linear, rng, n_in, n_out, bias)
        for seed in _SEEDS:
            for n_in, n_out in _SIZES:
                _check_init(Linear, n_in, n_out, seed)
        _check_defaults(Linear)
        _check_plugged(Linear)
    return (f"{len(_SIZES)} sizes with and without bias (names, shapes, float32 outputs and "
            f"gradients for inputs of shape (in,), (4, in) and (2, 3, in)), PyTorch's "
            f"defaults and dtype=mg.float64, the first values after {len(_SEEDS)} seeds, "
            "and section 6's MLP")


register(Piece(name="linear", chapter="06", defines="Linear",
               summary="nn.Linear: a module with a weight and a bias Parameter",
               plug=_plug_linear, battery=_linear_battery,
               own={"nn.Linear": _OwnLinear, "F.linear": F.linear}))
