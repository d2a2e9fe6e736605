"""``minigrad.nn``: modules, layers and losses, as ``torch.nn`` (chapters 6–7)."""

from . import functional, init
from .layers import (Dropout, Flatten, Identity, Linear, LogSoftmax, ModuleList, ReLU,
                     Sequential, Sigmoid, Softmax, Tanh)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "Sequential", "ModuleList", "ReLU", "Tanh",
           "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Identity", "Dropout", "MSELoss",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "functional", "init"]
