"""One test registry of minigrad's ops, in the spirit of PyTorch's OpInfo.

Each entry (an ``OpInfo``) names the ``Op`` class it exercises by its class NAME (like
``"ReluBackward0"``, never a module path: op classes move between modules) and says how
to call the op through the public API of both libraries, ``call(lib, *tensors)``, run
once with ``lib = minigrad`` and once with ``lib = torch``. From the entry the checks in
``tests/test_opinfo.py`` compare, against PyTorch:

* the forward value and dtype, for each dtype of the entry;
* the first derivatives, for a random (seeded) gradient of the output;
* the second derivatives (``autograd.grad(..., create_graph=True)`` then a Hessian-vector
  product), where the entry says the op supports double backward;
* the in-place form (``x.relu_()``) and the ``out=`` form, where PyTorch has them.

Samples: ``args`` gives each tensor input's shape (a float tensor drawn at random from the
entry's ``domain``), or a sample-maker ``maker(rng, dtype)`` returning a numpy array (index
tensors, masks, ...). The entry's ``corners``, the points where its formula changes
(x = 0 for relu, x = +-1 for hardtanh), are written into the first elements of the input
``corner_arg``, so that a formula wrong at exactly a corner cannot pass.

Families of entries live in the sibling modules (``pointwise``, ``arithmetic``, ...);
``REGISTRY`` maps each Op class name to its entries, and ``BASES`` lists the base classes
that are never a graph's node themselves (each with the reason).

Adding an op: one line in its family's module, e.g.::

    op("HardtanhBackward0", lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.5),
       corners=(-0.5, 0.5), inplace=lambda lib, x: lib.nn.functional.hardtanh(
           x, -0.5, 0.5, inplace=True))

A node that only appears under create_graph (``...BackwardBackward0``) gets an entry whose
call is a first derivative (``grad_of``); a node only an in-place change makes gets a call
that makes that change on a clone. Where minigrad differs from PyTorch, the entry says so
with ``xfail={"gradgrad": "what differs"}`` (strict: it fails once minigrad is fixed).
"""

import inspect

import numpy as np

import minigrad as mg

__all__ = ["BASES", "FAMILIES", "FLOATS", "REGISTRY", "TOLERANCES", "WITH_INT", "OpInfo", "base",
           "entries", "grad_of", "make_inputs", "node_names", "op", "unary", "wants_grad",
           "with_corners"]

FLOATS = ("float32", "float64")
WITH_INT = ("float32", "float64", "int64")
# (rtol, atol) per dtype: float64 tight, float32 loose
TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "int64": (0, 0)}

REGISTRY = {}
BASES = {}


class OpInfo:
    """One way to run one op, and what to check about it (see the module docstring).

    name: the Op class name the call must put in the graph; tag: tells variants apart;
    call(lib, *tensors) -> tensor; args: per tensor input a shape or a maker(rng, dtype);
    domain: (low, high) for the random floats (None: standard normal), one pair or one per
    input; corners: values written into input ``corner_arg``; dtypes: float names, and
    "int64" where the op takes integers (forward only); grads: which inputs require grad
    (default: the float ones); double: does it support double backward; inplace(lib,
    *tensors): the in-place form, run on clones of the inputs; out(lib, *tensors, out=):
    the out= form; xfail: {check: reason} for checks where minigrad differs from PyTorch
    (a bug to fix, not a test to loosen); tol: {dtype: (rtol, atol)} overrides;
    distinct: draw floats without ties (max, sort, ...); backward=False: an op whose node
    raises when differentiated (PyTorch's NotImplemented), checked forward only;
    torch_node: the node of PyTorch's graph where its name differs from minigrad's (None:
    PyTorch composes the op of other nodes)."""

    def __init__(self, name, call, args=((3, 4),), domain=None, corners=(), corner_arg=0,
                 dtypes=FLOATS, grads=None, double=True, inplace=None, out=None, xfail=None,
                 tol=None, distinct=False, tag="", backward=True, inplace_method=None, out_function=None,
                 torch_node=""):
        self.name, self.call, self.args, self.domain = name, call, tuple(args), domain
        self.corners, self.corner_arg, self.dtypes = tuple(corners), corner_arg, tuple(dtypes)
        self.grads, self.double, self.inplace, self.out = grads, double, inplace, out
        self.xfail, self.tol, self.distinct = dict(xfail or {}), dict(tol or {}), distinct
        self.tag, self.backward = tag, backward
        # the node PyTorch's graph has for this call: the same name unless said otherwise
        # (None: PyTorch composes the op of other nodes)
        self.torch_node = name if torch_node == "" else torch_node
        # the public names the in-place and out= forms use, when minigrad may lack them
        self.inplace_method, self.out_function = inplace_method, out_function

    def lacks(self, check):
        """Why minigrad cannot run ``check`` (it lacks the form PyTorch has), or None."""
        if (check == "inplace" and self.inplace_method
                and not hasattr(mg.Tensor, self.inplace_method)):
            return f"minigrad's Tensor has no {self.inplace_method} (PyTorch's has)"
        if check == "out" and self.out_function:
            fn = getattr(mg, self.out_function, None)
            if fn is None or "out" not in inspect.signature(fn).parameters:
                return (f"minigrad.{self.out_function} takes no out= "
                        f"(torch.{self.out_function} does)")
        return None

    @property
    def id(self):
        return f"{self.name}-{self.tag}" if self.tag else self.name

    def tolerance(self, dtype):
        return self.tol.get(dtype, TOLERANCES[dtype])

    def __repr__(self):
        return f"OpInfo({self.id})"


def op(name, call=None, **options):
    """Add an entry for the Op class called ``name``; returns it."""
    entry = OpInfo(name, call or options.pop("call"), **options)
    variants = REGISTRY.setdefault(name, [])
    if any(e.tag == entry.tag for e in variants):
        raise ValueError(f"two entries for {name} with tag {entry.tag!r}: give each a tag")
    variants.append(entry)
    return entry


def base(name, reason):
    """Declare ``name`` a base class that no op makes a node of (so it needs no entry)."""
    BASES[name] = reason


def entries():
    """Every entry, in a stable order."""
    return [e for name in sorted(REGISTRY) for e in REGISTRY[name]]


def _domain_of(entry, i):
    d = entry.domain
    if d is not None and isinstance(d[0], (tuple, list, type(None))):
        return d[i] if i < len(d) else None
    return d


def unary(name, fn, inplace=True, out=True, **options):
    """An entry for a one-input op called as the method ``x.fn()``, with its in-place
    method ``x.fn_()`` and ``torch.fn(x, out=...)`` (when PyTorch has them)."""
    options.setdefault("call", lambda lib, x: getattr(x, fn)())
    if inplace:
        options.update(inplace=lambda lib, x: getattr(x, fn + "_")(), inplace_method=fn + "_")
    if out:
        options.update(out=lambda lib, x, out: getattr(lib, fn)(x, out=out), out_function=fn)
    return op(name, **options)


def with_corners(size, values, domain=None):
    """A sample-maker of a float input of shape ``size`` whose first elements are ``values``
    (ties with another input's corners: maximum, clamp with tensor bounds)."""
    def maker(rng, dtype):
        a = rng.standard_normal(size) if domain is None else rng.uniform(*domain, size=size)
        flat = a.reshape(-1)
        flat[:len(values)] = values
        return flat.reshape(size).astype(dtype)
    return maker


def make_inputs(entry, dtype, seed=0):
    """The entry's sample as numpy arrays (corner values mixed in), the same for any lib."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, spec in enumerate(entry.args):
        if callable(spec):
            a = np.asarray(spec(rng, dtype))
        elif dtype == "int64":
            a = rng.integers(-5, 6, size=spec).astype(np.int64)
            low = _domain_of(entry, i)
            if low is not None:  # a restricted domain: keep ints inside it
                a = rng.integers(max(int(np.ceil(low[0])), -5), min(int(low[1]), 6),
                                 size=spec).astype(np.int64)
        else:
            dom = _domain_of(entry, i)
            n = int(np.prod(spec, dtype=np.int64))
            if entry.distinct:
                a = ((rng.permutation(n) - n / 2 + 0.25) / max(n, 1)).reshape(spec) * 4
                if dom is not None:
                    a = dom[0] + (a - a.min() + 0.05) / (np.ptp(a) + 0.1) * (dom[1] - dom[0])
            elif dom is None:
                a = rng.standard_normal(spec)
            else:
                a = rng.uniform(dom[0], dom[1], size=spec)
            a = np.asarray(a, dtype=dtype)
            if i == entry.corner_arg and entry.corners and a.size:
                flat = a.reshape(-1).copy()
                k = min(len(entry.corners), flat.size)
                flat[:k] = entry.corners[:k]
                a = flat.reshape(a.shape)
        arrays.append(a)
    return arrays


def wants_grad(entry, arrays):
    """Which inputs require grad: the entry's ``grads``, or every float input."""
    if entry.grads is not None:
        return list(entry.grads)
    return [a.dtype.kind == "f" for a in arrays]


def grad_of(lib, fn, x, upstream):
    """The first derivative of ``fn(x)`` for the gradient ``upstream``, as a differentiable
    function of x and upstream (for the entries of ``...BackwardBackward0`` ops)."""
    return lib.autograd.grad(fn(x), x, grad_outputs=upstream, create_graph=True)[0]


def node_names(out):
    """The class names of every node in the graph that made ``out``, and of the classes
    those nodes' classes derive from (einsum's node is an ``EinsumBackward0`` renamed like
    PyTorch's last node, ``ViewBackward0``: it is still a node of class EinsumBackward0)."""
    names, seen = set(), set()
    todo = [out.grad_fn] if out.grad_fn is not None else []
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.update(c.__name__ for c in type(node).__mro__[:-1])
        todo.extend(n for n, _ in node.next_functions if n is not None)
    return names


# the families, each adding its entries to REGISTRY (imported last: they use op and base)
from . import (
    activations,
    arithmetic,
    indexing,
    inplace_nodes,
    linalg,
    losses,
    matrices,
    nn_ops,
    pointwise,
    reductions,
    shape,
)

FAMILIES = (activations, arithmetic, indexing, inplace_nodes, linalg, losses, matrices,
            nn_ops, pointwise, reductions, shape)
