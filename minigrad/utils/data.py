"""``Dataset``, ``TensorDataset``, ``DataLoader``, ``random_split`` and the samplers, as
``torch.utils.data`` (chapter 10).

A Dataset answers ``len(ds)`` and ``ds[i]``; a sampler says in which order to visit the
indices (``SequentialSampler``, ``RandomSampler`` shuffled with a seeded
``minigrad.Generator``); a ``BatchSampler`` cuts that order into batches; the DataLoader
fetches each batch's samples and stacks them (``collate_fn``).
"""

import itertools
import math
import numbers

import numpy as np

from ..creation import randint, randperm
from ..random import Generator
from .._tensor import Tensor, wrap
from ..ops.shape import stack

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader",
           "random_split", "default_collate", "default_convert", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler"]


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
        return wrap(np.stack(samples))
    if isinstance(first, bool) or isinstance(first, numbers.Number):
        dtype = np.float64 if isinstance(first, float) else None
        return wrap(np.array(samples, dtype=dtype))
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return type(first)(*(default_collate(field) for field in zip(*samples)))
    if isinstance(first, (tuple, list)):  # (x, y) samples give a list [xs, ys], as in PyTorch
        return [default_collate(field) for field in zip(*samples)]
    return samples  # strings and anything else: the samples as they came


def default_convert(data):
    """What a loader with ``batch_size=None`` does to each sample (PyTorch's
    ``default_convert``): numpy arrays and numbers become tensors, containers are converted
    item by item (a tuple becomes a list, as in PyTorch), anything else is left alone."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return wrap(data)
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return wrap(np.asarray(data))
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data


# ---------------------------------------------------------------------------- samplers

def _check_positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler:
    """The order in which a DataLoader visits a dataset: iterating gives indices (or, for a
    batch sampler, lists of indices). Subclass it and define ``__iter__`` (and ``__len__``)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, 2, ...: every index of ``data_source`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices of ``data_source`` in a random order, drawn from ``generator`` (the default
    generator if None, so ``minigrad.manual_seed`` fixes it); a new order every epoch.

    Without ``replacement`` each index comes once per pass (``num_samples`` larger than the
    data set takes several passes); with it, ``num_samples`` independent draws. The same seed
    gives the same orders every run, but not the orders PyTorch gives for that seed.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        if self.replacement:
            yield from randint(0, n, (count,), generator=self.generator).tolist()
            return
        for _ in range(count // n):
            yield from randperm(n, generator=self.generator).tolist()
        if count % n:
            yield from randperm(n, generator=self.generator).tolist()[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (drawn from ``generator``), each once."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Cuts the order of ``sampler`` into lists of ``batch_size`` indices; the last, shorter
    list is dropped only with ``drop_last``: ``[[0, 1, 2], [3, 4, 5], [6]]``."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch:
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        """Batches per epoch: a last, shorter batch counts unless ``drop_last``."""
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


# ---------------------------------------------------------------------------- the loader

class DataLoader:
    """Batches of a dataset: ``for x, y in DataLoader(ds, batch_size=32, shuffle=True)``.

    The arguments are PyTorch's. The order comes from ``sampler`` (by default a
    ``RandomSampler`` drawing from ``generator`` if ``shuffle``, else a
    ``SequentialSampler``), cut into batches by a ``BatchSampler(sampler, batch_size,
    drop_last)``, or by your own ``batch_sampler`` (then leave ``batch_size``, ``shuffle``,
    ``sampler`` and ``drop_last`` alone). ``batch_size=None`` yields samples one by one.

    Loading always happens in this process, as PyTorch's does with ``num_workers=0``:
    ``num_workers`` > 0 is accepted and loads in this process too, so ``worker_init_fn`` is
    never called (PyTorch, too, calls it only in worker processes), and ``pin_memory``,
    ``timeout``, ``prefetch_factor``, ``persistent_workers``, ``multiprocessing_context``,
    ``pin_memory_device`` and ``in_order`` are checked as PyTorch checks them and have no
    effect.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"generator must be a minigrad.Generator, not "
                            f"{type(generator).__name__}: for a seeded shuffle pass "
                            "minigrad.Generator().manual_seed(0)")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order

    def __iter__(self):
        if self.batch_sampler is None:  # batch_size=None: sample by sample, not batched
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate
        for indices in self.batch_sampler:
            if fast:  # one fancy index per tensor instead of stacking sample by sample
                rows = np.asarray(indices)
                yield tuple(wrap(t._data[rows]) for t in self.dataset.tensors)
            else:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        """Batches per epoch (see ``BatchSampler.__len__``); samples, with batch_size=None."""
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """PyTorch's checks of the worker options (which change nothing here)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing. "
                         "Let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
