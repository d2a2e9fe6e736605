"""Activation checkpointing, as ``torch.utils.checkpoint``: trade compute for memory.

``checkpoint(function, *args)`` runs ``function`` without keeping the graph of what it
computes (nothing it made stays alive for backward, only its inputs and outputs); backward
runs it again, with grad enabled, and backpropagates through that second run. With
``preserve_rng_state=True`` (the default) the second run draws the same random numbers
(dropout masks match), because the default generator is rewound to where it was.
``checkpoint_sequential`` does this for the segments of a ``Sequential``.

Two variants, as in PyTorch:

* ``use_reentrant=True`` (PyTorch's default, which it warns about when it is not passed):
  a custom ``Function`` (``CheckpointFunctionBackward``) whose inputs are the tensor
  arguments; forward runs under ``no_grad``, backward reruns the function and calls
  ``autograd.backward`` from inside the engine. Only the arguments connect the result to
  the graph: if none requires grad the result does not either (PyTorch's warning), tensors
  the function uses from outside (a module's weights) get their ``.grad`` from the inner
  ``backward``, and ``autograd.grad`` cannot ask for them. Keyword arguments are refused.
* ``use_reentrant=False`` (PyTorch's recommendation): the function runs once with grad on
  to find the leaves it uses (a module's weights), and the graph is dropped at once; the
  node (``CheckpointBackward``; PyTorch shows the inner ops' nodes instead) has an edge to
  every argument and every such leaf, and its backward reruns the function and returns
  their gradients with ``autograd.grad``. So ``autograd.grad`` works, weights alone make the
  result require grad, and keyword arguments are passed on. A tensor with history from
  before the call that the function uses without taking it as an argument is refused
  (pass it as an argument).
"""

import contextlib
import warnings

from .. import autograd
from ..autograd import Function
from ..graph import AccumulateGrad, Node, enable_grad, is_grad_enabled
from ..random import default_generator
from .._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The second run of a checkpointed function did not give what the first one did."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")

_SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
    "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
    "passed. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
    "the differences between the two variants.")


class _Rerun:
    """What backward needs to run the function again: the function, its arguments (tensors
    are kept by ``save_for_backward``), the keyword arguments and the generator's state."""

    def __init__(self, function, args, kwargs, preserve_rng_state, recompute_context):
        self.function, self.kwargs = function, kwargs
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.requires = [args[i].requires_grad for i in self.positions]
        self.others = [None if isinstance(a, Tensor) else a for a in args]
        self.rng_state = default_generator.get_state() if preserve_rng_state else None
        self.recompute_context = recompute_context
        self.check = False  # compare the shapes and dtypes of the two runs' outputs?
        self.outputs = None  # the first run's outputs, handed to forward (non-reentrant)

    def run(self, tensors, connected=False):
        """Run the function again with grad on, on detached copies of the tensors (each
        requiring grad as the original did; ``connected``: views of the tensors themselves,
        so that a recorded backward stays a function of them, for double backward):
        ``(copies, outputs as a tuple, was_tuple)``."""
        with enable_grad():
            copies = [t.view_as(t) if connected and r and t.requires_grad
                      else t.detach().requires_grad_(r) for t, r in zip(tensors, self.requires)]
        args = list(self.others)
        for i, c in zip(self.positions, copies):
            args[i] = c
        now = default_generator.get_state()
        if self.rng_state is not None:
            default_generator.set_state(self.rng_state)
        try:
            with enable_grad(), self.recompute_context:
                outputs = self.function(*args, **self.kwargs)
        finally:
            default_generator.set_state(now)
        was_tuple = isinstance(outputs, tuple)
        return copies, (outputs if was_tuple else (outputs,)), was_tuple


class CheckpointFunction(Function):
    """The reentrant variant: forward without a graph, backward reruns and calls
    ``autograd.backward``."""

    @staticmethod
    def forward(ctx, rerun, *args):
        ctx.rerun = rerun
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return rerun.function(*args)

    @staticmethod
    def backward(ctx, *grads):
        copies, outputs, _ = ctx.rerun.run(ctx.saved_tensors)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads_of = iter(c.grad if c.requires_grad else None for c in copies)
        tensor_positions = set(ctx.rerun.positions)
        return (None,) + tuple(next(grads_of) if i in tensor_positions else None
                               for i in range(len(ctx.rerun.others)))


class Checkpoint(Function):
    """The non-reentrant variant: its inputs are the arguments and the leaves the function
    uses; backward reruns the function and returns their gradients."""

    @staticmethod
    def forward(ctx, rerun, *tensors):
        ctx.rerun = rerun
        count = len(rerun.positions)
        ctx.save_for_backward(*tensors[:count])
        ctx.leaves = tensors[count:]
        outputs, rerun.outputs = rerun.outputs, None
        ctx.metadata = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in
                        (outputs if isinstance(outputs, tuple) else (outputs,))]
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        create = is_grad_enabled()  # backward is being recorded (create_graph=True)
        copies, outputs, _ = ctx.rerun.run(ctx.saved_tensors, connected=create)
        if ctx.rerun.check:
            _check_same(ctx.metadata, outputs)
        targets = [c for c in copies if c.requires_grad] + list(ctx.leaves)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        found = (autograd.grad([o for o, _ in pairs], targets, [g for _, g in pairs],
                               create_graph=create, allow_unused=True)
                 if pairs and targets else (None,) * len(targets))
        found = iter(found)
        inputs = [next(found) if c.requires_grad else None for c in copies]
        return (None,) + tuple(inputs) + tuple(found)


def _check_same(metadata, outputs):
    again = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outputs]
    if again != metadata:
        raise CheckpointError(
            "torch.utils.checkpoint: Recomputed values for the following tensors have "
            f"different metadata than during the forward pass: {metadata} then, {again} now. "
            "The checkpointed function must compute the same thing both times (pass "
            "determinism_check='none' to skip this check).")


def _leaves_used(outputs, own, marker):
    """The leaves requiring grad that ``outputs``' graph reaches, other than ``own`` (ids of
    the detached arguments), in a fixed order. Refuses a node made before the call (seq
    below ``marker``): a tensor with history that was not passed as an argument."""
    stack = [o.grad_fn if o.grad_fn is not None else o for o in outputs
             if isinstance(o, Tensor) and o.requires_grad]
    seen, leaves = set(), []
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        leaf = item if isinstance(item, Tensor) else (
            item.variable if isinstance(item, AccumulateGrad) else None)
        if isinstance(item, Tensor) or isinstance(item, AccumulateGrad):
            if leaf is not None and id(leaf) not in own:
                leaves.append(leaf)
            continue
        if item.seq < marker:
            raise NotImplementedError(
                "checkpoint(use_reentrant=False): the function uses a tensor that requires "
                "grad and was computed before the call (not a leaf, not an argument). minigrad "
                "cannot rerun it: pass that tensor to the function as an argument.")
        stack.extend(n for n, _ in item.next_functions if n is not None)
    return leaves


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its graph: backward recomputes it.
    Gradients are those of the plain call. See the module's docstring for the variants."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=2)
        rerun = _Rerun(function, args, {}, preserve_rng_state, contextlib.nullcontext())
        return CheckpointFunction.apply(rerun, *args)
    if debug:
        raise NotImplementedError("checkpoint(debug=True) is not supported by minigrad")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        with forward_context:
            return function(*args, **kwargs)
    rerun = _Rerun(function, args, kwargs, preserve_rng_state, recompute_context)
    rerun.check = determinism_check == "default"
    tensors = [a for a in args if isinstance(a, Tensor)]
    copies = [t.detach().requires_grad_(t.requires_grad) for t in tensors]
    call = list(args)
    for i, c in zip(rerun.positions, copies):
        call[i] = c
    marker = Node(()).seq
    with forward_context:
        outputs = function(*call, **kwargs)
    flat = outputs if isinstance(outputs, tuple) else (outputs,)
    leaves = _leaves_used(flat, {id(c) for c in copies}, marker)
    rerun.outputs = tuple(o.detach() if isinstance(o, Tensor) else o for o in flat) \
        if isinstance(outputs, tuple) else (outputs.detach() if isinstance(outputs, Tensor)
                                            else outputs)
    del outputs, flat, copies, call  # the first run's graph goes now
    return Checkpoint.apply(rerun, *tensors, *leaves)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a ``Sequential`` or a list of modules / functions) one after the
    other, the first ``segments - 1`` segments checkpointed and the last one plainly."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
