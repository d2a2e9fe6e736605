"""Forward-mode AD's machinery (chapter 13): where each dual tensor's tangent is kept, the
step ``Op.run`` takes when an input carries one, and the JVP rules ops share.

``autograd.forward_ad`` opens a *dual level* (``with dual_level():``); inside it a tensor
may carry a tangent (``make_dual``), and every op whose input carries one gives its output
the tangent its JVP rule computes (``output_tangent``; "Rules of a JVP" in ``op.py``). The
store is a table from a tensor (by identity, held weakly: a tangent dies with its tensor,
as in PyTorch) to its tangent Tensor, emptied when the level exits. PyTorch allows one level
at a time ("Nested forward mode AD is not supported at the moment"), so there is one table.

The shared rules, named as in PyTorch's derivatives.yaml where it has the idea:
``auto_linear`` (the op applied to the tangents), ``auto_multilinear`` (one input at a
time), ``auto_element_wise`` (backward's own formula: a diagonal Jacobian is its own
transpose), ``reduction_jvp`` (backward's weights, summed with the tangent) and
``transposed_backward`` (backward transposed by one more small backward: the double-vjp
trick on one op), plus helpers for writing a rule (``tangent_sum``, ``scaled``, ...).
It sits below the op families (it imports no op) so that each family can use it.
"""

import re
import weakref

import numpy as np

from .._tensor import Tensor, wrap
from ..graph import GradMode, backward, enable_grad, gradient_node
from . import formulas

__all__ = ["LEVELS", "tangent_of", "set_tangent", "clear_tangents", "tangent_epoch",
           "output_tangent", "rerun", "auto_linear", "auto_multilinear", "auto_element_wise",
           "reduction_jvp", "transposed_backward", "tangent_sum", "scaled", "constant",
           "spread", "zero_tangent", "jvp_name"]

# The open dual levels (PyTorch's numbers: the first is 0); at most one.
LEVELS = []

_TANGENTS = {}  # id(tensor) -> (weak reference to the tensor, its tangent Tensor)
_EPOCH = [0]    # how many levels have exited: a tangent kept outside the table is stale after


def tangent_of(tensor):
    """The tangent ``tensor`` carries at the open level, or None."""
    entry = _TANGENTS.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def set_tangent(tensor, tangent):
    """Make ``tensor`` carry ``tangent`` (a Tensor of its shape) until it dies or the
    level exits."""
    key = id(tensor)

    def forget(ref):
        entry = _TANGENTS.get(key)
        if entry is not None and entry[0] is ref:
            del _TANGENTS[key]

    _TANGENTS[key] = (weakref.ref(tensor, forget), tangent)


def clear_tangents():
    """Every tangent dropped: the level exits."""
    _TANGENTS.clear()
    _EPOCH[0] += 1


def tangent_epoch():
    """A number that changes each time a dual level exits: a tangent kept with the epoch it
    was made in (a custom Function's output, for its recorded backward) is valid while the
    epoch is the same."""
    return _EPOCH[0]


# ----------------------------------------------------------------- computing a tangent

def output_tangent(op, tensors, arrays, options, result):
    """``Op.run``'s forward-mode step (forward mode is off while it runs): the tangent of
    ``result`` from ``op.jvp``, stored, if some input carries a tangent."""
    n = len(arrays)
    tangents = [None] * n
    found = False
    for i, t in enumerate(tensors):
        if t is not None and i < n:
            tangents[i] = tangent_of(t)
            found = found or tangents[i] is not None
    if not found:
        return
    out = result._data
    if out.dtype.kind not in "fc":  # integer and bool results have no derivative
        return
    op.dual = (options, tuple([t is not None and i < n for i, t in enumerate(tensors)]
                              + [False] * (n - len(tensors))))
    if GradMode.enabled and (result._requires_grad or any(
            t is not None and t._requires_grad for t in tangents)):
        inputs = [_input_tensor(t, a) for t, a in zip(list(tensors) + [None] * n, arrays)]
        with np.errstate(all="ignore"):
            tangent = op.jvp(tuple(tangents), result, *inputs)
        if tangent is None:
            return
        if not isinstance(tangent, Tensor):
            tangent = wrap(np.asarray(tangent, dtype=out.dtype))
        if tangent._data.dtype != out.dtype and tangent._data.dtype.kind in "fc":
            tangent = tangent.to(_tangent_dtype(tangents, out.dtype, tangent._data.dtype))
        if tangent._data.shape != out.shape:
            tangent = tangent.expand(out.shape).contiguous()
    else:
        plain = tuple([None if t is None else t._data for t in tangents])
        with np.errstate(all="ignore"):  # inf and nan, silently, as the forward pass
            tangent = op.jvp(plain, out, *arrays)
        if tangent is None:
            return
        if isinstance(tangent, Tensor):
            tangent = tangent._data
        tangent = np.asarray(tangent)
        if tangent.dtype.kind not in "fc":
            tangent = tangent.astype(out.dtype)
        dtype = _tangent_dtype(tangents, out.dtype, tangent.dtype)
        if tangent.shape != out.shape:
            tangent = np.broadcast_to(tangent, out.shape)
        if tangent.dtype != dtype or not tangent.flags.writeable or (
                not op.is_view and (tangent.base is not None or any(
                    t is not None and tangent is t._data for t in tangents))):
            tangent = np.array(tangent, dtype=dtype)  # its own memory (a view's: shared)
        tangent = wrap(tangent)
    set_tangent(result, tangent)
    if result._grad_fn is op:
        op.tangent = tangent


def _tangent_dtype(tangents, dtype, computed):
    """The tangent's dtype: the output's, unless a tangent was given wider than it (PyTorch
    keeps a float64 tangent of a float32 primal): then the one the rule ``computed``."""
    for t in tangents:
        if t is not None and t._data.dtype.itemsize > dtype.itemsize:
            return computed if computed.kind in "fc" else dtype
    return dtype


def _input_tensor(tensor, array):
    """An input for a JVP rule in Tensor mode: the tensor itself (cast to the dtype forward
    saw), or the array as a constant when it came with no tensor (a number, an index)."""
    if tensor is None or not isinstance(array, np.ndarray):
        return array
    if tensor._data is array:
        return tensor
    if tensor._data.shape == array.shape:
        return tensor.to(array.dtype)
    return wrap(array)


def rerun(op, args):
    """``type(op)``'s forward on other ``args`` (tangents in place of some inputs), with the
    options ``op`` ran with: recorded (Tensor mode) when one of ``args`` is a Tensor."""
    options, _ = op.dual
    cls = type(op)
    if any(isinstance(a, Tensor) for a in args):
        tensors = tuple([a if isinstance(a, Tensor) else None for a in args])
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        return cls.run(tensors, *arrays, **options)
    fresh = object.__new__(cls)
    fresh.saved = ()
    fresh.inputs = (None,) * len(args)
    return fresh.forward(*args, **options)


def _zero_of(value):
    """A float input without a tangent: zeros; an index or mask (integers, bools): itself."""
    data = value._data if isinstance(value, Tensor) else value
    if isinstance(data, np.ndarray):
        return np.zeros_like(data) if data.dtype.kind in "fc" else data
    return 0


def auto_linear(self, tangents, out, *inputs):
    """The JVP of an op linear in its tensor inputs (``sum``, ``reshape``, ``x[key]``,
    ``cat``; derivatives.yaml's ``auto_linear``): the op itself, with the same options,
    applied to the tangents (zeros for a tensor input without one; other inputs, indices
    and numbers, as they were)."""
    _, is_tensor = self.dual
    args = [t if t is not None else _zero_of(v) if tensor else v
            for t, v, tensor in zip(tangents, inputs, is_tensor)]
    return rerun(self, args)


def auto_multilinear(self, tangents, out, *inputs):
    """The JVP of an op linear in each tensor input separately (``mm``, ``dot``,
    ``matmul``, ``einsum``): the sum, over the inputs that carry a tangent, of the op with
    that input replaced by its tangent."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            args = list(inputs)
            args[i] = t
            term = rerun(self, args)
            total = term if total is None else total + term
    return total


def _saved_like(self, tangent, out):
    """The values ``self`` saved, for its backward run by a JVP rule: Tensors (with their
    history when the op was recorded) if ``tangent`` is a Tensor, else the arrays."""
    if isinstance(tangent, Tensor):
        if self.saved and getattr(self, "sources", None) is not None and out._grad_fn is self:
            return self.saved_tensors(tangent)
        return [wrap(v) if isinstance(v, np.ndarray) else v for v in self.saved]
    return self.saved


def auto_element_wise(self, tangents, out, *inputs):
    """The JVP of an op of one input whose Jacobian is diagonal (``exp``, ``sin``, ``relu``:
    derivatives.yaml's ``auto_element_wise``): backward's own formula with the tangent in
    place of the gradient (the diagonal is its own transpose). Backward gets the saved
    values as it would (Tensors with their history in Tensor mode)."""
    tangent = tangents[0]  # (the other inputs are options: logit's eps)
    grads = self.backward(tangent, *_saved_like(self, tangent, out))
    return grads[0] if type(grads) is tuple else grads


def reduction_jvp(self, tangent, out, dims=None):
    """The JVP of a reduction whose backward spreads the gradient with weights (``amax``,
    ``var``, ``prod``: ``grad * W``): the sum over ``dims`` (None: all) of ``W * tangent``,
    W being backward's answer to a gradient of ones."""
    if isinstance(tangent, Tensor):
        ones = wrap(np.ones(out._data.shape, out._data.dtype))
    else:
        ones = np.ones(out.shape, out.dtype)
    weights = self.backward(ones, *_saved_like(self, tangent, out))
    dims = tuple(range(len(tangent.shape))) if dims is None else tuple(dims)
    total = formulas.sum_over(weights * tangent, dims, keepdims=True)
    return total.reshape(out.shape)


_NEEDED = object()  # an input node stand-in: "this input's gradient is wanted"


def transposed_backward(self, tangents, out, *inputs):
    """A JVP from backward alone, for ops whose backward is long (losses, pooling,
    normalization, sorting): backward is linear in the output's gradient g, ``B(g) =
    J^T g``, so ``J t`` is the gradient with respect to g of ``<B(g), t>``, one more small
    backward (the double-vjp trick, on one op). Exact; the op runs forward again with every
    input wanted, so that it saves all that backward needs."""
    options, is_tensor = self.dual
    mode = any(isinstance(t, Tensor) for t in tangents)
    fresh = object.__new__(type(self))
    fresh.saved = ()
    fresh.inputs = tuple([_NEEDED if t is not None else None for t in tangents])
    arrays = [v._data if isinstance(v, Tensor) else v for v in inputs]
    fresh.shapes = tuple([np.shape(a) if isinstance(a, np.ndarray) else () for a in arrays])
    fresh.dual = self.dual
    with np.errstate(all="ignore"):
        fresh.forward(*arrays, **options)
    with enable_grad():
        g = wrap(np.zeros(np.shape(constant(out)), constant(out).dtype))
        g.requires_grad_(True)
        saved = [wrap(v) if isinstance(v, np.ndarray) else v for v in fresh.saved]
        grads = fresh.backward(g, *saved)
        grads = grads if type(grads) is tuple else (grads,)
        total = None
        for grad, t in zip(grads, tangents):
            if grad is None or t is None:
                continue
            term = (formulas.sum_to(grad, tuple(t.shape)) * t).sum()
            total = term if total is None else total + term
    if total is None or total._grad_fn is None:
        return zero_tangent(out)
    seed = wrap(np.ones((), total._data.dtype)) if mode else np.ones((), total._data.dtype)
    arrived = backward([total._grad_fn], [seed], capture=[gradient_node(g)],
                       create_graph=mode)
    found = arrived.get(gradient_node(g))
    if found is None:
        return zero_tangent(out)
    return found if mode else np.asarray(found)


def tangent_sum(*terms):
    """The sum of the terms that are not None (a tangent of a sum of inputs, some of which
    carry none), or None."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


def scaled(tangent, factor):
    """``tangent * factor``, or None for no tangent (a term of a rule's sum)."""
    return None if tangent is None else tangent * factor


def constant(value):
    """``value``'s array (a mask, an index: no derivative flows through it)."""
    return value._data if isinstance(value, Tensor) else value


def spread(tangent, shape):
    """``tangent`` broadcast to ``shape`` (to be masked elementwise)."""
    if isinstance(tangent, Tensor):
        return tangent if tangent._data.shape == tuple(shape) else tangent.expand(shape)
    return tangent if tangent.shape == tuple(shape) else np.broadcast_to(tangent, shape)


def zero_tangent(out):
    """A tangent of zeros of ``out``'s shape (a step function: floor, sign, ...)."""
    if isinstance(out, Tensor):
        return wrap(np.zeros(out._data.shape, out._data.dtype))
    return np.zeros(out.shape, out.dtype)


def jvp_name(cls):
    """The name of an op in forward mode's error: PyTorch's function name (``mul`` for
    ``MulBackward0``)."""
    name = re.sub(r"Backward\d*$", "", cls.__name__)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
