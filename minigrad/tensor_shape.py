"""Tensor's shape methods: reshape, view, permute, expand, split, ... (chapter 5).

Views share the tensor's memory as in PyTorch; the rarer ones (``flip``, ``repeat``,
``roll``, ...) are functions of ``ops/indexing.py`` and ``ops/shape.py``, declared there as
methods.
"""

import math
import numbers
import operator

import numpy as np

from .ops import pointwise
from .ops.op import multi_output_views
from .ops import shape as ops_shape
from .tensor_device import shape_args
from .tensor_rules import dims_in_order

from ._tensor import Tensor
from .ops import indexing


class ShapeMethods:
    """Tensor's shape methods: views, copies in another layout, new tensors like it."""

    __slots__ = ()

    # ----------------------------------------------------------------- shapes

    def clone(self):
        return pointwise.CloneBackward0.run((self,), self._data)

    def contiguous(self):
        """``self`` if its memory is laid out row by row, else such a copy (PyTorch's fix
        before ``.view`` of a transposed tensor)."""
        if self._data.flags.c_contiguous:
            return self
        return self.clone()

    def is_contiguous(self):
        return bool(self._data.flags.c_contiguous)

    def reshape(self, *shape):
        shape = shape_args(shape)
        if shape.count(-1) > 1:
            raise RuntimeError(f"only one dimension can be inferred: shape {list(shape)} has "
                               f"{shape.count(-1)} entries -1")
        for i, n in enumerate(shape):
            if n < -1:  # numpy would read any negative size as -1
                raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape "
                                   f"{list(shape)}: sizes are >= 0, or -1 for the one to infer")
        if -1 in shape and self._data.size == 0 and 0 in shape:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value "
                               "and is ambiguous")
        try:
            a = self._data
            node_class = ops_shape.ViewBackward0 if a.flags.c_contiguous \
                else ops_shape.reshape_class(a, shape)
            return node_class.run((self,), a, shape=shape)
        except ValueError:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{self._data.size}") from None

    def view(self, *shape):
        """Like reshape, but only where no copy is needed (the result shares memory)."""
        shape = shape_args(shape)
        try:
            np.reshape(self._data, shape, copy=False)
        except ValueError:
            if (-1 not in shape and int(np.prod(shape)) != self._data.size
                    or shape.count(-1) > 1 or min(shape, default=0) < -1):
                return self.reshape(shape)  # reshape's error says what is wrong with the size
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.") from None
        return self.reshape(shape)

    def view_as(self, other):
        return self.reshape(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        shape = self._data.shape
        start, end = self._dim(start_dim), self._dim(end_dim)
        if not shape:
            return self.reshape(1)
        if start > end:
            raise RuntimeError(f"flatten() has invalid args: start_dim cannot come after "
                               f"end_dim (dims {start} and {end} of a {len(shape)}-D tensor)")
        new = shape[:start] + (int(np.prod(shape[start:end + 1])),) + shape[end + 1:]
        return self.reshape(new)

    def unsqueeze(self, dim):
        n = self._data.ndim + 1
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {dim})")
        return ops_shape.UnsqueezeBackward0.run((self,), self._data, dim=dim % n)

    def squeeze(self, dim=None):
        a = self._data
        if dim is None:
            return ops_shape.SqueezeBackward0.run((self,), a)
        # squeeze(()) squeezes nothing (for _dims, no dims means every dim)
        given = dims_in_order(self, dim) if isinstance(dim, int) or len(dim) else ()
        dims = [x for x in given if a.ndim and a.shape[x] == 1]
        return ops_shape.SqueezeBackward1.run((self,), a, dims=tuple(dims))

    def expand(self, *sizes):
        if not sizes:
            raise TypeError('expand() missing 1 required positional arguments: "size"')
        sizes = shape_args(sizes)
        a = self._data
        lead = len(sizes) - a.ndim
        if lead < 0:
            raise RuntimeError(f"expand(size={list(sizes)}): the number of sizes provided "
                               f"({len(sizes)}) must be greater or equal to the number of "
                               f"dimensions in the tensor ({a.ndim})")
        for i, s in enumerate(sizes[:lead]):
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}: -1 keeps the size of "
                                   "an existing dimension, a new one needs its size")
        target = tuple(a.shape[i - lead] if s == -1 and i >= lead else s
                       for i, s in enumerate(sizes))
        try:
            if a.size and math.prod(target) == a.size:
                value = a.reshape(target)  # nothing repeated: a writable view, as in PyTorch
            else:
                value = np.broadcast_to(a, target)  # read-only: one element seen many times
                if not value.size and a.flags.writeable:  # no element: none seen twice
                    value = np.lib.stride_tricks.as_strided(a, target, value.strides)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor must match the existing size "
                               f"at each non-singleton dimension: cannot expand shape "
                               f"{list(a.shape)} to {list(sizes)}") from None
        return ops_shape.ExpandBackward0.run((self,), a, value=value)

    def expand_as(self, other):
        return self.expand(other.shape)

    def permute(self, *dims):
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims" '
                            '(give the new order of all dimensions, e.g. x.permute(1, 0))')
        dims = shape_args(dims)
        if len(dims) != self._data.ndim:
            raise RuntimeError(f"permute(): number of dimensions in the tensor input does not "
                               f"match the length of the desired ordering of dimensions i.e. "
                               f"input.dim() = {self._data.ndim} is not equal to len(dims) = "
                               f"{len(dims)}")
        axes = []
        for x in dims:  # in order, as PyTorch: (1, 1, 5) is a repeat before it is out of range
            axes.append(self._dim(x))
            if axes[-1] in axes[:-1]:
                raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
        dims = tuple(axes)
        return ops_shape.PermuteBackward0.run((self,), self._data, dims=dims)

    def transpose(self, dim0, dim1):
        dim0, dim1 = self._dim(dim0), self._dim(dim1)
        return ops_shape.TransposeBackward0.run((self,), self._data, dim0=dim0, dim1=dim1)

    swapaxes = transpose

    def t(self):
        if self._data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D. Use transpose(dim0, dim1).")
        return ops_shape.TBackward0.run_view_of(self)

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self._data.ndim))))

    @property
    def mT(self):
        if self._data.ndim == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               "Got 1-D tensor.")
        return self.transpose(-2, -1)

    def split(self, split_size_or_sections, dim=0):
        """Pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of
        the sizes in a list. Each piece is a slice, so gradients flow back into place."""
        dim = self._dim(dim)
        n = self._data.shape[dim]
        if isinstance(split_size_or_sections, (numbers.Integral, Tensor)):
            size = operator.index(split_size_or_sections)
            if size < 0 or size == 0 and n:
                raise RuntimeError(f"split expects split_size be non-negative, but got {size} "
                                   f"(0 only for a dimension of size 0; this one has {n})")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        else:
            sizes = [operator.index(s) for s in split_size_or_sections]
            if any(s < 0 for s in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes have only "
                                   f"non-negative entries, but got split_sizes={sizes}")
            if sum(sizes) != n:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                                   f"(input tensor's size at dimension {dim}), but got {sizes}")
        pieces, start = [], 0
        for size in sizes:
            key = (slice(None),) * dim + (slice(start, start + size),)
            pieces.append(self[key])
            start += size
        # PyTorch refuses in-place changes of them (chunk's are Split's)
        name = "Split" if isinstance(split_size_or_sections, (numbers.Integral, Tensor)) \
            else "SplitWithSizes"
        return multi_output_views(tuple(pieces), name)

    def chunk(self, chunks, dim=0):
        """``chunks`` pieces (or fewer) of equal size along ``dim``, the last may be smaller."""
        if not isinstance(chunks, numbers.Integral):
            raise TypeError(f"chunk(): argument 'chunks' (position 1) must be int, not "
                            f"{type(chunks).__name__}")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self._data.shape[self._dim(dim)]
        if n == 0:  # PyTorch gives ``chunks`` empty pieces
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    # ----------------------------------------------------------------- method forms

    def flip(self, *dims):
        """``x.flip(0, 1)`` or ``x.flip([0, 1])``: ``minigrad.flip(x, dims)``."""
        return indexing.flip(self, dims[0] if len(dims) == 1 else dims)

    def tile(self, *dims):
        return indexing.tile(self, dims[0] if len(dims) == 1 else dims)
