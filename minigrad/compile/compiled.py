"""A compiled function and a compiled module: trace once, replay while the guards hold
(chapter 14).

``CompiledFunction.__call__`` is the whole policy, in torch.compile's words:

1. a recorded program whose guards hold -> replay it;
2. none -> trace the call (run it eagerly, recording), keep the program with its guards
   (at most ``cache_size_limit`` of them: beyond, "recompiled too often", run eagerly);
3. a trace that meets something it cannot record (a graph break) -> warn once and run
   eagerly from then on (``fullgraph=True``: raise instead).
"""

import functools
import warnings

from .._tensor import Tensor
from ..graph import GradMode
from ..nn.module import Module
from .fast import faster
from .guards import Guards, describe_inputs
from .program import Program, ReplayRefused
from .tracer import Tracer, known_tensors, reachable

__all__ = ["CompiledFunction", "OptimizedModule", "cache_size_limit"]

cache_size_limit = 8  # traces of one function before it runs eagerly (torch's default)
_tracing = []  # the compiled functions tracing now: a compiled call inside runs as it is


class CompiledFunction:
    """``fn`` traced on its first call and replayed on the next ones (see the module's
    docstring). ``traces``: how many times it was traced; ``replays``: how many calls
    replayed; ``guard_failures``: why each retrace happened; ``graph_break``: why it runs
    eagerly (None while it does not)."""

    def __init__(self, fn, fullgraph=False, dynamic=None):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.entries = []  # (guards, program), newest last
        self.traces = self.replays = 0
        self.guard_failures = []
        self.graph_break = None
        self.fast = True  # fast.py's helpers (False: every instruction as recorded)

    def __call__(self, *args, **kwargs):
        if self.graph_break is not None or _tracing:  # (inside another trace: recorded there)
            return self.fn(*args, **kwargs)
        if not kwargs and all(type(a) is Tensor for a in args):  # (speed: the usual call)
            tensors, structure = list(args), len(args)
        else:
            tensors = []
            structure = describe_inputs((args, kwargs), tensors)
        grad_mode = GradMode.enabled
        failures = []
        for guards, program in reversed(self.entries):
            reason = guards.check(grad_mode, structure, tensors)
            if reason is None:
                try:
                    result = program(tensors)
                except ReplayRefused as refused:  # before anything outside changed
                    self.guard_failures.append(str(refused))
                    return self.fn(*args, **kwargs)
                guards.settled()
                self.replays += 1
                return result
            failures.append(reason)
        if failures:
            self.guard_failures.append(failures[0])
        if len(self.entries) >= cache_size_limit:
            return self.run_eagerly(
                f"it was traced {cache_size_limit} times (cache_size_limit) and its guards "
                f"fail again: {failures[0]}", args, kwargs)
        return self.trace(args, kwargs, tensors, structure, grad_mode)

    def run_eagerly(self, reason, args, kwargs):
        """From now on (a graph break): warn once, call ``fn`` as it is."""
        self.graph_break = reason
        warnings.warn(f"minigrad.compile: graph break in {getattr(self.fn, '__name__', 'fn')}: "
                      f"{reason}; it runs eagerly from now on (fullgraph=True makes this an "
                      "error)", UserWarning, stacklevel=3)
        return self.fn(*args, **kwargs)

    def trace(self, args, kwargs, tensors, structure, grad_mode):
        """Run ``fn`` once, recording; keep the program if nothing broke it."""
        if any(t._grad_fn is not None for t in tensors):
            return self.run_eagerly("an input tensor carries a graph (compute it inside the "
                                    "compiled function, or pass it detached)", args, kwargs)
        outside = known_tensors(reachable([self.fn, args, kwargs]))
        tracer = Tracer(tensors, outside, self.fullgraph)
        _tracing.append(self)
        try:
            with tracer.patched():
                result = self.fn(*args, **kwargs)
        finally:
            _tracing.pop()
        self.traces += 1
        outputs = output_spec(result, tracer, tensors) if tracer.broken is None else None
        if tracer.broken is not None:
            reason = tracer.broken
            self.graph_break = reason
            if self.fullgraph:  # (a break the hooks could only see afterwards: random draws)
                tracer.graph_break(reason)
            warnings.warn(f"minigrad.compile: graph break in "
                          f"{getattr(self.fn, '__name__', 'fn')}: {reason}; it runs eagerly "
                          "from now on (fullgraph=True makes this an error)", UserWarning,
                          stacklevel=3)
            return result
        program = Program(tracer.instructions, len(tracer.arrays), len(tensors), outputs,
                          faster if self.fast else None)
        guards = Guards(grad_mode, structure, tensors, tracer.used.values(),
                        tracer.modules.values(), tracer.optimizers.values())
        self.entries.append((guards, program))
        return result


def output_spec(value, tracer, tensors):
    """How to rebuild what the step returned from a replay's slots (``program.rebuild``),
    or a graph break for what a replay could not give back."""
    if value is None:
        return ("value", None)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__ if type(value) in (tuple, list) else "tuple",
                [output_spec(v, tracer, tensors) for v in value])
    if isinstance(value, dict):
        return ("dict", list(value), [output_spec(v, tracer, tensors) for v in value.values()])
    if not (hasattr(value, "_data") and hasattr(value, "_grad_fn")):
        tracer.graph_break(f"the step returns a {type(value).__name__}, which a replay "
                           "could not recompute (return tensors)")
        return None
    for i, t in enumerate(tensors):
        if t is value:
            return ("arg", i)
    slot = tracer.slots.get(id(value._data))
    if slot is not None and tracer.arrays[slot] is value._data:
        node = value._grad_fn
        if node is not None and node.saved is not None:
            tracer.graph_break("the step returns a tensor whose graph is still alive (its "
                               "backward is not in the step): compile the whole training "
                               "step, or run the forward under no_grad()")
        return ("slot", slot, node)
    if tracer.externals.get(id(value._data)) is value:
        return ("tensor", value)
    tracer.graph_break("the step returns a tensor made outside minigrad's ops")
    return None


class OptimizedModule(Module):
    """``minigrad.compile(module)``: a module that calls ``module`` compiled. As in PyTorch,
    ``_orig_mod`` is the module (its parameters, ``train()``/``eval()``, and a state_dict
    whose keys start with ``_orig_mod.``); other attributes are the module's."""

    def __init__(self, module, fullgraph=False, dynamic=None):
        super().__init__()
        self._orig_mod = module
        object.__setattr__(self, "_compiled", CompiledFunction(module, fullgraph, dynamic))

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)".replace(
            "\n", "\n", 1)
