"""The interpreter of the fuzz programs (used by test_fuzz_parity.py and fuzz_hunt.py).

``Program`` runs every step of a program drawn with ``fuzz_programs.py``'s ops in both
libraries and fails on the first difference in values, dtype, shape, requires_grad or
exception type (when PyTorch raises, minigrad must raise the same type, and the program
ends); at the end it runs backward and compares the gradients of every leaf. A failure
prints the program as code that runs with either library. Here too: the differences that
are explained (PyTorch's bugs and inconsistencies, minigrad's documented refusals).
"""

import warnings

import numpy as np
import torch
from hypothesis import strategies as st

import minigrad as mg
from fuzz_programs import OPS, STATEMENTS, TOLERANCE, Leaf, arrays, dtype_name, materialize

# Errors that are PyTorch's bugs, not behaviours to copy (the program ends there): a failed
# internal assert (backward of `True ** x`); "tensor does not have a device" (backward of
# F.group_norm without a weight, on an input with no element).
PYTORCH_BUGS = ("INTERNAL ASSERT FAILED", "tensor does not have a device")

# The same for backward alone, with the op that must have run: PyTorch 2.13's backward of
# clamp with two tensor bounds fails when the bounds broadcast the input (or min) to a
# larger shape (``T(3.).clamp(T(2.5, requires_grad=True), T([0.5, 1.]))``: "output with
# shape [] doesn't match the broadcast shape [2]"; its clamp_backward_min_max masks the
# smaller gradient in place); minigrad gives the gradient, summed to each shape. And the
# backward of a float base to the power of a bool tensor (``T([0.5], requires_grad=True) **
# T([True])``) computes ``exponent - 1`` on the bools, which PyTorch refuses ("Subtraction,
# the `-` operator, with a bool tensor is not supported"); minigrad's gradient is
# exponent * base ** (exponent - 1) with the bools as 0 and 1.
# Also: adaptive_avg_pool2d of an input with an empty channel dim (3, 0, 3, 2) runs
# forward, and its backward refuses the gradient of the same shape ("Expected grad_output
# to have non-zero size for non-batch dimensions"); minigrad's gradient is empty.
PYTORCH_BACKWARD_BUGS = {
    "doesn't match the broadcast shape": ("clamp_tensors",),
    "Subtraction, the `-` operator, with a bool": ("pow", "rpow_any"),
    "Expected grad_output to have non-zero size": ("adaptive_avg_pool2d",),
}

# PyTorch's own inconsistency: maximum, minimum and clamp with a tensor bound break a tie of
# -0.0 and 0.0 one way in their scalar loop (the first operand, std::max) and the other way
# in their vectorized one (the second: the SIMD max instruction), so which zero comes out
# depends on the tensor's size and position (numpy, under minigrad's maximum, gives the
# second). A later 1 / x or sqrt turns the zero's sign into inf against -inf: a program
# with one of these ops whose only difference is such a sign is not a failure. (clamp with
# number bounds is consistent, and minigrad's follows it.)
ZERO_TIES = {"maximum", "minimum", "clamp_tensors"}

# Refusals minigrad documents: where PyTorch succeeds, a RuntimeError whose message contains
# one of these ends the program without failing. PyTorch skips its same-dtype check of @ on
# some empty batched products (bool (1, 0) @ float64 (2, 0, 1) gives float64 zeros) and
# refuses the same product with elements; minigrad refuses both, with PyTorch's message.
# And minigrad does not record a value that requires grad written into a part of an
# expanded tensor (``x.expand(2, 3)[0] = v``), which PyTorch records (AsStridedBackward0
# over the memory the rows share); it refuses with a message that says so.
DELIBERATE_REFUSALS = ("expected m1 and m2 to have the same dtype",
                       "a write into an expanded tensor cannot be recorded")


class Discrepancy(AssertionError):
    """minigrad and PyTorch differ; ``signature`` says in which op and how (for hunting)."""

    def __init__(self, message, signature):
        super().__init__(message)
        self.signature = signature


# ----------------------------------------------------------------- comparing

def builtin_type(error):
    """The exception's nearest built-in class (PyTorch raises subclasses of its own)."""
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


def difference(m, t, tolerance="float64"):
    """How minigrad's result ``m`` differs from PyTorch's ``t`` (None when they agree).
    Floats are compared at the looser of their own dtype's tolerance and ``tolerance``'s
    (a float64 result computed from float32 values carries float32 rounding)."""
    if isinstance(t, torch.Tensor):
        if not isinstance(m, mg.Tensor):
            return "type", f"minigrad gives a {type(m).__name__}, PyTorch a Tensor"
        if dtype_name(m.dtype) != dtype_name(t.dtype):
            return "dtype", f"dtype {dtype_name(m.dtype)} in minigrad, {dtype_name(t.dtype)} in PyTorch"
        if tuple(m.shape) != tuple(t.shape):
            return "shape", f"shape {tuple(m.shape)} in minigrad, {tuple(t.shape)} in PyTorch"
        if m.requires_grad != t.requires_grad:
            return "requires_grad", (f"requires_grad {m.requires_grad} in minigrad, "
                                     f"{t.requires_grad} in PyTorch")
        a, b = m.detach().numpy(), t.detach().numpy()
        if a.dtype.kind in "fc":
            rtol, atol = max(TOLERANCE[a.dtype.name], TOLERANCE[tolerance])
            same = np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = np.array_equal(a, b)
        return None if same else ("values", "values differ")
    if isinstance(t, tuple):
        if not isinstance(m, tuple) or len(m) != len(t):
            return "type", f"minigrad gives {type(m).__name__}, PyTorch a tuple of {len(t)}"
        return next(filter(None, (difference(a, b, tolerance) for a, b in zip(m, t))), None)
    if t is None or m is None:
        return None if m is t else ("type", f"minigrad gives {m!r}, PyTorch {t!r}")
    return None if m == t or (m != m and t != t) else ("values", "values differ")


def call(fn, *args):
    """``fn(*args)``, or the exception it raised; warnings are silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception as error:  # noqa: BLE001  (comparing exceptions is the point)
            return error


# ----------------------------------------------------------------- the interpreter

HEADER = ("# with lib = torch or minigrad: T = lib.tensor; float64 = lib.float64 (and the "
          "other dtypes); nan, inf = float('nan'), float('inf')")


class Program:
    """One program running in both libraries; ``data`` is hypothesis' interactive draw."""

    def __init__(self, data, ctx):
        self.data, self.ctx = data, ctx
        self.x = {}                               # lib -> the current tensor
        self.leaves = {torch: [], mg: []}         # lib -> every tensor made from a Leaf
        self.lines = []                           # the program as code
        self.ops = []

    def start(self, leaf):
        self.lines.append(f"x = {leaf!r}")
        for lib in (torch, mg):
            self.x[lib] = materialize(leaf, lib, self.leaves[lib])

    def steps(self, pool, min_steps, max_steps):
        """Run ``min_steps..max_steps`` ops drawn from ``pool``; False once one raised."""
        for _ in range(self.data.draw(st.integers(min_steps, max_steps), label="steps")):
            if not self.step(self.data.draw(st.sampled_from(pool), label="op")):
                return False
        return True

    def step(self, name):
        """Run op ``name`` in both libraries; True when it ran (in both)."""
        fn, args_of, code = OPS[name]
        args = self.data.draw(args_of(self.x[torch], self.ctx), label=name)
        self.ops.append(name)
        text = code(args) if callable(code) else code.format(*map(repr, args))
        self.lines.append(text if name in STATEMENTS else f"x = {text}")
        out = {lib: call(lambda: fn(lib, self.x[lib], *materialize(args, lib, self.leaves[lib])))
               for lib in (torch, mg)}
        if name in ("getitem", "setitem") and isinstance(out[mg], IndexError):
            selected = call(lambda: self.x[torch].detach()[materialize(args[0], torch, [])])
            if isinstance(selected, torch.Tensor) and selected.numel() == 0:
                return False  # PyTorch skips the bounds check when an index selects nothing
        if not self.agree(name, out[mg], out[torch]):
            return False
        self.x = {lib: r[0] if isinstance(r, tuple) else r for lib, r in out.items()}
        if isinstance(out[torch], tuple):
            self.lines[-1] += "[0]"
        return True

    def backward(self):
        """``x.sum().backward()`` or ``x.backward(gradient=...)`` in both, then compare the
        gradient of every leaf."""
        t = self.x[torch]
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            return
        if self.data.draw(st.booleans(), label="backward with gradient="):
            gradient = self.data.draw(arrays(t.shape, dtype_name(t.dtype)).map(Leaf),
                                      label="gradient")
            self.lines.append(f"x.backward(gradient={gradient!r})")
            out = {lib: call(lambda: self.x[lib].backward(gradient=gradient.make(lib)))
                   for lib in (torch, mg)}
        else:
            self.lines.append("x.sum().backward()")
            out = {lib: call(lambda: self.x[lib].sum().backward()) for lib in (torch, mg)}
        self.ops.append("backward")
        if not self.agree("backward", out[mg], out[torch]):
            return
        for i, (m, t) in enumerate(zip(self.leaves[mg], self.leaves[torch])):
            with warnings.catch_warnings():  # an in-place op may have made a leaf a non-leaf
                warnings.simplefilter("ignore")
                found = difference(m.grad, t.grad, self.tolerance())
            if found and self.zero_tie_sign(m.grad, t.grad):
                return  # PyTorch's inconsistency: see ZERO_TIES
            if found:
                self.fail(("grad", found[0], tuple(sorted(set(self.ops)))),
                          f"the grad of leaf #{i} (counting the T(...) above from 0): {found[1]}",
                          m.grad, t.grad)

    def agree(self, name, m, t):
        """Fail unless ``m`` and ``t`` agree; True when both ran and the program goes on."""
        if isinstance(t, Exception):
            if name == "backward" and any(bug in str(t) and set(ops) & set(self.ops) for bug, ops
                                          in PYTORCH_BACKWARD_BUGS.items()):
                return False
            if any(bug in str(t) for bug in PYTORCH_BUGS):
                # A PyTorch bug, not a behaviour to copy: e.g. backward of `True ** x` (a
                # bool base) fails an assert in PyTorch 2.13; minigrad's gradient is 0.
                return False
            if not isinstance(m, builtin_type(t)):
                self.fail((name, "exception", type(t).__name__, type(m).__name__),
                          f"PyTorch raises {type(t).__name__}({t}), "
                          f"minigrad {_describe(m)}", m, t)
            return False
        if isinstance(t, torch.Tensor) and t.requires_grad and not t.is_floating_point():
            # A deliberate difference: PyTorch records some in-place writes of a value that
            # requires grad into an integer or bool tensor (fill_, x[...] = v, x[mask] = v,
            # masked_fill_; not copy_ or x[0] = v), giving an integer tensor that requires
            # grad, which it refuses everywhere else. minigrad never records those writes:
            # the values are compared, then the program ends (its graphs differ).
            if isinstance(m, mg.Tensor) and not m.requires_grad:
                found = difference(m, t.detach(), self.tolerance())
                if found:
                    self.fail((name, found[0]), found[1], m, t)
                return False
        if isinstance(m, Exception):
            if isinstance(m, RuntimeError) and any(s in str(m) for s in DELIBERATE_REFUSALS):
                return False
            self.fail((name, "raises", type(m).__name__, " ".join(str(m).split()[:4])),
                      f"minigrad raises {type(m).__name__}({m}), "
                      "PyTorch does not", m, t)
        found = difference(m, t, self.tolerance())
        if found and self.zero_tie_sign(m, t):
            return False  # PyTorch's inconsistency: see ZERO_TIES
        if found:
            self.fail((name, found[0]), found[1], m, t)
        return True

    def zero_tie_sign(self, m, t):
        """Do ``m`` and ``t`` differ only in signs that a tie of -0.0 and 0.0 decides (an
        inf against -inf, a zero against -0.0), in a program with an op of ZERO_TIES?"""
        if not (ZERO_TIES & set(self.ops)) or not isinstance(t, torch.Tensor) \
                or not isinstance(m, mg.Tensor) or tuple(m.shape) != tuple(t.shape):
            return False
        a, b = m.detach().numpy(), t.detach().numpy()
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            return False
        with np.errstate(invalid="ignore"):
            differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        return bool(differ.any()) and bool(((a == -b) & (np.isinf(b) | (b == 0)))[differ].all())

    def tolerance(self):
        """float32's tolerance once any float32 tensor took part, else float64's."""
        made = [leaf.dtype for leaf in self.leaves[torch]] + [self.x[torch].dtype]
        return "float32" if torch.float32 in made else "float64"

    def fail(self, signature, what, m, t):
        program = "\n    ".join([HEADER] + self.lines)
        raise Discrepancy(f"minigrad differs from PyTorch: {what}\n    {program}\n"
                          f"PyTorch:  {_show(t)}\nminigrad: {_show(m)}", signature)


def _describe(result):
    if isinstance(result, Exception):
        return f"raises {type(result).__name__}({result})"
    return f"returns {_show(result)}"


def _show(result):
    if isinstance(result, Exception):
        return f"{type(result).__name__}: {result}"
    return repr(result)
