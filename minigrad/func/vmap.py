"""``vmap``: run a function written for one sample over a batch, as ``torch.func.vmap``.

minigrad has no batching rules yet, so no op is batched: ``vmap`` takes the samples apart
(``select`` along each input's ``in_dim``), calls the function once per sample and stacks
the results along ``out_dims``. The numbers are PyTorch's; the speed is a Python loop's.
Since every sample is an ordinary call, everything nests: ``vmap(grad(f))`` gives
per-sample gradients, ``vmap(jacrev(f))`` batched Jacobians, ``vmap(vmap(f))`` a double
loop. ``chunk_size`` is accepted and changes nothing (one sample at a time already).

``randomness``: ``'error'`` (the default) raises if the function draws from the default
generator, ``'different'`` lets each sample draw its own numbers, ``'same'`` gives every
sample the same draws (the generator is rewound before each sample). Draws from a
``Generator`` passed explicitly are not watched.

``out_dims=None`` for an output: PyTorch refuses an output that is batched; a loop cannot
see that, so minigrad refuses one whose samples differ (the same ``ValueError``).
"""

import functools

from ..creation import zeros
from ..random import default_generator
from .._tensor import Tensor
from ..ops.shape import stack
from .core import check_randomness
from .pytree import tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func):
    return getattr(func, "__name__", repr(func))


def _dims_for(dims, value, where):
    """One in_dim per leaf of ``value``: ``dims`` is an int or None for all of them, or a
    tuple / list / dict of the same structure as ``value`` (nested as deep as needed)."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(tree_flatten(value)[0])
    same_kind = isinstance(dims, (tuple, list, dict)) and type(dims) is type(value)
    if same_kind and len(dims) == len(value):
        keys = list(dims) if isinstance(dims, dict) else range(len(dims))
        if isinstance(dims, dict) and set(dims) != set(value):
            raise ValueError(where)
        result = []
        for k in keys:
            result.extend(_dims_for(dims[k], value[k], where))
        return result
    raise ValueError(where)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``f -> batched f``: ``vmap(f)(x)`` is ``stack([f(x[0]), f(x[1]), ...])``.

    ``in_dims``: the batch dimension of each positional argument (an int for all, or a tuple
    with one entry per argument: an int, None for an argument shared by every sample, or a
    nested structure matching the argument). Keyword arguments are shared. ``out_dims``:
    where the batch dimension goes in each output (None: the output is the same for every
    sample and comes back once)."""
    check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")
    name = _name(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, spec = tree_flatten(args)
        dims = _flat_in_dims(in_dims, args, name)
        size = _batch_size(leaves, dims, name, in_dims)
        start = default_generator.get_state()
        results = []
        for b in range(max(size, 1)):
            sample = [leaf if d is None else _take(leaf, d, b, size)
                      for leaf, d in zip(leaves, dims)]
            if randomness == "same":
                default_generator.set_state(start)
            before = default_generator.get_state() if randomness == "error" else None
            out = func(*tree_unflatten(sample, spec), **kwargs)
            if before is not None and default_generator.get_state() != before:
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap")
            results.append(out)
        return _stack_outputs(results, out_dims, name, size)

    return wrapper


def _flat_in_dims(in_dims, args, name):
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        return [in_dims] * len(tree_flatten(args)[0])
    if not isinstance(in_dims, tuple):
        raise ValueError(where + "expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    mismatch = (where + "in_dims is not compatible with the structure of `inputs`. in_dims has "
                f"structure {tree_flatten(in_dims)[1]} but inputs has structure "
                f"{tree_flatten(args)[1]}.")
    if len(in_dims) != len(args):
        raise ValueError(mismatch)
    dims = []
    for d, a in zip(in_dims, args):
        dims.extend(_dims_for(d, a, mismatch))
    return dims


def _batch_size(leaves, dims, name, in_dims):
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
    sizes = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(where + "in_dims must be int or None for each input, got "
                             f"{type(d)}")
        if not isinstance(leaf, Tensor):
            raise ValueError(
                where + f"Got in_dim={d} for an input but the input is of type {type(leaf)}. "
                "We cannot vmap over non-Tensor arguments, please use None as the respective "
                "in_dim")
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(
                where + f"Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _take(leaf, dim, index, size):
    """Sample ``index`` of ``leaf`` along ``dim`` (for an empty batch: zeros of a sample's
    shape, to learn the outputs' shapes from one call)."""
    if size == 0:
        shape = leaf.shape[:dim % leaf.dim()] + leaf.shape[dim % leaf.dim() + 1:]
        return zeros(*shape, dtype=leaf.dtype)
    return leaf.select(dim, index)


def _stack_outputs(results, out_dims, name, size):
    """The per-sample ``results`` stacked leaf by leaf along their ``out_dims``. An output
    with out_dim None must be the same for every sample (a loop cannot tell a batched tensor
    from an unbatched one, so it compares the values) and comes back once."""
    flat = [tree_flatten(r) for r in results]
    spec = flat[0][1]
    columns = list(zip(*[leaves for leaves, _ in flat])) if flat[0][0] else []
    if isinstance(out_dims, int) or out_dims is None:
        dims = [out_dims] * spec.num_leaves
    else:
        _, dims_spec = tree_flatten(out_dims)
        try:
            dims = _dims_for(out_dims, results[0], "")
        except ValueError:
            dims = None
        if dims is None or len(dims) != spec.num_leaves:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                f"with the structure of `outputs`. out_dims has structure {dims_spec} but "
                f"outputs has structure {spec}.")
    stacked = []
    for column, d in zip(columns, dims):
        first = column[0]
        if d is None:
            if isinstance(first, Tensor) and size > 1 and any(
                    not isinstance(c, Tensor) or c.shape != first.shape
                    or not bool((c == first).all()) for c in column[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            stacked.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(first)}. Did you mean to set out_dims= to None for output?")
        if size == 0:
            empty = zeros(0, *first.shape, dtype=first.dtype)
            stacked.append(empty.movedim(0, d))
        else:
            stacked.append(stack(column, dim=d))
    return tree_unflatten(stacked, spec)
