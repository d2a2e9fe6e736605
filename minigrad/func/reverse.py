"""``grad``, ``grad_and_value``, ``vjp`` and ``jacrev``: PyTorch's reverse-mode
``torch.func`` transforms, each a function that takes a function and returns one.

All of them run the function once with inputs of their own (``core.enter``) and call
``autograd.grad`` on what it returns; ``jacrev`` calls it once per output element (one row
of the Jacobian each; ``chunk_size`` is accepted and changes nothing). ``hessian``,
``jacfwd(jacrev(f))`` as in PyTorch, is in ``forward.py``.
"""

import functools

import numpy as np

from ..creation import from_numpy, zeros
from ..graph import enable_grad, is_grad_enabled
from .._tensor import Tensor
from ..ops.shape import stack
from .core import (check_argnums, check_tensor_leaves, differentiate, enter, leave,
                   reaches_outside)
from .pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]

_NOT_TENSOR = ("vjp(f, *primals): expected f(*primals) to return only tensors, got "
               "unsupported type {type}")
_AUX_TUPLE = ("{fn}(f)(*args): output of function f should be a tuple: (output, aux) if "
              "has_aux is True")


class Inputs:
    """The arguments at ``argnums``, replaced by the transform's own tensors: ``args`` to
    call the function with, ``flat`` (every own tensor), ``own`` (ids of the fresh leaves)
    and ``rebuild(per_leaf)``, which puts one value per own tensor back in the arguments'
    structure (one structure for an int ``argnums``, a tuple of them for a tuple)."""

    def __init__(self, args, argnums, outer_grad):
        self.nums = check_argnums(argnums, len(args))
        self.single = not isinstance(argnums, tuple)
        args = list(args)
        self.flat, self.specs = [], []
        for n in self.nums:
            leaves, spec = tree_flatten(args[n])
            mine = [enter(leaf, outer_grad) for leaf in leaves]
            self.flat.extend(mine)
            self.specs.append(spec)
            args[n] = tree_unflatten(mine, spec)
        self.args = args
        self.own = {id(t) for t in self.flat if t.grad_fn is None}

    def rebuild(self, per_leaf):
        per_leaf, parts = list(per_leaf), []
        for spec in self.specs:
            parts.append(tree_unflatten(per_leaf[:spec.num_leaves], spec))
            per_leaf = per_leaf[spec.num_leaves:]
        return parts[0] if self.single else tuple(parts)


def split_aux(result, has_aux, fn):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(_AUX_TUPLE.format(fn=fn))
    output, aux = result
    check_tensor_leaves(tree_flatten(aux)[0], "Expected tensors, got unsupported type {type}")
    return output, aux


def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (gradient of f, value of f)`` for ``f`` returning a scalar tensor (with
    ``has_aux``: ``(gradient, (value, aux))``). The gradient has the structure of the
    argument at ``argnums`` (a tuple of them for a tuple of positions)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            inputs = Inputs(args, argnums, outer)
            output, aux = split_aux(func(*inputs.args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp "
                    "or jacrev APIs instead?")
            grads = differentiate([output], inputs.flat, [None], inputs.own, outer)
            value = leave(output, inputs.own, outer)
            gradient = inputs.rebuild(grads)
            if has_aux:
                aux = tree_map(lambda t: leave(t, inputs.own, outer), aux)
                return gradient, (value, aux)
            return gradient, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> gradient of f``, ``torch.func.grad``: ``grad(f)(x)`` is ``df/dx`` for ``f``
    returning a scalar tensor, with the structure of ``x`` (a tensor, or a tuple / list /
    dict of them); ``argnums`` picks the arguments (a tuple gives a tuple of gradients),
    ``has_aux`` lets ``f`` return ``(output, aux)`` and gives ``(gradient, aux)``. An input
    ``f`` does not use gets zeros. Nests: ``grad(grad(f))``, ``vmap(grad(f))``."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)``
    gives ``cotangents^T J``, a tuple with one entry per primal, each with the primal's
    structure. ``cotangents`` has the structure of the output; ``vjp_fn`` may be called any
    number of times."""
    outer = is_grad_enabled()
    with enable_grad():
        leaves, spec = tree_flatten(primals)
        mine = [enter(leaf, outer) for leaf in leaves]
        own = {id(t) for t in mine if t.grad_fn is None}
        result, aux = split_aux(func(*tree_unflatten(mine, spec)), has_aux, "vjp")
        outputs, out_spec = tree_flatten(result)
        check_tensor_leaves(outputs, _NOT_TENSOR)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        given, given_spec = tree_flatten(cotangents)
        if given_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {given_spec}, primal output: "
                f"{out_spec}")
        check_tensor_leaves(given, "vjp_fn: expected the cotangents to be tensors, got {type}")
        for i, (c, o) in enumerate(zip(given, outputs)):
            if c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {o.shape}: give each cotangent its "
                    "output's shape.")
        with enable_grad():
            grads = differentiate(outputs, mine, given, own, outer and is_grad_enabled(),
                                  retain_graph=True)
        return tree_unflatten(grads, spec)

    result = tree_unflatten([leave(o, own, outer) for o in outputs], out_spec)
    if has_aux:
        return result, vjp_fn, tree_map(lambda t: leave(t, own, outer), aux)
    return result, vjp_fn


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``f -> the Jacobian of f`` by reverse mode: one vjp per output element (a row each).
    For each output (a pytree is fine), a block of shape ``output.shape + input.shape`` per
    input at ``argnums``, in the structure of the arguments; ``has_aux`` as in ``grad``."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            inputs = Inputs(args, argnums, outer)
            result, aux = split_aux(func(*inputs.args, **kwargs), has_aux, "jacrev")
            outputs, out_spec = tree_flatten(result)
            check_tensor_leaves(outputs, _NOT_TENSOR)
            blocks = [inputs.rebuild(_rows(o, inputs, outer)) for o in outputs]
            jacobian = tree_unflatten(blocks, out_spec)
            if has_aux:
                return jacobian, tree_map(lambda t: leave(t, inputs.own, outer), aux)
            return jacobian

    return wrapper


def _rows(output, inputs, outer):
    """d output / d each own input, each of shape ``output.shape + input.shape``: one
    ``autograd.grad`` per element of ``output``, with a one-hot cotangent."""
    n = output.numel()
    create = outer and output.requires_grad and reaches_outside([output], inputs.own)
    rows = []
    for k in range(n):
        seed = np.zeros(n, output.detach().numpy().dtype)
        seed[k] = 1
        seed = from_numpy(seed.reshape(output.shape))
        rows.append(differentiate([output], inputs.flat, [seed], inputs.own, outer,
                                  retain_graph=True, create=create))
    blocks = []
    for j, t in enumerate(inputs.flat):
        if n == 0:
            blocks.append(zeros(*output.shape, *t.shape, dtype=t.dtype))
        else:
            blocks.append(stack([row[j] for row in rows]).reshape(*output.shape, *t.shape))
    return blocks
