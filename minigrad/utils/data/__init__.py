"""``minigrad.utils.data``: data sets, samplers and the ``DataLoader``, as
``torch.utils.data`` (chapter 10), with PyTorch's submodules, so that both
``from minigrad.utils.data import DataLoader`` and
``from minigrad.utils.data.dataloader import DataLoader`` work:

- ``dataset``: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``random_split``;
- ``sampler``: ``Sampler``, ``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
  ``BatchSampler``;
- ``dataloader``: ``DataLoader``, ``default_collate``, ``default_convert`` (also at
  ``_utils.collate``, where PyTorch defines them).
"""

from . import _utils, dataloader, dataset, sampler  # noqa: F401  (torch's submodule paths)
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ConcatDataset, Dataset, SizeMismatchError,  # noqa: F401
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler)

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader",
           "random_split", "default_collate", "default_convert", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
           "dataloader", "dataset", "sampler"]
