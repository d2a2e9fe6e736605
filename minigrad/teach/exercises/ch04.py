"""Chapter 4 exercises: gradients accumulate.

Each check builds the chapter's tensors itself, lets minigrad compute the right answer and
compares the learner's with it. A number answer may be given as ``48``, ``48.0``,
``[48.0]`` or a one-element tensor such as ``x.grad``.
"""


from ... import creation
from ..checks import check
from ..checks import all_parts as _together, one_number as _one_number

__all__ = ["check_naive_engine", "check_set_to_none", "check_two_paths"]


def _seed_example():
    """The chapter's example: x = 2, z = 3 * x * x (so dz/dx = 6x = 12)."""
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3
    return x, z


def check_naive_engine(after_four, after_reset):
    """Exercise 1: x.grad after four ``z.backward()`` calls through a graph that is never
    freed (no zeroing in between), then after ``x.grad.zero_()`` and two more calls."""
    x, z = _seed_example()
    for _ in range(4):
        z.backward(retain_graph=True)  # retain_graph=True: the engine that never frees
    want_four = x.grad.item()
    x.grad.zero_()
    for _ in range(2):
        z.backward(retain_graph=True)
    want_reset = x.grad.item()
    return _together("Exercise 1", [
        check("x.grad after four backward() calls", _one_number(after_four), want_four,
              hint="every call computes the same dz/dx = 6x again, and AccumulateGrad adds it "
                   "to what x.grad already holds; nothing takes anything away in between."),
        check("x.grad after zero_() and two more backward()", _one_number(after_reset),
              want_reset,
              hint="zero_() writes zeros into x.grad; each later call adds one dz/dx to them."),
    ])


def check_set_to_none(grad_after_none, old_grad):
    """Exercise 2: from x.grad = 24, keep a name ``old_grad`` for that tensor, set
    ``x.grad = None``, call backward once more: what do x.grad and old_grad hold?"""
    x, z = _seed_example()
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old = x.grad
    x.grad = None  # what optimizer.zero_grad() does by default (set_to_none=True)
    z.backward(retain_graph=True)
    return _together("Exercise 2", [
        check("x.grad after x.grad = None and one backward()", _one_number(grad_after_none),
              x.grad.item(),
              hint="with x.grad None there is nothing to add to: AccumulateGrad stores a "
                   "fresh copy of the gradient this one call computed."),
        check("old_grad", _one_number(old_grad), old.item(),
              hint="x.grad = None only makes x forget that tensor; nothing writes into it "
                   "afterwards. (zero_() would have written zeros into that very tensor.)"),
    ])


def check_two_paths(grad_once, grad_twice):
    """Exercise 3: z = y * 3 + x with y = x * x at x = 2: x.grad after one backward, and
    after a second one (retain_graph=True, no zeroing)."""
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3 + x
    z.backward(retain_graph=True)
    want_once = x.grad.item()
    z.backward(retain_graph=True)
    want_twice = x.grad.item()
    return _together("Exercise 3", [
        check("x.grad after one backward()", _one_number(grad_once), want_once,
              hint="x reaches z along two paths, through y = x * x and directly through "
                   "'+ x'. Find the derivative along each path; backward adds them."),
        check("x.grad after a second backward()", _one_number(grad_twice), want_twice,
              hint="the second call computes the same gradient again, and x.grad was not "
                   "zeroed in between."),
    ])
