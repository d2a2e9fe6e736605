"""``minigrad.utils``: data loading (chapter 10)."""

from . import data

__all__ = ["data"]
