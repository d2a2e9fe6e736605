"""Chapter 10's build exercise (``DataLoader``): the notebook's solution passes its check,
typical wrong loaders fail it with the message a learner needs, and ``teach.use`` really
gives code that builds ``mg.utils.data.DataLoader`` the learner's class."""

import math

import pytest

import minigrad as mg
from minigrad import teach
from minigrad.utils import data
from minigrad.utils.data import TensorDataset

from build_cells import solution


@pytest.fixture(scope="module")
def DataLoader():
    return solution("10", "DataLoader")


def make_loader(order="randperm", last="ceil", stack=True, every_epoch=True):
    """A loader written like the notebook's, right with the defaults; each switch is a
    typical mistake."""
    class WrongLoader:
        def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False,
                     generator=None):
            self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
            self.drop_last, self.generator = drop_last, generator
            self.fixed = None if every_epoch else self._order()   # drawn once: wrong

        def _order(self):
            n = len(self.dataset)
            if not self.shuffle:
                return list(range(n))
            if order == "randint":
                return mg.randint(0, n, (n,), generator=self.generator).tolist()
            if order == "numpy":
                return [int(i) for i in __import__("numpy").random.default_rng(0).permutation(n)]
            return mg.randperm(n, generator=self.generator).tolist()

        def __len__(self):
            n = len(self.dataset)
            if last == "never" or (last == "ceil" and self.drop_last):
                return n // self.batch_size
            return math.ceil(n / self.batch_size)

        def __iter__(self):
            indices = self._order() if every_epoch else self.fixed
            for b in range(len(self)):
                samples = [self.dataset[i] for i in
                           indices[b * self.batch_size:(b + 1) * self.batch_size]]
                fields = list(zip(*samples))
                yield [mg.stack(list(f)) if isinstance(f[0], mg.Tensor) else mg.tensor(list(f))
                       for f in fields] if stack else fields
    return WrongLoader


def test_the_notebooks_loader_passes(DataLoader):
    result = teach.check_piece("data_loader", DataLoader)
    assert result, result.message
    assert "48 loaders" in result.message


def test_minigrads_own_loader_passes():
    assert teach.check_piece("data_loader", data.DataLoader)


@pytest.mark.parametrize("wrong, words", [
    (make_loader(last="never"), ["len(", "drop_last=False", "expected 3", "last, smaller batch"]),
    (make_loader(last="always"), ["len(", "drop_last=True", "expected 2",
                                  "counts unless drop_last=True"]),
    (make_loader(order="randint"), ["shuffle=True", "times in one epoch", "permutation"]),
    (make_loader(order="numpy"), ["shuffle=True", "minigrad's DataLoader gives",
                                  "mg.randperm(len(dataset), generator=generator)"]),
    (make_loader(every_epoch=False), ["epoch 2 came in the same order", "every epoch"]),
    (make_loader(stack=False), ["field 0 of batch 1 is a tuple", "expected a tensor"]),
    (lambda dataset, **options: iter([]), ["expected a class"]),
])
def test_a_wrong_loader_fails_with_what_to_fix(wrong, words):
    result = teach.check_piece("data_loader", wrong)
    assert not result
    for word in words:
        assert word in result.message, result.message


def test_a_loader_that_ignores_the_default_generator_is_told(DataLoader):
    class OwnGenerator(DataLoader):
        def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False,
                     generator=None):
            super().__init__(dataset, batch_size, shuffle, drop_last,
                             generator or mg.Generator().manual_seed(0))
    result = teach.check_piece("data_loader", OwnGenerator)
    assert not result and "mg.manual_seed" in result.message, result.message


def test_a_loader_that_yields_the_batch_as_one_tensor_is_told(DataLoader):
    class OneTensor(DataLoader):
        def __iter__(self):
            for inputs, *rest in super().__iter__():
                yield inputs
    result = teach.check_piece("data_loader", OneTensor)
    assert not result and "one tensor per field" in result.message, result.message


def test_not_written_yet_leaves_minigrads_own_loader():
    result = teach.check_piece("data_loader", None)
    assert not result and "not written yet" in result.message
    own = data.DataLoader
    with teach.use(data_loader=None):
        assert mg.utils.data.DataLoader is own


def test_use_gives_the_learners_loader_and_puts_minigrads_back(DataLoader):
    own = data.DataLoader
    dataset = TensorDataset(mg.arange(10), mg.arange(10))
    with teach.use(data_loader=DataLoader):
        loader = mg.utils.data.DataLoader(dataset, batch_size=4, shuffle=True,
                                          generator=mg.Generator().manual_seed(0))
        assert type(loader) is DataLoader
        mine = [x.tolist() for x, _ in loader]
    assert data.DataLoader is own
    want = [x.tolist() for x, _ in own(dataset, batch_size=4, shuffle=True,
                                       generator=mg.Generator().manual_seed(0))]
    assert mine == want == [[4, 6, 2, 7], [3, 5, 9, 0], [8, 1]]
    with pytest.raises(ZeroDivisionError):
        with teach.use(data_loader=DataLoader):
            1 / 0
    assert data.DataLoader is own


def test_the_check_leaves_the_random_state_alone(DataLoader):
    mg.manual_seed(5)
    want = mg.rand(3)
    mg.manual_seed(5)
    teach.check_piece("data_loader", DataLoader)
    assert mg.equal(mg.rand(3), want)
