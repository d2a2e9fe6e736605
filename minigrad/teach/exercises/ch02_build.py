"""Chapter 2's build exercise (``notebooks/02b_recording_the_graph.ipynb``): one op's node,
``MulBackward0`` (an ``Op``: ``forward`` on arrays, ``save_for_backward``, ``backward``
returning one gradient per input), registered with ``teach.build`` as the piece ``mul``.

``teach.use(mul=...)`` puts it in the place of ``minigrad.ops.arithmetic.MulBackward0``, which
``Tensor.__mul__`` looks up at every product. The check refuses minigrad's own node
(``OWN_MUL``: the class, a subclass of it, or code that calls it or ``minigrad.mul``), and
checks what the learner's ``forward`` and ``backward`` return right where they return (kind,
shape, float32 kept), naming the line of their cell; then float32 through the graph, the
gradients of many products against minigrad's own, and second derivatives
(``create_graph=True``: backward then gets Tensors).
"""

import contextlib
import linecache
import sys
from unittest import mock

import numpy as np

from ... import autograd, creation, dtypes, functions
from ...graph import no_grad
from ...ops import Op, arithmetic
from ... import Tensor
from ..build import Mismatch, Piece, register, same_dtype, show, where
from ..checks import keeps_random_state

__all__ = ["OWN_MUL"]


def _plug_mul(node_class):
    """Every ``a * b`` of tensors (``Tensor.__mul__`` looks the class up at each call) makes
    a ``node_class`` node."""
    return mock.patch.object(arithmetic, "MulBackward0", node_class)


_OWN_MUL = arithmetic.MulBackward0

# minigrad's own node, and the public functions that only run it: a MulBackward0 that is
# one of them, subclasses one or calls one is refused (teach.build.borrowed).
OWN_MUL = {"minigrad.ops.arithmetic.MulBackward0": arithmetic.MulBackward0,
           "minigrad.mul": functions.mul, "Tensor.mul": Tensor.mul,
           "Tensor.__mul__": Tensor.__mul__, "Tensor.__rmul__": Tensor.__rmul__,
           "Tensor.__imul__": Tensor.__imul__, "Tensor.mul_": Tensor.mul_}

_GIVEN = ("Write backward with operators that arrays and Tensors share (*, +, -, /), not "
          "numpy functions (np.multiply, np.dot, np.asarray).")


def _leaf(values, requires_grad=True, dtype=dtypes.float64):
    return creation.tensor(np.asarray(values, dtype=float), dtype=dtype,
                           requires_grad=requires_grad)


# ------------------------------------------------ what the learner's methods return, and where

def _returned(function, args):
    """``function(*args)``, and the line of the learner's cell it returned from (' (line 9
    of your cell: return a * b)', or '' for code that is not a notebook cell's)."""
    code = getattr(function, "__code__", None)
    lines = []

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            lines.append(frame.f_lineno)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        value = function(*args)
    finally:
        sys.setprofile(previous)
    if code is None or not lines:
        return value, ""
    filename = code.co_filename
    if not (filename.startswith("<") or "ipykernel" in filename):
        return value, ""
    text = linecache.getline(filename, lines[-1]).strip()
    return value, (f" (line {lines[-1]} of your cell: {text})" if text else "")


def _check_forward(out, line, a, b):
    """What forward returned for the arrays (or number) ``a`` and ``b``: an array of their
    broadcast shape and their dtype."""
    if out is None:
        raise Mismatch(f"forward returned None{line}: it must return the product (a numpy "
                       "array). Does forward end with a return?")
    if isinstance(out, Tensor):
        raise Mismatch(f"forward returned a Tensor{line}: forward gets numpy arrays (or a "
                       "number) and returns a numpy array; run makes the Tensor.")
    if not isinstance(out, (np.ndarray, np.generic)):
        raise Mismatch(f"forward returned a {type(out).__name__}{line}: it must return a "
                       "numpy array, the product of a and b element by element.")
    want = np.broadcast_shapes(np.shape(a), np.shape(b))
    if out.shape != want:
        raise Mismatch(f"forward of a of shape {np.shape(a)} and b of shape {np.shape(b)} "
                       f"returned shape {out.shape}{line}; the product is taken element by "
                       f"element (with broadcasting), which gives shape {want}. np.dot, @ "
                       "and .sum() add elements up.")
    same_dtype(f"what your forward returns{line}", out, np.empty(0, np.result_type(a, b)))


def _check_gradients(node, grad, grads, line):
    """What backward returned for the incoming ``grad``: a tuple of two gradients, each of
    the right kind (arrays for arrays, Tensors under create_graph), shape and dtype."""
    if not isinstance(grads, tuple) or len(grads) != 2:
        if isinstance(grads, list) and len(grads) == 2:
            raise Mismatch(f"backward returned a list{line}; minigrad expects a tuple, one "
                           "gradient per input of forward: return the pair (gradient of a, "
                           "gradient of b) without the square brackets.")
        kind = (f"a {type(grads).__name__} of {len(grads)}"
                if isinstance(grads, (tuple, list)) else f"one {type(grads).__name__}")
        raise Mismatch(f"backward returned {kind}{line}; a node returns one gradient per "
                       "input of forward, in forward's order: a pair (gradient of a, "
                       "gradient of b).")
    on_tensors = isinstance(grad, Tensor)
    shapes = getattr(node, "shapes", None) or (None, None)
    for name, g, needed, shape in zip("ab", grads, node.inputs, shapes):
        if needed is None:  # a number or data: its gradient goes nowhere
            continue
        what = f"the gradient of {name} your backward returns{line}"
        if g is None:
            raise Mismatch(f"{what} is None, but {name} needs a gradient here (it requires "
                           "grad): return one gradient per input.")
        if on_tensors and not isinstance(g, Tensor):
            raise Mismatch(f"with create_graph=True (a second derivative, chapter 11) "
                           f"backward gets Tensors, and {what} is a "
                           f"{type(g).__name__}, so it is not recorded. {_GIVEN}")
        if not on_tensors and not isinstance(g, (np.ndarray, np.generic)):
            raise Mismatch(f"{what} is a {type(g).__name__}; on arrays backward returns "
                           "numpy arrays, one per input.")
        if g.shape != tuple(grad.shape) and g.shape != shape:
            single = (" It is a single number: np.dot, @ and .sum() add the elements up, "
                      "but the product is taken element by element, and so is its "
                      "gradient."
                      if g.shape == () else "")
            raise Mismatch(f"{what} has shape {tuple(g.shape)}, where grad (and the product) "
                           f"has shape {tuple(grad.shape)} and {name} has shape {shape}: each "
                           "gradient is grad times the local derivative, element by element, "
                           f"so it has grad's shape (run sums it back to {name}'s shape)."
                           f"{single}")
        same_dtype(what, g, grad)


@contextlib.contextmanager
def _watching(node_class):
    """Within the block, the learner's forward and backward (methods of ``node_class``) are
    checked where they return: kind, shape and dtype, with the line of their cell."""
    forward, backward = node_class.forward, node_class.backward
    own = {name: vars(node_class)[name] for name in ("forward", "backward")
           if name in vars(node_class)}

    def checked_forward(self, a, b, *more, **options):
        try:
            out, line = _returned(forward, (self, a, b, *more))
        except RecursionError:
            raise Mismatch("forward never returns (RecursionError): it runs itself again, "
                           "as multiplying Tensors does (every * of Tensors makes a "
                           "MulBackward0, now yours, whose forward does it again). forward "
                           "gets numpy arrays (or a number): multiply those.") from None
        _check_forward(out, line, a, b)
        return out

    def checked_backward(self, grad, *saved):
        grads, line = _returned(backward, (self, grad, *saved))
        _check_gradients(self, grad, grads, line)
        return grads

    node_class.forward, node_class.backward = checked_forward, checked_backward
    try:
        yield
    finally:
        for name in ("forward", "backward"):
            if name in own:
                setattr(node_class, name, own[name])
            else:
                delattr(node_class, name)


# ------------------------------------------------ the checks

def _check_class(node_class):
    """The node's class: an Op subclass, named as PyTorch names the node."""
    if not isinstance(node_class, type) or not issubclass(node_class, Op):
        raise Mismatch(f"it is a {type(node_class).__name__}, not a class: write "
                       "class MulBackward0(Op) with forward and backward (Op: "
                       "from minigrad.ops import Op).")
    if node_class.__name__ != "MulBackward0":
        raise Mismatch(f"your class is called {node_class.__name__}; PyTorch's node for a * b "
                       "is MulBackward0, the name grad_fn shows: call the class that.")


def _check_node(node_class):
    """x * y with the class plugged in: the grad_fn, its next_functions, the value, what
    was saved, and backward's answer: one gradient per input."""
    x, y = _leaf([2.0, -1.0, 0.5]), _leaf([3.0, 4.0, -2.0])
    with _plug_mul(node_class):
        z = x * y
        by_number = x * 3.0
    node = z.grad_fn
    if type(node) is not node_class:
        raise Mismatch(f"x * y has grad_fn {node!r}, not your MulBackward0: does forward "
                       "return the product (an array) and nothing else?")
    if not np.allclose(z.detach().numpy(), [6.0, -4.0, -1.0]):
        raise Mismatch(f"x * y at x = [2, -1, 0.5], y = [3, 4, -2] is {show(z)}; expected "
                       "[6.0, -4.0, -1.0]: forward returns the elementwise product.")
    own = [n for n, _ in (x * y).grad_fn.next_functions]
    if [n for n, _ in node.next_functions] != own:
        raise Mismatch(f"x * y has next_functions {node.next_functions}; expected the two "
                       "AccumulateGrad nodes of x and y: let Op.run link the node (do not "
                       "override run or __init__).")
    if [n for n, _ in by_number.grad_fn.next_functions][1:] != [None]:
        raise Mismatch("x * 3.0 should have (None, 0) as its second next_functions entry: a "
                       "number needs no gradient.")
    saved = [v for v in (node.saved or ()) if v is not None]
    if not saved:
        raise Mismatch("the node of x * y saved nothing (grad_fn.saved is empty). Keep what "
                       "backward will need with self.save_for_backward(...) in forward: "
                       "backward gets it back as arguments after grad.")
    for name, operand in (("x", x), ("y", y)):
        if not any(np.shape(v) == operand.shape and np.array_equal(v, operand.detach().numpy())
                   for v in saved):
            raise Mismatch(f"the node of x * y saved {', '.join(map(show, saved))} but not "
                           f"{name}'s values {show(operand)}: when both factors need a "
                           "gradient, backward needs both of them.")
    node.backward(np.array([1.0, 10.0, 100.0]), *node.saved)  # _watching checks the pair


def _check_float32(node_class):
    """z = h * y on float32 tensors, h = x.exp() (a node before the product): the dtype of
    z, of the gradient the node passes on to h's node, and of the leaves' .grad."""
    def run(cls):
        x = _leaf([0.5, -1.0, 0.25], dtype=dtypes.float32)
        y = _leaf([2.0, 3.0, -1.5], dtype=dtypes.float32)
        h = x.exp()
        flowing = []
        h.register_hook(flowing.append)
        with _plug_mul(cls):
            z = h * y
        z.backward(creation.tensor([1.0, 2.0, 3.0], dtype=dtypes.float32))
        return z, flowing[0], x.grad, y.grad
    want, got = run(_OWN_MUL), run(node_class)
    for what, g, w in zip(("z = h * y on float32 tensors",
                           "the gradient your node passes on to h = x.exp() in z = h * y",
                           "x.grad after z = x.exp() * y on float32 tensors",
                           "y.grad after z = x.exp() * y on float32 tensors"), got, want):
        same_dtype(what, g, w)


def _product_cases(rng, n_random):
    """(text, x, y, incoming gradient) for z = x * y: the chapter's products, broadcasting,
    a number, data on one side, then random shapes."""
    cases = [("x * y at x = [2.0], y = [3.0]", [2.0], [3.0], True),
             ("x * y at x = [2.0, -1.0, 0.5], y = [3.0, 4.0, -2.0]", [2.0, -1.0, 0.5],
              [3.0, 4.0, -2.0], True),
             ("x * y at x = [2.0, -1.0], y = [0.5, 4.0] (data: no grad)", [2.0, -1.0],
              [0.5, 4.0], False)]
    shapes = [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (4,)), ((3,), ()), ((2, 3), (2, 3)),
              ((4, 1, 2), (3, 1))]
    for k in range(n_random):
        a_shape, b_shape = shapes[k % len(shapes)]
        if rng.random() < 0.5:
            a_shape, b_shape = b_shape, a_shape
        cases.append((f"x * y, x of shape {a_shape}, y of shape {b_shape}, with "
                      "z.backward(gradient)",
                      rng.uniform(-2, 2, a_shape).round(2), rng.uniform(-2, 2, b_shape).round(2),
                      bool(rng.random() < 0.8)))
    return cases


def _gradients(node_class, make):
    """The leaves' .grad after ``make()`` builds (leaves, z, incoming gradient) and z is
    backpropagated, with ``node_class`` as MulBackward0 (minigrad's own when it is None)."""
    with _plug_mul(node_class or _OWN_MUL):
        leaves, z, incoming = make()
        z.backward(incoming)
    return {name: None if t.grad is None else t.grad.numpy().copy()
            for name, t in leaves.items()}


def _compare_gradients(node_class, text, make):
    """Raise Mismatch at the first leaf whose gradient differs from minigrad's own."""
    want, got = _gradients(None, make), _gradients(node_class, make)
    for name in want:
        if (want[name] is None) != (got[name] is None) or (
                want[name] is not None and not np.allclose(got[name], want[name],
                                                           rtol=1e-9, atol=1e-12)):
            others = [w for n, w in want.items() if n != name and w is not None]
            swapped = any(w.shape == np.shape(got[name]) and np.allclose(w, got[name])
                          for w in others if got[name] is not None)
            hint = ("it is the other factor's gradient: which factor is left when you "
                    "differentiate a * b with respect to a?" if swapped else
                    "backward gets grad, the gradient of the output a * b; multiply it by "
                    "the local derivative for each input (the chain rule, chapter 1).")
            raise Mismatch(f"on {text}, {name}.grad is {show(got[name])}; expected "
                           f"{show(want[name])}. Hint: {hint}")


def _product(x_values, y_values, y_needs_grad, incoming):
    def make():
        x, y = _leaf(x_values), _leaf(y_values, y_needs_grad)
        return {"x": x, "y": y}, x * y, _incoming(incoming, np.broadcast_shapes(
            np.shape(x_values), np.shape(y_values)))
    return make


def _incoming(seed, shape):
    """A gradient of the given shape that is not all ones (so that a backward that forgets
    grad is caught): 1, 2, 3, ... scaled by ``seed``."""
    return creation.tensor(seed * np.arange(1.0, np.prod(shape, dtype=int) + 1).reshape(shape),
                           dtype=dtypes.float64)


def _shared_cases():
    """Products that share an operand: x * x, (x * y) * x, a chain of products."""
    def square():
        x = _leaf([1.5, -2.0])
        return {"x": x}, x * x, _incoming(0.5, (2,))

    def twice():
        x, y = _leaf([1.5, -2.0, 0.5]), _leaf([2.0, 3.0, -1.0])
        return {"x": x, "y": y}, (x * y) * x, _incoming(1.0, (3,))

    def chain():
        x, y = _leaf([0.5, 2.0]), _leaf(-1.5)
        z = x
        for _ in range(3):
            z = z * y * 1.5 + x * x
        return {"x": x, "y": y}, z, _incoming(1.0, (2,))
    return [("z = x * x", square), ("z = (x * y) * x", twice),
            ("z = x, three times z = z * y * 1.5 + x * x", chain)]


def _second_derivative(node_class, dtype=dtypes.float64):
    """d/dx and d/dy of (d/dx of sum(x * y * x)) . ones: backward must record under
    create_graph=True (it then gets Tensors), so a second derivative goes through it."""
    def run(cls):
        x, y = _leaf([1.5, -2.0, 0.5], dtype=dtype), _leaf([2.0, 3.0, -1.0], dtype=dtype)
        with _plug_mul(cls):
            dz_dx, = autograd.grad((x * y * x).sum(), (x,), create_graph=True)
            if dz_dx.grad_fn is None:
                return None
            (dz_dx * dz_dx).sum().backward()
        return dz_dx, x.grad, y.grad
    want = run(_OWN_MUL)
    try:
        got = run(node_class)
    except Mismatch:
        raise
    except Exception as error:  # the learner's backward on Tensors
        raise Mismatch(f"with create_graph=True (a second derivative, chapter 11) backward "
                       f"gets Tensors, and yours raised {type(error).__name__}: "
                       f"{str(error).rstrip('.')}{where(error)}. {_GIVEN}") from None
    text = f"with create_graph=True on {str(dtype).replace('minigrad.', '')} tensors"
    if got is None:
        raise Mismatch(f"{text}, the first derivative of sum(x * y * x) is not recorded "
                       "(it has no grad_fn), so no second derivative goes through your "
                       "backward: it must compute with the values it gets as arguments (they "
                       f"are Tensors then), not with values kept elsewhere. {_GIVEN}")
    same_dtype(f"{text}, the first derivative of sum(x * y * x)", got[0], want[0])
    if not all(np.allclose(g.numpy(), w.numpy(), rtol=1e-5) for g, w in zip(got[1:], want[1:])):
        raise Mismatch(f"{text}, the second derivative of sum(x * y * x) is "
                       f"{[show(g) for g in got[1:]]}; expected "
                       f"{[show(w) for w in want[1:]]}. {_GIVEN}")


@keeps_random_state
def _mul_battery(node_class, n_random=120):
    """The node (its class, grad_fn, next_functions, what is saved, backward's pair), then
    float32 dtypes, gradients of products (broadcasting, numbers, data, shared operands,
    random shapes) against minigrad's own MulBackward0, then second derivatives."""
    _check_class(node_class)
    with _watching(node_class):
        _check_node(node_class)
        with _plug_mul(node_class), no_grad():
            _leaf([2.0]) * _leaf([3.0])
        _check_float32(node_class)
        rng = np.random.default_rng(2)
        cases = _product_cases(rng, n_random)
        for k, (text, x_values, y_values, y_needs_grad) in enumerate(cases):
            _compare_gradients(node_class, text, _product(x_values, y_values, y_needs_grad,
                                                          incoming=1.0 + k % 3))

        def by_number(left):
            def make():
                x = _leaf([2.0, -3.0])
                return {"x": x}, (2.5 * x if left else x * 2.5), _incoming(1.0, (2,))
            return make
        _compare_gradients(node_class, "x * 2.5", by_number(False))
        _compare_gradients(node_class, "2.5 * x", by_number(True))
        for text, make in _shared_cases():
            _compare_gradients(node_class, text, make)
        _second_derivative(node_class)
        _second_derivative(node_class, dtypes.float32)
    return (f"its node (grad_fn, next_functions, what it saves), float32 dtypes, "
            f"{len(cases) + 5} products (broadcasting, numbers, shared operands) and second "
            "derivatives")


register(Piece(name="mul", chapter="02", defines="MulBackward0",
               summary="one op's node: MulBackward0 (forward, save_for_backward, backward)",
               plug=_plug_mul, battery=_mul_battery, own=OWN_MUL))
