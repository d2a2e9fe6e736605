"""DataLoader and the samplers against torch.utils.data: the same batches, lengths and
errors for the same arguments. Shuffled orders are compared by their properties
(reproducible, complete), not value by value: minigrad's random numbers are not PyTorch's."""

import pytest

import minigrad as mg
from minigrad.utils import data


def _utils(lib):
    return data if lib is mg else lib.utils.data


def _dataset(lib, n=10):
    return _utils(lib).TensorDataset(lib.arange(n), lib.arange(n) * 10)


def _plain(batch):
    """A batch as plain Python values, whatever container the library used."""
    if isinstance(batch, (list, tuple)):
        return [_plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    return batch.tolist() if hasattr(batch, "tolist") else batch


def _both(torch, make):
    """``make(lib)`` run with minigrad and with PyTorch."""
    return make(mg), make(torch)


LOADERS = {
    "batches of 4": dict(batch_size=4),
    "batches of 4, drop_last": dict(batch_size=4, drop_last=True),
    "batch bigger than the data": dict(batch_size=32),
    "a sampler list": dict(sampler=[7, 3, 3, 1, 9], batch_size=2),
    "a sampler list, drop_last": dict(sampler=[7, 3, 3, 1, 9], batch_size=2, drop_last=True),
    "a batch_sampler list": dict(batch_sampler=[[0, 1, 2], [5], [9, 8]]),
    "a batch_sampler of batch_size=1 (the default)": dict(batch_sampler=[[4, 4], [0]],
                                                          batch_size=1),
    "batch_size=None": dict(batch_size=None),
    "batch_size=None with a sampler": dict(batch_size=None, sampler=[2, 0]),
    "shuffle=None means no shuffle": dict(batch_size=3, shuffle=None),
    "a collate_fn": dict(batch_size=4, collate_fn=lambda samples: len(samples)),
    "a collate_fn with batch_size=None": dict(
        batch_size=None, collate_fn=lambda sample: ("sample", int(sample[0]))),
    "a collate_fn with a batch_sampler": dict(
        batch_sampler=[[1, 2], [3]], collate_fn=lambda samples: [int(s[1]) for s in samples]),
}


def _loader_kwargs(lib, name):
    kwargs = dict(LOADERS[name])
    if "batch_sampler" in kwargs and name.startswith("a batch_sampler of"):
        kwargs["batch_sampler"] = _utils(lib).BatchSampler(
            _utils(lib).SequentialSampler(range(5)), 2, False)
    return kwargs


@pytest.mark.parametrize("name", list(LOADERS))
def test_batches_and_length_as_pytorch(name, torch):
    def run(lib):
        loader = _utils(lib).DataLoader(_dataset(lib), **_loader_kwargs(lib, name))
        return (_plain(list(loader)), _plain(list(loader)), len(loader), loader.batch_size,
                loader.drop_last, type(loader.sampler).__name__,
                type(loader.batch_sampler).__name__)

    ours, theirs = _both(torch, run)
    assert ours == theirs


def _raises(lib, call):
    with pytest.raises(Exception) as error:
        call(lib)
    # compared without case and spaces: PyTorch's "multiprocessing.let" lacks one
    return type(error.value), "".join(str(error.value).lower().split())


MISTAKES = {
    "an unknown keyword": lambda lib: _utils(lib).DataLoader(_dataset(lib), batchsize=3),
    "negative num_workers": lambda lib: _utils(lib).DataLoader(_dataset(lib), num_workers=-1),
    "negative timeout": lambda lib: _utils(lib).DataLoader(_dataset(lib), timeout=-1),
    "prefetch_factor without workers": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), prefetch_factor=2),
    "persistent_workers without workers": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), persistent_workers=True),
    "batch_sampler and batch_size": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), batch_sampler=[[0]], batch_size=2),
    "batch_sampler and shuffle": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), batch_sampler=[[0]], shuffle=True),
    "batch_sampler and sampler": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), batch_sampler=[[0]], sampler=[0]),
    "batch_sampler and drop_last": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), batch_sampler=[[0]], drop_last=True),
    "sampler and shuffle": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), sampler=[0], shuffle=True),
    "batch_size=None and drop_last": lambda lib: _utils(lib).DataLoader(
        _dataset(lib), batch_size=None, drop_last=True),
    "batch_size=0": lambda lib: _utils(lib).DataLoader(_dataset(lib), batch_size=0),
    "batch_size=True": lambda lib: _utils(lib).DataLoader(_dataset(lib), batch_size=True),
    "batch_size=2.0": lambda lib: _utils(lib).DataLoader(_dataset(lib), batch_size=2.0),
    "drop_last='yes'": lambda lib: _utils(lib).DataLoader(_dataset(lib), drop_last="yes"),
    "an empty data set shuffled": lambda lib: _utils(lib).DataLoader(
        _dataset(lib, 0), shuffle=True),
    "a RandomSampler of nothing": lambda lib: _utils(lib).RandomSampler(range(0)),
    "a RandomSampler of 0 samples": lambda lib: _utils(lib).RandomSampler(
        range(3), num_samples=0),
    "a RandomSampler with replacement=1": lambda lib: _utils(lib).RandomSampler(
        range(3), replacement=1),
    "a BatchSampler of 0": lambda lib: _utils(lib).BatchSampler(range(3), 0, False),
    "a BatchSampler with drop_last=1": lambda lib: _utils(lib).BatchSampler(range(3), 2, 1),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_bad_arguments_raise_as_pytorch(mistake, torch):
    ours, theirs = _both(torch, lambda lib: _raises(lib, MISTAKES[mistake]))
    assert ours[0] is theirs[0]
    if mistake == "an unknown keyword":  # Python's own message names the function
        assert "unexpectedkeywordargument'batchsize'" in ours[1]
    else:
        assert ours[1] == theirs[1]


def test_worker_init_fn_is_not_called_without_worker_processes(torch):
    def run(lib, num_workers):
        calls = []
        loader = _utils(lib).DataLoader(_dataset(lib), batch_size=4, num_workers=num_workers,
                                        worker_init_fn=calls.append)
        return _plain(list(loader)), calls

    assert run(mg, 0) == run(torch, 0)
    assert run(mg, 0)[1] == []
    # minigrad loads in this process even when asked for workers: same batches, no call
    assert run(mg, 2) == run(torch, 0)


def test_an_empty_data_set_in_order_gives_no_batches(torch):
    ours, theirs = _both(torch, lambda lib: (
        list(_utils(lib).DataLoader(_dataset(lib, 0), batch_size=4)),
        len(_utils(lib).DataLoader(_dataset(lib, 0), batch_size=4))))
    assert ours == theirs == ([], 0)


def test_sequential_and_batch_samplers_as_pytorch(torch):
    def run(lib):
        u = _utils(lib)
        seq = u.SequentialSampler(range(7))
        return (list(seq), len(seq),
                [(list(u.BatchSampler(seq, size, drop)), len(u.BatchSampler(seq, size, drop)))
                 for size in (1, 2, 3, 7, 8) for drop in (False, True)])

    ours, theirs = _both(torch, run)
    assert ours == theirs


def test_batch_sampler_takes_an_endless_sampler():
    endless = iter(range(10**9))
    batches = data.BatchSampler(endless, 3, False)
    assert next(iter(batches)) == [0, 1, 2]


RANDOM_SAMPLERS = {
    "a RandomSampler": lambda u, g: u.RandomSampler(range(9), generator=g),
    "more samples than data": lambda u, g: u.RandomSampler(range(4), num_samples=10,
                                                            generator=g),
    "fewer samples than data": lambda u, g: u.RandomSampler(range(4), num_samples=3,
                                                             generator=g),
    "with replacement": lambda u, g: u.RandomSampler(range(5), replacement=True,
                                                     num_samples=40, generator=g),
    "a SubsetRandomSampler": lambda u, g: u.SubsetRandomSampler([10, 20, 30, 40], generator=g),
}


@pytest.mark.parametrize("name", list(RANDOM_SAMPLERS))
def test_random_samplers_are_reproducible_and_draw_what_pytorchs_draw(name, torch):
    make = RANDOM_SAMPLERS[name]

    def epochs(seed, count=3):
        sampler = make(data, mg.Generator().manual_seed(seed))
        return [list(sampler) for _ in range(count)]

    first = epochs(0)
    assert first == epochs(0)     # the same seed, the same epochs
    assert first != epochs(1)     # another seed, other orders
    assert first[0] != first[1]   # a new order every epoch

    ours = make(data, mg.Generator().manual_seed(0))
    theirs = make(torch.utils.data, torch.Generator().manual_seed(0))
    pool = sorted(getattr(ours, "indices", None) or range(len(ours.data_source)))
    drawn, reference = list(ours), list(theirs)
    assert len(ours) == len(theirs) == len(drawn) == len(reference)
    assert set(drawn) <= set(pool) and set(reference) <= set(pool)
    if not getattr(ours, "replacement", False):  # each full pass is a permutation
        n = len(pool)
        for part in (drawn, reference):
            for start in range(0, len(part) - n + 1, n):
                assert sorted(part[start:start + n]) == pool
            tail = part[len(part) // n * n:]
            assert len(set(tail)) == len(tail)


def test_a_shuffling_loader_draws_one_permutation_per_epoch():
    """The loader's order is the generator's ``randperm`` (so chapter 10's printed epochs
    stay what they were), cut into batches."""
    loader = data.DataLoader(_dataset(mg), batch_size=4, shuffle=True,
                             generator=mg.Generator().manual_seed(0))
    same_seed = mg.Generator().manual_seed(0)
    for _ in range(3):
        order = mg.randperm(10, generator=same_seed).tolist()
        assert [b[0].tolist() for b in loader] == [order[0:4], order[4:8], order[8:10]]


def test_a_custom_batch_sampler_is_used_batch_by_batch(torch):
    class Pairs(_utils(mg).Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter([[i, self.n - 1 - i] for i in range(self.n // 2)])

        def __len__(self):
            return self.n // 2

    loader = data.DataLoader(_dataset(mg, 6), batch_sampler=Pairs(6))
    reference = torch.utils.data.DataLoader(_dataset(torch, 6), batch_sampler=Pairs(6))
    assert _plain(list(loader)) == _plain(list(reference))
    assert len(loader) == len(reference) == 3
