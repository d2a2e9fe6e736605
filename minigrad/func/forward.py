"""``jvp``, ``jacfwd`` and ``hessian``: PyTorch's forward-mode ``torch.func`` transforms
(chapter 13), in forward mode: the function runs once inside a dual level
(``autograd.forward_ad``) with each input carrying its tangent, and the JVP rules of the
ops it meets give ``J t`` as it goes. ``jacfwd`` runs it once per input element (a
one-hot tangent: one column of the Jacobian each).

PyTorch opens one dual level at a time; ``torch.func`` nests through functorch's levels.
Here a ``jvp`` or ``jacfwd`` called inside another one (``jacfwd(jacfwd(f))``) falls back to
reverse mode, by the double-vjp trick: ``g(u) = u^T J`` (one backward with
``create_graph=True`` and a cotangent ``u`` that requires grad) is linear in ``u``, so the
vjp of ``g`` with a tangent ``t`` is ``J t``, the same numbers, and the outer level's
tangents flow through it. ``grad``/``jacrev`` inside ``jvp``/``jacfwd`` (forward-over-
reverse: ``hessian`` is ``jacfwd(jacrev(f))``) need no fallback: backward's formulas are
ops, which carry the tangents.
"""

import functools

import numpy as np

from .. import autograd
from ..autograd import forward_ad
from ..creation import from_numpy, zeros, zeros_like
from ..graph import enable_grad, is_grad_enabled
from ..ops.shape import stack
from ..ops.tangents import LEVELS
from .._tensor import Tensor
from .core import (check_argnums, check_randomness, check_tensor_leaves, differentiate, enter,
                   leave, reaches_outside)
from .pytree import tree_flatten, tree_map, tree_unflatten
from .reverse import Inputs, jacrev, split_aux

__all__ = ["jvp", "jacfwd", "hessian"]

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
    if not LEVELS:
        return _jvp_forward(func, leaves, spec, given, has_aux)
    outer = is_grad_enabled()  # nested in another forward transform: reverse mode
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
        if not LEVELS:
            return _jacfwd_forward(func, argnums, has_aux, args, kwargs)
        outer = is_grad_enabled()  # nested in another forward transform: reverse mode
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


def hessian(func, argnums=0):
    """``f -> the Hessian of f`` (``f`` returning a scalar): ``jacfwd(jacrev(f))``, as
    PyTorch computes it (forward-over-reverse: backward's formulas carry the tangents)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ------------------------------------------------------------------ in forward mode

def _primal(value):
    """Check an input of a forward transform as ``enter`` does (a float tensor)."""
    if not isinstance(value, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
    if not value.dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return value


def _unpacked(outputs):
    """``(primals, tangents)`` of ``outputs``: zeros for an output no tangent reached."""
    primals, tangents = [], []
    for o in outputs:
        primal, tangent = forward_ad.unpack_dual(o)
        primals.append(primal)
        tangents.append(zeros_like(primal) if tangent is None else tangent)
    return primals, tangents


def _plain(value):
    """A value handed out of the dual level (an aux): without its tangent."""
    return forward_ad.unpack_dual(value).primal if isinstance(value, Tensor) else value


def _jvp_forward(func, leaves, spec, given, has_aux):
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(_primal(p), t) for p, t in zip(leaves, given)]
        result, aux = split_aux(func(*tree_unflatten(duals, spec)), has_aux, "jvp")
        outputs, out_spec = tree_flatten(result)
        check_tensor_leaves(outputs, _PREFIX + "expected f(*primals) to return only tensors, "
                            "got unsupported type {type}")
        primals, tangents = _unpacked(outputs)
        answer = (tree_unflatten(primals, out_spec), tree_unflatten(tangents, out_spec))
        if has_aux:
            return answer + (tree_map(_plain, aux),)
        return answer


def _jacfwd_forward(func, argnums, has_aux, args, kwargs):
    """``jacfwd`` in forward mode: one call of ``func`` per element of the inputs at
    ``argnums``, that element's tangent 1, every other 0."""
    nums = check_argnums(argnums, len(args))
    flat, specs = [], []
    for n in nums:
        leaves, spec = tree_flatten(args[n])
        flat.extend(_primal(leaf) for leaf in leaves)
        specs.append(spec)
    out_spec, first_aux, columns_of = None, None, []  # [input][element] -> output tangents
    for i, t in enumerate(flat):
        columns = []
        for k in range(t.numel()):
            seed = np.zeros(t.numel(), t.detach().numpy().dtype)
            seed[k] = 1
            tangents = [zeros_like(s).detach() for s in flat]
            tangents[i] = from_numpy(seed.reshape(t.shape))
            outputs, out_spec, aux = _run_dual(func, args, kwargs, nums, specs, flat,
                                               tangents, has_aux)
            first_aux = aux if first_aux is None else first_aux
            columns.append(outputs)
        columns_of.append(columns)
    # The outputs' shapes (one more call if no input has an element: the Jacobian is empty)
    sample = next((c[0] for c in columns_of if c), None)
    if sample is None:
        sample, out_spec, first_aux = _run_dual(func, args, kwargs, nums, specs, flat,
                                                [zeros_like(s) for s in flat], has_aux)
    per_output = [[] for _ in sample]
    for t, columns in zip(flat, columns_of):
        for j, o in enumerate(sample):
            if not columns:
                block = zeros(*o.shape, *t.shape, dtype=o.dtype)
            else:
                block = stack([c[j] for c in columns], dim=-1).reshape(*o.shape, *t.shape)
            per_output[j].append(block)
    blocks = [_rebuild(b, specs, not isinstance(argnums, tuple)) for b in per_output]
    jacobian = tree_unflatten(blocks, out_spec)
    if has_aux:
        return jacobian, first_aux
    return jacobian


def _run_dual(func, args, kwargs, nums, specs, flat, tangents, has_aux):
    """``func`` run once inside a dual level, the inputs at ``nums`` carrying ``tangents``:
    the outputs' tangents (flat), the output structure and the aux."""
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat, tangents)]
        call = list(args)
        start = 0
        for n, spec in zip(nums, specs):
            call[n] = tree_unflatten(duals[start:start + spec.num_leaves], spec)
            start += spec.num_leaves
        result, aux = split_aux(func(*call, **kwargs), has_aux, "jacfwd")
        outputs, out_spec = tree_flatten(result)
        check_tensor_leaves(outputs, _PREFIX + "expected f(*primals) to return only "
                            "tensors, got unsupported type {type}")
        _, out_tangents = _unpacked(outputs)
        return out_tangents, out_spec, tree_map(_plain, aux) if has_aux else None


def _rebuild(per_leaf, specs, single):
    """One value per input leaf, put back in the structure of the arguments (a tuple of
    them for a tuple ``argnums``)."""
    per_leaf, parts = list(per_leaf), []
    for spec in specs:
        parts.append(tree_unflatten(per_leaf[:spec.num_leaves], spec))
        per_leaf = per_leaf[spec.num_leaves:]
    return parts[0] if single else tuple(parts)
