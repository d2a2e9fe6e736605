"""``minigrad.nn``: modules, layers and losses, as ``torch.nn`` (chapters 6–7), and
``nn.utils`` (gradient clipping, chapter 10)."""

from . import functional, init, utils
from .layers import (GELU, Dropout, Dropout1d, Dropout2d, Flatten, Identity, LeakyReLU, Linear,
                     LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Module
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                      MaxPool2d)
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .parameter import Parameter
from .sparse import Embedding
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .transformer import (MultiheadAttention, Transformer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from . import parameter
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d,
                   LazyConvTranspose1d, LazyConvTranspose2d, LazyLinear)
from .parameter import UninitializedBuffer, UninitializedParameter
from . import activations_more

# The modules of activations_more.py, as it declares them in MODULES (nn.SiLU, nn.Hardswish,
# ...): adding a module's name there is all it takes.
globals().update({_name: getattr(activations_more, _name) for _name in activations_more.MODULES})
_more_modules = activations_more.MODULES

__all__ = ["Module", "Parameter", "Linear", "Sequential", "ModuleList", "ReLU", "LeakyReLU", "GELU",
           "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Identity", "Dropout",
           "Dropout1d", "Dropout2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm",
           "Embedding", "MSELoss", "L1Loss", "SmoothL1Loss",
           "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
           "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerEncoderLayer",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "functional", "init", "utils",
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           "parameter", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "UninitializedParameter", "UninitializedBuffer"] + _more_modules
