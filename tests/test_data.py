"""Dataset, TensorDataset, DataLoader, random_split."""

import pytest

import minigrad as mg
from minigrad.utils.data import DataLoader, Dataset, TensorDataset, random_split


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return mg.tensor([float(i)]), i * i


def test_batches_shapes_and_length():
    x, y = mg.randn(10, 3), mg.arange(10)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert [tuple(b[0].shape) for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert mg.cat([b[1] for b in batches]).tolist() == list(range(10))
    assert batches[0][0].equal(x[:4])


def test_drop_last():
    loader = DataLoader(TensorDataset(mg.arange(10)), batch_size=4, drop_last=True)
    assert len(loader) == 2 and [len(b[0]) for b in loader] == [4, 4]


def test_shuffles_are_reproducible_and_complete():
    ds = TensorDataset(mg.arange(20))

    def order(seed):
        g = mg.Generator().manual_seed(seed)
        return [v for b in DataLoader(ds, batch_size=6, shuffle=True, generator=g) for v in b[0].tolist()]

    assert order(1) == order(1) and order(1) != order(2)
    assert sorted(order(1)) == list(range(20)) and order(1) != list(range(20))
    mg.manual_seed(5)
    first = [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)]
    mg.manual_seed(5)
    assert first == [b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True)]


def test_epochs_reshuffle():
    g = mg.Generator().manual_seed(0)
    loader = DataLoader(TensorDataset(mg.arange(10)), batch_size=10, shuffle=True, generator=g)
    assert next(iter(loader))[0].tolist() != next(iter(loader))[0].tolist()


def test_custom_dataset_is_collated():
    loader = DataLoader(Squares(5), batch_size=2)
    (x, y), *_ = list(loader)
    assert tuple(x.shape) == (2, 1) and y.tolist() == [0, 1] and y.dtype == mg.int64
    assert len(loader) == 3


def test_size_mismatch_is_refused():
    with pytest.raises(AssertionError, match="Size mismatch"):  # as PyTorch; also a ValueError
        TensorDataset(mg.zeros(3), mg.zeros(4))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Squares(3), batch_size=0)


def test_random_split():
    train, val = random_split(TensorDataset(mg.arange(10)), [0.8, 0.2],
                              generator=mg.Generator().manual_seed(0))
    assert len(train) == 8 and len(val) == 2
    values = [train[i][0].item() for i in range(8)] + [val[i][0].item() for i in range(2)]
    assert sorted(values) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(TensorDataset(mg.arange(10)), [3, 3])
