"""``Embedding``: a learnt vector per index (a word, a token, a category), as in ``torch.nn``.

The layer is a table of ``num_embeddings`` rows of ``embedding_dim`` numbers; its input
is a tensor of integer indices, and each index is replaced by its row. It computes the
same as ``one_hot(indices) @ weight`` without building the one-hot matrix, and only the
rows looked up get a gradient (``max_norm`` and ``scale_grad_by_freq`` as in PyTorch; no
sparse gradients). No chapter uses it: it is here so that PyTorch code with
embeddings runs unchanged (chapter 6 teaches the Module and Parameter it is built from).
"""

from .. import creation, dtypes
from ..graph import no_grad
from ..tensor_device import check_device
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table: ``weight`` (num_embeddings, embedding_dim), drawn from N(0, 1) as in
    PyTorch. Input: integer indices of any shape; output: their rows, of shape
    ``input.shape + (embedding_dim,)``. The row ``padding_idx`` starts at zeros and gets no
    gradient (see F.embedding)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        check_device(device)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = F._padding_row(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            weight = creation.empty(num_embeddings, embedding_dim, dtype=dtype or dtypes.float32)
            self.weight = Parameter(weight, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        """As PyTorch prints it: the settings that differ from the defaults."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (2-D; the same memory, as in
        PyTorch), frozen (no gradient) unless ``freeze=False``. The ``padding_idx`` row is
        kept as it is: only its gradient is dropped."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)
