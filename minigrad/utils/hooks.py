"""``RemovableHandle``: what registering a hook returns (PyTorch's
``torch.utils.hooks.RemovableHandle``; chapter 3 watches a backward pass with hooks)."""

import itertools
import weakref

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Takes its hook off again: ``handle.remove()``, or ``with handle:`` for a block."""

    next_id = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *error):
        self.remove()
