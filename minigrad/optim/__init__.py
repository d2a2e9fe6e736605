"""``minigrad.optim``: optimizers, as ``torch.optim`` (chapter 8), and their learning-rate
schedulers, ``optim.lr_scheduler`` (chapter 10)."""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .adadelta import Adadelta
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler",
           "Adadelta", "LBFGS"]
