"""Data sets, as ``torch.utils.data.dataset``: ``Dataset`` (answers ``len(ds)`` and
``ds[i]``), ``TensorDataset`` (rows of tensors), ``Subset``, ``ConcatDataset`` and
``random_split`` (chapter 10).
"""

import math

import numpy as np

from ...creation import randperm

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "SizeMismatchError"]


class SizeMismatchError(ValueError, AssertionError):
    """Tensors of a TensorDataset disagree on the number of samples. (PyTorch raises an
    AssertionError here; this is both, so code catching either works.)"""


class Dataset:
    """A collection of samples: subclass it and define ``__len__`` and ``__getitem__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are rows: ``ds[i]`` is ``(x[i], y[i])`` for ``TensorDataset(x, y)``."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) != 1:
            raise SizeMismatchError(f"Size mismatch between tensors: first dimensions are {sizes}; "
                             "every tensor needs one row per sample")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.ends = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.ends[-1] if self.ends else 0

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        which = int(np.searchsorted(self.ends, index, side="right"))
        start = self.ends[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Split into non-overlapping random subsets: lengths as counts or as fractions."""
    n = len(dataset)
    if all(0 <= x <= 1 for x in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) != n:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(n, generator=generator).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets
