"""``functional_call``: call a module with other tensors in place of its parameters and
buffers, as ``torch.func.functional_call``: the way to treat a model as a function of its
weights (``grad`` of a loss with respect to a dict of parameters, per-sample gradients with
``vmap(grad(...))``, ensembles).

The module's own tensors are swapped out for the call and put back afterwards, also when
the call raises; the given tensors are used as they are (no copy), so gradients flow to
them.
"""

from .._tensor import Tensor

__all__ = ["functional_call"]


def _merge(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if isinstance(parameter_and_buffer_dicts, (tuple, list)):
        merged, repeated = {}, []
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                                 f"dictionaries, got {type(d)}")
            repeated.extend(k for k in d if k in merged)
            merged.update(d)
        if repeated:
            raise ValueError(f"{sorted(set(repeated))} appeared in multiple dictionaries; "
                             "behavior of functional call is ambiguous")
        return merged
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(parameter_and_buffer_dicts)}")


def _places(module, prefix=""):
    """``(name, registry, key)`` for every parameter and buffer of ``module`` and its
    submodules, under every name it has (a tied tensor appears once per name)."""
    for registry in (module._parameters, module._buffers):
        for key, value in registry.items():
            if value is not None:
                yield prefix + key, registry, key
    for child_name, child in module._modules.items():
        if child is not None:
            yield from _places(child, f"{prefix}{child_name}.")


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a
    dict from names as ``named_parameters()`` gives them, or a tuple of such dicts) in place
    of the module's own. ``tie_weights``: a tensor the module uses under several names (tied
    weights) is replaced under all of them. ``strict``: every parameter and buffer must be
    given, and no other name. Names the module does not have are ignored otherwise."""
    given = _merge(parameter_and_buffer_dicts)
    for name, value in given.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"functional_call: the value for '{name}' is a "
                            f"{type(value).__name__}, expected a Tensor")
    places = list(_places(module))
    if strict:
        _check_strict(module, [name for name, _, _ in places], given)
    chosen = {}  # id(the module's tensor) -> the tensor given for one of its names
    if tie_weights:
        for name, registry, key in places:
            if name in given:
                chosen.setdefault(id(registry[key]), given[name])
    swaps = []
    for name, registry, key in places:
        if name in given:
            swaps.append((registry, key, given[name]))
        elif id(registry[key]) in chosen:
            swaps.append((registry, key, chosen[id(registry[key])]))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for registry, key, value in swaps:
            saved.append((registry, key, registry[key]))
            registry[key] = value
        return module(*args, **(kwargs or {}))
    finally:
        for registry, key, original in reversed(saved):
            registry[key] = original


def _check_strict(module, names, given):
    missing = [n for n in names if n not in given]
    unexpected = [n for n in given if n not in names]
    if missing or unexpected:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(f"'{n}'" for n in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(f"'{n}'" for n in missing) + ".")
        raise RuntimeError("\n".join(lines))
