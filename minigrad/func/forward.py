"""``jvp`` and ``jacfwd``: PyTorch's forward-mode ``torch.func`` transforms, computed for now
in reverse mode by the double-vjp trick.

``g(u) = u^T J`` (one backward with ``create_graph=True`` and a cotangent ``u`` that
requires grad) is linear in ``u``, so the vjp of ``g`` with a tangent ``t`` is ``J t``: the
exact Jacobian-vector product, PyTorch's numbers, at the cost of two backward passes instead
of one forward pass carrying tangents. Forward-mode AD (a JVP rule per op,
``autograd.forward_ad``) replaces this later. ``jacfwd`` records ``g`` once and reads one
column of the Jacobian per input element from it.
"""

import functools

import numpy as np

from .. import autograd
from ..creation import from_numpy, zeros, zeros_like
from ..graph import enable_grad, is_grad_enabled
from ..ops.shape import stack
from .core import (check_randomness, check_tensor_leaves, differentiate, enter, leave,
                   reaches_outside)
from .pytree import tree_flatten, tree_map, tree_unflatten
from .reverse import Inputs, split_aux

__all__ = ["jvp", "jacfwd"]

_PREFIX = "jvp(f, primals, tangents): "


class Linearized:
    """``u -> u^T J`` recorded for ``outputs`` of the own tensors ``inputs``: ``column(t)``
    gives ``J t`` (one tangent per input) as one tensor per output."""

    def __init__(self, outputs, inputs, own, outer):
        self.outputs, self.outer = outputs, outer
        self.live = [j for j, o in enumerate(outputs) if o.requires_grad]
        self.dummies = [zeros_like(outputs[j]).requires_grad_(True) for j in self.live]
        self.own = set(own) | {id(u) for u in self.dummies}
        if self.live:
            self.transposed = autograd.grad([outputs[j] for j in self.live], list(inputs),
                                            self.dummies, create_graph=True,
                                            allow_unused=True)
        else:
            self.transposed = [None] * len(inputs)
        used = [g for g in self.transposed if g is not None and g.requires_grad]
        self.create = outer and reaches_outside(used, self.own)

    def column(self, tangents):
        result = [zeros_like(o) for o in self.outputs]
        used = [(g, t) for g, t in zip(self.transposed, tangents)
                if g is not None and g.requires_grad]
        if used:
            create = self.create or (self.outer and any(t.requires_grad for _, t in used))
            grads = differentiate([g for g, _ in used], self.dummies, [t for _, t in used],
                                  self.own, self.outer, retain_graph=True, create=create)
            for j, g in zip(self.live, grads):
                result[j] = g
        return result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(f(*primals), J tangents)`` (and ``aux`` with ``has_aux``): ``primals`` and
    ``tangents`` are tuples of the same structure, each tangent the shape of its primal."""
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict is not supported "
                           "yet, leave it False")
    if not isinstance(primals, tuple):
        raise RuntimeError(_PREFIX + "Expected primals to be a tuple. E.g. it should be "
                           "valid to call f(*primals).")
    leaves, spec = tree_flatten(primals)
    given, given_spec = tree_flatten(tangents)
    if given_spec != spec:
        raise RuntimeError(
            _PREFIX + "Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec} and tangents with structure {given_spec}")
    if not leaves:
        raise RuntimeError(_PREFIX + "Expected primals to contain at least one Tensor.")
    check_tensor_leaves(given, _PREFIX + "expected tangents to be tensors, got {type}")
    for p, t in zip(leaves, given):
        if hasattr(p, "shape") and p.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}.")
    outer = is_grad_enabled()
    with enable_grad():
        mine = [enter(leaf, outer) for leaf in leaves]
        own = {id(t) for t in mine if t.grad_fn is None}
        result, aux = split_aux(func(*tree_unflatten(mine, spec)), has_aux, "jvp")
        outputs, out_spec = tree_flatten(result)
        check_tensor_leaves(outputs, _PREFIX + "expected f(*primals) to return only tensors, "
                            "got unsupported type {type}")
        columns = Linearized(outputs, mine, own, outer).column(given)
    answer = (tree_unflatten([leave(o, own, outer) for o in outputs], out_spec),
              tree_unflatten(columns, out_spec))
    if has_aux:
        return answer + (tree_map(lambda t: leave(t, own, outer), aux),)
    return answer


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``f -> the Jacobian of f`` built column by column (one Jacobian-vector product per
    input element), laid out as ``jacrev``'s: ``output.shape + input.shape`` per block."""
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        with enable_grad():
            inputs = Inputs(args, argnums, outer)
            result, aux = split_aux(func(*inputs.args, **kwargs), has_aux, "jacfwd")
            outputs, out_spec = tree_flatten(result)
            check_tensor_leaves(outputs, _PREFIX + "expected f(*primals) to return only "
                                "tensors, got unsupported type {type}")
            line = Linearized(outputs, inputs.flat, inputs.own, outer)
            per_output = [[] for _ in outputs]  # [output][input] -> block
            for i, t in enumerate(inputs.flat):
                columns = []
                for k in range(t.numel()):
                    tangents = [zeros_like(s).detach() for s in inputs.flat]
                    seed = np.zeros(t.numel(), t.detach().numpy().dtype)
                    seed[k] = 1
                    tangents[i] = from_numpy(seed.reshape(t.shape))
                    columns.append(line.column(tangents))
                for j, o in enumerate(outputs):
                    if not columns:
                        block = zeros(*o.shape, *t.shape, dtype=o.dtype)
                    else:
                        block = stack([c[j] for c in columns], dim=-1)
                        block = block.reshape(*o.shape, *t.shape)
                    per_output[j].append(block)
            jacobian = tree_unflatten([inputs.rebuild(b) for b in per_output], out_spec)
            if has_aux:
                return jacobian, tree_map(lambda t: leave(t, inputs.own, outer), aux)
            return jacobian

    return wrapper
