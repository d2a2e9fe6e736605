"""``minigrad.optim``: optimizers, as ``torch.optim`` (chapter 8)."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
