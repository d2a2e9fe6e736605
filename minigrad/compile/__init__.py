"""``minigrad.compile``: trace a step once, replay it while its guards hold (chapter 14,
"Tracing a step"; PyTorch's ``torch.compile``, by name and call shape).

Why: a small model's step is mostly Python. Each op of an eager step makes a Tensor, links
a node, checks dtypes and versions; the numpy call inside is a few microseconds of the
op's ten. A step that does the same thing every time can be recorded once and replayed
without that Python: what ``torch.compile`` (TorchDynamo), ``jax.jit`` and CUDA graphs do.

How, in four pieces (a module each, read in this order):

* ``tracer.py``, **record**: the first call runs eagerly while the ops, the engine and the
  optimizer report what they do; the result is a flat list of instructions over *slots*
  (the arrays of the step): forward ops, the backward walk, ``optimizer.step()`` and
  ``zero_grad()``. What it cannot record (``.item()``, ``if loss > 0``, ``print(t)``,
  hooks, dropout's random draws, forward mode, ``create_graph``) is a **graph break**.
* ``program.py``, **replay**: the instructions run again on the new inputs' arrays, the
  same numpy calls in the same order, so parameters, gradients and optimizer state come
  out bitwise equal to the eager step's.
* ``guards.py``, **guard**: before a replay, a few cheap checks that the step would make
  the same calls: input shapes and dtypes, grad mode, which tensors require grad, the
  parameters (identity, memory, version), the modules' training flags, the optimizer's
  hyperparameters and state. A failed guard traces again (up to ``cache_size_limit``
  times, then eagerly, with one warning).
* ``compiled.py``, **policy**: ``CompiledFunction`` ties the three together;
  ``OptimizedModule`` is a compiled module.

Python that touches no tensor (a ``print``, a counter, appending to a list) runs only while
tracing, as in ``jax.jit``: a replay runs the recorded numpy calls and nothing else.
Results a replay returns are new tensors on the replay's arrays; a returned loss keeps the
node its trace had (``loss.grad_fn``), whose graph backward already freed.

Limits (each refused, never replayed stale): a compiled forward whose result still has its
graph (``compile(model)`` called in grad mode, backward outside) runs eagerly, since a
replay makes no graph; an input tensor that carries a graph, or an array the functional
layer computes in Python from values (class weights, ``ignore_index`` masks), breaks the
graph. Checks the eager functional layer makes on values before an op are not rerun by a
replay, except the one a training step meets, ``nll_loss``'s class indices in range
(``program.ClassCheck``).

Compared with ``torch.compile``: the same call shapes and the same guard-and-recompile
loop, but no bytecode analysis (a graph break here sends the whole function to eager mode,
where Dynamo would split it in two graphs) and no code generation (the replay calls numpy,
where Inductor writes fused C++ or Triton kernels).
"""

from .compiled import CompiledFunction, OptimizedModule, cache_size_limit
from .tracer import GraphBreak

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "GraphBreak", "cache_size_limit"]

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Compile ``model`` (a function or an ``nn.Module``): traced on its first call,
    replayed on the next ones while its guards hold. Without ``model``, a decorator:
    ``@minigrad.compile(fullgraph=True)``.

    ``fullgraph=True`` raises ``GraphBreak`` where the step cannot be traced, instead of
    running it eagerly; ``disable=True`` returns ``model`` itself. Every ``backend`` and
    ``mode`` replays the same way (there is no code generation to choose), and shapes are
    always specialised (``dynamic`` is accepted and ignored)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, expected one of "
                           f"{', '.join(_BACKENDS)} (minigrad replays every one alike)")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return decorator
    if not callable(model):
        raise RuntimeError(f"compile() expects a function or an nn.Module, not "
                           f"{type(model).__name__}")
    if disable:
        return model
    if isinstance(model, OptimizedModule.__mro__[1]):  # an nn.Module
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic)
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic)
