"""``Op``: one differentiable op, defined in one place (chapters 2, 3 and 5).

An op is a class named like PyTorch's node for it (``SinBackward0``) with two methods::

    class SinBackward0(Op):
        '''d sin(a) = cos(a) da'''

        def forward(self, a):                # numpy arrays in, a numpy array out
            self.save_for_backward(a)        # what backward will need
            return np.sin(a)

        def backward(self, grad, a):         # the saved values come back as arguments
            return grad * cos(a)             # one gradient per input of forward

``SinBackward0.run((x,), x_array)`` runs ``forward`` and, when ``x`` requires grad (and
grad mode is on), keeps the op object itself as the new tensor's
``grad_fn``: the object that computed the forward pass is the node that runs backward.

``backward`` is written once, in operations that numpy arrays and Tensors both have
(``*``, ``/``, ``@``, ``.sum``, and the helpers of ``formulas``). A plain ``backward()``
hands it arrays (fast, nothing recorded); ``backward(create_graph=True)`` hands it Tensors
(the saved inputs themselves, with their history), so the gradient is itself recorded
and can be differentiated again.

Gradients are summed back to each input's shape after ``backward`` (the backward of
broadcasting, ``formulas.sum_to``), so a formula never has to.

Rules of a backward
-------------------
1. **What backward may use**: the gradient, the saved inputs, the saved output, and
   anything it recomputes from them; also the op's options (``self.dims``, a slope) and
   values that are constants of the graph (numbers, integer or bool arrays: indices,
   masks). Nothing else: not a module-level cache, not a float array forward computed and
   saved, unless declared a constant (rule 3). (What forward keeps on ``self`` is not
   checked: keep options there, never arrays backward differentiates through.)

2. **How double backward works.** ``Op.apply`` looks at the gradient, as PyTorch's engine
   looks at ``GradMode`` (on in backward exactly when ``create_graph=True``):

   * an array: a plain ``backward()``. The saved values come back as the arrays they were,
     nothing is recorded; this is the fast path every training step takes.
   * a Tensor: ``create_graph=True``. ``saved_tensors`` hands backward a saved input as the
     input tensor itself (with its history), the saved output as a tensor whose grad_fn is
     this op, and the formula's Tensor operations are recorded, so the gradient can be
     differentiated again.

   Where the two need different code, backward branches on ``formulas.is_array(grad)``;
   on Tensors it may run a named op, as PyTorch records one for the same step: relu's
   backward runs ``ThresholdBackwardBackward0`` (``activations.py``), max pooling's
   ``MaxPool2DWithIndicesBackwardBackward0``, so ``g.grad_fn`` prints PyTorch's name.

3. **Values forward computed are constants to autograd.** An array forward computed
   (``3 * a * a``) has no history: under ``create_graph`` the second derivative would
   silently leave out how it depends on the inputs (a wrong number, and no error). So there
   backward gets, for each saved float array (or numpy float) that is neither an input nor
   the output, a ``ComputedInForward`` stand-in (``saved.py``) that raises on any use. A
   view of an input (``a.T``, ``a[1:]``) counts as computed too: forward did not record
   the view, so it has no history either (take the view again in backward). Two ways out:

   * recompute it from the inputs or output in the Tensor branch (the package's way)::

         def backward(self, grad, a, three_a_squared):
             if not formulas.is_array(grad):
                 three_a_squared = 3 * a * a      # a Tensor with a's history
             return grad * three_a_squared

   * or, when it truly is a constant of the graph (a mask scaled, a random draw, class
     weights, the averaging matrices of a pooling), declare its position among the saved
     values: ``constants = (1,)`` on the class; backward then gets it as a Tensor without
     history. Integer and bool arrays need no declaration.

   Without either, double backward stops with an error that says which value and how::

       RuntimeError: CubeBackward0.backward used saved value 1 (`three_a_squared`) under
       create_graph=True (how: ...), but it is an array CubeBackward0.forward computed:
       under create_graph a value computed in forward is a constant to autograd ...

   The arrays path never sees the stand-in: it costs nothing when nobody asks for a
   second derivative.

Rules of a JVP (forward mode, chapter 13)
-----------------------------------------
Inside ``autograd.forward_ad.dual_level()`` a tensor may carry a *tangent* (``make_dual``).
When an input of an op carries one, ``run`` asks the op's ``jvp`` for the output's tangent,
written next to ``backward`` and read the same way::

        def backward(self, grad, a):         # grad -> one gradient per input
            return grad * cos(a)

        def jvp(self, tangents, out, a):     # one tangent per input -> the output's
            (ta,) = tangents
            return ta * cos(a)

1. **Arguments**: ``tangents`` holds one tangent per input of forward, None for an input
   that carries none (a plain tensor, a number; at least one is not None); ``out`` is the
   output; then the inputs forward received as positional arguments (not the saved
   values: an op that records nothing saves nothing). Options are on ``self`` as forward
   left them (keyword options also in ``self.dual``); write ``*options`` after the inputs
   when forward takes positional options.
2. **Arrays or Tensors, as in backward**: arrays when nothing needs recording (the fast
   path); Tensors (the inputs themselves, ``out`` the result) when grad mode is on and the
   result or a tangent requires grad, so that the tangent is itself differentiable
   (``jacrev(jacfwd(f))``). Write it with the operations both have (``formulas``).
3. **Shape**: the returned tangent may be smaller than ``out`` (``ta`` of a broadcast
   input): ``run`` broadcasts it to the output's shape (and casts it to its dtype).
4. **Shared rules** (``tangents.py``, named as in PyTorch's derivatives.yaml): a linear op
   (``sum``, ``reshape``, ``x[key]``) says ``jvp = auto_linear`` (the op itself applied to
   the tangents, same options); an op linear in each input (``mm``, ``einsum``)
   ``jvp = auto_multilinear``; an op of one input with a diagonal Jacobian (``exp``,
   ``relu``) ``jvp = auto_element_wise`` (backward's formula, the tangent for the
   gradient).
5. **No rule**: an op whose ``jvp`` is ``Op.jvp`` raises PyTorch's NotImplementedError
   ("Trying to use forward AD with ... that does not support it"); an op with no
   derivative at all (``NoDerivative``, integer results) gives no tangent.

The check costs the fast path one global flag (``_forward_mode``), set only while a dual
level is open.
"""

import weakref

import numpy as np

from .._tensor import wrap
from ..graph import (FREED_MESSAGE, GradMode, Node, VersionCounter, check_saved_versions,
                     gradient_node, node_numbers, saved_version)
from . import formulas
from .saved import ComputedInForward
from .tangents import jvp_name, output_tangent, set_tangent

__all__ = ["Op", "forward_mode", "live_views", "multi_output_views", "note_view",
           "register_view", "saving_versions_of", "set_forward_mode", "set_trace_hook"]

_new = object.__new__
_ndarray = np.ndarray
_OUTPUT = "output"  # where a saved value came from: the op's own output
_COMPUTED = "computed"  # ... or forward computed it (or it views an input): see saved_tensors
_FLOAT_KINDS = frozenset("fc")  # dtype kinds of the computed values backward may not use
_NUMPY_FLOATS = frozenset([np.float16, np.float32, np.float64, np.longdouble, np.complex64,
                           np.complex128, np.clongdouble])
_NOTHING_NEEDED = [(None,) * n for n in range(8)]  # the inputs of an op that records nothing
_forward_mode = False  # True while a forward-AD dual level is open (autograd.forward_ad)
_trace_hook = None  # the recorder of minigrad.compile while it traces a step (set_trace_hook)


class Op(Node):
    """Base of every built-in differentiable op: ``forward`` on arrays, ``backward`` on
    arrays or Tensors, and ``run`` to do both the computing and the recording."""

    # shapes: each input's shape, as forward saw it (gradients are summed back to it).
    # What was saved, set only when something was (or for a view):
    # sources: for each saved value, where it came from, for create_graph: the input
    # Tensor whose array it is, the op's own output (_OUTPUT), or neither (None: an array
    # forward computed, a constant). Only the inputs something saved are kept: the others
    # can be freed, as in PyTorch.
    # kept: graph.saved_version's entry for each tensor whose memory a saved value is (or
    # views), the output included, checked before backward.
    # In forward mode only: dual, (the options of forward, which inputs were tensors); tangent,
    # the output's tangent (backward's saved output carries it: forward-over-reverse).
    __slots__ = ("shapes", "sources", "kept", "dual", "tangent")

    twice_differentiable = True
    # The positions (in save_for_backward's order) of saved float arrays forward computed
    # that are constants of the graph: a mask, a random draw (see "Rules of a backward").
    constants = ()
    # A view op's output shares its input's memory, so it shares its version counter too:
    # changing one in place changes the other (PyTorch's views, chapter 5).
    is_view = False
    wrap = staticmethod(wrap)  # Tensor's fast constructor, wrap(array, grad_fn)
    edge = staticmethod(gradient_node)  # the node that receives a tensor's gradient

    # ----------------------------------------------------------------- what an op writes

    def forward(self, *arrays, **options):
        """The op on numpy arrays; returns the output array."""
        raise NotImplementedError(f"{type(self).__name__} defines no forward")

    def backward(self, grad, *saved):
        """The gradient of each input, from the output's gradient and the saved values."""
        raise NotImplementedError(f"{type(self).__name__} defines no backward")

    def jvp(self, tangents, out, *inputs):
        """The output's tangent from one tangent per input (None where an input has none),
        the output and the inputs (see "Rules of a JVP")."""
        raise NotImplementedError(
            f"Trying to use forward AD with {jvp_name(type(self))} that does not support it "
            "because it has not been implemented yet.\nPlease file an issue to minigrad (or "
            "write its jvp next to its backward, ops/op.py says how); meanwhile compute this "
            "derivative in reverse mode (jacrev, autograd.grad).")

    def __init__(self, inputs, shapes):
        """The node of an op that ``run`` did not compute (an in-place change made it:
        ``fill_``, ``copy_``, ``x[key] = v``): ``inputs`` are its inputs' nodes, ``shapes``
        their shapes. It saves nothing unless its own ``__init__`` says so."""
        Node.__init__(self, inputs)
        self.shapes = shapes
        self.sources = self.kept = ()

    def save_for_backward(self, *values):
        """Keep ``values`` (inputs, the output, or other arrays forward computed): backward
        receives them as arguments, in this order."""
        self.saved = values

    @property
    def needs_input_grad(self):
        """For each input: does its gradient go anywhere? (Skip work for those that don't.)"""
        return tuple([node is not None for node in self.inputs])

    # ----------------------------------------------------------------- recording

    @classmethod
    def run(cls, tensors, *arrays, **options):
        """Compute ``forward(*arrays, **options)`` and return it as a Tensor, recorded when
        one of ``tensors`` (the Tensors the arrays came from, None for a plain number)
        requires grad and grad mode is on. Without ``arrays``, forward gets the tensors'
        own arrays: ``CubeBackward0.run((x,))``."""
        if not arrays:
            arrays = tuple([t._data for t in tensors])
        op = _new(cls)
        op.saved = ()
        # The node each input's gradient goes to; None when nothing is recorded (grad mode
        # is off, or no input requires grad). Linked before forward runs: forward may ask
        # needs_input_grad.
        inputs = _edges(tensors, cls.edge) if GradMode.enabled else None
        if inputs is None:
            op.inputs = _NOTHING_NEEDED[len(tensors)]
            out = op.forward(*arrays, **options)
            if type(out) is not _ndarray:
                out = op._own_output(out)
            result = cls.wrap(out)
            if cls.is_view:
                note_view(result, tensors[0])
            if _forward_mode:
                forward_step(op, tensors, arrays, options, result)
            if _trace_hook is not None:
                _trace_hook(op, tensors, arrays, options, result)
            return result
        op.inputs = inputs  # (Node.__init__'s work, written out: this runs for every op)
        op.seq = next(node_numbers)
        op.retained = None
        out = op.forward(*arrays, **options)
        if type(out) is not _ndarray:
            out = op._own_output(out)
        op.shapes = _shapes(arrays)
        result = cls.wrap(out, op)
        if op.saved or cls.is_view:
            op._remember_saved(tensors, arrays, out, result)
        if _forward_mode:
            forward_step(op, tensors, arrays, options, result)
        if _trace_hook is not None:
            _trace_hook(op, tensors, arrays, options, result)
        return result

    @classmethod
    def run_view_of(cls, tensor):
        """``run((tensor,))`` for a view op with one input, no options and nothing saved
        (``TBackward0``: every linear layer transposes its weight): the same tensor and
        node, with run's steps written out for that one case (about 0.5 us less)."""
        op = _new(cls)
        op.saved = ()
        edge = cls.edge(tensor) if GradMode.enabled else None
        op.inputs = (edge,)  # before forward, as in run
        out = op.forward(tensor._data)
        if type(out) is not _ndarray:
            out = op._own_output(out)
        if edge is None:
            result = cls.wrap(out)
        else:
            op.seq = next(node_numbers)
            op.retained = None
            op.shapes = (tensor._data.shape,)
            op.sources = op.kept = ()
            result = cls.wrap(out, op)
        note_view(result, tensor)
        if _forward_mode:
            forward_step(op, (tensor,), (tensor._data,), {}, result)
        if _trace_hook is not None:
            _trace_hook(op, (tensor,), (tensor._data,), {}, result)
        return result

    def _remember_saved(self, tensors, arrays, out, result):
        """Note where each saved value came from, keep the input tensors it belongs to and
        their versions now (backward checks them: ``check_saved``); a view shares its
        input's version counter."""
        if self.is_view:
            note_view(result, tensors[0])
            if not self.saved:  # (speed: t(), view(), expand, ...)
                self.sources = self.kept = ()
                return
        sources, kept = [], []
        for value in self.saved:
            source = None  # None, a number, or an input array that came with no tensor
            if type(value) is _ndarray:
                if value is out:  # the output is saved: remember its version too
                    source = _OUTPUT
                    kept.append(saved_version(result, None))
                else:
                    i = _source(value, arrays)
                    if i is None:  # forward computed it (a view of an input's: checked)
                        source = _COMPUTED
                        i = _viewed_input(value, arrays)
                    else:
                        source = tensors[i]
                    if i is not None and tensors[i] is not None:
                        kept.append(saved_version(tensors[i]))
            sources.append(source)
        self.sources = sources
        self.kept = kept

    def save_versions_of(self, *tensors):
        """Tensors that are not inputs, whose arrays this op saved (index tensors, class
        targets): changing one in place makes backward refuse too, as PyTorch's saved
        tensors do. Call it on a recorded op (``result.grad_fn``)."""
        if self.saved:
            self.kept.extend([saved_version(t) for t in tensors if t is not None])

    def check_saved(self):
        """Raise PyTorch's error if a tensor this op saved was changed in place since (its
        version moved), or got other memory by ``x.data = ...``. (A view op saves nothing: a
        change of the memory it views, recorded, gives the view a new grad_fn, and what used
        the view before keeps this node, which is still right: see ``note_view``.)"""
        for counter, then, tensor, array in self.kept:  # (check_saved_versions, inlined)
            if counter._version != then or (tensor is not None and tensor._data is not array):
                check_saved_versions(self, self.kept)  # raises the error

    def _own_output(self, scalar):
        """numpy returns a scalar, not an array, for ops on 0-dim arrays: the tensor needs
        an array (its memory can change in place), and a saved output must be that array."""
        out = scalar.__array__()  # the fastest way from a numpy scalar to its array
        if self.saved:
            self.saved = tuple([out if value is scalar else value for value in self.saved])
        return out

    # ----------------------------------------------------------------- running backward

    def apply(self, grad):
        """What the engine calls: the gradient of the output (an array, or a Tensor under
        ``create_graph=True``) -> one gradient per input, each of its input's shape."""
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if type(grad) is _ndarray or isinstance(grad, np.generic):  # (a 0-dim result: a scalar)
            grads = self.backward(grad, *saved)
        else:
            grads = self.backward(grad, *self.saved_tensors(grad))
        # Each gradient summed back to its input's shape.
        shapes, inputs = self.shapes, self.inputs
        if type(grads) is not tuple:  # one input, one gradient
            if grads is None or inputs[0] is None:
                return (None,)
            shape = shapes[0]
            return (grads if grads.shape == shape else formulas.sum_to(grads, shape),)
        if len(grads) == 2:  # (speed: the many two-input ops without a loop)
            a, b = grads
            return (_shaped(a, inputs[0], shapes[0]), _shaped(b, inputs[1], shapes[1]))
        if len(grads) == 3:  # (speed: addmm, every linear layer)
            a, b, c = grads
            return (_shaped(a, inputs[0], shapes[0]), _shaped(b, inputs[1], shapes[1]),
                    _shaped(c, inputs[2], shapes[2]))
        return tuple([_shaped(g, inputs[i], shapes[i]) for i, g in enumerate(grads)])

    def input_shape(self, i):
        """The shape of input ``i``, as forward saw it."""
        return self.shapes[i]

    def saved_tensors(self, like):
        """The saved values as Tensors that carry their history (for create_graph): an input
        is the input tensor itself (cast to the dtype forward saw), the output is a tensor
        whose grad_fn is this node, a float forward computed a ``ComputedInForward`` that
        refuses any use (unless ``constants`` declares it: then a tensor without history),
        anything else (numbers, integer and bool arrays) a constant."""
        values = self.saved_arrays()
        if not values:
            return []
        wrap = self.wrap
        result = []
        for position, (value, source) in enumerate(zip(values, self.sources)):
            if source is None:
                if type(value) in _NUMPY_FLOATS and position not in self.constants:
                    # a numpy float forward computed (a.sum()): Tensor operators hand
                    # numbers to ops as Python numbers, so it is no input
                    result.append(ComputedInForward(type(self), position))
                else:
                    result.append(value if value is None or not isinstance(value, _ndarray)
                                  else wrap(value))
            elif source is _COMPUTED:  # a constant if declared, or of integers (a mask)
                if position in self.constants or value.dtype.kind not in _FLOAT_KINDS:
                    result.append(wrap(value))
                else:
                    result.append(ComputedInForward(type(self), position))
            elif source is _OUTPUT:
                out = wrap(value, self)
                if _forward_mode and getattr(self, "tangent", None) is not None:
                    set_tangent(out, self.tangent)  # forward-over-reverse: d(backward)
                result.append(out)
            elif source._data.dtype != value.dtype:
                result.append(source.to(value.dtype))
            else:
                result.append(source)
        return result

    def release(self):
        if self.saved:
            self.saved = None
            self.sources = self.kept = ()


def note_view(view, base):
    """``view`` (a Tensor an op made) views ``base``'s memory: it shares base's version
    counter (changing one in place changes the other), and remembers its base in ``_view``
    (the chain of bases ends at the tensor that owns the memory, PyTorch's ``_base``), for
    an in-place change of it (recorded there: PyTorch's CopySlices). In grad mode the view
    is noted on the counter (``register_view``), so that a recorded change gives it a new
    grad_fn (not for a view of a leaf that requires grad: no change of it is ever
    recorded); a view made in no_grad mode is marked so, ``(base, None)`` (PyTorch refuses
    to record an in-place change of it), as are the views of ``multi_output_views``,
    ``(base, message)``."""
    counter = base._version_counter
    if counter is None:
        counter = base._version_counter = VersionCounter()
    view._version_counter = counter
    if GradMode.enabled:
        view._view = base
        if base._grad_fn is not None or not base._requires_grad:
            register_view(counter, view)
    else:
        view._view, view._requires_grad = (base, None), base._requires_grad  # as PyTorch


def register_view(counter, view):
    """Remember ``view`` (a Tensor sharing ``counter``'s memory, made in grad mode) weakly,
    so that a recorded in-place change can give it a new grad_fn. Dead references are
    dropped each time the list doubles (amortised: a weight viewed at every step, whose
    views die, keeps a short list)."""
    views = counter.views
    if views is None:
        counter.views = [weakref.ref(view)]
        return
    views.append(weakref.ref(view))
    n = len(views)
    if n >= 16 and not n & (n - 1):
        views[:] = [ref for ref in views if ref() is not None]


def live_views(counter):
    """The views ``register_view`` noted for ``counter`` that are still alive."""
    views = counter.views if counter is not None else None
    if not views:
        return []
    alive = [view for view in (ref() for ref in views) if view is not None]
    counter.views = [weakref.ref(view) for view in alive] or None
    return alive


_MULTI_OUTPUT = ("This view is the output of a function that returns multiple views. Such "
                 "functions do not allow the output views to be modified inplace. You should "
                 "replace the inplace operation by an out-of-place one.")


def multi_output_views(views, name):
    """Mark ``views`` (the pieces ``unbind``, ``split`` or ``chunk`` returned; ``name``:
    PyTorch's, ``Unbind``, ``Split``, ``SplitWithSizes``) as PyTorch does: an in-place
    change of one in grad mode is refused, with PyTorch's message (``view._view`` holds
    it, see ``note_view``). Returns ``views``."""
    for i, view in enumerate(views):
        base = getattr(view, "_view", None)
        if base is None or type(base) is tuple:  # made in no_grad mode: that message
            continue
        if base._requires_grad:
            message = f"Output {i} of {name} is a view and is being modified inplace. "
        else:
            message = ("A view was created in no_grad mode and is being modified inplace "
                       "with grad mode enabled. ")
        view._view = (base, message + _MULTI_OUTPUT)
    return views


def saving_versions_of(result, *tensors):
    """``result``, a Tensor an Op just made, whose op also checks the versions of
    ``tensors`` (index tensors, masks, targets whose arrays it saved): see
    ``Op.save_versions_of``."""
    node = result._grad_fn
    if node is not None:
        node.save_versions_of(*tensors)
    return result


def _edges(tensors, edge):
    """The node each input's gradient goes to (None for a number or a tensor that needs
    none), or None when no input needs a gradient. Speed: one, two and three inputs (nearly
    every op) without building a list, and the edges tell whether to record (one pass)."""
    n = len(tensors)
    if n == 1:
        a = edge(tensors[0])
        return None if a is None else (a,)
    if n == 2:
        a, b = tensors
        a = None if a is None else edge(a)
        b = None if b is None else edge(b)
        return None if a is None and b is None else (a, b)
    if n == 3:  # addmm: a linear layer's bias, input and weight
        a, b, c = tensors
        edges = (None if a is None else edge(a), None if b is None else edge(b),
                 None if c is None else edge(c))
    else:
        edges = tuple([None if t is None else edge(t) for t in tensors])
    return None if edges.count(None) == n else edges


def _shaped(grad, node, shape):
    """An input's gradient, summed back to its shape; None if it goes nowhere (``node``)."""
    if grad is None or node is None:
        return None
    return grad if grad.shape == shape else formulas.sum_to(grad, shape)


def _shapes(arrays):
    """The shape of each input array (() for a number: it gets no gradient). Speed: one, two
    and three inputs without building a list."""
    n = len(arrays)
    if n == 1:
        a = arrays[0]
        return (a.shape if type(a) is _ndarray else (),)
    if n == 2:
        a, b = arrays
        return (a.shape if type(a) is _ndarray else (), b.shape if type(b) is _ndarray else ())
    if n == 3:
        a, b, c = arrays
        return (a.shape if type(a) is _ndarray else (), b.shape if type(b) is _ndarray else (),
                c.shape if type(c) is _ndarray else ())
    return tuple([a.shape if type(a) is _ndarray else () for a in arrays])


def _viewed_input(value, arrays):
    """The index of the input array whose memory ``value`` (a saved array that is no
    input) views, or None."""
    base = value.base
    if base is None:
        return None
    for i, array in enumerate(arrays):
        if type(array) is _ndarray and (base is array or base is array.base):
            return i
    return None


def _source(value, arrays):
    """Where a saved value came from: the index of the input array it is, or None (a
    number, or an array forward computed on the side: a constant of the graph)."""
    if type(value) is _ndarray:
        for i, array in enumerate(arrays):
            if value is array:
                return i
    return None


NAMED_NODES = {}


def node_named(node_cls, name):
    """``node_cls`` under PyTorch's ``name`` (same backward, a subclass with no new fields)."""
    key = (node_cls, name)
    if key not in NAMED_NODES:
        NAMED_NODES[key] = type(name, (node_cls,), {"__slots__": ()})
    return NAMED_NODES[key]


# ----------------------------------------------------------------- forward mode (chapter 13)

def set_forward_mode(on):
    """Open (True) or close (False) forward mode: ``autograd.forward_ad``'s levels."""
    global _forward_mode
    _forward_mode = bool(on)


def set_trace_hook(hook):
    """While ``minigrad.compile`` traces a step: ``hook(op, tensors, arrays, options,
    result)`` is called after every op ``run`` computes (None: off, the default). The one
    check costs an op a global lookup when nobody traces (chapter 14)."""
    global _trace_hook
    _trace_hook = hook


def forward_mode():
    """Is a dual level open (do ops compute tangents)?"""
    return _forward_mode


def forward_step(op, tensors, arrays, options, result):
    """Give ``result`` (what ``op`` computed from ``tensors``/``arrays``) the tangent its
    ``jvp`` computes, if an input carries one. The rule itself runs with forward mode off:
    its own operations carry no tangents."""
    global _forward_mode
    _forward_mode = False
    try:
        output_tangent(op, tensors, arrays, options, result)
    finally:
        _forward_mode = True
