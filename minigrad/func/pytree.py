"""Pytrees: nested tuples, lists and dicts of tensors, flattened to a list of leaves and a
structure to rebuild them with, as ``torch.utils._pytree`` does for ``torch.func``.

A tuple, a list, a dict (in key order), a namedtuple and None are containers (None holds
nothing); everything else is a leaf. ``TreeSpec`` prints as PyTorch's does
(``TreeSpec(tuple, None, [*, *])``), so the error messages that show structures match.
"""

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map", "is_leaf_spec"]


class TreeSpec:
    """The shape of a pytree without its leaves: a container type, its context (a dict's
    keys, a namedtuple's class) and the specs of its children."""
    __slots__ = ("kind", "context", "children", "num_leaves")

    def __init__(self, kind, context, children):
        self.kind = kind
        self.context = context
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.context == other.context and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, tuple(self.children)))

    def __repr__(self):
        if self.kind is None:
            return "*"
        if self.kind == "none":
            return "TreeSpec(NoneType, None, [])"
        context = self.context
        if self.kind == "dict":
            context = list(context)
        elif self.kind == "namedtuple":
            context = context.__name__
        else:
            context = None
        children = ",\n  ".join(repr(c) for c in self.children)
        return f"TreeSpec({self.kind}, {context}, [{children}])"


LEAF = TreeSpec(None, None, [])


def is_leaf_spec(spec):
    return spec.kind is None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order, and what ``tree_unflatten`` needs."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if tree is None:
        return TreeSpec("none", None, [])
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return TreeSpec("namedtuple", type(tree), [_flatten(v, leaves) for v in tree])
    if isinstance(tree, (tuple, list)):
        kind = "tuple" if isinstance(tree, tuple) else "list"
        return TreeSpec(kind, None, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec("dict", keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    """The pytree of structure ``spec`` holding ``leaves`` in order."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: {len(leaves)} leaves given for a structure of "
                         f"{spec.num_leaves} leaves ({spec})")
    return _unflatten(iter(leaves), spec)


def _unflatten(leaves, spec):
    if spec.kind is None:
        return next(leaves)
    if spec.kind == "none":
        return None
    children = [_unflatten(leaves, c) for c in spec.children]
    if spec.kind == "tuple":
        return tuple(children)
    if spec.kind == "list":
        return children
    if spec.kind == "namedtuple":
        return spec.context(*children)
    return dict(zip(spec.context, children))


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)
