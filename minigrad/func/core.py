"""What every ``minigrad.func`` transform shares: taking inputs in, differentiating, and
handing results out, on top of ``autograd.grad`` (reverse mode, the graph of ``graph.py``).

PyTorch's functorch gives each transform a *level*; minigrad has one graph, so a transform
marks what belongs to it instead:

* ``enter``: an input becomes a tensor of the transform's own. Without history outside it
  is a fresh leaf that requires grad; an input that requires grad (and grad mode is on) is
  a differentiable alias, so the result stays a function of the caller's tensor: that is
  how ``grad(grad(f))``, ``jacrev(jacrev(f))`` and ``vmap(grad(f))`` nest.
* ``differentiate``: ``autograd.grad`` with ``create_graph=True`` only when the result can
  be differentiated again from outside (the outputs' graph reaches a leaf that is not one
  of the transform's own, or a cotangent requires grad); otherwise no graph is recorded and
  the gradients come out plain, as PyTorch's do.
* ``leave``: a value handed back (the output of ``vjp``, ``grad_and_value``'s value, an
  aux) is detached unless it depends on something outside the transform.
"""

from .. import autograd
from ..creation import zeros_like
from ..graph import AccumulateGrad
from ..ops.op import forward_mode
from ..ops.tangents import set_tangent, tangent_of
from .._tensor import Tensor

__all__ = ["enter", "differentiate", "leave", "reaches_outside", "check_argnums",
           "check_tensor_leaves", "check_randomness"]


def enter(value, outer_grad):
    """The transform's own tensor for input ``value``: a fresh leaf, or an alias connected
    to the caller's graph when ``value`` requires grad and grad mode was on outside."""
    if not isinstance(value, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
    if not value.dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if outer_grad and value.requires_grad:
        return value.view_as(value)  # (a view: it carries value's tangent, if any)
    return _keeping_tangent(value.detach().requires_grad_(True), value)


def _keeping_tangent(new, old):
    """``new`` (made from ``old`` by detach) carrying ``old``'s tangent, inside a forward
    transform (``jvp(grad(f))``: the tangent must cross the reverse transform)."""
    if forward_mode():
        tangent = tangent_of(old)
        if tangent is not None:
            set_tangent(new, tangent)
    return new


def _carried(grad, own):
    """A gradient leaving a reverse transform inside a forward one: detached, with its
    tangent, itself detached unless it depends on a tensor outside the transform (the
    tangent was recorded through the transform's own leaves: torch.func keeps that inside)."""
    new = grad.detach()
    tangent = tangent_of(grad)
    if tangent is not None:
        set_tangent(new, tangent if reaches_outside([tangent], own) else tangent.detach())
    return new


def reaches_outside(tensors, own):
    """Does the graph of any of ``tensors`` reach a leaf that requires grad and is not one
    of ``own`` (the transform's fresh leaves, by id)? Then its results must stay
    differentiable for the caller. Walks the nodes once, without recursion."""
    stack, seen = [], set()
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in own:
                return True
            continue
        stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            if leaf is None or id(leaf) not in own:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def differentiate(outputs, inputs, cotangents, own, outer_grad, retain_graph=False,
                  create=None):
    """``cotangents^T d outputs / d inputs``, one gradient per input (zeros for an input the
    outputs do not use), recorded only if someone outside can differentiate it again
    (``create``: that answer, when the caller already knows it)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(i) for i in inputs]
    if create is None:
        create = outer_grad and (any(c is not None and c.requires_grad for _, c in pairs)
                                 or reaches_outside([o for o, _ in pairs], own))
    # Inside a forward transform, backward runs on Tensors (as under create_graph) so that
    # its formulas carry the tangents: the gradients' own tangents (jvp of grad).
    carry = not create and forward_mode()
    grads = autograd.grad([o for o, _ in pairs], list(inputs), [c for _, c in pairs],
                          retain_graph=retain_graph or create or carry,
                          create_graph=create or carry, allow_unused=True)
    if carry:
        grads = [None if g is None else _carried(g, own) for g in grads]
    return [zeros_like(i) if g is None else g for g, i in zip(grads, inputs)]


def leave(value, own, outer_grad):
    """A tensor handed back to the caller: detached unless its graph reaches outside."""
    if isinstance(value, Tensor) and value.requires_grad:
        if not (outer_grad and reaches_outside([value], own)):
            return _keeping_tangent(value.detach(), value)
    return value


def check_argnums(argnums, count):
    """``argnums`` as a tuple of non-negative positions, or PyTorch's RuntimeErrors."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) for n in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    result = []
    for n in nums:
        if not -count <= n < count:
            raise RuntimeError(f"Got argnum={n}, but only {count} positional inputs")
        result.append(n % count)
    return tuple(result)


def check_tensor_leaves(leaves, message):
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(message.format(type=type(leaf)))


RANDOMNESS = ("error", "different", "same")


def check_randomness(randomness):
    if randomness not in RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

