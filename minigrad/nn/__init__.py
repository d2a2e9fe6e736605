"""``minigrad.nn``: modules, layers and losses, as ``torch.nn`` (chapters 6–7), and
``nn.utils`` (gradient clipping, chapter 10)."""

from . import functional, init, utils
from .layers import (GELU, Dropout, Flatten, Identity, LeakyReLU, Linear, LogSoftmax, ModuleList,
                     ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Module
from .conv import Conv2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .normalization import BatchNorm1d, LayerNorm
from .parameter import Parameter
from .sparse import Embedding
from .activations_more import (ELU, SELU, CosineSimilarity, Hardtanh, KLDivLoss, LogSigmoid,
                               Mish, ModuleDict, ParameterList, ReLU6, SiLU, Softplus,
                               Softsign, Unflatten)
from .activations_more import MODULES as _more_modules
from . import parameter
from .lazy import LazyBatchNorm1d, LazyConv2d, LazyLinear
from .parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["Module", "Parameter", "Linear", "Sequential", "ModuleList", "ReLU", "LeakyReLU", "GELU",
           "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Identity", "Dropout",
           "BatchNorm1d", "LayerNorm", "Embedding", "MSELoss", "L1Loss", "SmoothL1Loss",
           "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
           "functional", "init", "utils",
           "parameter", "LazyLinear", "LazyConv2d", "LazyBatchNorm1d", "UninitializedParameter",
           "UninitializedBuffer"] + _more_modules
