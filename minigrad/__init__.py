"""minigrad: a small numpy autograd engine with PyTorch's API.

``import minigrad as mg`` and write what you would write with ``import torch as torch``:
``mg.tensor([2.0], requires_grad=True)``, ``y.backward()``, ``x.grad``, ``mg.no_grad()``.
The course in ``notebooks/`` builds and explains it chapter by chapter.
"""

from . import methods  # noqa: F401  (Tensor gets its computing methods: first)
from . import accelerator, autograd, creation, cuda, dtypes, ops
from ._tensor import Tensor
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, normal, ones, ones_like, rand, rand_like, randint, randn,
                       randn_like, randperm, tensor, zeros, zeros_like)
from .dtypes import dtype, float16, float32, float64, int8, int16, int32, int64, uint8
from .graph import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops.linalg import matmul
from .ops.selection import where
from .ops.shape import cat, stack
from .printing import set_printoptions
from .random import Generator, default_generator, initial_seed, manual_seed, seed
from .tensor_device import Size, device
# The function forms of Tensor methods (mg.exp, mg.sum, ...), and matmul, cat and stack with
# out=: after the imports above, which they replace.
from .functions import *  # noqa: F401,F403
from .functions import __all__ as _function_names

# Every op family's public functions, as each declares them in FUNCTIONS (minigrad.floor,
# minigrad.logit, ...): adding an op's name there is all it takes.
for _family in methods.FUNCTION_MODULES:
    globals().update({_name: getattr(_family, _name) for _name in _family.FUNCTIONS})
del _family


bool = dtypes.bool_  # noqa: A001  (minigrad.bool, like torch.bool)
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
concat = concatenate = cat

from . import nn, optim, utils  # noqa: E402  (they build on everything above)
from .serialization import load, save  # noqa: E402
from .nn.functional import conv2d, max_pool2d  # noqa: E402  (torch.conv2d, torch.max_pool2d)
from . import legacy  # noqa: E402
from .legacy import *  # noqa: E402,F401,F403  (mg.pi, mg.inf, mg.LongTensor, ...)
from . import func  # noqa: E402  (torch.func: grad, vmap, jacrev, ...)
from . import linalg  # noqa: E402  (torch.linalg: inv, solve, eigh, svd, norms, ...)
from .compile import compile  # noqa: E402  (torch.compile: trace a step, replay it)

__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def get_default_dtype():
    return float32


__all__ = [
    "Tensor", "Size", "device", "dtype", "Generator", "autograd",
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye",
    "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
    "randn", "rand", "randint", "randperm", "randn_like", "rand_like", "normal",
    "manual_seed", "seed", "initial_seed", "default_generator",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "matmul", "stack", "cat", "concat", "where", "is_tensor", "get_default_dtype",
    "float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool",
    "float", "double", "half", "long", "int", "nn", "optim", "utils", "linalg", "save", "load",
    "set_printoptions", "conv2d", "max_pool2d", "compile",
] + legacy.__all__ + list(_function_names) + [name for family in methods.FUNCTION_MODULES
                             for name in family.FUNCTIONS]
__all__ = list(dict.fromkeys(__all__))  # (matmul, cat and stack are named twice above)
