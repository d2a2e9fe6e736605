"""``DataLoader``, as ``torch.utils.data.dataloader``: batches of a data set, in the order a
sampler gives, collated by ``default_collate`` (chapter 10). ``default_collate`` and
``default_convert`` live here too (PyTorch keeps them in ``torch.utils.data._utils.collate``
and re-exports them from ``torch.utils.data.dataloader``; programs import them from both).

A Dataset answers ``len(ds)`` and ``ds[i]``; a sampler says in which order to visit the
indices; a ``BatchSampler`` cuts that order into batches; the DataLoader fetches each
batch's samples and stacks them (``collate_fn``).
"""

import numbers

import numpy as np

from ...random import Generator
from ..._tensor import Tensor, wrap
from ...ops.shape import stack
from .dataset import TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


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
