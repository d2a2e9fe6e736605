"""In-place methods: ``add_``, ``+=``, ``mul_``, ``zero_``, ``fill_``, ``copy_``, ...
(chapters 4 and 8).

An in-place op changes a tensor's memory, so it bumps the version counter (backward then
refuses saved values that changed), refuses leaves that require grad, and is recorded for
backward when the tensor is part of a graph. A change through a view (made by any view op:
``x[i]``, ``x.T``, ``x.view(...)``, ``x.diagonal()``, ...) is recorded as PyTorch records
it: the tensor that owns the memory gets a ``CopySlices`` node, and every view of it still
alive a new grad_fn (``AsStridedBackward0``) that views it, so earlier views used
afterwards send their gradient through the change. PyTorch's refusals are kept, with its
messages: a view of a leaf that requires grad, a view made in no_grad mode, and the views
``unbind``, ``split`` and ``chunk`` return. The optimizers' updates take the fast path at
the top of ``add_`` and ``mul_``.
"""

import functools
import warnings

import numpy as np

from .ops import inplace as d
from .graph import GradMode, saved_output_is
from .ops.op import live_views
from .ops.selection import clamped
from ._tensor import tensor_from
from .tensor_indexing import edges_of
from .tensor_rules import (bool_subtraction_error, broadcast_error, can_hold, cannot_hold,
                           int_bounds, int_operand, kind_of, needs_grad, number_as,
                           OVERLAPPING_WRITE, scalar_name, true_divide, writable)

from ._tensor import Tensor, wrap
from .graph import gradient_node
from .random import numpy_rng
from .ops.op import forward_mode, set_forward_mode
from .ops.tangents import LEVELS, set_tangent, tangent_of


LEAF_INPLACE = (
    "a leaf Variable that requires grad is being used in an in-place operation. "
    "To change a parameter by hand, do it without recording: `with minigrad.no_grad(): "
    "w -= lr * w.grad` (that is what optimizer.step() does).")

LEAF_VIEW_INPLACE = ("a view of a leaf Variable that requires grad is being used in an in-place "
                     "operation.")

NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
    "the inplace to be tracked).")


def _view_root(t):
    """The tensor that owns ``t``'s memory (at the end of its chain of ``_view``s), or
    raise PyTorch's error for a view whose change in grad mode it refuses: made in no_grad
    mode (or of such a view), returned by unbind/split/chunk, or viewing a leaf that
    requires grad."""
    while True:
        base = getattr(t, "_view", None)
        if base is None:
            break
        if type(base) is tuple:
            base, refusal = base
            raise RuntimeError(NO_GRAD_VIEW_INPLACE if refusal is None else refusal)
        t = base
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError(LEAF_VIEW_INPLACE)
    return t


def _root_of(t):
    """The end of ``t``'s chain of ``_view``s (``t`` itself when it is no view)."""
    while True:
        base = getattr(t, "_view", None)
        if base is None:
            return t
        t = base[0] if type(base) is tuple else base


def _regenerate_views(root):
    """After ``root`` got a new grad_fn by a recorded in-place change: each view of it made
    in grad mode and still alive gets a new grad_fn that views ``root``'s (PyTorch
    regenerates a view's grad_fn the same way), so what uses it from now on sends its
    gradient through the change; what used it before keeps the node it had."""
    node = root._grad_fn
    for view in live_views(root._version_counter):
        if view is not root and _root_of(view) is root:
            try:
                positions = d.element_positions(root._data, view._data)
            except RuntimeError:
                continue  # (root.data was replaced: the view no longer looks into it)
            view._set_grad_fn(d.AsStridedBackward0((node,), root._data.shape, positions))


def _direct(t, other):
    """What ``t OP= other`` may use straight in numpy (``other``'s array, or a Python
    number), or None when the general path must decide: something to record, another
    dtype, a tensor that is not float, or memory that cannot be written."""
    a = t._data  # (memory that cannot be written: numpy raises ValueError, as for shapes)
    if a.dtype.kind != "f" or LEVELS:  # (a dual level: tangents may need updating)
        return None
    if isinstance(other, Tensor):
        if other._data.dtype is not a.dtype or (
                GradMode.enabled and (t._requires_grad or other._requires_grad)):
            return None
        return other._data
    if type(other) is float or type(other) is int:
        return None if GradMode.enabled and t._requires_grad else other
    return None


class InPlaceMethods:
    """The in-place methods (``add_``, ``+=``, ``zero_``, ``copy_``, ...) and how they
    are recorded: the version counter, views, the checks."""

    __slots__ = ()

    # ----------------------------------------------------------------- in-place updates

    def relu_(self):
        """ReLU in place (``nn.ReLU(inplace=True)``): the tensor itself holds the result."""
        if self._data.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        if self._check_inplace():
            return self._record_in_place(lambda before: before.relu())
        np.maximum(self._data, 0, out=self._data)
        self._bump_version()
        return self

    def masked_fill_(self, mask, value):
        """``masked_fill`` in place: the mask broadcasts to this tensor's shape, not beyond."""
        if self._check_inplace(value, overlapping=True):
            return self._record_in_place(lambda before: before.masked_fill(mask, value))
        out = self.masked_fill(mask, value.detach() if isinstance(value, Tensor) else value)
        _check_output_shape(self, out._data.shape)
        np.copyto(writable(self._data), out._data)
        self._bump_version()
        return self

    def _check_inplace(self, other=None, overlapping=False):
        """True when the update must be recorded in the graph. Raises, as PyTorch does, for
        a leaf that requires grad (nothing changes, and the error says what to do) and for
        the views whose change PyTorch refuses to record (see ``_view_root``)."""
        t = other if isinstance(other, Tensor) else None
        recorded = needs_grad(self, t) and self._data.dtype.kind in "fc"
        if recorded and getattr(self, "_view", None) is not None:
            _view_root(self)  # (autograd's refusals come first, as in PyTorch)
        if not (overlapping or self._data.flags.writeable):
            raise RuntimeError(OVERLAPPING_WRITE)
        if not recorded:
            # (an integer or bool tensor cannot require grad.) In forward mode, a tangent
            # to update takes _record_in_place's path too: it has the op out of place.
            return bool(LEVELS) and forward_mode() and _carries_tangent((self, t))
        if self._grad_fn is None and self._requires_grad:
            raise RuntimeError(LEAF_INPLACE)
        return True

    def _record_in_place(self, compute):
        """An in-place op on a tensor in the graph, as PyTorch does it: the values change in
        the tensor's own memory (views of it see them), the tensor gets the op's node, and a
        node that saved the old values refuses backward afterwards. ``compute`` receives the
        old values as a tensor of their own (a copy, kept by the new node) and returns the
        result; nothing changes if it raises."""
        if LEVELS and forward_mode():
            return _record_with_tangent(self, compute)
        if getattr(self, "_view", None) is not None:
            return self._record_in_place_on_view(compute)
        result = compute(wrap(self._data.copy(), self._grad_fn))
        _check_result(self, result)
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        saved_output_is(result._grad_fn, result._data, self._data, self._version_counter)
        self._set_grad_fn(result._grad_fn)
        self._views_follow()
        return self

    def _views_follow(self):
        """After this tensor got a new grad_fn by a recorded in-place change: its views get
        new ones (``_regenerate_views``)."""
        counter = self._version_counter
        if counter is not None and counter.views:
            _regenerate_views(self)

    def _assign_with_tangent(self, key, value):
        """``self[key] = value`` in forward mode: the values (and graph) change as without
        tangents, and the tangent gets ``value``'s tangent (or 0) at ``key``, in place."""
        own = tangent_of(self)
        given = tangent_of(value) if isinstance(value, Tensor) else None
        set_forward_mode(False)
        try:
            self[key] = value
            tangent = own if own is not None else wrap(np.zeros_like(self._data))
            tangent[key] = given if given is not None else 0
        finally:
            set_forward_mode(True)
        if own is None:
            set_tangent(self, tangent)

    def _record_in_place_on_view(self, compute):
        """``_record_in_place`` for a view (PyTorch's CopySlices): the view's memory
        changes, the tensor that owns it (``root``) gets a node that sends the gradient of
        the changed elements to the op and the rest to its old node, and every view of
        ``root`` (this one first) becomes a view of the new ``root``."""
        root = _view_root(self)
        old = gradient_node(root)
        positions = d.element_positions(root._data, self._data)
        before = wrap(self._data.copy())
        if old is not None:
            before._set_grad_fn(d.AsStridedBackward0((old,), root._data.shape, positions))
        result = compute(before)
        _check_result(self, result)
        # (an expanded view is written only by ops that allow it: zero_, fill_, ...)
        np.copyto(writable(self._data), result._data, casting="unsafe")
        self._bump_version()
        saved_output_is(result._grad_fn, result._data, self._data, self._version_counter)
        node = d.ViewCopySlices((old, gradient_node(result)),
                                (root._data.shape, self._data.shape), positions)
        root._set_grad_fn(node)
        self._set_grad_fn(d.AsStridedBackward0((node,), root._data.shape, positions))
        _regenerate_views(root)
        return self

    def _inplace(self, other, ufunc, out_of_place, name):
        b = _direct(self, other)
        if b is not None:
            a = self._data
            try:
                ufunc(a, b, out=a, casting="same_kind")
            except ValueError:
                pass  # the general path below gives PyTorch's error
            else:
                self._bump_version()
                return self
        if self._check_inplace(other):
            return self._record_in_place(lambda before: out_of_place(before, other))
        b = other._data if isinstance(other, Tensor) else other
        if type(b) is int and self._data.dtype.kind in "iu":
            b = int_operand(b, self._data.dtype)
        try:
            ufunc(self._data, b, out=self._data, casting="same_kind")
        except ValueError:
            try:
                shape = np.broadcast_shapes(self._data.shape, np.shape(b))
            except ValueError:
                raise broadcast_error(self._data, b, name) from None
            raise _output_shape_error(self, shape, f" in {name}") from None
        except TypeError:
            # numpy's "same_kind" refused; PyTorch's rule decides (it allows int64 -> uint8).
            # The result of a true division is a float even for two integers.
            result = b if ufunc is not true_divide or kind_of(b) in "fc" else 1.0
            if not can_hold(self._data.dtype, result):
                raise cannot_hold(result, self) from None
            ufunc(self._data, b, out=self._data, casting="unsafe")
        self._bump_version()
        return self

    def __iadd__(self, other):
        return self._inplace(other, np.add, Tensor.__add__, "+=")

    def __isub__(self, other):
        if self._data.dtype.kind == "b" or other.__class__ in (bool, np.bool_) or (
                isinstance(other, Tensor) and other._data.dtype.kind == "b"):
            raise bool_subtraction_error()
        return self._inplace(other, np.subtract, Tensor.__sub__, "-=")

    def __imul__(self, other):
        return self._inplace(other, np.multiply, Tensor.__mul__, "*=")

    def __itruediv__(self, other):
        return self._inplace(other, true_divide, Tensor.__truediv__, "/=")

    # The ops an optimizer's step is made of (under no_grad) first try the direct path:
    # ``_direct`` checks that nothing is recorded and the dtypes agree, then one numpy op
    # writes into the tensor's memory (a shape that does not broadcast raises ValueError:
    # the general path then gives PyTorch's error).

    def add_(self, other, alpha=1):
        """``self += alpha * other``."""
        a = self._data
        # _direct, inlined: the hot one (optimizers)
        if type(other) is Tensor or isinstance(other, Tensor):
            b = other._data
            if (b.dtype is a.dtype and a.dtype.kind == "f" and not LEVELS
                    and not (GradMode.enabled and (self._requires_grad or other._requires_grad))):
                try:
                    a += b if alpha == 1 else b * alpha  # (numpy's operator: np.add(out=a))
                except ValueError:
                    pass
                else:
                    self._bump_version()
                    return self
        elif (b := _direct(self, other)) is not None:
            try:
                np.add(a, b if alpha == 1 else b * alpha, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        return self.__iadd__(other * alpha if alpha != 1 else other)

    def sub_(self, other, alpha=1):
        """``self -= alpha * other``."""
        b = _direct(self, other)
        if b is not None:
            a = self._data
            try:
                np.subtract(a, b if alpha == 1 else b * alpha, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        return self.__isub__(other * alpha if alpha != 1 else other)

    def mul_(self, other):
        a = self._data
        if type(other) is float:  # buf.mul_(momentum): _direct, inlined
            if a.dtype.kind == "f" and not (GradMode.enabled and self._requires_grad) \
                    and not LEVELS:
                try:
                    a *= other
                except ValueError:
                    pass
                else:
                    self._bump_version()
                    return self
        return self.__imul__(other)

    def div_(self, other):
        return self.__itruediv__(other)

    def addcmul_(self, tensor1, tensor2, value=1):
        """``self += value * tensor1 * tensor2`` (computed in that order, as PyTorch does)."""
        b1, b2 = _direct(self, tensor1), _direct(self, tensor2)
        if b1 is not None and b2 is not None and type(value) in (int, float):
            a = self._data
            try:
                np.add(a, b1 * value * b2, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        if self._check_inplace(tensor1) or self._check_inplace(tensor2):
            return self._record_in_place(lambda before: before.addcmul(tensor1, tensor2, value))
        return self.__iadd__(tensor1 * tensor2 * value)

    def addcdiv_(self, tensor1, tensor2, value=1):
        """``self += value * tensor1 / tensor2`` (computed in that order, as PyTorch does)."""
        b1, b2 = _direct(self, tensor1), _direct(self, tensor2)
        if b1 is not None and b2 is not None and type(value) in (int, float):
            a = self._data
            try:
                np.add(a, b1 * value / b2, out=a)
            except ValueError:
                pass
            else:
                self._bump_version()
                return self
        if self._check_inplace(tensor1) or self._check_inplace(tensor2):
            return self._record_in_place(lambda before: before.addcdiv(tensor1, tensor2, value))
        return self.__iadd__(tensor1 / tensor2 * value)

    def lerp_(self, end, weight):
        """``self += weight * (end - self)``, in PyTorch's two forms (the other one, for a
        weight of 0.5 or more, is exact at weight 1)."""
        e = _direct(self, end)
        if (e is not None and type(weight) in (int, float) and e.shape == self._data.shape
                and self._data.flags.writeable):
            a = self._data
            if abs(weight) < 0.5:
                a += weight * (e - a)
            else:
                np.subtract(e, (e - a) * (1 - weight), out=a)
            self._bump_version()
            return self
        if self._check_inplace(end) or self._check_inplace(weight):
            return self._record_in_place(lambda before: before.lerp(end, weight))
        result = self.lerp(end, weight)
        _check_output_shape(self, result._data.shape)
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        return self

    def _in_place(self, compute, args=()):
        """``self`` holds ``compute(self)`` afterwards (the in-place form of an op): recorded
        when it needs to be (``_record_in_place``), else written directly. ``args``: the
        op's other arguments (a tensor among them that requires grad is recorded too).
        PyTorch's errors: a result of another shape, or of a dtype ``self`` cannot hold
        (``int_tensor.exp_()``)."""
        other = None
        for arg in args:
            if isinstance(arg, Tensor) and (other is None or arg._requires_grad):
                other = arg
        if self._check_inplace(other):
            return self._record_in_place(compute)
        result = compute(self)
        _check_result(self, result)
        np.copyto(self._data, result._data, casting="unsafe")
        self._bump_version()
        return self

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if any(isinstance(b, Tensor) and (b._data.size != 1 or b._requires_grad)
               for b in (min, max)):  # tensor bounds: clamp's rule, elementwise
            return self._in_place(lambda t: t.clamp(min, max), (min, max))
        low = min.item() if isinstance(min, Tensor) else min
        high = max.item() if isinstance(max, Tensor) else max
        for bound in (low, high):
            if bound is not None and not can_hold(self._data.dtype, bound):
                raise cannot_hold(bound, self)  # int_tensor.clamp_(min=0.5)
        if self._check_inplace():
            return self._record_in_place(lambda before: before.clamp(low, high))
        if self._data.dtype.kind in "iu":
            low, high = int_bounds(low, high, self._data.dtype)
        np.copyto(self._data, clamped(self._data, low, high))
        self._bump_version()
        return self

    def zero_(self):
        """Set every element to 0 in place (``x.grad.zero_()`` in chapter 4)."""
        recorded = self._check_inplace(overlapping=True)
        if recorded and getattr(self, "_view", None) is not None:  # through the root's CopySlices
            return self._record_in_place(lambda before: wrap(np.zeros_like(before._data)))
        writable(self._data).fill(0)
        self._bump_version()
        if recorded:
            self._set_grad_fn(d.ZeroBackward0((gradient_node(self),), (self._data.shape,)))
            self._views_follow()
        return self

    def fill_(self, value):
        """Set every element to ``value`` in place: a number, or a 0-dim tensor, which then
        gets a gradient too (the sum of the gradient of every element)."""
        value_tensor = value if isinstance(value, Tensor) else None
        if value_tensor is not None:
            if value_tensor.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {value_tensor.ndim} dimensions.")
            value = value_tensor.item()
        # (an expanded tensor: PyTorch fills it with a number, never with a tensor's value)
        recorded = self._check_inplace(value_tensor, overlapping=value_tensor is None)
        if recorded and getattr(self, "_view", None) is not None:  # through the root's CopySlices
            return self._record_in_place(
                lambda before: wrap(np.full_like(before._data, value)) if value_tensor is None
                else value_tensor.to(self.dtype).expand(self.shape) * 1)
        if value_tensor is None:
            fill = number_as(value, self._data.dtype)
        else:  # a tensor's value is cast unchecked, as by .to(dtype)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                fill = value_tensor._data.astype(self._data.dtype)
        writable(self._data).fill(fill)
        self._bump_version()
        if recorded:
            if value_tensor is None:
                self._set_grad_fn(d.FillBackward2((gradient_node(self),), (self._data.shape,)))
            else:
                self._set_grad_fn(d.FillBackward3(edges_of(self, value_tensor),
                                                  (self._data.shape, ()),
                                                  value_tensor._data.dtype))
            self._views_follow()
        return self

    def copy_(self, src):
        """Copy ``src``'s values into this tensor (broadcast to its shape, converted to its
        dtype). In the graph, ``src`` gets the gradient and the old values none."""
        src_t = src if isinstance(src, Tensor) else tensor_from(src)
        try:  # src broadcasts to this tensor's shape, never beyond it (as in PyTorch)
            _check_output_shape(self, np.broadcast_shapes(self._data.shape, src_t._data.shape))
        except ValueError:
            raise broadcast_error(self._data, src_t._data, "copy_") from None
        recorded = self._check_inplace(src_t)
        if recorded and getattr(self, "_view", None) is not None:  # through the root's CopySlices
            return self._record_in_place(lambda _: src_t.expand(self.shape).to(self.dtype) * 1)
        np.copyto(self._data, src_t._data, casting="unsafe")
        self._bump_version()
        if recorded:
            self._set_grad_fn(d.CopyBackwards(edges_of(self, src_t),
                                              (self._data.shape, src_t._data.shape),
                                              src_t._data.dtype))
            self._views_follow()
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        self._check_inplace()
        self._data[...] = numpy_rng(generator).uniform(a, b, self._data.shape)
        self._bump_version()
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        self._check_inplace()
        self._data[...] = numpy_rng(generator).normal(mean, std, self._data.shape)
        self._bump_version()
        return self


def _output_shape_error(tensor, shape, where=""):
    """PyTorch's error for an in-place op whose result has another shape than the tensor
    it writes into (``a += b`` with ``b`` of more dimensions, ``copy_`` from a bigger one)."""
    return RuntimeError(f"output with shape {list(tensor.shape)} doesn't match the broadcast "
                        f"shape {list(shape)}{where}")


def _check_result(tensor, result):
    """PyTorch's errors for an in-place op whose ``result`` does not fit in ``tensor``: another
    shape (broadcast beyond it), or a dtype it cannot hold (a float into an integer tensor)."""
    _check_output_shape(tensor, result._data.shape)
    if not np.can_cast(result._data.dtype, tensor._data.dtype, casting="same_kind"):
        raise RuntimeError(f"result type {scalar_name(result._data.dtype)} can't be cast to the "
                           f"desired output type {scalar_name(tensor._data.dtype)}")


def _in_place_form(name):
    """``x.<name>_(...)``: the method ``x.<name>(...)`` done in place (``x.exp_()``)."""
    def method(self, *args, **kwargs):
        return self._in_place(lambda t: getattr(t, name)(*args, **kwargs),
                              args + tuple(kwargs.values()))
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``x.{name}(...)`` in place: x holds the result (PyTorch's ``{name}_``)."
    return method


# The in-place forms PyTorch has of these methods, each ``_in_place_form(name)``.
IN_PLACE_FORMS = ("abs", "neg", "ceil", "floor", "round", "trunc", "frac", "sign", "exp", "log",
                  "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "sinh", "cosh",
                  "asin", "acos", "atan", "erf", "expm1", "log1p", "log2", "log10", "nan_to_num",
                  "pow", "clamp_min", "clamp_max", "square", "fmod", "remainder", "atan2",
                  "floor_divide", "true_divide", "logical_not", "cumsum", "cumprod")
for _name in IN_PLACE_FORMS:
    setattr(InPlaceMethods, _name + "_", _in_place_form(_name))
del _name


def _check_output_shape(tensor, shape):
    if tuple(shape) != tensor._data.shape:
        raise _output_shape_error(tensor, shape)


# ----------------------------------------------------------------- forward mode (chapter 13)

def _carries_tangent(values):
    return any(isinstance(v, Tensor) and tangent_of(v) is not None for v in values)


def _in_place_dual(self, method, compute, args, kwargs):
    """An in-place op inside a dual level, where the tensor or an operand carries a tangent:
    the tangent is what the op out of place (``compute``) gives, written into the tensor's
    own tangent (in place, as PyTorch: views of it and the tangent given to ``make_dual``
    see the change), zeros for an op that gives none (``zero_``, ``fill_(3)``)."""
    own = tangent_of(self)
    probe = wrap(self._data.copy())
    if own is not None:
        set_tangent(probe, own)
    out = compute(probe, *args, **kwargs)
    new = tangent_of(out) if isinstance(out, Tensor) else None
    set_forward_mode(False)  # the op itself: its own steps carry no tangents
    try:
        result = method(self, *args, **kwargs)
    finally:
        set_forward_mode(True)
    _write_tangent(self, own, new)
    return result


def _write_tangent(self, own, new):
    """The tangent of ``self`` after an in-place op: ``new`` (zeros for None) written into
    its old tangent ``own`` in place (views of that tangent, and the tensor given to
    ``make_dual``, see it, as in PyTorch), or set if it had none."""
    if new is None and own is None:
        return
    values = (np.zeros(self._data.shape, (own if own is not None else self)._data.dtype)
              if new is None else np.broadcast_to(new._data, self._data.shape))
    if own is not None and own._data.shape == self._data.shape and own._data.flags.writeable:
        np.copyto(own._data, values, casting="unsafe")
        own._bump_version()
    else:
        set_tangent(self, wrap(np.array(values)))


def _record_with_tangent(self, compute):
    """``_record_in_place`` in forward mode: ``compute`` on the old values carrying the old
    tangent gives the new tangent; the values change as without tangents (recorded if the
    graph needs it), then the tangent is written as ``_in_place_dual`` writes it."""
    own = tangent_of(self)
    probe = wrap(self._data.copy())
    if own is not None:
        set_tangent(probe, own)
    out = compute(probe)
    new = tangent_of(out)
    set_forward_mode(False)
    try:
        if GradMode.enabled and (self._requires_grad or out._requires_grad):
            self._record_in_place(compute)
        else:
            _check_output_shape(self, out._data.shape)
            if not np.can_cast(out._data.dtype, self._data.dtype, casting="same_kind"):
                raise RuntimeError(f"result type {out.dtype} can't be cast to the desired "
                                   f"output type {self.dtype}")
            np.copyto(self._data, out._data, casting="unsafe")
            self._bump_version()
    finally:
        set_forward_mode(True)
    _write_tangent(self, own, new)
    return self


def _tangent_of_fill(before, value):
    if isinstance(value, Tensor):
        return value.to(before.dtype).expand(before.shape) * 1
    return None


# The in-place methods that do not take the general path (``_check_inplace`` then
# ``_record_in_place``, which carries tangents): what each gives as tangent, out of place
# (None: zeros). The others decline their fast paths inside a dual level (``LEVELS``).
_OUT_OF_PLACE = {
    "zero_": lambda b: None,
    "fill_": _tangent_of_fill,
    "copy_": lambda b, src: _tangent_of_fill(b, src if isinstance(src, Tensor) else None),
    "uniform_": lambda b, *args, **kwargs: None,
    "normal_": lambda b, *args, **kwargs: None,
}


def _aware_of_tangents(method, compute):
    """``method`` as is, unless a dual level is open and a tangent is involved."""

    @functools.wraps(method)
    def in_place(self, *args, **kwargs):
        if LEVELS and forward_mode() and _carries_tangent((self, *args, *kwargs.values())):
            return _in_place_dual(self, method, compute, args, kwargs)
        return method(self, *args, **kwargs)

    return in_place


for _name, _compute in _OUT_OF_PLACE.items():
    setattr(InPlaceMethods, _name, _aware_of_tangents(getattr(InPlaceMethods, _name), _compute))
