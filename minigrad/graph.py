"""The backward graph and the engine that walks it (chapters 2 and 3).

Every differentiable op leaves behind a ``Node``: it knows the nodes of its inputs
(``next_functions``) and how to turn the gradient of its output into gradients for its
inputs (``apply``). Leaves that require grad get an ``AccumulateGrad`` node, which is where
``.grad += ...`` happens (chapter 4). ``backward`` orders the nodes, runs each one once and
hands the leaves their gradients. Before anything runs, each node checks that the tensors
it saved were not changed in place since (``check_saved``): every tensor has PyTorch's
version counter (``VersionCounter``), and a node keeps the version of each tensor it saved.

This module speaks numpy arrays only and knows nothing of ``Tensor``: it sits below it.

The leaf protocol
-----------------
The engine reaches into a tensor in one place only, ``gradient_node``, which reads its
three autograd slots (``_grad_fn``, ``_requires_grad``, ``_accumulator``: the node that made
it, whether it records, its leaf node once made). Otherwise it uses these public names:

* ``tensor.accumulate_grad(grad, owned=False)``: add ``grad`` (an array; a Tensor under
  ``create_graph=True``) into ``tensor.grad``. ``owned`` says nothing else refers to
  ``grad``, so it may become ``.grad`` without a copy. ``AccumulateGrad`` calls it for a
  leaf, and the engine calls it for a non-leaf that asked for ``retain_grad()`` (its node's
  ``retained`` is a weak reference to it): one path for every ``.grad``.
* ``get_gradient_edge(tensor)`` (PyTorch's ``torch.autograd.graph.get_gradient_edge``):
  the node a tensor's gradient goes to, its ``grad_fn`` or, for a leaf, its
  ``AccumulateGrad``, made on first use by ``gradient_node``.

A node, to its users (the chapter-3 stepper, the drawings), is ``name()``, ``inputs`` (the
nodes its gradients go to, None for an input without one), ``next_functions`` (PyTorch's
spelling of the same), ``apply(grad)`` and, for ``AccumulateGrad``, ``variable``.
"""

import collections
import contextlib
import functools
import itertools
import operator
import threading
import weakref

import numpy as np

__all__ = [
    "Node", "AccumulateGrad", "GradientEdge", "get_gradient_edge", "backward", "execution_order",
    "propagate", "VersionCounter",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "set_backward_hook",
    "gradient_hooks", "owned_gradients",
]


# ---------------------------------------------------------------------------- grad mode

class _ThreadGradMode(threading.local):
    """Whether ops record the graph, for each thread on its own (as in PyTorch): a
    ``no_grad()`` block in one thread leaves every other thread recording."""

    def __init__(self):
        # Run once in every thread that reads it (threading.local's rule): each thread,
        # the first and each new one, starts recording.
        self.enabled = True


# One object, read by ops on every call as ``GradMode.enabled``: an attribute of a
# ``threading.local`` costs about as much as a class attribute, unlike a function call.
GradMode = _ThreadGradMode()


def is_grad_enabled():
    """True when operations run by this thread are being recorded for backward."""
    return GradMode.enabled


class set_grad_enabled:
    """Turn graph recording on or off in this thread: a function call, a context manager or
    a decorator."""

    def __init__(self, mode):
        self.prev = GradMode.enabled
        self.mode = bool(mode)
        GradMode.enabled = self.mode

    def __enter__(self):
        GradMode.enabled = self.mode  # again: the object may be entered after it was made

    def __exit__(self, *exc):
        GradMode.enabled = self.prev
        return False

    def __call__(self, func):
        # Applied as a decorator: undo the switch made by __init__, apply it per call instead.
        GradMode.enabled = self.prev
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return func(*args, **kwargs)
        return wrapper


class _GradModeContext:
    """Base of ``no_grad`` / ``enable_grad``: a context manager that is also a decorator,
    with or without parentheses (``@no_grad()`` or ``@no_grad``)."""
    mode = True

    def __new__(cls, func=None):
        if func is not None:  # @no_grad without parentheses: decorate func right away
            return cls()(func)
        return super().__new__(cls)

    def __init__(self):
        # What to restore on exit, per thread: one instance (``ng = no_grad()``) may be
        # entered by several threads at once, each with its own mode to go back to.
        self.prev = {}

    def __enter__(self):
        self.prev.setdefault(threading.get_ident(), []).append(GradMode.enabled)
        GradMode.enabled = self.mode

    def __exit__(self, *exc):
        thread = threading.get_ident()
        stack = self.prev[thread]
        GradMode.enabled = stack.pop()
        if not stack:
            del self.prev[thread]
        return False

    def __call__(self, func):
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = GradMode.enabled
            GradMode.enabled = mode
            try:
                return func(*args, **kwargs)
            finally:
                GradMode.enabled = prev
        return wrapper

    def __repr__(self):
        return f"{type(self).__name__}()"


class no_grad(_GradModeContext):
    """Do not record the graph: ``with no_grad(): w -= lr * w.grad`` or ``@no_grad()``.
    Only the thread that runs the block stops recording; other threads go on."""
    mode = False


class enable_grad(_GradModeContext):
    """Record the graph again inside a ``no_grad`` block."""
    mode = True


# ---------------------------------------------------------------------------- nodes

node_numbers = itertools.count()
_creation_number = operator.attrgetter("seq")

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

CHANGED_MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: an array of shape {shape} ({dtype}) that {node} {kept} in the forward pass was "
    "changed in place afterwards (by x.add_(...), x[...] = ..., optimizer.step(), "
    "x.data = ...), so its gradient would be wrong. Run the forward pass again after the "
    "change, or change a copy (x = x.clone()) and leave the original as it was."
)


# ---------------------------------------------------------------------------- in-place changes

class VersionCounter:
    """How many times a tensor's memory was changed in place: PyTorch's ``t._version``.

    A tensor makes its counter on first need (most tensors are never changed in place, so
    most never make one); its views share it (``detach()``, ``x[1:]``, ``x.view(...)``,
    every op whose class says ``is_view = True``), so changing a view counts as a change of
    the tensor too. ``.data`` gets a counter of its own, as in PyTorch.

    An ``Op`` notes the version of each tensor it saves; backward refuses if it changed
    (``Op.check_saved``). Tensor, through its in-place ops, is the only one that bumps it.

    ``views`` (None until the first one) holds weak references to the views of this memory
    made in grad mode (``ops.op.register_view``): when an in-place change is recorded (the
    tensor that owns the memory gets a new grad_fn, ``CopySlices`` for a change through a
    view), each view still alive gets a grad_fn that views the new one (PyTorch regenerates
    a view's grad_fn too), so what uses a view afterwards sends its gradient through the
    change."""
    __slots__ = ("_version", "views")  # a Tensor and a counter both answer ``._version``

    def __init__(self):
        self._version = 0
        self.views = None


VERSION_MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{type} {shape}]{origin} is at version {now}; expected version {then} "
    "instead. Hint: the value was changed in place (x.add_(...), x[...] = ..., "
    "optimizer.step(), ...) after {node} saved it in the forward pass. Run the forward pass "
    "again after the change, or change a copy (x = x.clone()) and leave the original as it was."
)

# numpy dtype name -> PyTorch's legacy tensor type name, for the message above
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
               "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def version_error(node, array, now, then, maker):
    """PyTorch's error for a saved tensor (whose values are ``array`` now) that was changed
    in place: it is at version ``now``, ``node`` saved it at ``then``; ``maker`` is the node
    that made it (None for a leaf)."""
    origin = "" if maker is None else f", which is output 0 of {maker.name()},"
    name = _TYPE_NAMES.get(np.asarray(array).dtype.name, "Tensor")
    return RuntimeError(VERSION_MESSAGE.format(
        type="minigrad." + name, shape=list(np.shape(array)), origin=origin, now=now,
        then=then, node=node.name()))


def changed_error(node, array, kept):
    """minigrad's error for an ``array`` that ``node`` saved (or viewed) and that changed
    in a way PyTorch would have followed (``x.data = ...``, or the memory under a view)."""
    return RuntimeError(CHANGED_MESSAGE.format(shape=list(array.shape), dtype=array.dtype,
                                               node=node.name(), kept=kept))


def saved_version(tensor, array=0):
    """What a node keeps to check a tensor whose values it saved: ``(counter, version,
    tensor, array)``, the tensor's version counter and version now (PyTorch's SavedVariable
    keeps them too) and its array (``array=None``: a node's own output, whose array is not
    checked: the node must not keep its output tensor alive)."""
    counter = tensor._version_counter
    if counter is None:  # (Tensor._counter, inlined: this runs for every saved tensor)
        counter = tensor._version_counter = VersionCounter()
    if array is None:
        return counter, counter._version, None, tensor._data
    return counter, counter._version, tensor, tensor._data


def check_saved_versions(node, kept):
    """Raise if a tensor ``node`` saved (``kept``: ``saved_version``'s entries) was changed
    in place since (its version moved: PyTorch's error), or was handed other memory by
    ``x.data = ...`` (PyTorch's node would read the new values; minigrad saved the old
    array, so it refuses rather than give the old values' gradient)."""
    for counter, then, tensor, array in kept:
        if counter._version != then or (tensor is not None and tensor._data is not array):
            raise _saved_changed_error(node, counter, then, tensor, array)


def _saved_changed_error(node, counter, then, tensor, array):
    """The error for one of ``check_saved_versions``' entries that changed."""
    if counter._version == then:
        return changed_error(node, array, "saved")  # x.data = another tensor
    if tensor is None:  # the node's output
        return version_error(node, array, counter._version, then, node)
    return version_error(node, tensor._data, counter._version, then, tensor._grad_fn)


def saved_output_is(node, out, array, counter):
    """After an in-place op copied its result ``out`` into the tensor's ``array``: ``node``
    (the op's node) saves ``array`` where it saved ``out`` (the same values), at the
    tensor's version now (``counter``, just bumped), so changing the tensor again later
    makes backward refuse, as in PyTorch for ``relu_().relu_()`` (relu's backward needs the
    output that the second relu_ changed)."""
    if node is None or not node.saved:
        return
    if any(item is out for item in node.saved):
        node.saved = tuple(array if item is out else item for item in node.saved)
        kept = getattr(node, "kept", None)
        if kept:  # an Op: check the tensor's version from now on
            node.kept = [(counter, counter._version, None, array) if entry[3] is out else entry
                         for entry in kept]


class Node:
    """One recorded operation of the backward graph.

    ``inputs`` holds, for each input of the forward op, the node its gradient goes to
    (``None`` for an input that needs no gradient). ``saved`` holds the arrays ``apply``
    needs; it becomes ``None`` when the graph is freed. ``seq`` orders nodes by creation, so
    backward undoes the forward pass from the last op to the first.
    """

    __slots__ = ("inputs", "saved", "seq", "retained", "__weakref__")

    # Can ``apply`` take a Tensor gradient and record its work (create_graph=True)?
    twice_differentiable = False
    # Does the node's output view its input's memory? (Then it shares its version counter.)
    is_view = False

    def __init__(self, inputs, saved=()):
        self.inputs = inputs
        self.saved = saved
        self.seq = next(node_numbers)
        self.retained = None  # weakref to a non-leaf tensor that asked for retain_grad()

    def apply(self, grad):
        """Gradient of the output (an array) -> one gradient array (or None) per input."""
        raise NotImplementedError

    def check_saved(self):
        """Raise if a tensor whose values this node saved was changed in place since the
        forward pass (the engine asks before running anything). A node that saved nothing
        has nothing to check."""

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        """PyTorch's view of the edges: ``((node, 0), (None, 0), ...)``."""
        return tuple((node, 0) for node in self.inputs)

    @property
    def is_freed(self):
        return self.saved is None

    def release(self):
        """Drop the saved arrays (a node that saved nothing can run again)."""
        if self.saved:
            self.saved = None

    def saved_arrays(self):
        if self.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return self.saved

    def __repr__(self):
        return f"<{type(self).__name__}>"


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into ``.grad``."""

    __slots__ = ("_variable",)
    twice_differentiable = True

    def __init__(self, variable):
        super().__init__(())
        # The leaf keeps its node for every graph it is used in; the node only points back
        # weakly, so the two form no reference cycle.
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        """The leaf tensor whose ``.grad`` this node fills."""
        return self._variable()

    def apply(self, grad, owned=False):
        """The leaf's ``.grad += grad`` (the engine calls this once everything else ran);
        ``owned``: nothing else refers to ``grad``, so it may become ``.grad`` uncopied."""
        leaf = self._variable()
        if leaf is not None:  # a leaf that no longer exists needs no gradient
            leaf.accumulate_grad(grad, owned)
        return ()


class GradientEdge(tuple):
    """``(node, output_nr)``: where a tensor's gradient goes (PyTorch's ``GradientEdge``).
    A minigrad node has one output, so ``output_nr`` is always 0."""
    __slots__ = ()

    def __new__(cls, node, output_nr=0):
        return tuple.__new__(cls, (node, output_nr))

    node = property(operator.itemgetter(0))
    output_nr = property(operator.itemgetter(1))

    def __repr__(self):
        return f"GradientEdge(node={self.node!r}, output_nr={self.output_nr})"


def gradient_node(tensor):
    """The node that receives ``tensor``'s gradient: its grad_fn, its AccumulateGrad, or
    None (an op's edge to this input: what ``next_functions`` shows). It reads the tensor's
    autograd slots (``_grad_fn``, ``_requires_grad``, ``_accumulator``): the leaf protocol
    above."""
    fn = tensor._grad_fn
    if fn is not None:
        return fn
    if not tensor._requires_grad:
        return None
    if tensor._accumulator is None:
        tensor._accumulator = AccumulateGrad(tensor)  # made on first use, then reused
    return tensor._accumulator


def get_gradient_edge(tensor):
    """The edge ``tensor``'s gradient flows along: ``get_gradient_edge(t).node`` is
    ``t.grad_fn``, or the ``AccumulateGrad`` node of a leaf that requires grad."""
    node = gradient_node(tensor)
    if node is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    return GradientEdge(node, 0)


def execution_order(roots):
    """The nodes reachable from ``roots`` in the order backward runs them.

    A node may run only once every node that feeds it a gradient has run (a topological
    order). Every node is created after the nodes of its inputs, so its creation number
    ``seq`` is larger than theirs: newest first is such an order, and it undoes the
    forward pass from the last op to the first (PyTorch's engine, too, prefers the newest
    ready node). No recursion, so a 100,000-op chain is fine. Raises if a node's saved
    arrays were already freed, or changed in place since the forward pass.
    """
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if node.saved or node.is_view:  # values that an in-place change may have changed
            node.check_saved()
        for nxt in node.inputs:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return sorted(seen, key=_creation_number, reverse=True)


# id(node) -> (a weak reference to the node, its hooks in order), each ``hook(grad) ->
# grad``: Tensor.register_hook's. A plain dict, not an attribute: graphs without hooks
# (nearly all) pay one test of an empty dict; an entry goes when its node does.
_gradient_hooks = {}


def add_gradient_hook(node, hook):
    """Call ``hook(grad)`` on the total gradient of ``node`` (before the node runs, before a
    leaf's ``.grad`` is written) and go on with what it returns. Returns a handle whose
    ``remove()`` takes the hook off."""
    key = id(node)
    entry = _gradient_hooks.get(key)
    if entry is None:
        gone = functools.partial(_forget_hooks, key)
        entry = _gradient_hooks[key] = (weakref.ref(node, gone), collections.OrderedDict())
    hooks = entry[1]
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _forget_hooks(key, _):
    _gradient_hooks.pop(key, None)


def _run_hooks(node, grad):
    """``grad`` after each hook on ``node`` has seen it (and perhaps replaced it)."""
    for hook in list(_gradient_hooks[id(node)][1].values()):
        grad = hook(grad)
    return grad


def propagate(order, roots, grads):
    """Walk ``order`` (from ``execution_order``) pushing gradients back from the roots.

    Yields ``(node, grad)``: each node with the total gradient that reached it, before the
    node turns it into gradients for its inputs. Changes nothing: ``backward`` decides what
    to do with what arrives (and the chapter-3 stepper just watches).
    """
    buffers = {}
    for node, grad in zip(roots, grads):
        buffers[node] = buffers[node] + grad if node in buffers else grad
    for node in order:
        grad = buffers.pop(node, None)
        if grad is None:
            continue  # nothing flowed here (e.g. only through integer indices)
        if _gradient_hooks and id(node) in _gradient_hooks:  # a tensor's register_hook
            grad = _run_hooks(node, grad)
        yield node, grad
        if type(node) is AccumulateGrad:
            continue  # a leaf: ``backward`` hands it its gradient once all nodes ran
        for nxt, g in zip(node.inputs, node.apply(grad)):
            if nxt is None or g is None:
                continue
            # Out of place: ``g`` may be the very array another node received.
            buffers[nxt] = buffers[nxt] + g if nxt in buffers else g


def backward(roots, grads, retain_graph=False, capture=None, create_graph=False):
    """Push ``grads`` back from the ``roots`` nodes through the graph.

    Without ``capture`` the leaves receive their gradients (``AccumulateGrad``). With a
    list of nodes in ``capture``, nothing is accumulated: the gradient arriving at each of
    those nodes is returned instead (this is ``autograd.grad``).

    ``grads`` are arrays, and every node computes with arrays, recording nothing. With
    ``create_graph=True`` they are Tensors and the walk runs in grad mode: each node's
    formula is recorded as it runs, so the gradients have a graph of their own.

    Every check happens before anything changes, and leaves are only touched after every
    node has run, so an error leaves all ``.grad`` as they were.
    """
    order = execution_order(roots)
    if _backward_hook is not None:  # minigrad.compile is tracing: it notes this backward
        _backward_hook(roots, grads, order, retain_graph, capture, create_graph)
    if create_graph:
        _check_twice_differentiable(order)
    wanted = set(capture) if capture is not None else None
    arrived = {}  # the total gradient of each node whose gradient is wanted
    with np.errstate(all="ignore"), _recording(create_graph):  # inf, nan: silently
        for node, grad in propagate(order, roots, grads):
            if capture is None:  # a leaf's gradient, or one a tensor retains
                keep = type(node) is AccumulateGrad or node.retained is not None
            else:  # autograd.grad: the inputs' gradients
                keep = node in wanted
            if keep:
                arrived[node] = grad
        if capture is None:
            owned = () if create_graph else owned_gradients(arrived, grads)
            for node, grad in arrived.items():  # leaves last: .grad += grad
                _deliver(node, grad, owned=node in owned)
    if not retain_graph:
        release_graph(order)
    return arrived if capture is not None else None


_backward_hook = None  # minigrad.compile's recorder while it traces a step


def set_backward_hook(hook):
    """While ``minigrad.compile`` traces a step: ``hook(roots, grads, order, retain_graph,
    capture, create_graph)`` is called by every ``backward`` before it runs (None: off)."""
    global _backward_hook
    _backward_hook = hook


def gradient_hooks():
    """id(node) -> hooks, for the nodes with ``Tensor.register_hook``s (``minigrad.compile``)."""
    return _gradient_hooks


def _recording(create_graph):
    """Grad mode on while the formulas run under create_graph=True: they are recorded. A
    plain backward computes on arrays, where grad mode does not matter (and switching it
    costs a microsecond)."""
    return set_grad_enabled(True) if create_graph else _NOT_RECORDING


_NOT_RECORDING = contextlib.nullcontext()  # (one for every backward: it keeps no state)


def _deliver(node, grad, owned):
    """Hand ``grad`` to the tensor of ``node``: a leaf (through its AccumulateGrad) or a
    non-leaf that retains its gradient."""
    if type(node) is AccumulateGrad:
        node.apply(grad, owned)
        return
    tensor = node.retained()
    if tensor is not None:
        tensor.accumulate_grad(grad, owned)


# Gradients smaller than this are copied into .grad: the copy costs less than finding out
# that it is not needed (measured on the benchmark's MLPs: 16384 float32 take ~3 us).
_OWN_FROM = 16384


def owned_gradients(arrived, given):
    """Speed: the nodes whose gradient may become ``.grad`` without a copy (saves a copy per
    leaf of ``_OWN_FROM`` elements or more, per step). Only an array that nothing else
    refers to: not one the caller passed in, nor one that another tensor also received
    (PyTorch, too, keeps a gradient nobody else holds)."""
    memory = [(node, id(grad if grad.base is None else _memory_owner(grad)))
              for node, grad in arrived.items() if grad.size >= _OWN_FROM]
    if not memory:
        return ()
    uses = dict.fromkeys([id(_memory_owner(grad)) for grad in given], 2)  # the caller's: never
    for _, key in memory:
        uses[key] = uses.get(key, 0) + 1
    return {node for node, key in memory if uses[key] == 1}


def _memory_owner(array):
    """The array that owns ``array``'s memory: the array itself, or the base of a view
    (numpy points a view of a view to the first array; an array made on a foreign buffer,
    np.frombuffer, has that buffer as base: its views then stop at the array)."""
    base = array.base
    if base is None:
        return array
    while type(base) is np.ndarray:
        array, base = base, base.base
    return array


def release_graph(order):
    """Free what the nodes saved for backward (``retain_graph=False``): a second backward
    through them then raises, and the memory of the forward pass's values is returned."""
    for node in order:
        node.release()


def _check_twice_differentiable(order):
    """Refuse create_graph=True through a node whose backward cannot be recorded: its
    gradient would have no history, and a second derivative through it would be silently
    wrong."""
    for node in order:
        if not node.twice_differentiable:
            raise NotImplementedError(
                f"{node.name()} cannot build a graph of its gradient yet, so "
                "create_graph=True (a second derivative) cannot pass through it. Compute "
                "this part without create_graph, or write the op as a minigrad.ops.Op.")


class RemovableHandle:
    """Takes its hook off again: ``handle.remove()``, or ``with handle:`` for a block."""

    next_id = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id)

    def __setstate__(self, state):
        """A copied handle (``copy.deepcopy``, pickling) removes from the copied hooks, as
        PyTorch's does: never from the original module's."""
        hooks_dict, self.id = state
        if hooks_dict is None:  # the hooks were gone: a copy that removes nothing
            hooks_dict = collections.OrderedDict()
        self.hooks_dict_ref = weakref.ref(hooks_dict)

    def __enter__(self):
        return self

    def __exit__(self, *error):
        self.remove()
