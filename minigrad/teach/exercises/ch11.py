"""Chapter 11 exercises: custom ``autograd.Function``s, what PyTorch prints, and gradient
accumulation written with a ``GradientTape`` (TensorFlow's design). The chapter is two
lectures: ``notebooks/11a_custom_functions.ipynb`` (the build exercise and exercise 1,
``check_hypot``) and ``notebooks/11b_engine_and_speed.ipynb`` (exercise 2,
``lock_prediction`` then, after the snippet has run, ``reveal_prediction``: predict,
then run; and exercise 3, ``check_tape_accumulation``).

Each check runs the learner's class (or takes the learner's prediction), computes the right
answer itself with minigrad and compares. The learner's code may raise anything: a check
reports it and never raises itself. No hint spells out the solution.

The build exercise (``teach.check_piece("softplus", Softplus)``): the learner's
``Softplus(mg.autograd.Function)``, plugged in behind ``nn.functional.softplus`` and
``nn.Softplus``.
"""

import contextlib
import inspect
import warnings
from unittest import mock

import numpy as np

from ... import creation, dtypes
from ...autograd import Function, grad as autograd_grad, gradcheck
from ...graph import execution_order, no_grad
from ...nn import activations_more, functional
from ...ops import activations as activation_ops
from ...ops import losses as loss_ops
from ... import Tensor
from ..build import Mismatch, Piece, attempt, register, same_dtype
from ..checks import CheckResult, all_parts, describe, keeps_random_state, no_answer
from ..predictions import Prediction, locked_together
from ..tape import ONE_SET_ONLY

__all__ = ["check_hypot", "lock_prediction", "reveal_prediction", "check_tape_accumulation"]

SOFTPLUS_INPUTS = [-4.0, -0.5, 0.0, 0.7, 3.0]
SOFTPLUS_UPSTREAM = [0.5, -1.0, 2.0, 1.0, 3.0]   # not all ones: backward must use grad_output
HYPOT_X = [3.0, -1.0, 0.5, 2.0]
HYPOT_Y = [4.0, 2.0, -1.5, 0.0]
HYPOT_UPSTREAM = [1.0, -2.0, 0.5, 3.0]


def _no_answer_yet(name):
    return CheckResult(False, f"{name}: no answer yet. Write your code in the cell above and run "
                              "it, then run this check again.")


def _function_class(name, cls):
    """None when ``cls`` is a subclass of Function, else the failing result."""
    if no_answer(cls):
        return _no_answer_yet(name)
    if not (isinstance(cls, type) and issubclass(cls, Function)):
        return CheckResult(False, f"{name}: expected a class that inherits from "
                                  f"mg.autograd.Function (class {name}(mg.autograd.Function): "
                                  f"...), got {type(cls).__name__}.")
    return None


def _float64(values, requires_grad=True):
    return creation.tensor(values, dtype=dtypes.float64, requires_grad=requires_grad)


def _raised(what, error):
    return CheckResult(False, f"{what} raised {type(error).__name__}: {error}")


def _close(got, want, tol=1e-6):
    try:
        got = got.detach().numpy() if isinstance(got, Tensor) else np.asarray(got, dtype=float)
        return got.shape == np.shape(want) and np.allclose(got, want, rtol=tol, atol=tol)
    except (TypeError, ValueError):
        return False


def _output(name, cls, *inputs):
    """(output, None) or (None, failing result) for ``cls.apply(*inputs)``."""
    try:
        out = cls.apply(*inputs)
    except Exception as error:  # the learner's forward
        return None, _raised(f"{name}.apply", error)
    if not isinstance(out, Tensor):
        return None, CheckResult(False, f"{name}.apply returned {type(out).__name__}, not a "
                                        "tensor: forward must return a tensor.")
    if out.grad_fn is None or type(out.grad_fn).__name__ != f"{cls.__name__}Backward":
        return None, CheckResult(False, f"{name}: the output has no {cls.__name__}Backward "
                                        "grad_fn. Call the Function as "
                                        f"{name}.apply(...), with inputs that require grad.")
    return out, None


def _gradcheck(name, cls, inputs):
    try:
        passed = gradcheck(cls.apply, inputs, raise_exception=False)
    except Exception as error:
        return _raised(f"gradcheck({name}.apply, ...)", error)
    if not passed:
        return CheckResult(False, f"{name}: gradcheck disagrees with your backward. Compare "
                                  "your formula with a finite difference at one point.")
    return None


def check_hypot(Hypot):
    """Exercise 1: a Function of two tensors, hypot(x, y) = sqrt(x**2 + y**2), whose backward
    returns one gradient per input."""
    name = "Hypot"
    failed = _function_class(name, Hypot)
    if failed is not None:
        return failed
    x, y = _float64(HYPOT_X), _float64(HYPOT_Y)
    xs, ys = np.array(HYPOT_X), np.array(HYPOT_Y)
    radius = np.hypot(xs, ys)
    out, failed = _output(name, Hypot, x, y)
    if failed is not None:
        return failed
    if not _close(out, radius):
        return CheckResult(False, f"{name}: forward gives {describe(out)}, which is not "
                                  "sqrt(x**2 + y**2) element by element.")
    upstream = np.array(HYPOT_UPSTREAM)
    try:
        out.backward(gradient=creation.tensor(upstream, dtype=dtypes.float64))
    except Exception as error:  # the learner's backward
        text = str(error)
        if "number of gradients" in text:
            return CheckResult(False, f"{name}: backward returned too few gradients. Hint: "
                                      "forward has two tensor inputs, so backward returns two "
                                      "gradients, in the order of forward's arguments.")
        return _raised(f"{name}'s backward", error)
    want_x, want_y = upstream * xs / radius, upstream * ys / radius
    if x.grad is None or y.grad is None:
        which = " and ".join(n for n, t in (("x", x), ("y", y)) if t.grad is None)
        return CheckResult(False, f"{name}: {which}.grad is None: backward returned None for "
                                  "it. Return one gradient for each input of forward.")
    right_x, right_y = _close(x.grad, want_x), _close(y.grad, want_y)
    if not (right_x and right_y):
        if _close(x.grad, want_y) and _close(y.grad, want_x):
            hint = "the two gradients are swapped: return them in the order of forward's arguments."
        elif _close(x.grad, xs / radius) or _close(y.grad, ys / radius):
            hint = "multiply each partial derivative by grad_output."
        else:
            wrong = " and ".join(n for n, ok in (("x", right_x), ("y", right_y)) if not ok)
            hint = (f"the gradient for {wrong} is off. Differentiate sqrt(x**2 + y**2) with "
                    "the chain rule; the output you saved in forward makes it short.")
        return CheckResult(False, f"{name}: backward is not right yet. Hint: {hint}")
    failed = _gradcheck(name, Hypot, (_float64(HYPOT_X), _float64(HYPOT_Y)))
    if failed is not None:
        return failed
    return CheckResult(True, f"{name}: correct! Both gradients agree with gradcheck.")


# --------------------------------------------------------------------------- exercise 2

class _Doubler(Function):
    """The snippet's Function: identity forward, backward that doubles."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output


def doubler_run():
    """(y, x.grad) of the exercise's snippet, ``y = Doubler.apply(x) * x`` at x = 3, where
    Doubler's forward is the identity and its backward doubles the gradient."""
    x = creation.tensor([3.0], requires_grad=True)
    y = _Doubler.apply(x) * x
    y.backward()
    return y.item(), x.grad.item()


# Exercise 2 is predicted on paper, locked in, and only then run (teach.predictions).
PREDICTED_Y = Prediction(
    "y", lambda: (doubler_run()[0], f"y is {doubler_run()[0]:g}"),
    hint="y is computed by the forward pass only: what does Doubler's forward return, and "
         "what is it multiplied by?")
PREDICTED_X_GRAD = Prediction(
    "x.grad", lambda: (doubler_run()[1], f"x.grad is {doubler_run()[1]:g}"),
    hint="x reaches y along two paths and backward adds them. Along the path through "
         "Doubler, autograd uses whatever Doubler.backward returns, derivative or not.")


def lock_prediction(y_value, x_grad):
    """Exercise 2, step 1: lock in the numbers the learner expects in ``y`` and ``x.grad``
    (plain numbers, written before the snippet runs)."""
    return locked_together("Exercise 2", [PREDICTED_Y.lock(y_value),
                                          PREDICTED_X_GRAD.lock(x_grad)])


def reveal_prediction():
    """Exercise 2, step 2 (after the snippet has run): compare the locked numbers with what
    the snippet prints."""
    return all_parts("Exercise 2", [PREDICTED_Y.reveal(), PREDICTED_X_GRAD.reveal()])


# --------------------------------------------------------------------------- exercise 3

TAPE_W = [0.5, -1.0, 2.0]   # the weights every micro-batch's loss is taken at


def tape_loss(w, x, y):
    """The exercise's loss of one micro-batch: the mean squared error of x @ w."""
    return ((x @ w - y) ** 2).mean()


def _micro_batches(rng, count):
    """``count`` micro-batches (x of shape (4, 3), y of shape (4,)), numbers not shown in
    the chapter."""
    return [(creation.tensor(rng.normal(size=(4, 3)).round(2).tolist()),
             creation.tensor(rng.normal(size=4).round(2).tolist())) for _ in range(count)]


def accumulated_grad(micro_batches):
    """PyTorch's way: one ``backward()`` per micro-batch; ``.grad`` adds them up."""
    w = creation.tensor(TAPE_W, requires_grad=True)
    for x, y in micro_batches:
        tape_loss(w, x, y).backward()
    return w.grad.numpy()


def _each_grad(micro_batches):
    """The gradient of each micro-batch's loss alone."""
    return [accumulated_grad([batch]) for batch in micro_batches]


def _as_numbers(value):
    """A tensor, array or list as a float array; None for anything else."""
    try:
        if isinstance(value, Tensor):
            return value.detach().numpy().astype(float)
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def _tape_failed(name, error):
    """A failing result for an error the learner's function raised."""
    if ONE_SET_ONLY in str(error):
        return CheckResult(False, f"{name}: a tape was asked for gradients twice. Hint: a "
                                  "GradientTape gives one set of gradients, then it is spent "
                                  "(unless persistent=True): record each micro-batch on a "
                                  "tape of its own.")
    if isinstance(error, TypeError) and "NoneType" in str(error):
        return CheckResult(False, f"{name} raised TypeError: {error}. Hint: tape.gradient "
                                  "returns None for a loss computed outside its with block: "
                                  "compute the loss inside it.")
    return _raised(name, error)


def _tape_hint(got, want, each):
    """What a wrong sum most likely is, without the right numbers."""
    if any(_close(got, g) for g in each):
        return ("that is the gradient of one micro-batch only. A tape returns each "
                "gradient and stores nothing: add them up yourself.")
    if _close(got, want / len(each)):
        return ("that is the average. Several backward() calls add into w.grad: add the "
                "returned gradients, without dividing.")
    return ("compute each micro-batch's loss inside a tape's with block, ask that tape for "
            "the gradient with respect to w, and add the gradients.")


def check_tape_accumulation(tape_gradient):
    """Exercise 3: ``tape_gradient(w, micro_batches)`` adds up the gradients that tapes
    return, one micro-batch at a time; it must equal what ``.grad`` accumulates over one
    ``backward()`` per micro-batch, and leave ``w.grad`` as it was (None)."""
    name = "tape_gradient"
    if no_answer(tape_gradient):
        return _no_answer_yet(name)
    if not callable(tape_gradient):
        return CheckResult(False, f"{name}: expected a function, def tape_gradient(w, "
                                  f"micro_batches): ..., got {type(tape_gradient).__name__}.")
    rng = np.random.default_rng(31)
    for count in (2, 3):
        batches = _micro_batches(rng, count)
        want, each = accumulated_grad(batches), _each_grad(batches)
        shown = f"{name}(w, micro_batches) with {count} micro-batches"
        w = creation.tensor(TAPE_W, requires_grad=True)
        try:
            got = tape_gradient(w, batches)
        except Exception as error:  # the learner's code
            return _tape_failed(shown, error)
        if w.grad is not None:
            return CheckResult(False, f"{shown}: w.grad was filled in; it must stay None. "
                                      "Hint: backward() stores into w.grad; a tape returns "
                                      "the gradient instead. Use teach.GradientTape.")
        if got is None:
            return CheckResult(False, f"{shown} returned None: return the summed gradient.")
        numbers = _as_numbers(got)
        if numbers is None or numbers.shape != want.shape:
            return CheckResult(False, f"{shown} returned {describe(got)}: expected "
                                      f"a gradient of w's shape {tuple(w.shape)}.")
        if not _close(numbers, want):
            return CheckResult(False, f"{shown}: not right yet. Hint: "
                                      f"{_tape_hint(numbers, want, each)}")
    return CheckResult(True, f"{name}: correct! With 2 and with 3 micro-batches it equals "
                             "what backward() accumulates in w.grad, and w.grad stayed None.")


# ---------------------------------------------------------------- build: Softplus

# minigrad's own softplus, whatever nn.functional.softplus is while a piece is plugged in.
_OWN_SOFTPLUS = activations_more.softplus
_OWN_OP = activation_ops.SoftplusBackward0
_RANDOM_SHAPES = [(), (5,), (3, 4), (2, 3, 2)]
# PyTorch's defaults of nn.Softplus and F.softplus (torch 2.x): a forward that takes beta or
# threshold must default to these.
TORCH_DEFAULTS = {"beta": 1.0, "threshold": 20.0}
_LARGE = [-1000.0, -100.0, -30.0, 30.0, 100.0, 1000.0]


def _softplus_with(Softplus):
    """``nn.functional.softplus`` made of the learner's Function: ``Softplus.apply(x)``, or
    ``Softplus.apply(beta * x) / beta`` for another ``beta``. (minigrad's own returns x
    itself where beta * x > threshold; a stable softplus agrees there to float precision.)"""
    def softplus(input, beta=1.0, threshold=20.0):
        if beta == 1:
            return Softplus.apply(input)
        return Softplus.apply(input * beta) / beta
    return softplus


def _plug_softplus(Softplus):
    """Inside the block ``nn.functional.softplus`` and ``nn.Softplus`` (whose forward calls
    its class attribute ``_fn`` at call time) run the learner's ``Softplus.apply``."""
    return _softplus_is(_softplus_with(Softplus))


@contextlib.contextmanager
def _softplus_is(softplus):
    """``softplus`` in the three places minigrad's softplus is looked up at call time."""
    with mock.patch.object(functional, "softplus", softplus), \
            mock.patch.object(activations_more, "softplus", softplus), \
            mock.patch.object(activations_more.Softplus, "_fn", softplus):
        yield


def _numbers(values):
    return np.round(np.asarray(values, dtype=float), 4).tolist()


def _applied(Softplus, values, dtype):
    """(x, y = Softplus.apply(x)) for ``values``, with checks that y is a tensor recorded by
    a node of the learner's Function."""
    x = creation.tensor(values, dtype=dtype, requires_grad=True)
    shown = f"Softplus.apply(x) at x = {_numbers(values)} ({str(x.dtype).split('.')[-1]})"
    y = attempt(shown, lambda: Softplus.apply(x))
    if not isinstance(y, Tensor):
        raise Mismatch(f"{shown} returned {type(y).__name__}: forward must return a tensor.")
    if getattr(y.grad_fn, "function", None) is not Softplus:
        raise Mismatch(f"{shown} has no {Softplus.__name__}Backward node: forward must "
                       "return a tensor computed from x (Function.apply records the node).")
    if tuple(y.shape) != tuple(x.shape):
        raise Mismatch(f"{shown} has shape {tuple(y.shape)}; expected {tuple(x.shape)}: "
                       "softplus works element by element.")
    return x, y, shown


def _backward_hint(slope, want, values):
    """What a wrong backward most likely returns, from the slopes it gave."""
    x = np.asarray(values, dtype=float)
    if np.allclose(slope, 1 / (1 + np.exp(x)), rtol=1e-5, atol=1e-8):
        return (" Your slope falls where the curve rises: softplus grows with x, so its slope "
                "goes from 0 (far left) to 1 (far right).")
    i = int(np.argmax(np.abs(slope - want)))
    return (f" At x = {x.flat[i]:.4g} your backward gives the slope {slope.flat[i]:.6g}; "
            f"the curve's slope there is {want.flat[i]:.6g}. Differentiate log(1 + e^x) with "
            "the chain rule: the result is a function you know from minigrad's tensor "
            "methods.")


def _not_finite_hint(got, values):
    """Why a forward gave inf or nan, from where it did: -inf is a log of 0 (a term that
    underflowed), inf at a large negative x an e^-x that overflowed, inf or nan at a
    large positive x an e^x that overflowed."""
    x = np.broadcast_to(np.asarray(values, dtype=float), np.shape(got))
    bad = ~np.isfinite(got)
    at = ", ".join(f"{v:g}" for v in x[bad][:3])
    if np.isneginf(got).any():
        return (f" -inf (at x = {at}) is log(0): every term inside your log underflowed to "
                "0, as e^(x - m) does when x lies far below the m you take out. Take out each "
                "entry's own large part, not one number for the whole tensor: then one of "
                "the two terms in the log is always e^0 = 1.")
    if (x[bad] < 0).all():
        return (f" e^-x overflows for a large NEGATIVE x (here at x = {at}): the form with "
                "e^-x only suits x ≥ 0, as e^x only suits x ≤ 0. Rewrite log(1 + e^x) so "
                "that exp only ever sees numbers ≤ 0, for either sign of x.")
    return (" e^x overflows for a large x (float32 already at x = 89): rewrite log(1 + e^x) "
            "so that exp only ever sees numbers ≤ 0, taking the large part out of the log.")


def _check_values_and_grads(Softplus, values, upstream, dtype, chapter=False):
    """Values against minigrad's softplus; the gradient for ``upstream`` (not all ones)
    against minigrad's; the input left as it was."""
    x, y, shown = _applied(Softplus, values, dtype)
    x_own = creation.tensor(values, dtype=dtype, requires_grad=True)
    want = _OWN_SOFTPLUS(x_own)
    rtol, atol = (1e-9, 1e-12) if dtype is dtypes.float64 else (1e-5, 1e-6)
    _check_unchanged(x, values, dtype, shown)
    got = y.detach().numpy()
    if not np.isfinite(got).all():
        raise Mismatch(f"{shown} gives {_numbers(got)}: not finite."
                       f"{_not_finite_hint(got, values)}")
    same_dtype(f"the output of your forward for {shown}", y, want)
    if not np.allclose(got, want.detach().numpy(), rtol=rtol, atol=atol):
        raise Mismatch(f"{shown} gives {_numbers(got)}, which is not log(1 + e^x): expected "
                       f"{_numbers(want.detach().numpy())}.")
    arriving = creation.tensor(upstream, dtype=dtype)
    _check_returned_gradient(Softplus, y, arriving, x, shown)
    attempt(f"{Softplus.__name__}'s backward", lambda: y.backward(arriving))
    want.backward(arriving)
    if x.grad is None:
        raise Mismatch(f"after backward through {shown}, x.grad is None: backward must "
                       "return the gradient with respect to x.")
    got, expected = x.grad.numpy().astype(float), x_own.grad.numpy().astype(float)
    arrived = np.asarray(upstream, dtype=float)
    if not np.isfinite(got).all():
        raise Mismatch(f"after backward through {shown}, x.grad is {_numbers(got)}: not "
                       "finite. Write the derivative with a function of x that stays finite "
                       "for large x (e^x / (1 + e^x) is inf / inf at x = 1000).")
    if not np.allclose(got, expected, rtol=rtol * 100, atol=atol * 100):
        with np.errstate(all="ignore"):
            slope = np.where(arrived != 0, got / arrived, 0.0)
            want_slope = np.where(arrived != 0, expected / arrived, 0.0)
        if not np.allclose(arrived, 1) and np.allclose(got, want_slope, rtol=1e-5, atol=1e-8):
            hint = (" The slope is right, but backward must multiply it by grad_output (the "
                    "gradient arriving from above is not always 1).")
        else:
            hint = _backward_hint(slope, want_slope, values)
        raise Mismatch(f"after backward through {shown} with grad_output = "
                       f"{_numbers(upstream)}, x.grad is {_numbers(got)}; expected "
                       f"{_numbers(expected)}.{hint}")
    _check_unchanged(x, values, dtype, shown)


def _check_returned_gradient(Softplus, y, arriving, x, shown):
    """What the learner's backward itself returns (before the engine turns it into an
    array of x's dtype): a tensor, of x's dtype."""
    name = Softplus.__name__
    with no_grad():
        returned = attempt(f"{name}.backward for {shown}",
                            lambda: Softplus.backward(y.grad_fn.ctx, arriving))
    if isinstance(returned, tuple) and returned:
        returned = returned[0]
    if returned is None:
        return  # the engine's own message follows (x.grad is None)
    if not isinstance(returned, Tensor):
        raise Mismatch(f"{name}.backward for {shown} returned {type(returned).__name__}, not a "
                       "tensor: backward returns tensors computed with tensor operations "
                       "from grad_output and ctx.saved_tensors (PyTorch refuses anything "
                       "else: \"expected Variable or None\"), so that the gradient can "
                       "flow on through the graph, also with create_graph=True.")
    same_dtype(f"the gradient your backward returns for {shown}", returned, x)


def _check_unchanged(x, values, dtype, shown):
    if not np.array_equal(x.detach().numpy(), creation.tensor(values, dtype=dtype).numpy()):
        raise Mismatch(f"{shown} changed x: forward and backward must leave their inputs "
                       "as they were (no in-place operations on them).")


def _check_gradcheck(Softplus, values):
    x = creation.tensor(values, dtype=dtypes.float64, requires_grad=True)
    passed = attempt(f"gradcheck({Softplus.__name__}.apply, ...)",
                      lambda: gradcheck(Softplus.apply, (x,), raise_exception=False))
    if not passed:
        raise Mismatch(f"gradcheck({Softplus.__name__}.apply, (x,)) fails for x of shape "
                       f"{tuple(x.shape)} in float64: your backward disagrees with finite "
                       "differences of your forward.")


def _check_plugged(Softplus, rng):
    """nn.Softplus() and F.softplus (beta 1 and 2) with the piece plugged in: the learner's
    node, and minigrad's values and gradients."""
    values = rng.standard_normal((3, 4)) * 3
    for beta in (1.0, 2.0):
        results = []
        for plugged in (False, True):
            x = creation.tensor(values, dtype=dtypes.float32, requires_grad=True)
            with _plug_softplus(Softplus) if plugged else contextlib.nullcontext():
                module = activations_more.Softplus(beta=beta)
                y = attempt(f"nn.Softplus(beta={beta:g}) with your Softplus",
                             lambda: module(x), _recursion_hint)
                nodes = _function_nodes(y)
                attempt(f"backward through nn.Softplus(beta={beta:g})", y.sum().backward)
            results.append((y, x, nodes))
        (own_y, own_x, _), (y, x, nodes) = results
        if Softplus not in nodes:
            raise Mismatch(f"inside teach.use(softplus=Softplus), nn.Softplus(beta={beta:g}) "
                           "did not run your Function.")
        for what, got, want in (("the output", y.detach(), own_y.detach()),
                                ("x.grad", x.grad, own_x.grad)):
            same_dtype(f"nn.Softplus(beta={beta:g}) with your Softplus: {what} (float32 "
                       "input)", got, want)
            if not np.allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6):
                raise Mismatch(f"nn.Softplus(beta={beta:g}) with your Softplus: {what} "
                               "differs from minigrad's.")


def _check_create_graph(Softplus):
    """With ``create_graph=True`` (a gradient that is differentiated again) the learner's
    backward is recorded: its result must depend on ``grad_output`` through tensor
    operations, so the derivative of x's gradient with respect to grad_output is the slope.
    (A second derivative with respect to x is not asked: like PyTorch, a tensor computed in
    forward and saved is a constant to it, as in the lecture's Swish.)"""
    name = Softplus.__name__
    x = creation.tensor(SOFTPLUS_INPUTS, dtype=dtypes.float64, requires_grad=True)
    arriving = creation.tensor(SOFTPLUS_UPSTREAM, dtype=dtypes.float64, requires_grad=True)
    shown = (f"with create_graph=True (x = {_numbers(SOFTPLUS_INPUTS)}, a grad_output that "
             "requires grad)")
    y = attempt(f"{name}.apply(x)", lambda: Softplus.apply(x))
    (gradient,) = attempt(f"{name}'s backward {shown}",
                           lambda: autograd_grad(y, x, arriving, create_graph=True),
                           _numpy_hint)
    if gradient is None or not gradient.requires_grad:
        raise Mismatch(f"{name}'s backward {shown} returns a gradient that is not recorded: "
                       "compute it from grad_output with tensor operations (no numpy, no "
                       "detach, no new tensor made from numbers), so that it can be "
                       "differentiated again.")
    (slope,) = attempt(f"differentiating your backward's result {shown}",
                        lambda: autograd_grad(gradient.sum(), arriving, allow_unused=True))
    want = 1 / (1 + np.exp(-np.asarray(SOFTPLUS_INPUTS)))
    if slope is None or not np.allclose(slope.detach().numpy(), want, rtol=1e-6, atol=1e-9):
        raise Mismatch(f"{name}'s backward {shown}: the gradient it returns does not follow "
                       "grad_output through the graph. Compute it from grad_output with "
                       "tensor operations, not from numbers taken out of it.")


def _numpy_hint(error):
    if "numpy()" in str(error):
        return (" Under create_graph=True grad_output is part of the graph: compute the "
                "gradient with tensor operations, not numpy (detaching would cut it off).")
    return ""


def _check_defaults(Softplus):
    """A forward that takes ``beta`` or ``threshold`` defaults to PyTorch's values."""
    try:
        parameters = inspect.signature(Softplus.forward).parameters
    except (TypeError, ValueError):
        return
    for name, want in TORCH_DEFAULTS.items():
        parameter = parameters.get(name)
        if parameter is None or parameter.default is inspect.Parameter.empty:
            continue
        if parameter.default != want:
            raise Mismatch(f"forward's default {name}={parameter.default!r} is not PyTorch's: "
                           f"nn.Softplus and F.softplus default to {name}={want:g}.")


def _check_own_not_run(Softplus):
    """Refuse a forward that runs minigrad's own softplus by a path ``borrowed`` does not
    follow (``mg.nn.functional.softplus``, a helper of another module): the check would
    compare minigrad with itself, and with the piece plugged in it would call itself."""
    ran = []
    original = _OWN_OP.forward

    def spying(self, *args, **kwargs):
        ran.append(True)
        return original(self, *args, **kwargs)

    x = creation.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    with mock.patch.object(_OWN_OP, "forward", spying):
        attempt(f"{Softplus.__name__}.apply(x) at x = [-1.0, 0.5, 2.0]",
                 lambda: Softplus.apply(x), _recursion_hint)
    if ran:
        raise Mismatch("your forward runs minigrad's own softplus (F.softplus, nn.Softplus "
                       "or the op behind them), the very piece you are asked to write, so the "
                       "check would compare minigrad with itself; inside teach.use(...) it "
                       "would even call your own Softplus for ever. Compute log(1 + e^x) "
                       "yourself, with tensor operations.")


def _recursion_hint(error):
    if isinstance(error, RecursionError):
        return (" Your forward calls itself: inside teach.use(softplus=...) F.softplus and "
                "nn.Softplus run your Softplus, so forward must not call them.")
    return ""


def _function_nodes(y):
    """The Functions whose nodes made ``y`` (walked before backward frees the graph)."""
    return [getattr(node, "function", None) for node in execution_order([y.grad_fn])]


@keeps_random_state
def _softplus_battery(Softplus):
    """The chapter's inputs with a grad_output that is not all ones, random inputs (values,
    gradients, gradcheck in float64), large inputs in float32 and float64, and nn.Softplus
    with the piece plugged in."""
    if not (isinstance(Softplus, type) and issubclass(Softplus, Function)):
        raise Mismatch("expected a class that inherits from mg.autograd.Function (class "
                       f"Softplus(mg.autograd.Function): ...), got {type(Softplus).__name__}.")
    _check_defaults(Softplus)
    rng = np.random.default_rng(11)
    # minigrad's own softplus for the expected results, even inside a teach.use(...) block
    with warnings.catch_warnings(), np.errstate(all="ignore"), _softplus_is(_OWN_SOFTPLUS):
        warnings.simplefilter("ignore")
        _check_own_not_run(Softplus)
        _check_values_and_grads(Softplus, SOFTPLUS_INPUTS, SOFTPLUS_UPSTREAM, dtypes.float64)
        for shape in _RANDOM_SHAPES:
            for dtype in (dtypes.float64, dtypes.float32):
                values = rng.standard_normal(shape) * 4
                _check_values_and_grads(Softplus, values, rng.standard_normal(shape), dtype)
            _check_gradcheck(Softplus, rng.standard_normal(shape) * 4)
        for dtype in (dtypes.float32, dtypes.float64):
            _check_values_and_grads(Softplus, _LARGE, np.ones(len(_LARGE)), dtype)
        _check_create_graph(Softplus)
        _check_plugged(Softplus, rng)
    return (f"the chapter's inputs, {len(_RANDOM_SHAPES)} random shapes (values and "
            "gradients in float32 and float64, gradcheck), inputs up to ±1000, "
            "create_graph=True, and nn.Softplus")


register(Piece(name="softplus", chapter="11", defines="Softplus",
               summary="a custom autograd.Function: softplus and its backward",
               plug=_plug_softplus, battery=_softplus_battery,
               own={"F.softplus": activations_more.softplus,
                    "nn.Softplus": activations_more.Softplus,
                    "SoftplusBackward0 (the op behind F.softplus and nn.Softplus)": _OWN_OP,
                    "softplus helper (minigrad.ops.activations)": activation_ops._softplus,
                    "softplus helper (minigrad.ops.losses)": loss_ops.softplus}))
