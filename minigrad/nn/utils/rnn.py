"""``minigrad.nn.utils.rnn``: batches of sequences of different lengths, as
``torch.nn.utils.rnn``.

``pad_sequence`` stacks sequences into one tensor, padding the short ones;
``pack_padded_sequence`` turns a padded batch into a ``PackedSequence`` (the steps one after
the other, each with only the sequences still going, and ``batch_sizes`` saying how many),
which ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` run without computing on the padding;
``pad_packed_sequence`` turns their packed output back into a padded tensor and the lengths.
All are built from differentiable ops (slices, ``cat``, ``stack``), so gradients flow through.
"""

from collections import namedtuple
from collections.abc import Iterable

from ... import creation, dtypes
from ..._tensor import Tensor
from ...ops.shape import cat, stack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """``data``: (sum of batch_sizes, *) the steps one after the other; ``batch_sizes``: how
    many sequences are still going at each step (int64); ``sorted_indices``: the order,
    longest first, in which the batch was packed (None if it came sorted), and
    ``unsorted_indices`` its inverse. Made by ``pack_padded_sequence`` or ``pack_sequence``."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def long(self):
        return self.to(dtype=dtypes.int64)

    @property
    def is_cuda(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(n) for n in lengths.tolist()]
    return [int(n) for n in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """A padded batch, (T, B, *) (or (B, T, *) with ``batch_first``), and each sequence's
    length -> a ``PackedSequence``. With ``enforce_sorted`` the lengths must come longest
    first; ``enforce_sorted=False`` sorts the batch itself and remembers the order."""
    lengths = creation.tensor(_lengths_list(lengths), dtype=dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True, stable=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    sizes = _lengths_list(lengths)
    batch = input.shape[1]
    if len(sizes) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(sizes)} (batch_size={batch})")
    if sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if sizes[0] > input.shape[0]:  # PyTorch reads past the tensor here; refuse instead
        raise RuntimeError(f"the longest length is {sizes[0]} but the padded input has only "
                           f"{input.shape[0]} steps: lengths must not exceed the padded length")
    batch_sizes = [sum(1 for n in sizes if n > t) for t in range(sizes[0])]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)])
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: (padded tensor, lengths), the batch back in
    its original order; ``total_length`` pads to that many steps."""
    batch_sizes = _lengths_list(sequence.batch_sizes)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0]
    rest = tuple(data.shape[1:])
    steps, offset = [], 0
    for size in batch_sizes:
        step = data[offset:offset + size]
        if size < batch:
            step = cat([step, creation.full((batch - size,) + rest, padding_value,
                                            dtype=data.dtype)])
        steps.append(step)
        offset += size
    for _ in range(max_seq_length - len(batch_sizes)):
        steps.append(creation.full((batch,) + rest, padding_value, dtype=data.dtype))
    padded = stack(steps, dim=1 if batch_first else 0)
    lengths = creation.tensor([sum(1 for size in batch_sizes if size > b) for b in range(batch)],
                              dtype=dtypes.int64)
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Sequences of shapes (L_i, *) -> one tensor (max L, B, *) (or (B, max L, *) with
    ``batch_first``), the short ones padded with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if any(s.dim() == 0 for s in sequences):
        raise RuntimeError("pad_sequence: each sequence needs at least one dimension (its "
                           "length), but got a 0-dim tensor: use t.unsqueeze(0)")
    rest = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape of "
                               f"the first, {list(rest)}, but got {list(s.shape[1:])}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = creation.full((missing,) + rest, padding_value, dtype=s.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    return stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of ``pad_sequence``: a list of the sequences, each cut to its length.
    (PyTorch transposes a ``batch_first=False`` input in place first; this leaves it as is.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, _lengths_list(lengths),
                                                      strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The inverse of ``pack_sequence``: the list of sequences, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
