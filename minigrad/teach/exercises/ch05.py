"""Chapter 5 exercises: broadcast shapes, the gradient of a broadcast bias, the gradient of a
matrix product, and gradients that add when a tensor is used several times.

Every check computes the right answer itself with minigrad (a forward pass and
``backward()``), compares it with the learner's and prints ✓ or ✗ with a hint.
"""

import minigrad as mg

from ..checks import MISSING, CheckResult, check

__all__ = ["check_broadcast_shape", "check_bias_grad", "check_matmul_grad",
           "check_gradients_add"]

_NO_ANSWER = ("no answer yet. Write your code in the cell above and run it, then run this "
              "check again.")


# ------------------------------------------------------------------ exercise 1

BROADCAST_SHAPES = ((2, 1, 3), (4, 1))  # mg.ones(2, 1, 3) + mg.ones(4, 1)


def check_broadcast_shape(answer):
    """Exercise 1: the shape of ``mg.ones(2, 1, 3) + mg.ones(4, 1)``."""
    name = "shape of mg.ones(2, 1, 3) + mg.ones(4, 1)"
    if answer is MISSING or answer is None or answer is Ellipsis:
        return CheckResult(False, f"{name}: {_NO_ANSWER}")
    if isinstance(answer, mg.Tensor):
        return CheckResult(False, f"{name}: you gave a tensor; give its shape instead, as a "
                                  "tuple of sizes such as (5, 6, 7).")
    try:
        got = tuple(int(n) for n in answer)
    except (TypeError, ValueError):
        return CheckResult(False, f"{name}: give the shape as a tuple of sizes such as "
                                  f"(5, 6, 7), not {type(answer).__name__}.")
    shape_a, shape_b = BROADCAST_SHAPES
    expected = tuple((mg.ones(shape_a) + mg.ones(shape_b)).shape)
    if got == expected:
        return CheckResult(True, f"{name}: correct!")
    if len(got) != len(expected):
        return CheckResult(False, f"{name}: {got} has {len(got)} dimensions, which is not "
                                  "right yet. Hint: the result has as many dimensions as "
                                  "the longer of the two shapes.")
    return CheckResult(False, f"{name}: {got} is not right yet. Hint: write the two shapes "
                              "one under the other, aligned on the right; where a shape is "
                              "shorter, count its missing sizes as 1. In each column a 1 "
                              "stretches to the other size.")


# ------------------------------------------------------------------ exercise 2

BIAS_WEIGHTS = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def bias_grad():
    """b.grad for ``loss = (w * (X + b)).sum()`` with X of shape (2, 3) and b of shape (2, 1)."""
    X = mg.arange(6.0).reshape(2, 3)
    w = mg.tensor(BIAS_WEIGHTS)
    b = mg.zeros(2, 1, requires_grad=True)
    loss = (w * (X + b)).sum()
    loss.backward()
    return b.grad


def check_bias_grad(answer):
    """Exercise 2: the gradient of a per-row bias of shape (2, 1)."""
    return check("b.grad", answer, bias_grad(),
                 hint="a gradient always has the shape of its tensor, and b[i] is added to "
                      "every element of row i: each of those uses sends back its own "
                      "dloss/dy, and the uses add up.")


# ------------------------------------------------------------------ exercise 3

MATMUL_A = [[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]]
MATMUL_B = [[1.0, 2.0], [0.0, 1.0], [4.0, 0.0]]


def matmul_grad():
    """A.grad for ``loss = (A @ B).sum()`` with the matrices of the exercise."""
    A = mg.tensor(MATMUL_A, requires_grad=True)
    B = mg.tensor(MATMUL_B)
    loss = (A @ B).sum()
    loss.backward()
    return A.grad


def check_matmul_grad(answer):
    """Exercise 3: dloss/dA for ``loss = (A @ B).sum()``."""
    return check("dloss/dA", answer, matmul_grad(),
                 hint="first write down G = dloss/dC for C = A @ B and loss = C.sum() (it "
                      "has C's shape), then use the rule for the first factor of a matrix "
                      "product; the result must have A's shape (2, 3).")


# ------------------------------------------------------------------ exercise 4

REUSED = [2.0, -1.0]


def reused_grad():
    """w.grad for ``loss = (w * w * w).sum() + (4 * w).sum()``."""
    w = mg.tensor(REUSED, requires_grad=True)
    loss = (w * w * w).sum() + (4 * w).sum()
    loss.backward()
    return w.grad


def check_gradients_add(answer):
    """Exercise 4: a tensor used four times; its gradient is the sum over the uses."""
    return check("w.grad", answer, reused_grad(),
                 hint="count every place w is used. Each use of w in a product sends back "
                      "the product of the other factors; the use in 4 * w sends back 4. "
                      "Add them, element by element.")
