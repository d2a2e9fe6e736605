"""Chapter 10's build exercise (``DataLoader``): the notebook's solution passes its check,
typical wrong loaders fail it with the message a learner needs, and ``teach.use`` really
gives code that builds ``mg.utils.data.DataLoader`` the learner's class."""

import importlib
import inspect
import json
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import teach
from minigrad.teach.exercises import ch10
from minigrad.utils import data
from minigrad.utils.data import TensorDataset

from build_cells import solution


@pytest.fixture(scope="module")
def DataLoader():
    return solution("10", "DataLoader")


def make_loader(order="randperm", last="ceil", stack=True, every_epoch=True, batch_size=1,
                shuffle=False, drop_last=False, iterate="by len", labels=None, features=None,
                fetch="samples"):
    """A loader written like the notebook's, right with the defaults; each switch is a
    typical mistake."""
    class WrongLoader:
        def __init__(self, dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
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
                return [int(i) for i in np.random.default_rng(0).permutation(n)]
            if order == "no generator":
                return mg.randperm(n).tolist()
            return mg.randperm(n, generator=self.generator).tolist()

        def __len__(self):
            n = len(self.dataset)
            if last == "plus one":
                return n // self.batch_size + 1
            if last == "never" or (last == "ceil" and self.drop_last):
                return n // self.batch_size
            return math.ceil(n / self.batch_size)

        def _collate(self, f):
            if isinstance(f[0], mg.Tensor):
                if features == "numpy":
                    return mg.tensor(np.stack([x.numpy() for x in f]).astype(float))
                return mg.stack(list(f))
            if labels == "float32":
                return mg.tensor(list(f), dtype=mg.float32)
            return mg.tensor(list(f))

        def __iter__(self):
            indices = self._order() if every_epoch else self.fixed
            if iterate == "by len":
                starts = [b * self.batch_size for b in range(len(self))]
            else:   # every start, whatever drop_last says
                starts = range(0, len(indices), self.batch_size)
            for start in starts:
                rows = indices[start:start + self.batch_size]
                if fetch == "tensors":   # the TensorDataset shortcut, for every data set
                    yield [t[mg.tensor(rows)] for t in self.dataset.tensors]
                    continue
                samples = [self.dataset[i] for i in rows]
                fields = list(zip(*samples))
                yield [self._collate(f) for f in fields] if stack else fields
    return WrongLoader


class WrapsMinigrads:
    """A thin wrapper around minigrad's own loader."""
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None):
        self.inner = data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                                     drop_last=drop_last, generator=generator)

    def __len__(self):
        return len(self.inner)

    def __iter__(self):
        return iter(self.inner)


class WrapsMinigradsDeep(WrapsMinigrads):
    """The same wrapper, reaching minigrad's loader by a path the look at its code misses."""
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None):
        self.inner = importlib.import_module("minigrad.utils.data").DataLoader(
            dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
            generator=generator)


class UsesMinigradsParts:
    """minigrad's sampler, batch sampler and collate put together: minigrad's loader."""
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None):
        self.dataset = dataset
        order = (data.RandomSampler(dataset, generator=generator) if shuffle
                 else range(len(dataset)))
        self.batches = data.BatchSampler(order, batch_size, drop_last)

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        for rows in self.batches:
            yield data.default_collate([self.dataset[i] for i in rows])


class EmptySubclass(data.DataLoader):
    pass


def test_the_notebooks_loader_passes(DataLoader):
    result = teach.check_piece("data_loader", DataLoader)
    assert result, result.message
    assert "48 loaders" in result.message


def test_pytorchs_defaults_are_written_down_right():
    torch = pytest.importorskip("torch")
    signature = inspect.signature(torch.utils.data.DataLoader)
    for name, default in ch10.TORCH_LOADER_DEFAULTS.items():
        assert signature.parameters[name].default == default, name
    own = inspect.signature(data.DataLoader)
    for name, default in ch10.TORCH_LOADER_DEFAULTS.items():
        assert own.parameters[name].default == default, name


@pytest.mark.parametrize("own, words", [
    (data.DataLoader, ["minigrad's own utils.data.DataLoader", "not a piece you wrote",
                       "Write DataLoader yourself"]),
    (EmptySubclass, ["subclass of minigrad's own utils.data.DataLoader", "from scratch"]),
    (WrapsMinigrads, ["uses minigrad's own utils.data.DataLoader",
                      "compare minigrad with itself"]),
    (WrapsMinigradsDeep, ["calls minigrad's own utils.data.DataLoader",
                          "mg.utils.data.DataLoader", "compare minigrad with itself"]),
    (UsesMinigradsParts, ["uses minigrad's own utils.data.", "Sampler", "write"]),
])
def test_minigrads_own_loader_is_refused(own, words):
    result = teach.check_piece("data_loader", own)
    assert not result
    for word in words:
        assert word in result.message, result.message


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
    (make_loader(last="plus one"), ["len(", "drop_last=True", "is 3; expected 2",
                                    "counts unless drop_last=True"]),
    (make_loader(iterate="every start"), ["drop_last=True", "throws the last, smaller batch",
                                          "(of 2) away"]),
    (make_loader(order="no generator"), ["shuffle=True", "minigrad's DataLoader gives",
                                         "generator=generator"]),
    (make_loader(labels="float32"), ["field 1 of batch 1 (the labels) is float32",
                                     "int64 class indices"]),
    (make_loader(features="numpy"), ["field 0 of batch 1 is float64",
                                     "float32 inputs", "float64 constant"]),
    (make_loader(fetch="tensors"), ["AttributeError", "tensors", "any Dataset",
                                    "dataset[i]"]),
    (make_loader(batch_size=32), ["your __init__ has batch_size=32",
                                  "PyTorch's DataLoader has batch_size=1"]),
    (make_loader(shuffle=True), ["your __init__ has shuffle=True",
                                 "PyTorch's DataLoader has shuffle=False"]),
    (make_loader(drop_last=None), ["drop_last=None", "PyTorch's DataLoader has drop_last=False"]),
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


def _notebook(path, *sources):
    cells = [{"cell_type": "code", "metadata": {"tags": tags}, "source": source,
              "outputs": [], "execution_count": None} for source, tags in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")


HELPER = '''def collate(values):
    if isinstance(values[0], mg.Tensor):
        return mg.stack(list(values))
    return mg.tensor(list(values))
'''

BUILD_WITH_HELPER = '''class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None):
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.generator = drop_last, generator

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = (mg.randperm(n, generator=self.generator).tolist() if self.shuffle
                 else list(range(n)))
        for b in range(len(self)):
            samples = [self.dataset[i] for i in order[b * self.batch_size:(b + 1) * self.batch_size]]
            yield [collate(field) for field in zip(*samples)]
'''


def test_a_loader_using_a_helper_of_another_cell_is_told_why_in_my_pieces(tmp_path, capsys):
    """It passes in its notebook (with a note), but chapter 10 runs the build cell on its
    own: my_pieces says which name is missing and what to do, in its one line."""
    names = {"__name__": "__main__", "math": math, "mg": mg}
    exec(HELPER + BUILD_WITH_HELPER, names)
    in_notebook = teach.check_piece("data_loader", names["DataLoader"])
    assert in_notebook, in_notebook.message   # in its notebook the helper is there
    _notebook(tmp_path / "10b_mine.ipynb", ("import math\nimport minigrad as mg", []),
              (HELPER, []), (BUILD_WITH_HELPER, ["solution", "build"]))
    chosen = teach.my_pieces(tmp_path)
    line = [l for l in capsys.readouterr().out.splitlines() if "ch10" in l][0]
    assert "data_loader" not in chosen
    assert line.startswith("minigrad's own") and "yours does not pass its check yet" in line
    for words in ("NameError", "'collate' is not defined in your build cell",
                  "defined in another cell", "define everything your piece needs inside it"):
        assert words in line, line


def test_the_notebooks_loader_is_taken_by_my_pieces(tmp_path, capsys, DataLoader):
    from build_cells import build_cells
    _notebook(tmp_path / "10b_mine.ipynb", ("import math\nimport minigrad as mg", []),
              *[(source, ["solution", "build"]) for source in build_cells("10")])
    assert "data_loader" in teach.my_pieces(tmp_path)
    assert [l for l in capsys.readouterr().out.splitlines() if "ch10" in l][0].startswith("yours")
