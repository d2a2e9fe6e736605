"""Speed tricks of the replay, each a named helper (chapter 14 shows ``program.py``; this
module is what a faster replay adds, for the steps the course trains).

Each helper replaces one recorded instruction by fewer Python steps that make the same
numpy calls on the same arrays, so the numbers stay bitwise the eager step's:

* ``fast_zero_grad``: ``optimizer.zero_grad()`` (``set_to_none=True``) is ``p._grad = None``
  for each parameter;
* ``fast_sgd``: ``SGD.step()`` without weight decay, Nesterov or ``maximize``: per parameter
  the same in-place numpy expressions as ``Tensor.add_`` and ``mul_`` on their fast path
  (``a += b * alpha``, ``a *= momentum``), and the same version bumps;
* ``backward_plan``: the engine's walk over a list instead of a dict (each node's place in
  the order is known from the trace), with the "owned" gradients worked out once.

A helper answers None where its case is not covered; the instruction then replays as
recorded (``program.py``).
"""

import numpy as np

from ..graph import AccumulateGrad
from ..optim.optimizer import Optimizer
from ..optim.sgd import SGD
from .program import SLOT, Backward, Call

__all__ = ["faster", "fast_call", "backward_plan"]

_ZERO_GRAD = Optimizer.zero_grad
_SGD_STEP = SGD.step


def faster(instruction):
    """A faster replay of ``instruction``, or None (replay it as recorded)."""
    if type(instruction) is Call:
        return fast_call(instruction)
    if type(instruction) is Backward:
        return backward_plan(instruction)
    return None


def fast_call(call):
    """A faster replay of a ``Call`` instruction, or None."""
    obj, args, kwargs = call.obj, call.args, call.kwargs
    if call.function is _ZERO_GRAD and type(obj).zero_grad is _ZERO_GRAD:
        if (args or kwargs) and not (args or [kwargs.get("set_to_none")])[0]:
            return None  # set_to_none=False: grad.zero_() (recorded as it is)
        return fast_zero_grad(obj)
    if call.function is _SGD_STEP and type(obj) is SGD and not args and not kwargs:
        return fast_sgd(obj)
    return None


def fast_zero_grad(opt):
    """``opt.zero_grad()``: every parameter's ``.grad`` None."""
    params = [p for group in opt.param_groups for p in group["params"]]

    def run(slots, args):
        for p in params:
            p._grad = None
    return run


def fast_sgd(opt):
    """``opt.step()`` for SGD with or without momentum (and dampening); None for the rest
    (weight decay, Nesterov and ``maximize`` make Tensors: replayed as recorded). The
    guards hold the hyperparameters and the parameters fixed."""
    plan = []
    for group in opt.param_groups:
        if group["weight_decay"] != 0 or group["nesterov"] or group["maximize"]:
            return None
        plan.append((group["params"], -group["lr"], group["momentum"], 1 - group["dampening"]))
    state = opt.state
    original = _SGD_STEP

    def run(slots, args):
        for params, _, momentum, _ in plan:
            if momentum and not all(p._grad is None or "momentum_buffer" in state.get(p, ())
                                    for p in params):
                return original(opt)  # (only before a step made the buffers)
        for params, alpha, momentum, keep in plan:
            for p in params:
                g = p._grad
                if g is None:
                    continue
                if momentum:
                    buf = state[p]["momentum_buffer"]
                    b = buf._data
                    b *= momentum  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    b += g._data if keep == 1 else g._data * keep
                    buf._bump_version()
                    buf._bump_version()
                    g = buf
                a = p._data
                a += g._data if alpha == 1 else g._data * alpha  # param.add_(grad, alpha=-lr)
                p._bump_version()
    return run


def backward_plan(backward):
    """The ``Backward`` instruction's walk over a list: node ``i`` of the order gets its
    gradient in ``buffers[i]``; ``edges[i]`` says where each of its input gradients goes."""
    order = backward.order
    place = {node: i for i, node in enumerate(order)}
    steps = []
    for i, node in enumerate(order):
        if type(node) is AccumulateGrad:
            steps.append((i, None, None, node))
        else:
            steps.append((i, node.apply, [place.get(nxt, -1) if nxt is not None else -1
                                          for nxt in node.inputs], node))
    roots = [place[node] for node in backward.roots]
    seeds, leaves = backward.seeds, backward.leaves
    release = [node for node in order if not backward.retain_graph]
    owned_places = []  # worked out on the first replay: the same every time
    n = len(order)

    def run(slots, args):
        given = [slots[v] if kind is SLOT else v for kind, v in seeds]
        buffers = [None] * n
        for i, grad in zip(roots, given):
            old = buffers[i]
            buffers[i] = grad if old is None else old + grad
        arrived = []
        with np.errstate(all="ignore"):
            for i, apply, edges, node in steps:
                grad = buffers[i]
                if grad is None:
                    continue
                if apply is None:
                    arrived.append((node, grad))
                    continue
                for j, g in zip(edges, apply(grad)):
                    if j < 0 or g is None:
                        continue
                    old = buffers[j]
                    buffers[j] = g if old is None else old + g
            if not owned_places:
                owned_places.append(sole_owners(arrived, given))
            owned = owned_places[0]
            for node, grad in arrived:
                position = leaves[node]
                leaf = node.variable if position is None else args[position]
                leaf.accumulate_grad(grad, node in owned)
        for node in release:
            node.release()
    return run


def sole_owners(arrived, given):
    """The leaves whose gradient array nothing else refers to (not a seed, not another
    leaf's): ``.grad`` may be that array itself, uncopied (the engine copies small ones,
    where finding out costs more than the copy; a replay finds out once). Its values are
    the same either way."""
    def owner(array):
        while type(array.base) is np.ndarray:
            array = array.base
        return id(array)
    uses = dict.fromkeys([owner(g) for g in given], 2)
    for _, grad in arrived:
        uses[owner(grad)] = uses.get(owner(grad), 0) + 1
    return {node for node, grad in arrived if uses[owner(grad)] == 1}
