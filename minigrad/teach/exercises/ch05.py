"""Chapter 5 exercises: a broadcast shape predicted before it is run, gradients that add
when a tensor is used several times, and a vector-Jacobian product
(``backward(gradient=v)``): exercise 1 in ``notebooks/05a_tensors.ipynb``, exercises 2 and 3
in ``notebooks/05c_reuse_and_vjp.ipynb``.
The chapter's build exercises (``notebooks/05b_tensor_gradients.ipynb``) are checked by
``ch05_build``.

Exercise 1 is a ``teach.predictions.Prediction`` (lock the shape, run the sum, reveal), and
so is 05b's ``bias_grad_prediction`` (``b.grad[0]`` of a weighted broadcast sum).
Every other check computes the right answer itself with minigrad (a forward pass and
``backward()``), compares it with the learner's and prints ✓ or ✗ with a hint.
"""

import numpy as np

import minigrad as mg

from ...creation import tensor
from ..checks import MISSING, CheckResult, check
from ..predictions import Prediction

__all__ = ["broadcast_prediction", "bias_grad_prediction", "check_gradients_add", "check_vjp",
           "BIAS_X", "BIAS_WEIGHTS"]

_NO_ANSWER = ("no answer yet. Write your code in the cell above and run it, then run this "
              "check again.")


# ------------------------------------------------------------------ exercise 1

BROADCAST_SHAPES = ((2, 1, 3), (4, 1))  # mg.ones(2, 1, 3) + mg.ones(4, 1)


def _broadcast_answer():
    """The shape of the sum, measured with minigrad."""
    shape_a, shape_b = BROADCAST_SHAPES
    shape = tuple((mg.ones(shape_a) + mg.ones(shape_b)).shape)
    return shape, f"mg.ones{shape_a} + mg.ones{shape_b} has shape {shape}"


def _broadcast_hint(predicted, answer):
    if len(predicted) != len(answer):
        return (f"{predicted} has {len(predicted)} dimensions. Hint: the result has as many "
                "dimensions as the longer of the two shapes.")
    return ("Hint: write the two shapes one under the other, aligned on the right; where a "
            "shape is shorter, count its missing sizes as 1. In each column a 1 stretches to "
            "the other size.")


broadcast_prediction = Prediction("Exercise 1", _broadcast_answer, shape=True,
                                  hint=_broadcast_hint)
"""Exercise 1, predict, then run: the shape of ``mg.ones(2, 1, 3) + mg.ones(4, 1)``, locked
in as a tuple written by hand (``broadcast_prediction.lock((..., ...))``) before the sum is
run, then ``broadcast_prediction.reveal()``."""


# ------------------------------------------------------------------ 05b: predict, then run

BIAS_X = [[1., 2., 3.], [4., 5., 6.], [7., 8., 9.], [10., 11., 12.]]          # X, (4, 3)
BIAS_WEIGHTS = [[1., 0., 2.], [3., 1., 0.], [0., 2., 1.], [1., 1., 1.]]      # the loss's weights


def _bias_grad_answer():
    """b.grad[0] for ``loss = (weights * (X + b)).sum()``, b of shape (3,), measured."""
    b = tensor([1., 2., 3.], requires_grad=True)
    (tensor(BIAS_WEIGHTS) * (tensor(BIAS_X) + b)).sum().backward()
    return b.grad[0].item(), "b.grad is [" + ", ".join(f"{g:g}" for g in b.grad.tolist()) + "]"


def _bias_grad_hint(predicted, answer):
    if predicted == len(BIAS_X):
        return ("Hint: with weights, each row no longer passes back 1: it passes back its "
                "weight.")
    if predicted == sum(BIAS_WEIGHTS[0]):
        return ("Hint: b[0] is added to column 0 of every row: sum down that column, not "
                "along a row.")
    return "Hint: b[0] is used once in every row, in column 0; each use passes back its weight."


bias_grad_prediction = Prediction("Prediction, b.grad[0]", _bias_grad_answer, tol=0,
                                  hint=_bias_grad_hint)
"""05b, section 5: ``b.grad[0]`` of the weighted loss ``(weights * (X + b)).sum()``, a number
locked in before ``backward()`` runs."""


# ------------------------------------------------------------------ exercise 2

REUSED = [2.0, -1.0]


def reused_grad():
    """w.grad for ``loss = (w * w * w).sum() + (4 * w).sum()``."""
    w = mg.tensor(REUSED, requires_grad=True)
    loss = (w * w * w).sum() + (4 * w).sum()
    loss.backward()
    return w.grad


def check_gradients_add(answer):
    """Exercise 2: a tensor used four times; its gradient is the sum over the uses."""
    return check("w.grad", answer, reused_grad(),
                 hint="count every place w is used. Each use of w in a product sends back "
                      "the product of the other factors; the use in 4 * w sends back 4. "
                      "Add them, element by element.")


# ------------------------------------------------------------------ exercise 3

VJP_X = [1.0, 2.0, -1.0]
VJP_M = [[2.0, 0.0, 1.0], [1.0, 3.0, 0.0], [0.0, -1.0, 1.0]]
VJP_V = [1.0, 0.0, -2.0]   # the number y[0] - 2 * y[2]: v weights the outputs


def vjp_function(x):
    """The exercise's function: y = (M @ x) * x, each y[i] depends on every x[j]."""
    return (tensor(VJP_M) @ x) * x


def vjp_parts():
    """(vᵀJ, Jv, 1ᵀJ, J) at VJP_X for VJP_V, J computed by minigrad's jacobian."""
    J = mg.autograd.functional.jacobian(vjp_function, tensor(VJP_X)).numpy()
    v = np.array(VJP_V)
    return v @ J, J @ v, J.sum(axis=0), J


def _vjp_hint(got, parts):
    """A hint for a wrong answer of the right shape, naming the slip without the answer."""
    _, jv, ones_j, J = parts
    v = np.array(VJP_V)

    def close(want):
        return np.allclose(got, want, rtol=1e-5, atol=1e-6)
    if close(jv):
        return ("this is J v, the Jacobian times v as a column. backward computes vᵀ J: v "
                "weights the outputs y[i] (the rows of J), and the result has one entry per "
                "input x[j].")
    if close(ones_j):
        return ("this is the gradient of y.sum(): every output weighted by 1, the v of "
                "y.sum().backward(). Which weight does each y[i] get in y[0] - 2 * y[2]?")
    if close(v * ones_j) or close(v * np.diag(J)):
        return ("multiplying v into a gradient element by element is right only when each "
                "y[i] depends on x[i] alone (a diagonal J, as for x * x). Here y[i] depends "
                "on every x[j]: pass v to backward instead.")
    return ("build v, one weight per output y[i], and pass it as "
            "y.backward(gradient=v); x.grad is then vᵀ J.")


def check_vjp(answer):
    """Exercise 3: the gradient of y[0] - 2 * y[2] for y = (M @ x) * x, i.e. vᵀJ for
    v = [1, 0, -2], at x = [1, 2, -1]."""
    name = "vᵀJ"
    if answer is MISSING or answer is None or answer is Ellipsis:
        return CheckResult(False, f"{name}: {_NO_ANSWER}")
    parts = vjp_parts()
    result = check(name, answer, parts[0])
    if result:
        return result
    if "has shape" in result.message:
        return CheckResult(False, f"{result.message} Hint: vᵀJ has one entry per input x[j], "
                                  "like x.grad.")
    if "is not right yet" not in result.message:
        return result  # text, or not a number: check says which
    got = np.asarray(answer.detach().numpy() if isinstance(answer, mg.Tensor) else answer,
                     dtype=float)
    return CheckResult(False, f"{result.message} Hint: {_vjp_hint(got, parts)}")
