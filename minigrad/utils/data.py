"""``Dataset``, ``TensorDataset``, ``DataLoader``, ``random_split`` as ``torch.utils.data``
(chapter 10).

A Dataset answers ``len(ds)`` and ``ds[i]``; a DataLoader walks it in batches, in order or
shuffled with a seeded ``minigrad.Generator``, and stacks the samples of a batch.
"""

import math
import numbers

import numpy as np

from ..creation import randperm
from ..random import Generator
from ..tensor import Tensor, _wrap, stack

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader",
           "random_split", "default_collate"]


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


def default_collate(samples):
    """Stack a list of samples into a batch: tensors are stacked, numbers become a tensor,
    tuples and dicts are collated field by field."""
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(samples)
    if isinstance(first, np.ndarray):
        return _wrap(np.stack(samples))
    if isinstance(first, bool) or isinstance(first, numbers.Number):
        dtype = np.float64 if isinstance(first, float) else None
        return _wrap(np.array(samples, dtype=dtype))
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return type(first)(*(default_collate(field) for field in zip(*samples)))
    if isinstance(first, (tuple, list)):  # (x, y) samples give a list [xs, ys], as in PyTorch
        return [default_collate(field) for field in zip(*samples)]
    return samples  # strings and anything else: the samples as they came


class DataLoader:
    """Batches of a dataset: ``for x, y in DataLoader(ds, batch_size=32, shuffle=True)``.

    Shuffles draw from ``generator`` (the default generator if None), so
    ``minigrad.manual_seed`` makes every epoch's order reproducible. Loading happens in
    this process (``num_workers`` is accepted and ignored).
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 generator=None, **kwargs):
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"generator must be a minigrad.Generator, not "
                            f"{type(generator).__name__}: for a seeded shuffle pass "
                            "minigrad.Generator().manual_seed(0)")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn
        self.num_workers = num_workers

    def _order(self):
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        if self.shuffle:
            return randperm(n, generator=self.generator).tolist()
        return list(range(n))

    def __iter__(self):
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield self.dataset[i]
            return
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is None
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            if fast:  # one fancy index per tensor instead of stacking sample by sample
                rows = np.asarray(indices)
                yield tuple(_wrap(t._data[rows]) for t in self.dataset.tensors)
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[i] for i in indices])

    def __len__(self):
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
