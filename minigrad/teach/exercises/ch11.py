"""Chapter 11 exercises: custom ``autograd.Function``s, and what PyTorch prints.

Each check runs the learner's class (or takes the learner's prediction), computes the right
answer itself with minigrad and compares. The learner's code may raise anything: a check
reports it and never raises itself. No hint spells out the solution.
"""

import numpy as np

from .. import checks
from ... import creation, dtypes
from ...autograd import Function, gradcheck
from ...tensor import Tensor
from ..checks import CheckResult, check
from ..checks import no_answer as _missing, one_number as _one_number

__all__ = ["check_softplus", "check_hypot", "check_prediction"]

SOFTPLUS_INPUTS = [-4.0, -0.5, 0.0, 0.7, 3.0]
SOFTPLUS_UPSTREAM = [0.5, -1.0, 2.0, 1.0, 3.0]   # not all ones: backward must use grad_output
HYPOT_X = [3.0, -1.0, 0.5, 2.0]
HYPOT_Y = [4.0, 2.0, -1.5, 0.0]
HYPOT_UPSTREAM = [1.0, -2.0, 0.5, 3.0]


def _no_answer(name):
    return CheckResult(False, f"{name}: no answer yet. Write your code in the cell above and run "
                              "it, then run this check again.")


def _function_class(name, cls):
    """None when ``cls`` is a subclass of Function, else the failing result."""
    if _missing(cls):
        return _no_answer(name)
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


def check_softplus(Softplus):
    """Exercise 1: a Function for softplus(x) = log(1 + exp(x)) with its own backward."""
    name = "Softplus"
    failed = _function_class(name, Softplus)
    if failed is not None:
        return failed
    x = _float64(SOFTPLUS_INPUTS)
    values = np.array(SOFTPLUS_INPUTS)
    out, failed = _output(name, Softplus, x)
    if failed is not None:
        return failed
    if not _close(out, np.logaddexp(0.0, values)):
        return CheckResult(False, f"{name}: forward gives {checks._describe(out)}, which is not "
                                  "log(1 + exp(x)) element by element. Hint: forward computes "
                                  "the value only; every tensor method may be used there.")
    upstream = np.array(SOFTPLUS_UPSTREAM)
    try:
        out.backward(gradient=creation.tensor(upstream, dtype=dtypes.float64))
    except Exception as error:  # the learner's backward
        return _raised(f"{name}'s backward", error)
    slope = 1 / (1 + np.exp(-values))
    if x.grad is None:
        return CheckResult(False, f"{name}: backward returned None, so x.grad stays None. "
                                  "Return the gradient with respect to x.")
    if not _close(x.grad, upstream * slope):
        if _close(x.grad, slope):
            hint = ("the derivative is right, but backward must multiply it by grad_output "
                    "(the gradient arriving from above is not always 1).")
        else:
            hint = ("differentiate log(1 + e^x) with the chain rule: the result is a function "
                    "you know from minigrad's tensor methods. Multiply it by grad_output.")
        return CheckResult(False, f"{name}: backward is not right yet. Hint: {hint}")
    failed = _gradcheck(name, Softplus, (_float64(SOFTPLUS_INPUTS),))
    if failed is not None:
        return failed
    return CheckResult(True, f"{name}: correct! forward, backward and gradcheck agree; "
                             f"y.grad_fn is <{Softplus.__name__}Backward>.")


def check_hypot(Hypot):
    """Exercise 2: a Function of two tensors, hypot(x, y) = sqrt(x**2 + y**2), whose backward
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
        return CheckResult(False, f"{name}: forward gives {checks._describe(out)}, which is not "
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


# --------------------------------------------------------------------------- exercise 3

class _Doubler(Function):
    """The snippet's Function: identity forward, backward that doubles."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output


def check_prediction(y_value, x_grad):
    """Exercise 3: what ``print(y, x.grad)`` shows for ``y = Doubler.apply(x) * x`` at x = 3,
    where Doubler's forward is the identity and its backward doubles the gradient."""
    x = creation.tensor([3.0], requires_grad=True)
    y = _Doubler.apply(x) * x
    y.backward()
    results = [
        check("y", _one_number(y_value), y.item(),
              hint="y is computed by the forward pass only: what does Doubler's forward "
                   "return, and what is it multiplied by?"),
        check("x.grad", _one_number(x_grad), x.grad.item(),
              hint="x reaches y along two paths and backward adds them. Along the path "
                   "through Doubler, autograd uses whatever Doubler.backward returns, "
                   "derivative or not."),
    ]
    passed = all(results)
    lines = [("  ✓ " if r else "  ✗ ") + r.message for r in results]
    summary = ("both right!" if passed
               else f"{sum(map(bool, results))} of {len(results)} parts right so far.")
    return CheckResult(passed, f"Exercise 3: {summary}\n" + "\n".join(lines))
