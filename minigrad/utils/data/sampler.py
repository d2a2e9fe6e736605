"""Samplers, as ``torch.utils.data.sampler``: the order in which a DataLoader visits the
indices of a data set (``SequentialSampler``, ``RandomSampler`` shuffled with a seeded
``minigrad.Generator``, ``SubsetRandomSampler``), and ``BatchSampler``, which cuts that order
into batches (chapter 10).
"""

import itertools
import math

from ...creation import randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "BatchSampler"]


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
