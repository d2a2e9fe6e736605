"""``RemovableHandle``: what registering a hook returns (PyTorch's
``torch.utils.hooks.RemovableHandle``; chapter 3 watches a backward pass with hooks). It is
defined with the engine's hooks in ``minigrad.graph``."""

from ..graph import RemovableHandle

__all__ = ["RemovableHandle"]
