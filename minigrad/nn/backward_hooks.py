"""A module's full backward hooks: ``register_full_backward_hook`` and
``register_full_backward_pre_hook`` (chapter 12 measures gradients per layer with them).

PyTorch's way, written with a custom ``autograd.Function``: the module's tensor inputs go
through an identity op before ``forward`` and its outputs through another after. In
backward the outputs' identity sees the gradients of the outputs (``grad_output``: the
pre-hooks run there and may replace them), the inputs' identity sees the gradients of the
inputs (``grad_input``: the hooks run there and may replace them). Both identities are
nodes named ``BackwardHookFunctionBackward``, as in PyTorch.
"""

import warnings

from ..autograd.function import Function
from ..creation import zeros
from .._tensor import Tensor

__all__ = ["BackwardHook", "BackwardHookFunction"]


class BackwardHookFunction(Function):
    """The identity on tensors whose ``backward`` is where the module's hooks run."""

    @staticmethod
    def forward(ctx, hook_call, *tensors):
        ctx.hook_call = hook_call
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.hook_call(grads))


class BackwardHook:
    """One call of a module with backward hooks: wraps its inputs and outputs, keeps the
    gradients of the outputs until those of the inputs arrive."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_output = None
        self.n_inputs = 0
        self.input_positions = None  # where the tensors that require grad are, or None

    def setup_input_hook(self, args):
        """``args`` with each tensor that requires grad passed through the identity."""
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i].requires_grad for i in positions):
            return args
        # Every tensor argument goes through (as in PyTorch): one that gets no gradient is
        # handed to the hooks as zeros, an argument that is no tensor as None.
        self.input_positions = positions
        self.input_likes = [(args[i].shape, args[i].dtype) for i in positions]
        wrapped = BackwardHookFunction.apply(self._input_grads, *[args[i] for i in positions])
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def setup_output_hook(self, result):
        """The module's output, passed through the identity (a Tensor or a tuple)."""
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple) or not all(isinstance(o, Tensor) for o in outputs):
            warnings.warn("For backward hooks to be called, module output should be a Tensor "
                          f"or a tuple of Tensors but received {type(result)}", stacklevel=3)
            return result
        if not any(o.requires_grad for o in outputs):
            return result
        wrapped = BackwardHookFunction.apply(self._output_grads, *outputs)
        return wrapped[0] if single else tuple(wrapped)

    def _output_grads(self, grads):
        """The outputs' gradients arrive: the pre-hooks may replace them; without inputs
        that require grad, the hooks run now (with ``grad_input`` all None)."""
        for hook in list(self.pre_hooks.values()):
            result = hook(self.module, grads)
            if result is not None:
                grads = _checked(result, len(grads), "grad_output")
        self.grad_output = grads
        if self.input_positions is None and self.hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "PyTorch's documentation of Module.register_full_backward_hook for "
                          "more details.", stacklevel=2)
            for hook in list(self.hooks.values()):
                if hook(self.module, (None,) * self.n_inputs, grads) is not None:
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return grads

    def _input_grads(self, grads):
        """The inputs' gradients arrive: each hook sees them (one per positional argument,
        None where no gradient flows) and may replace them."""
        full = [None] * self.n_inputs
        for i, g, (shape, dtype) in zip(self.input_positions, grads, self.input_likes):
            full[i] = zeros(shape, dtype=dtype) if g is None else g
        full = tuple(full)
        for hook in list(self.hooks.values()):
            result = hook(self.module, full, self.grad_output)
            if result is not None:
                full = _checked(result, self.n_inputs, "grad_input")
        return tuple(full[i] for i in self.input_positions)


def _checked(result, expected, what):
    """A hook's replacement gradients: a tuple (or list) of ``expected`` entries."""
    if isinstance(result, Tensor):
        result = (result,)
    if not isinstance(result, (tuple, list)) or len(result) != expected:
        got = len(result) if isinstance(result, (tuple, list)) else type(result).__name__
        raise RuntimeError(f"Backward hook returned an invalid number of {what}, got {got}, "
                           f"but expected {expected}")
    return tuple(result)
