"""Chapter 4 exercises: gradients accumulate.

Exercise 3 (04b) starts with a prediction (``clip_prediction``, a
``teach.predictions.Prediction``): ``w.grad[1]`` after the two clipped backward calls,
locked in before the learner's hook runs, revealed after its check.

Each check builds the chapter's tensors itself, lets minigrad compute the right answer and
compares the learner's with it. A number answer may be given as ``12``, ``12.0``,
``[12.0]`` or a one-element tensor such as ``x.grad``.

The build exercise (``minigrad.teach.build``): ``accumulate(tensor, grad)``, what a leaf's
``AccumulateGrad`` does with the gradient that reached it, plugged in for minigrad's own
``Tensor.accumulate_grad``.
"""

import contextlib
import traceback
from unittest import mock

import numpy as np

from ... import Tensor, creation
from ...creation import tensor
from ...dtypes import float32, float64
from ...graph import AccumulateGrad
from ..build import Mismatch, Piece, borrowed, register, same_dtype, show, where
from ..checks import (
    MISSING, CheckResult, all_parts, as_floats, check, keeps_random_state, no_answer, one_number)
from ..predictions import Prediction

__all__ = ["check_set_to_none", "check_two_paths", "check_clip_hook", "SET_TO_NONE",
           "TWO_PATHS_ONCE", "TWO_PATHS_TWICE", "lock_two_paths", "reveal_two_paths",
           "clip_prediction"]


def _seed_example():
    """The chapter's example: x = 2, z = 3 * x * x (so dz/dx = 6x = 12)."""
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3
    return x, z


def check_set_to_none(grad_after_none, old_grad):
    """Exercise 1: from x.grad = 24, keep a name ``old_grad`` for that tensor, set
    ``x.grad = None``, call backward once more: what do x.grad and old_grad hold?"""
    x, z = _seed_example()
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old = x.grad
    x.grad = None  # what optimizer.zero_grad() does by default (set_to_none=True)
    z.backward(retain_graph=True)
    return all_parts("Exercise 1", [
        check("x.grad after x.grad = None and one backward()", one_number(grad_after_none),
              x.grad.item(),
              hint="with x.grad None there is nothing to add to: AccumulateGrad stores a "
                   "fresh copy of the gradient this one call computed."),
        check("old_grad", one_number(old_grad), old.item(),
              hint="x.grad = None only makes x forget that tensor; nothing writes into it "
                   "afterwards. (zero_() would have written zeros into that very tensor.)"),
    ])


def _two_paths():
    """Exercise 2's experiment: z = y * 3 + x with y = x * x at x = 2; x.grad after one
    backward and after a second one (retain_graph=True, no zeroing)."""
    x = creation.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3 + x
    z.backward(retain_graph=True)
    once = x.grad.item()
    z.backward(retain_graph=True)
    return once, x.grad.item()


def check_two_paths(grad_once, grad_twice):
    """Exercise 2: z = y * 3 + x with y = x * x at x = 2: x.grad after one backward, and
    after a second one (retain_graph=True, no zeroing)."""
    want_once, want_twice = _two_paths()
    return all_parts("Exercise 2", [
        check("x.grad after one backward()", one_number(grad_once), want_once,
              hint="x reaches z along two paths, through y = x * x and directly through "
                   "'+ x'. Find the derivative along each path; backward adds them."),
        check("x.grad after a second backward()", one_number(grad_twice), want_twice,
              hint="the second call computes the same gradient again, and x.grad was not "
                   "zeroed in between."),
    ])


# ---------------------------------------------------------------- predict, then run
# Exercises 1 and 2 of 04a are predictions: locked in before the cell that runs the
# experiment (``Prediction.lock``), graded after it (``reveal``). ``check_set_to_none`` and
# ``check_two_paths`` above check the same numbers given as answers.

SET_TO_NONE_CHOICES = {
    "a": "x.grad holds 12, and old_grad still holds 24",
    "b": "x.grad holds 12, and old_grad holds 12 too",
    "c": "x.grad holds 36, and old_grad holds 36 too",
    "d": "x.grad holds 12, and old_grad holds 0",
}


def _measure_set_to_none():
    x, z = _seed_example()
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    old = x.grad
    x.grad = None
    z.backward(retain_graph=True)
    now, before = x.grad.item(), old.item()
    letters = {(12.0, 24.0): "a", (12.0, 12.0): "b", (36.0, 36.0): "c", (12.0, 0.0): "d"}
    return letters.get((now, before)), f"x.grad = {now:g}, old_grad = {before:g}"


SET_TO_NONE = Prediction(
    "Exercise 1", _measure_set_to_none, choices=SET_TO_NONE_CHOICES,
    hint="x.grad = None makes x forget that tensor: does anything write into the old one "
         "afterwards, and is there anything left for the next backward to add to?")


def _measure_two_paths(which):
    def measure():
        once, twice = _two_paths()
        value = once if which == "once" else twice
        return value, f"x.grad = {value:g} after {'one call' if which == 'once' else 'two calls'}"
    return measure


TWO_PATHS_ONCE = Prediction(
    "Exercise 2, after one backward()", _measure_two_paths("once"),
    hint="x reaches z along two paths, through y = x * x and directly through '+ x': find "
         "the derivative along each; backward adds them.")
TWO_PATHS_TWICE = Prediction(
    "Exercise 2, after a second backward()", _measure_two_paths("twice"),
    hint="the second call computes the same gradient again, and x.grad was not zeroed in "
         "between.")


def lock_two_paths(grad_once, grad_twice):
    """Exercise 2, step 1: lock in both predictions (plain numbers) before running."""
    if no_answer(grad_once) and no_answer(grad_twice):
        return TWO_PATHS_ONCE.lock(grad_once)
    results = [TWO_PATHS_ONCE.lock(grad_once), TWO_PATHS_TWICE.lock(grad_twice)]
    return CheckResult(all(results), "\n".join(r.message for r in results))


def reveal_two_paths():
    """Exercise 2, step 2 (after the experiment): grade both locked predictions."""
    results = [TWO_PATHS_ONCE.reveal(), TWO_PATHS_TWICE.reveal()]
    return CheckResult(all(results), "\n".join(r.message for r in results))


# ---------------------------------------------------------------- exercise 3: a hook

HOOK_QUIZ_VALUES = [0.5, -2.0]  # exercise 3's w; loss = (w ** 3 - 4 * w).sum()
HOOK_CLIP = 2.0                 # the hook clips the gradient to [-2, 2]


def _hook_quiz_loss():
    w = creation.tensor(HOOK_QUIZ_VALUES, requires_grad=True)
    return w, (w ** 3 - 4 * w).sum()


def hook_quiz_answer():
    """Exercise 3 done by minigrad: (the gradients that arrived at w in each of two backward
    calls, w.grad after them), both as lists of floats."""
    w, loss = _hook_quiz_loss()
    arrived = []

    def clip_and_record(grad):
        arrived.append(grad.tolist())
        return grad.clamp(-HOOK_CLIP, HOOK_CLIP)

    handle = w.register_hook(clip_and_record)
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    handle.remove()
    return arrived, w.grad.tolist()


def _same_lists(got, want):
    return (len(got) == len(want) and all(
        g is not None and len(g) == len(w) and np.allclose(g, w) for g, w in zip(got, want)))


def _arrived_result(arrived, want, want_grad):
    name = "arrived"
    if arrived is MISSING or arrived is None or arrived is Ellipsis:
        return check(name, arrived, 0)  # the usual "no answer yet"
    try:
        if isinstance(arrived, (str, bytes)):
            raise TypeError
        got = [as_floats(entry) for entry in list(arrived)]
    except TypeError:
        return CheckResult(False, f"{name}: expected a list with one entry per backward() "
                                  f"call (each a list of numbers), got {arrived!r}.")
    if len(got) != len(want):
        return CheckResult(False, f"{name}: your list has {len(got)} entries; the hook runs once "
                                  f"per backward() call, and there were {len(want)} calls.")
    if any(entry is None for entry in got):
        odd = list(arrived)[got.index(None)]
        why = (" Reading w.grad inside the hook gives None on the first call: nothing has been "
               "added yet." if odd is None else "")
        return CheckResult(False, f"{name}: an entry is {odd!r}, not a gradient. Record the "
                                  f"hook's argument, grad.{why}")
    if _same_lists(got, want):
        return CheckResult(True, f"{name}: correct! the same gradient arrived on both calls.")
    clipped = [list(np.clip(entry, -HOOK_CLIP, HOOK_CLIP)) for entry in want]
    sums = [list(np.sum(want[:k + 1], axis=0)) for k in range(len(want))]
    clipped_sums = [list(np.sum(clipped[:k + 1], axis=0)) for k in range(len(want))]
    if _same_lists(got, clipped):
        hint = ("these are the clipped gradients: record what arrived, before your hook "
                "changes it.")
    elif any(_same_lists(got, other) for other in (sums, clipped_sums)) or any(
            _same_lists([entry], [want_grad]) for entry in got):
        hint = ("these look like w.grad, the running sum (or the same tensor twice). A hook "
                "sees each call's gradient as its argument, before AccumulateGrad adds it: "
                "record that argument (as numbers: grad.tolist()).")
    else:
        hint = ("record the hook's argument, grad, once per call: it is the gradient of the "
                "loss with respect to w, d/dw of (w ** 3 - 4 * w).")
    return CheckResult(False, f"{name}: {got} is not right yet. Hint: {hint}")


def _w_grad_result(w_grad, want_arrived, want):
    name = "w.grad"
    if w_grad is MISSING or w_grad is None or w_grad is Ellipsis:
        return check(name, w_grad, 0)
    got = as_floats(w_grad)
    if got is None or len(got) != len(want):
        return CheckResult(False, f"{name}: expected {len(want)} numbers (w.grad itself), got "
                                  f"{w_grad!r}.")
    if np.allclose(got, want):
        return CheckResult(True, f"{name}: correct!")
    unclipped = list(np.sum(want_arrived, axis=0))
    if np.allclose(got, unclipped):
        hint = ("w.grad was not clipped: a hook changes the gradient only by returning the "
                "changed one; a hook that returns None leaves it was.")
    elif np.allclose(got, np.clip(want_arrived[0], -HOOK_CLIP, HOOK_CLIP)):
        hint = ("this is one call's clipped gradient: after the second backward() "
                "AccumulateGrad has added the second one.")
    else:
        hint = ("each call, the hook's return value is what AccumulateGrad adds into w.grad; "
                "there were two calls.")
    return CheckResult(False, f"{name}: {got} is not right yet. Hint: {hint}")


def check_clip_hook(arrived, w_grad):
    """Exercise 3: a hook on ``w`` (``loss = (w ** 3 - 4 * w).sum()``, w = [0.5, -2])
    records what arrives and returns it clipped to [-2, 2]; after two backward() calls,
    ``arrived`` is what the hook saw (one list per call) and ``w_grad`` is ``w.grad``."""
    want_arrived, want_grad = hook_quiz_answer()
    return all_parts("Exercise 3", [
        _arrived_result(arrived, want_arrived, want_grad),
        _w_grad_result(w_grad, want_arrived, want_grad),
    ])


def _clip_answer():
    """w.grad[1] (w = -2) after exercise 3's two clipped backward calls, measured."""
    arrived, grad = hook_quiz_answer()
    return grad[1], (f"each call's gradient for w = -2 is {arrived[0][1]:g}, the hook passes on "
                     f"{max(-HOOK_CLIP, min(HOOK_CLIP, arrived[0][1])):g}, and w.grad[1] ends at "
                     f"{grad[1]:g}")


def _clip_hint(predicted, answer):
    arrived, _ = hook_quiz_answer()
    one_call = arrived[0][1]
    if predicted == 2 * one_call:
        return ("Hint: what the hook returns, not what arrived, is what AccumulateGrad adds "
                "into .grad.")
    if predicted == HOOK_CLIP:
        return ("Hint: the hook runs once per backward() call, on that call's gradient, "
                "before AccumulateGrad adds it: is the sum clipped, or each part?")
    if predicted == one_call:
        return "Hint: two backward() calls, and a clip in between: follow one call, then the next."
    return ("Hint: compute the gradient of w ** 3 - 4 * w at w = -2, follow it through the "
            "hook, and remember what .grad does with a second call.")


clip_prediction = Prediction("Exercise 3, prediction", _clip_answer, hint=_clip_hint)
"""Exercise 3's prediction: ``w.grad[1]`` after two ``backward()`` calls through the hook that
clips to [-2, 2], locked in as a number before the learner's hook runs."""


# ---------------------------------------------------------------- build: AccumulateGrad's +=

_OWN_ACCUMULATE_GRAD = Tensor.accumulate_grad   # minigrad's own piece, refused as an answer


def _accumulate_grad_with(accumulate):
    """``Tensor.accumulate_grad`` (what a leaf's ``AccumulateGrad`` calls, and the engine for a
    non-leaf that retains its gradient) with the learner's ``accumulate(tensor, grad)`` inside.
    ``grad`` is handed over as an array of the tensor's shape and dtype; a Tensor gradient
    (``backward(create_graph=True)``, chapter 11) goes to minigrad's own. An ``accumulate``
    that calls ``tensor.accumulate_grad`` itself (minigrad's own, which is this plug now)
    is stopped with a ``Mismatch`` instead of recursing forever."""
    own = _OWN_ACCUMULATE_GRAD
    inside = []

    def accumulate_grad(self, grad, owned=False):
        if isinstance(grad, Tensor):
            return own(self, grad, owned)
        if inside:
            raise Mismatch(_HINTS["own"] + _calling_line() + ".")
        dtype = self._data.dtype
        if type(grad) is not np.ndarray or grad.dtype != dtype:
            grad = np.asarray(grad, dtype=dtype)
        if grad.shape != self._data.shape:
            grad = self._broadcast_grad(grad)
        inside.append(True)
        try:
            accumulate(self, grad)
        finally:
            inside.pop()
    return accumulate_grad


def _calling_line():
    """' (line 5 of your cell: tensor.accumulate_grad(grad))': the notebook line that called
    the plug from inside the learner's accumulate (as ``build.where`` shows an error's)."""
    frames = [f for f in traceback.extract_stack()[:-2]
              if f.filename.startswith("<") or "ipykernel" in f.filename]
    if not frames or not frames[-1].line:
        return ""
    return f" (line {frames[-1].lineno} of your cell: {frames[-1].line})"


def _plug_accumulate(accumulate):
    return mock.patch.object(Tensor, "accumulate_grad", _accumulate_grad_with(accumulate))


# The graphs the battery runs backward() through: (text, leaf names, forward).
_PROGRAMS = [
    ("z = (3 * x * x).sum()", ["x"], lambda v: (3 * v["x"] * v["x"]).sum()),
    ("loss = (w * w * w).sum() + (4 * w).sum()", ["w"],
     lambda v: (v["w"] * v["w"] * v["w"]).sum() + (4 * v["w"]).sum()),
    ("loss = ((x + y) * 3).sum()", ["x", "y"], lambda v: ((v["x"] + v["y"]) * 3).sum()),
    ("loss = (x * y).sum() + x.sum()", ["x", "y"],
     lambda v: (v["x"] * v["y"]).sum() + v["x"].sum()),
]

# The chapter's sequences: (program, x's value, the steps, one graph with retain_graph=True?).
_CHAPTER_SEQUENCES = [
    (0, [2.0], ["backward", "backward"], True),                         # 12, then 24
    (0, [2.0], ["backward", "backward", "zero_", "backward", "backward"], True),
    (0, [2.0], ["backward", "backward", "None", "backward", "backward"], True),
    (1, [2.0, -1.0], ["backward", "backward", "zero_", "backward"], False),
    (2, [1.0, -2.0], ["backward", "backward", "None", "backward"], False),
]

_STEP_TEXT = {"backward": "backward()", "zero_": ".grad.zero_()", "None": ".grad = None"}

_HINTS = {
    "overwrite": " This backward()'s gradient replaced what .grad held: gradients must add up "
                 "until someone zeroes them (12, then 24).",
    "missing": " The first gradient that arrives must become .grad.",
    "sum": " The first gradient becomes .grad; each later one is added to what it holds.",
    "new": " A name kept for .grad before this call (old = x.grad) no longer sees the "
           "gradients that arrive (in PyTorch it does). Change the numbers of the tensor "
           ".grad already is (in place, as zero_() does) instead of making a new one.",
    "old": " The tensor .grad was before this step changed afterwards; after x.grad = None "
           "nothing may write into the old tensor: the next gradient starts a new .grad.",
    "shared": " The engine handed both leaves the very same array (x + y sends one "
              "gradient to both inputs), and .grad kept that array instead of numbers of its "
              "own: adding into one .grad then changes the other.",
    "zeroed": " Before this backward() the step .grad.zero_() ran: .grad was then a tensor of "
              "zeros, not None, and your accumulate made a new tensor anyway. Only None means "
              "'no gradient yet' (a test for zero or for truth mixes the two up); zeros are "
              "added to like any other .grad.",
    "own": "your accumulate calls minigrad's own Tensor.accumulate_grad (tensor."
           "accumulate_grad(...), or AccumulateGrad, which calls it), the very piece you are "
           "asked to write, so the check would compare minigrad with itself. Write the "
           "first-gradient and the later-gradient cases yourself",
    "requires_grad": " .grad is plain numbers: it does not require grad itself (in PyTorch "
                     "x.grad.requires_grad is False after an ordinary backward()). Make it "
                     "from the gradient array alone, without requires_grad=True.",
    "float32": " mg.tensor of a Python list (grad.tolist()), mg.zeros(shape) or mg.ones "
               "without dtype make float32, the default dtype: .grad must have the leaf's "
               "dtype, and the array accumulate receives already has it.",
}


def _observe(leaves, before):
    """After one step, for each leaf: its .grad's numbers (or None), whether .grad is still
    the tensor it was before the step, that tensor's numbers now, whether .grad shares
    memory with another leaf's .grad, .grad itself (for its dtype) and whether it requires
    grad."""
    seen = {}
    for name, t in leaves.items():
        grad, old = t.grad, before[name]
        others = [u.grad for n, u in leaves.items() if n != name and u.grad is not None]
        shared = grad is not None and any(
            np.shares_memory(grad.detach().numpy(), o.detach().numpy()) for o in others)
        seen[name] = (None if grad is None else grad.detach().numpy().copy(),
                      grad is not None and grad is old,
                      None if old is None else old.detach().numpy().copy(), shared,
                      grad, grad is not None and grad.requires_grad)
    return seen


def _run_sequence(program, values, steps, same_graph, dtype):
    """Make the leaves, take the steps (backward, zero_ or None on every leaf), and return
    what ``_observe`` saw after each step."""
    _, names, forward = _PROGRAMS[program]
    leaves = {name: tensor(values[name], dtype=dtype, requires_grad=True) for name in names}
    loss = forward(leaves) if same_graph else None
    seen = []
    for step in steps:
        before = {name: t.grad for name, t in leaves.items()}
        if step == "backward":
            (loss if same_graph else forward(leaves)).backward(retain_graph=same_graph)
        for t in leaves.values():
            if step == "zero_" and t.grad is not None:
                t.grad.zero_()
            elif step == "None":
                t.grad = None
        seen.append(_observe(leaves, before))
    return seen


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-7)


def _value_hint(want, got, previous):
    """Which mistake gives ``got`` where ``want`` was expected (``previous``: .grad before)."""
    if got is None:
        return _HINTS["missing"]
    if previous is not None and _same(got, want - previous) and not _same(got, want):
        return _HINTS["overwrite"]
    return _HINTS["sum"]


def _known_error(error):
    """The refusals of minigrad's that a wrong ``.grad`` leads to, as a Mismatch that names
    the learner's line and the usual cause (``None`` for any other error): the grad setter's
    refusal of another dtype or of a numpy array, and ``+=`` on a ``.grad`` that requires
    grad."""
    text = str(error).replace("minigrad.", "")
    if isinstance(error, RuntimeError) and "assign a gradient with dtype" in text:
        hint = (_HINTS["float32"] if "dtype float32 to a tensor of dtype float64" in text else
                " A float64 constant (np.zeros(shape) or np.ones(shape) without dtype, "
                "np.float64, an array made from Python floats) turns float32 into float64: "
                "make .grad from the array accumulate receives, which has the leaf's dtype.")
        return Mismatch(f"your accumulate stored a .grad of another dtype than its leaf "
                        f"(minigrad refused it: {text}){where(error)}.{hint}")
    if isinstance(error, RuntimeError) and "leaf Variable that requires grad" in text:
        return Mismatch(f"adding into .grad raised RuntimeError: {text.split('. ')[0]}"
                        f"{where(error)}. Your .grad requires grad.{_HINTS['requires_grad']}")
    if isinstance(error, TypeError) and "assigned grad expected to be a Tensor" in text:
        return Mismatch(f"your accumulate stored something that is not a tensor in .grad "
                        f"(minigrad refused it: {text}){where(error)}. accumulate receives a "
                        "numpy array; a leaf's .grad is a Tensor with numbers of its own, as "
                        "in PyTorch.")
    return None


@contextlib.contextmanager
def _dtype_refusal():
    """Run learner code; minigrad's refusal of a wrong .grad becomes a Mismatch that says
    why (``_known_error``)."""
    try:
        yield
    except Mismatch:
        raise
    except Exception as error:  # the learner's code: a known refusal says why
        refused = _known_error(error)
        if refused is None:
            raise
        raise refused from None


def _grad_dtype(context, name, got, want):
    """.grad must have the leaf's dtype (a learner's ``tensor._grad = ...`` gets past the
    setter's own test): the float32 -> float64 slip in ``same_dtype``'s words."""
    if got is None or want is None or got.dtype == want.dtype:
        return
    if str(want.dtype).endswith("float32"):
        same_dtype(f"{context}, {name}.grad", got, want)
    raise Mismatch(f"{context}, {name}.grad is {str(got.dtype).replace('minigrad.', '')}, where "
                   f"minigrad's own keeps the leaf's {str(want.dtype).replace('minigrad.', '')}."
                   f"{_HINTS['float32']}")


def _compare_sequence(accumulate, program, values, steps, same_graph=False, dtype=float64):
    """Take the same steps with minigrad's own AccumulateGrad and with the learner's; raise
    Mismatch at the first step and leaf where what the learner's left behind differs."""
    want = _run_sequence(program, values, steps, same_graph, dtype)
    with _plug_accumulate(accumulate), _dtype_refusal():
        got = _run_sequence(program, values, steps, same_graph, dtype)
    text = _PROGRAMS[program][0]
    at = ", ".join(f"{name} = {show(value)}" for name, value in values.items())
    calls = [_STEP_TEXT[step] for step in steps]
    for k, (wanted, seen) in enumerate(zip(want, got)):
        context = f"on {text} at {at}, after {', '.join(calls[:k + 1])}"
        for name, (w_grad, w_same, w_old, w_shared, w_tensor, w_requires) in wanted.items():
            g_grad, g_same, g_old, g_shared, g_tensor, g_requires = seen[name]
            previous = want[k - 1][name][0] if k else None
            if not _same(w_grad, g_grad):
                raise Mismatch(f"{context}, {name}.grad is {show(g_grad)}; expected "
                               f"{show(w_grad)}.{_value_hint(w_grad, g_grad, previous)}")
            _grad_dtype(context, name, g_tensor, w_tensor)
            if g_requires and not w_requires:
                raise Mismatch(f"{context}, {name}.grad requires grad.{_HINTS['requires_grad']}")
            if w_same and not g_same:
                zeroed = k and steps[k - 1] == "zero_"
                raise Mismatch(f"{context}, {name}.grad holds the right numbers, but in a new "
                               f"tensor.{_HINTS['zeroed'] if zeroed else _HINTS['new']}")
            if not _same(w_old, g_old):
                raise Mismatch(f"{context}, the tensor that was {name}.grad before it holds "
                               f"{show(g_old)}; expected {show(w_old)}.{_HINTS['old']}")
            if g_shared and not w_shared:
                raise Mismatch(f"{context}, {name}.grad and another leaf's .grad are one and the "
                               f"same memory.{_HINTS['shared']}")


def _check_copies(accumulate):
    """Called directly, as the engine does: one array for two leaves (as x + y sends), then
    that array changed (the engine may reuse it): neither .grad may change with it."""
    x = tensor([1.0, 2.0, 3.0], dtype=float64, requires_grad=True)
    y = tensor([4.0, 5.0, 6.0], dtype=float64, requires_grad=True)
    grad = np.array([0.5, -1.0, 2.0])
    accumulate(x, grad)
    accumulate(y, grad)
    text = "accumulate(x, g) then accumulate(y, g) with one array g = [0.5, -1.0, 2.0]"
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t.grad, Tensor):
            raise Mismatch(f"after {text}, {name}.grad is {type(t.grad).__name__}; expected a "
                           "tensor (a leaf's .grad is a Tensor, as in PyTorch).")
    if any(np.shares_memory(t.grad.detach().numpy(), grad) for t in (x, y)):
        raise Mismatch(f"after {text}, x.grad and y.grad are that very array g, not copies of "
                       f"it.{_HINTS['shared']} Give the first gradient memory of its own.")
    accumulate(x, np.array([1.0, 1.0, 1.0]))
    grad[:] = 100.0
    for name, t, expected in (("x", x, [1.5, 0.0, 3.0]), ("y", y, [0.5, -1.0, 2.0])):
        if not _same(t.grad.detach().numpy(), np.array(expected)):
            raise Mismatch(f"after {text}, accumulate(x, [1.0, 1.0, 1.0]) and g changed by the "
                           f"engine, {name}.grad is {show(t.grad.detach().numpy())}; expected "
                           f"{expected}.{_HINTS['shared']}")


def _random_sequence(rng):
    """A random case: a program, its leaves' values (shape (), (3,) or (2, 3)), a dtype and
    3 to 6 steps."""
    program = int(rng.integers(len(_PROGRAMS)))
    shape = [(), (3,), (2, 3)][int(rng.integers(3))]
    values = {name: rng.uniform(-2, 2, size=shape).round(2).tolist()
              for name in _PROGRAMS[program][1]}
    steps = [["backward", "backward", "backward", "zero_", "None"][int(rng.integers(5))]
             for _ in range(int(rng.integers(3, 7)))]
    dtype = [float32, float64][int(rng.integers(2))]
    return program, values, steps, dtype


# The node that calls minigrad's own piece: handing it in (a subclass, or code that calls it)
# is refused too. Not in the piece's ``own``: 04a lists its code (it only passes the gradient
# on to ``Tensor.accumulate_grad``), and ``own`` is what the student copy must not show.
_NODE = Piece(name="accumulate", chapter="04", defines="accumulate", summary="", plug=None,
              battery=None, own={"AccumulateGrad": AccumulateGrad})


@keeps_random_state
def _accumulate_battery(accumulate, n_random=150):
    """The chapter's sequences, the copies called directly, then random sequences."""
    refused = borrowed(_NODE, accumulate)
    if refused:
        raise Mismatch(refused)
    for program, x, steps, same_graph in _CHAPTER_SEQUENCES:
        names = _PROGRAMS[program][1]
        values = {name: [v + i for v in x] for i, name in enumerate(names)}
        _compare_sequence(accumulate, program, values, steps, same_graph, dtype=float32)
    with _plug_accumulate(accumulate), _dtype_refusal():
        _check_copies(accumulate)
    rng = np.random.default_rng(4)
    for _ in range(n_random):
        program, values, steps, dtype = _random_sequence(rng)
        _compare_sequence(accumulate, program, values, steps, dtype=dtype)
    return (f"the chapter's 12-then-24 and {len(_CHAPTER_SEQUENCES) - 1} more sequences of "
            "backward(), zero_() and .grad = None, one array for two leaves, and "
            f"{n_random} random sequences")


register(Piece(name="accumulate", chapter="04", defines="accumulate",
               summary="AccumulateGrad's +=: the first gradient copied, later ones added",
               plug=_plug_accumulate, battery=_accumulate_battery,
               own={"Tensor.accumulate_grad": _OWN_ACCUMULATE_GRAD}))
