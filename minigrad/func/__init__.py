"""``minigrad.func``: PyTorch's ``torch.func`` (chapter 13), function transforms over
pytrees (tuples, lists, dicts) of tensors:

* ``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (``reverse.py``): reverse mode, on
  ``autograd.grad``;
* ``jvp``, ``jacfwd``, ``hessian`` (``forward.py``): forward mode, on
  ``autograd.forward_ad`` (the JVP rules of the ops); ``hessian`` is ``jacfwd(jacrev(f))``;
* ``vmap`` (``vmap.py``): a function of one sample over a batch (a loop: no op is batched
  yet); it nests with the others, ``vmap(grad(f))`` gives per-sample gradients;
* ``functional_call`` (``functional_call.py``): a module as a function of its weights.

``core.py`` holds what the transforms share (their own inputs, when to record a gradient's
graph), ``pytree.py`` the flattening of nested structures.
"""

from .forward import hessian, jacfwd, jvp
from .functional_call import functional_call
from .reverse import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call"]
