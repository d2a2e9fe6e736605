"""Where ``Tensor`` gets the methods that compute (chapter 5): the one place they are
attached.

``minigrad._tensor`` defines what a tensor *is* (its storage, autograd attributes,
properties and conversions to Python) and imports no op, so that the ops can build on it.
The methods that compute are written next to what they run: most are the functions of an
op family that its ``METHODS`` names (``x.exp()`` is ``ops.pointwise.exp``); the operators,
shapes and views, ``x[key]``, the in-place methods and ``backward`` are classes of methods
in the ``tensor_*`` modules. This module attaches both onto ``Tensor``, once, when
``minigrad`` is imported. A name defined twice is an error here, not a silent override.
"""

from . import creation, ops
from ._tensor import Tensor
from .tensor_arithmetic import ArithmeticMethods
from .tensor_backward import BackwardMethods
from .tensor_conversion import ConversionMethods
from .tensor_indexing import IndexingMethods
from .tensor_inplace import InPlaceMethods
from .tensor_math import MathMethods, with_numpy_names
from .tensor_shape import ShapeMethods

# The modules whose public functions are also methods (each module's ``METHODS``).
FUNCTION_MODULES = ops.FAMILIES + (creation,)

METHOD_CLASSES = (ArithmeticMethods, MathMethods, ShapeMethods, IndexingMethods,
                  InPlaceMethods, BackwardMethods, ConversionMethods)

# Reductions that also take numpy's keywords (``axis=``, ``keepdims=``), as PyTorch's do.
NUMPY_KEYWORD_METHODS = ("sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin",
                         "var", "std", "all", "any", "softmax", "log_softmax", "prod",
                         "cumsum", "gather")

_CLASS_ONLY = {"__module__", "__qualname__", "__doc__", "__slots__", "__dict__",
               "__weakref__", "__firstlineno__", "__static_attributes__"}


def install(target, method_classes):
    """Copy each class's methods (and properties) onto ``target``; refuse a name that is
    already there."""
    for methods in method_classes:
        for name, value in vars(methods).items():
            if name in _CLASS_ONLY or (name == "__hash__" and value is None):
                continue  # (a class that defines __eq__ gets __hash__ = None implicitly)
            if name in vars(target):
                raise TypeError(f"{target.__name__}.{name} is defined twice: in "
                                f"{methods.__name__} and before it")
            if callable(value) and getattr(value, "__name__", None) == name:  # (not an alias)
                # (what tracebacks and teach.show_source print: the method as it is called)
                value.__qualname__ = f"{target.__name__}.{name}"
            setattr(target, name, value)


def install_functions(target, modules):
    """Each name in a module's ``METHODS``: its function, as a method (``x.floor()`` runs
    ``floor(x)``), without the ``out=`` keyword the function may take (PyTorch's methods
    refuse it: ``x.floor(out=y)`` is a TypeError); refuse a name that is already there."""
    for module in modules:
        for name in module.METHODS:
            if name in vars(target):
                raise TypeError(f"{target.__name__}.{name} is defined twice: in "
                                f"{module.__name__}.METHODS and before it")
            function = getattr(module, name)
            setattr(target, name, getattr(function, "without_out", function))


install(Tensor, METHOD_CLASSES)
install_functions(Tensor, FUNCTION_MODULES)
for _name in NUMPY_KEYWORD_METHODS:
    setattr(Tensor, _name, with_numpy_names(getattr(Tensor, _name)))
del _name
