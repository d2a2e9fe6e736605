"""``minigrad.utils.data`` is a package with PyTorch's submodule paths: what programs import
from ``torch.utils.data.dataloader``, ``.dataset``, ``.sampler`` and
``torch.utils.data._utils.collate`` imports from the same paths here, and it is the same
object as ``minigrad.utils.data.<name>``."""

import importlib

import pytest
import torch  # noqa: F401  (the torch.utils.data submodules are imported by name below)

import minigrad.utils.data as data
from minigrad import arange
from minigrad.utils.data import DataLoader, Dataset, TensorDataset, random_split
from minigrad.utils.data.dataloader import DataLoader as LoaderAtItsPath
from minigrad.utils.data.dataset import TensorDataset as TensorDatasetAtItsPath
from minigrad.utils.data.sampler import SequentialSampler

PATHS = {
    "dataloader": ["DataLoader", "default_collate", "default_convert"],
    "dataset": ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split"],
    "sampler": ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
                "BatchSampler"],
    "_utils.collate": ["default_collate", "default_convert"],
}


@pytest.mark.parametrize("path", PATHS)
def test_each_name_is_where_pytorch_has_it_and_is_the_packages_own(path):
    mine = importlib.import_module(f"minigrad.utils.data.{path}")
    theirs = importlib.import_module(f"torch.utils.data.{path}")
    for name in PATHS[path]:
        assert hasattr(theirs, name), f"torch.utils.data.{path} has no {name}: a wrong path"
        assert getattr(mine, name) is getattr(data, name)
        assert getattr(theirs, name) is getattr(importlib.import_module("torch.utils.data"),
                                                name)


def test_every_name_of_the_package_is_still_importable_from_it():
    for name in data.__all__:
        assert getattr(data, name) is not None
    assert (DataLoader, TensorDataset) == (LoaderAtItsPath, TensorDatasetAtItsPath)
    assert issubclass(TensorDataset, Dataset) and callable(random_split)


def test_a_loader_from_the_submodule_paths_batches_a_dataset():
    ds = TensorDatasetAtItsPath(arange(10), arange(10) * 2)
    batches = list(LoaderAtItsPath(ds, batch_size=4, sampler=SequentialSampler(ds)))
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[1][1].tolist() == [8, 10, 12, 14]
