"""``minigrad.utils``: data loading (chapter 10), activation checkpointing (chapter 13)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
