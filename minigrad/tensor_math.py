"""Tensor's math methods (chapters 5 and 7): ``x.exp()``, ``x.sum()``, ``x.clamp()``, ... are
the functions of their op family in ``ops/`` (declared there in ``METHODS``); here are only
``with_numpy_names`` (reductions take ``axis=``/``keepdims=`` too) and ``x.where``, whose
function takes its arguments in another order.
"""

import functools

from .ops.selection import where


def with_numpy_names(method):
    """``method`` that also takes numpy's keyword names, ``axis=`` for ``dim=`` and
    ``keepdims=`` for ``keepdim=``, as PyTorch's reductions do."""
    @functools.wraps(method)
    def method_with_numpy_names(self, *args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return method(self, *args, **kwargs)
    return method_with_numpy_names


class MathMethods:
    """Tensor's method forms whose function has another signature: ``x.where(condition, y)``
    is ``minigrad.where(condition, x, y)``."""

    __slots__ = ()

    def where(self, condition, other):
        """``self`` where ``condition`` holds, ``other`` elsewhere: ``minigrad.where(condition,
        self, other)``."""
        return where(condition, self, other)
