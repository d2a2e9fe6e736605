"""Guards: what must still hold for a recorded step to be replayed (chapter 14).

A replay reruns the numpy calls of the trace, so it is right only if the step would make
the same calls again. Before each replay ``Guards.check`` compares, cheaply, what the
calls depended on with what the trace saw, and names the first difference (then the step
is traced again, up to ``cache_size_limit`` times, as ``torch.compile`` recompiles):

1. ``grad_mode``: grad mode on or off (``no_grad`` records nothing);
2. ``inputs``: the structure of the arguments, each input tensor's shape, dtype, and
   whether it requires grad, and each other argument's value (a number is a constant of
   the trace: another number retraces);
3. ``tensors``: each tensor from outside the step it used (parameters, buffers): the same
   tensor object, still on the same array, requiring grad as then, and at the version the
   last run left it at (nobody changed it in place in between);
4. ``training``: each module called still in the same mode (``train()``/``eval()``);
5. ``optimizer``: each optimizer's param_groups (the same parameters, the same
   hyperparameters: ``lr``, ``momentum``, ``betas``...) and how much state it keeps;
6. ``hooks``: no module hooks and no gradient hooks registered since;
7. ``forward mode``: no dual level open.
"""

from ..graph import gradient_hooks
from ..ops.op import forward_mode

__all__ = ["Guards", "describe_inputs"]

_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


def describe_inputs(value, tensors):
    """The structure of the arguments (hashable, with the value of every argument that is
    not a tensor), appending the tensors to ``tensors``."""
    name = type(value).__name__
    if name == "Tensor" or hasattr(value, "_data") and hasattr(value, "_grad_fn"):
        tensors.append(value)
        return "T"
    if isinstance(value, (tuple, list)):
        return (name,) + tuple(describe_inputs(v, tensors) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, describe_inputs(v, tensors)) for k, v in value.items())
    if value is None or isinstance(value, (bool, int, float, str)):
        return (name, value)
    return ("object", id(value))  # anything else: the same object


class Guards:
    """The guards of one trace: see the module's docstring."""

    def __init__(self, grad_mode, structure, tensors, used, modules, optimizers):
        self.grad_mode = grad_mode
        self.structure = structure
        self.meta = [(t._data.shape, t._data.dtype, t._requires_grad) for t in tensors]
        params = [p for opt in optimizers for g in opt.param_groups for p in g["params"]]
        outside = {id(t): t for t in list(used) + params}
        self.outside = [(t, t._data, t._requires_grad) for t in outside.values()]
        self.versions = []
        self.modules = [(m, m.training) for m in modules]
        self.optimizers = [optimizer_state(opt) for opt in optimizers]
        self.hooks = len(gradient_hooks())
        self.settled()

    def settled(self):
        """After a run of the step: the versions it left the outside tensors at."""
        self.versions = [t._version for t, _, _ in self.outside]

    def check(self, grad_mode, structure, tensors):
        """None if the recorded step may be replayed, else which guard failed and why."""
        if grad_mode != self.grad_mode:
            return f"grad_mode: grad mode is {'on' if grad_mode else 'off'} now"
        if structure != self.structure:
            return "inputs: the arguments differ (their structure, or a value that is no tensor)"
        for i, (t, (shape, dtype, requires_grad)) in enumerate(zip(tensors, self.meta)):
            data = t._data
            if data.shape != shape or data.dtype != dtype:
                return (f"inputs: tensor {i} is {list(data.shape)} {data.dtype}, the trace had "
                        f"{list(shape)} {dtype}")
            if t._requires_grad != requires_grad or t._grad_fn is not None:
                return f"inputs: tensor {i} requires grad {t._requires_grad} (or has a graph)"
        for (t, data, requires_grad), version in zip(self.outside, self.versions):
            if t._data is not data:
                return "tensors: a parameter got other memory (`p.data = ...`)"
            if t._requires_grad != requires_grad:
                return "tensors: a parameter's requires_grad changed"
            if t._version != version:
                return (f"tensors: a tensor of shape {list(data.shape)} was changed in place "
                        f"outside the step (version {t._version}, expected {version})")
        for module, training in self.modules:
            if module.training != training:
                return f"training: {type(module).__name__}.training is {module.training} now"
            own = module.__dict__
            if own.get(_HOOKS[0]) or own.get(_HOOKS[1]) or own.get(_HOOKS[2]) \
                    or own.get(_HOOKS[3]):
                return f"hooks: {type(module).__name__} has hooks now"
        for opt, groups, sizes in self.optimizers:
            if not same_optimizer_state(opt, groups, sizes):
                return (f"optimizer: {type(opt).__name__}'s param_groups or state changed "
                        "(a hyperparameter such as lr, the parameters, or new state)")
        if len(gradient_hooks()) != self.hooks:
            return "hooks: gradient hooks were registered or removed"
        if forward_mode():
            return "forward mode: a dual level is open"
        return None


def optimizer_state(opt):
    """What a step of ``opt`` depends on besides the tensors: its groups (each group dict,
    its parameters, its hyperparameters) and how many entries of state each parameter has."""
    groups = [(g, list(g["params"]), [(k, v) for k, v in g.items() if k != "params"])
              for g in opt.param_groups]
    sizes = [(s, len(s)) for s in opt.state.values()]
    return opt, groups, (len(opt.state), sizes)


def same_optimizer_state(opt, groups, sizes):
    """Does ``opt`` still have the groups and state ``optimizer_state`` saw? (Identity and
    ``is`` first: this runs before every replay.)"""
    current = opt.param_groups
    if len(current) != len(groups):
        return False
    for g, (group, params, hyper) in zip(current, groups):
        if g is not group or len(g) != len(hyper) + 1:
            return False
        now = g["params"]
        if len(now) != len(params):
            return False
        for p, q in zip(now, params):
            if p is not q:
                return False
        for k, v in hyper:
            w = g[k]
            if w is not v and w != v:
                return False
    count, entries = sizes
    if len(opt.state) != count:
        return False
    for state, n in entries:
        if len(state) != n:
            return False
    return True
