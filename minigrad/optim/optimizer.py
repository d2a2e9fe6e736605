"""``Optimizer``: the base of SGD and Adam, with ``param_groups``, ``state``,
``zero_grad`` and ``step`` as in ``torch.optim`` (chapter 8)."""

import warnings
from collections import defaultdict
from copy import deepcopy

import numpy as np

from ..graph import enable_grad
from .._tensor import Tensor, wrap

__all__ = ["Optimizer"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Holds the parameters (in groups with their own settings) and per-parameter state.

    Subclasses implement ``step()``; ``zero_grad()`` clears the gradients that
    ``backward()`` accumulated, which a training loop must do before each new batch.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a Tensor: wrap it in a list, [w]")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters: each "
                          "step would update them twice; pass each tensor once",
                          UserWarning, stacklevel=3)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor: optimize the leaves it was "
                                 "computed from, or use t.detach().requires_grad_()")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Forget the accumulated gradients: set ``.grad`` to None (the default, which
        frees the memory) or fill it with zeros (``set_to_none=False``)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _params_with_grad(group):
        """``(param, grad)`` for each parameter of ``group`` that has a gradient (a param
        without one, set_to_none, frozen or unused, is left alone), the gradient negated
        when the group maximizes."""
        for param in group["params"]:
            grad = param.grad
            if grad is not None:
                yield param, (-grad if group.get("maximize") else grad)

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ------------------------------------------------------------------ saving

    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters as indices."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: {k: (v.clone() if isinstance(v, Tensor) else v)
                                for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for ours, theirs in zip(self.param_groups, groups):
            if len(ours["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for ours, theirs in zip(self.param_groups, groups):
            for p, i in zip(ours["params"], theirs["params"]):
                by_index[i] = p
        new_state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            new_state[p] = {k: (wrap(np.array(v._data, dtype=p._data.dtype))
                                if isinstance(v, Tensor) and v.shape == p.shape else deepcopy(v))
                            for k, v in s.items()}
        self.state = new_state
        for ours, theirs in zip(self.param_groups, groups):
            ours.update({k: v for k, v in theirs.items() if k != "params"})

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
