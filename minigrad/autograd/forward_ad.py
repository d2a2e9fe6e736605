"""``minigrad.autograd.forward_ad``: forward-mode AD on tensors, PyTorch's
``torch.autograd.forward_ad`` (chapter 13).

Inside a dual level a tensor may carry a *tangent* ``v`` (``make_dual(x, v)``). Every op
whose input carries one computes, next to its value, the output's tangent ``J v`` with its
JVP rule (``jvp``, written next to ``backward`` in each op's class: ``ops/op.py``, "Rules
of a JVP"), so one forward pass gives a Jacobian-vector product::

    import minigrad.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        jvp = fwAD.unpack_dual(y).tangent

Tangents are dropped when the level exits. As in PyTorch, one level is open at a time
(``torch.func.jvp`` nests through functorch's own levels; ``minigrad.func.jvp`` falls back
to reverse mode when nested).
"""

from collections import namedtuple

from .._tensor import Tensor
from ..ops.op import forward_mode, set_forward_mode
from ..ops.tangents import LEVELS, clear_tangents, set_tangent, tangent_of

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


def enter_dual_level():
    """Open a new dual level and return its number (0: PyTorch has one at a time)."""
    if LEVELS:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    LEVELS.append(0)
    set_forward_mode(True)
    return 0


def exit_dual_level(*, level=None):
    """Close the level (the innermost, the only one): every tangent is dropped."""
    if level is None:
        level = LEVELS[-1] if LEVELS else -1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if not LEVELS or LEVELS[-1] != level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    LEVELS.pop()
    clear_tangents()
    set_forward_mode(False)


class dual_level:
    """Context manager for forward AD: inside it, ``make_dual`` makes tensors carry
    tangents; on exit they are all dropped. ``with dual_level() as level:`` gives the
    level's number."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("What ``unpack_dual`` returns: the primal (a view of the dual "
                              "tensor, carrying no tangent) and the tangent (or None).")


def _check_level(level, where):
    current = LEVELS[-1] if LEVELS else -1
    if level is None:
        return current
    if level != current or level < 0:
        raise RuntimeError(f"Invalid level given to {where}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` (a tensor of its shape) at the open
    level: the ops run on it compute Jacobian-vector products as they go. ``tangent`` is
    kept as it is (no copy: changing it in place changes the dual's tangent)."""
    if not LEVELS and level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor):
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute "
                             "'is_floating_point' (make_dual needs a Tensor as primal)")
    if not isinstance(tangent, Tensor):
        raise TypeError(f"_make_dual(): argument 'tangent' (position 2) must be Tensor, not "
                        f"{type(tangent).__name__}")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    level = _check_level(level, "_make_dual")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    dual = tensor.view(tensor.shape)
    set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at the open level: the primal a view of it that
    carries no tangent, the tangent None if it has none. Outside a level: ``(tensor,
    None)``."""
    if not LEVELS and level is None:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    _check_level(level, "_fw_primal")
    # (forward mode is off inside a custom Function's forward: its inputs are primals there)
    was_on = forward_mode()
    tangent = tangent_of(tensor) if was_on else None
    set_forward_mode(False)  # (the alias gets no tangent)
    try:
        primal = tensor[...]  # an alias (AliasBackward0), as PyTorch's _fw_primal
    finally:
        set_forward_mode(was_on)
    return UnpackedDualTensor(primal, tangent)
