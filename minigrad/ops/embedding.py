"""Embedding (``F.embedding``, ``nn.Embedding``): looking rows of a weight up by index, and
its backward, each an op whose backward is the other.

The lookup's backward adds each output row's gradient into the row it was looked up from
(a scatter-add; the padding row gets none); that scatter's backward looks the rows up
again. So ``create_graph=True`` records the gradient of an embedding.
"""

import numpy as np

from . import formulas
from .formulas import is_array
from .op import Op
from .tangents import transposed_backward

__all__ = ["EmbeddingBackward0", "EmbeddingDenseBackwardBackward0"]


def _array(value):
    return value if type(value) is np.ndarray else value._data


def _not_padding(indices, padding_idx):
    """True where an index is not the padding row, one per output row element."""
    return (indices != padding_idx)[..., None]


class EmbeddingBackward0(Op):
    """``weight[indices]``: each row looked up gets the gradient of its output, a row looked
    up several times the sum of theirs; the row ``padding_idx`` gets none."""
    __slots__ = ("padding_idx",)

    def forward(self, weight, indices, padding_idx=None):
        self.padding_idx = padding_idx
        self.save_for_backward(indices)
        return weight[indices]

    def backward(self, grad, indices):
        indices = _array(indices)
        if is_array(grad):
            return dense_backward(grad, indices, self.input_shape(0)[0], self.padding_idx)
        return EmbeddingDenseBackwardBackward0.run(
            (grad,), indices=indices, rows=self.input_shape(0)[0], padding_idx=self.padding_idx)

    jvp = transposed_backward


def dense_backward(grad, indices, rows, padding_idx):
    """The gradient of the weight (rows, dim): each output row's gradient added to the row
    it came from (``np.add.at``), the padding row left at 0."""
    out = np.zeros((rows, grad.shape[-1]), dtype=grad.dtype)
    np.add.at(out, indices, grad)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


class EmbeddingDenseBackwardBackward0(Op):
    """The embedding's backward as an op (for create_graph): its backward looks the rows up
    again, with 0 where the index was the padding row."""
    __slots__ = ("padding_idx",)

    def forward(self, grad, indices, rows, padding_idx):
        self.padding_idx = padding_idx
        self.save_for_backward(indices)
        return dense_backward(grad, indices, rows, padding_idx)

    def backward(self, grad, indices):
        indices = _array(indices)
        if is_array(grad):
            rows = grad[indices]
        else:
            rows = EmbeddingBackward0.run((grad,), indices=indices)
        if self.padding_idx is None:
            return rows
        return formulas.keep_where(
            np.broadcast_to(_not_padding(indices, self.padding_idx), rows.shape), rows)

    jvp = transposed_backward
