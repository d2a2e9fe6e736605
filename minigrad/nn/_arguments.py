"""Argument checks shared by ``nn.functional``'s functions and losses: PyTorch's TypeError
for an argument that is not a tensor (chapters 6-7)."""

from .._tensor import Tensor

__all__ = ["expect_tensor"]


def expect_tensor(function, name, position, value):
    """PyTorch's TypeError for an argument that is not a tensor (a numpy array, a list)."""
    if not isinstance(value, Tensor):
        kind = type(value)
        if kind.__module__ != "builtins":  # numpy.ndarray, as PyTorch names it
            kind = f"{kind.__module__}.{kind.__name__}"
        else:
            kind = kind.__name__
        raise TypeError(f"{function}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {kind}: convert it first with minigrad.tensor(...)"
                        " (minigrad.from_numpy(...) shares a numpy array's memory)")
