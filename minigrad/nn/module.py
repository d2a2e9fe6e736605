"""``Module``: the base of every layer and model (chapter 6).

Assigning a ``Parameter`` or a ``Module`` as an attribute registers it, so ``parameters()``,
``state_dict()`` and ``zero_grad()`` find everything a model is made of, in the order it
was assigned, with PyTorch's dotted names (``"0.weight"``, ``"linear.bias"``).
"""

from collections import OrderedDict, namedtuple

import numpy as np

from .. import dtypes
from ..graph import RemovableHandle, no_grad
from .._tensor import Tensor, wrap
from .backward_hooks import BackwardHook
from .parameter import Parameter

class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict did not match (printed like PyTorch's)."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def indent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _load_problem(key, value, target):
    """Why ``value`` from a state dict cannot be copied into ``target`` (None if it can)."""
    if not isinstance(value, Tensor):
        return (f'While copying the parameter named "{key}", expected minigrad.Tensor or '
                f"Tensor-like object from checkpoint but received {type(value)} "
                "(wrap it with minigrad.tensor(...))")
    if value.shape != target.shape:
        return (f"size mismatch for {key}: copying a param with shape {value.shape} from "
                f"checkpoint, the shape in current model is {target.shape}.")
    return None


def _dtype_asked_of_to(args, kwargs):
    """The dtype that ``.to(*args, **kwargs)`` asks for, or None if it asks for none (only a
    device, or ``dtype=None``). Tensor.to checks the arguments; two probes of different
    dtypes end up with the same one exactly when a dtype was asked for."""
    probes = [wrap(np.zeros(0, dt)).to(*args, **kwargs) for dt in (np.float32, np.float64)]
    return probes[0].dtype if probes[0].dtype == probes[1].dtype else None


class Module:
    """Base class for models: define ``__init__`` (layers as attributes) and ``forward``."""

    training: bool

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks_with_kwargs", set())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())

    # ------------------------------------------------------------------ registration

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call: "
                                     "call super().__init__() first in your __init__")
            if name not in params:  # a new name; a parameter replaced keeps its place
                self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call: "
                                     "call super().__init__() first in your __init__")
            if name not in self._modules:
                self._forget(name)
            self._modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (minigrad.nn.Parameter or None expected)")
            params[name] = None
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (minigrad.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}'")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def _check_new_name(self, name, kind, registry):
        """PyTorch's checks of a name given to ``register_parameter`` / ``register_buffer`` /
        ``add_module``, made before anything changes: a string, no dot (dots join the names
        of nested modules in ``state_dict``), not empty, and not already an attribute of
        another kind (that one would be silently lost)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call: "
                                 "call super().__init__() first in your __init__")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists: choose another name, or "
                           f"delete it first (del module.{name})")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries.
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Add ``param`` (a ``Parameter`` or None) under ``name``, as assigning it does.
        A bad name or value raises before the module changes."""
        self._check_new_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (minigrad.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that belongs to the module's state but is not learnt; a buffer that is
        not ``persistent`` is left out of ``state_dict()``."""
        self._check_new_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (minigrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under ``name``, as assigning it does."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name(name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    # ------------------------------------------------------------------ calling

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        own = self.__dict__
        if own.get("_forward_pre_hooks") or own.get("_forward_hooks") \
                or own.get("_backward_hooks") or own.get("_backward_pre_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        """``forward`` between its hooks: each pre-hook may replace the inputs, each hook
        the output (PyTorch's order: pre-hooks, forward, hooks); with backward hooks, the
        inputs and outputs pass through ``BackwardHook``'s identities."""
        with_kwargs = self._forward_hooks_with_kwargs
        backward_hook = None
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
                continue
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        hooks, pre_hooks = self.__dict__.get("_backward_hooks"), self.__dict__.get(
            "_backward_pre_hooks")
        if hooks or pre_hooks:
            backward_hook = BackwardHook(self, hooks or {}, pre_hooks or {})
            args = backward_hook.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for key, hook in list(self._forward_hooks.items()):
            result = (hook(self, args, kwargs, output) if key in with_kwargs
                      else hook(self, args, output))
            if result is not None:
                output = result
        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        return output

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` before each ``forward``; what it returns (not None)
        replaces the inputs. ``with_kwargs=True``: ``hook(module, args, kwargs)`` returning
        ``(args, kwargs)``. Returns a handle: ``handle.remove()``."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args, output)`` after each ``forward``; what it returns (not
        None) replaces the output. ``with_kwargs=True``: ``hook(module, args, kwargs,
        output)``. Returns a handle: ``handle.remove()``."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        inputs have been computed (one per positional argument, None where none flows);
        what it returns (not None) replaces ``grad_input``. Returns a handle."""
        return self._add_hook(self._backward_hooks, hook, prepend, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs
        arrive, before those of its inputs are computed; what it returns (not None)
        replaces ``grad_output``. Returns a handle."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend, False)

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before ``load_state_dict`` loads this module (as a
        submodule too: ``prefix`` is its name in the state dict, e.g. ``"0."``). The lazy
        modules take their shapes there. Returns a handle: ``handle.remove()``."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def _add_hook(self, hooks, hook, prepend, with_kwargs):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        return handle

    # ------------------------------------------------------------------ walking the tree

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, parameter)`` pairs; a parameter shared by several modules comes once,
        under its first name, unless ``remove_duplicate=False``."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target):
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._parameters[name]

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ training state

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad``: to None (the default) or to zeros."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Switch gradients on or off for every parameter. An integer parameter cannot
        require grad: that raises before any parameter changes (PyTorch changes the ones
        before it first)."""
        params = list(self.parameters())
        if requires_grad:
            for p in params:
                if not p.is_floating_point():
                    p.detach().requires_grad_()  # raises PyTorch's error, changes nothing
        for p in params:
            p.requires_grad_(requires_grad)
        return self

    # ------------------------------------------------------------------ dtype

    def _floating_tensors(self):
        """Every floating parameter, its ``.grad``, and every floating buffer: what a dtype
        conversion changes (integer tensors keep their dtype, as in PyTorch)."""
        found = []
        for p in self.parameters():
            if p.is_floating_point():
                found.append(p)
                if p._grad is not None:
                    found.append(p._grad)
        for buf in self.buffers():
            if buf.is_floating_point():
                found.append(buf)
        return found

    def _cast(self, numpy_dtype):
        """Convert the floating parameters, gradients and buffers in place (the same
        Parameter objects): every new array is made before the first one is swapped in."""
        tensors = self._floating_tensors()
        converted = [t._data.astype(numpy_dtype) for t in tensors]
        for t, array in zip(tensors, converted):
            t._data = array
        return self

    def double(self):
        return self._cast(np.float64)

    def float(self):
        return self._cast(np.float32)

    def half(self):
        return self._cast(np.float16)

    def to(self, *args, **kwargs):
        """``model.to(minigrad.float64)``, ``model.to("cpu")``, ``model.to(device)``,
        ``model.to(other_tensor)``: floating parameters and buffers take the dtype, if one is
        given. Only floating dtypes are accepted (a model's parameters must be able to
        require grad); a bad argument raises before anything changes."""
        dtype = _dtype_asked_of_to(args, kwargs)
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}: parameters must stay floating "
                            "point to be learnt (convert the input instead, or "
                            "model.to(minigrad.float64))")
        return self._cast(dtypes.to_numpy(dtype))

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        wrap(np.zeros(0)).to("cuda")

    # ------------------------------------------------------------------ state dict

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter and buffer by dotted name, sharing memory with the model: a
        module's own parameters, then its buffers, then its children's, as in PyTorch (a
        tensor shared by two layers appears under both names). Buffers registered with
        ``persistent=False`` are left out."""
        state = OrderedDict() if destination is None else destination
        for name, value in self._parameters.items():
            if value is not None:
                state[prefix + name] = value if keep_vars else value.detach()
        for name, value in self._buffers.items():
            if value is not None and name not in self._non_persistent_buffers_set:
                state[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(state, prefix + name + ".", keep_vars)
        return state

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values from ``state_dict`` into this model's parameters and buffers.

        Everything is checked first (names when ``strict``; for every name the model has,
        that the value is a Tensor of the same shape); if anything is wrong, nothing is
        copied and the ``RuntimeError`` lists every problem, as PyTorch's does.

        Unlike PyTorch, a failed load changes nothing: PyTorch copies every entry that fits
        before it raises (even with ``strict=True``), leaving a model half old, half new.
        ``assign`` is accepted and ignored: values are always copied into the model's own
        tensors."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}: pass "
                            "other_model.state_dict() (or what minigrad.load returned)")
        for name, module in self.named_modules():
            prefix = f"{name}." if name else ""
            for hook in list(getattr(module, "_load_state_dict_pre_hooks", {}).values()):
                hook(module, state_dict, prefix, {}, strict, [], [], [])
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:  # PyTorch lists the missing keys first, then the unexpected ones
            if missing:
                errors.append("Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        for key, target in own.items():
            problem = _load_problem(key, state_dict[key], target) if key in state_dict else None
            if problem:
                errors.append(problem)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    target.copy_(state_dict[key])
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ printing

    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + indent(repr(module), 2)
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules)
                      | set(self._buffers))
