"""Exercise checks for chapter 10 (data and the training loop; exercises 1 and 2 are in part
10a, the ``DataLoader`` build in part 10b): ``from minigrad.teach.exercises import ch10``.

Each function takes the learner's answer, builds the right answer itself with minigrad and
returns a ``CheckResult`` (prints ✓ or ✗ with a hint); none of them raises, and each leaves
the default random generator as it found it.
"""

import inspect
import numbers
from unittest import mock

import numpy as np

from ... import nn
from ...creation import arange, tensor
from ...dtypes import float32, int64
from ...graph import is_grad_enabled, no_grad
from ...random import Generator, manual_seed
from ... import Tensor
from ...utils import data as _data
from ...utils.data import (BatchSampler, DataLoader, Dataset, RandomSampler, Subset,
                           TensorDataset, default_collate)
from ..build import Mismatch, Piece, own_out_of_reach, register, same_dtype
from ..checks import CheckResult, keeps_random_state, no_answer
from .ch08_build import run_learner
from .ch09 import training_step

__all__ = ["check_digits_dataset", "check_accuracy", "training_step"]

_NO_ANSWER = ("{title}: no answer yet. Define {what} in the cell above and run it, then run "
              "this check again.")


# ---------------------------------------------------------------- exercise 1

def _digits(n=12):
    from sklearn.datasets import load_digits
    digits = load_digits()
    return digits.images[:n], digits.target[:n]


def _label_value(label):
    if isinstance(label, Tensor):
        if label.numel() != 1:
            return None
        if label.dtype != int64:
            return None
        return int(label.item())
    if isinstance(label, (numbers.Integral, np.integer)) and not isinstance(label, bool):
        return int(label)
    return None


@keeps_random_state
def check_digits_dataset(dataset_class):
    """Exercise 1: ``DigitsDataset(images, targets)``, a ``Dataset`` whose sample i is
    ``(image i as a float32 (8, 8) tensor scaled to [0, 1], label i as an integer)``."""
    title = "DigitsDataset"
    if no_answer(dataset_class):
        return CheckResult(False, _NO_ANSWER.format(title=title, what="the class"))
    if not (isinstance(dataset_class, type) and issubclass(dataset_class, Dataset)):
        return CheckResult(False, f"{title}: expected a class that inherits from Dataset "
                                  "(class DigitsDataset(Dataset): ...).")
    images, targets = _digits()
    try:
        dataset = dataset_class(images, targets)
        length = len(dataset)
    except Exception as error:  # the learner's code: report, never crash the notebook
        return CheckResult(False, f"{title}(images, targets) with 12 digits: "
                                  f"{type(error).__name__}: {error}")
    if length != len(targets):
        return CheckResult(False, f"{title}: len() of a data set of 12 digits is {length!r}. "
                                  "Hint: __len__ returns the number of samples.")
    for i in (0, 5, 11):
        try:
            sample = dataset[i]
        except Exception as error:
            return CheckResult(False, f"{title}: dataset[{i}] raised "
                                      f"{type(error).__name__}: {error}")
        if not isinstance(sample, tuple) or len(sample) != 2:
            return CheckResult(False, f"{title}: dataset[{i}] should be a pair "
                                      "(image, label), got "
                                      f"{type(sample).__name__}.")
        image, label = sample
        if not isinstance(image, Tensor):
            return CheckResult(False, f"{title}: the image of dataset[{i}] is a "
                                      f"{type(image).__name__}, not a tensor. Hint: "
                                      "mg.tensor(..., dtype=mg.float32).")
        if tuple(image.shape) != (8, 8):
            return CheckResult(False, f"{title}: the image of dataset[{i}] has shape "
                                      f"{tuple(image.shape)}; keep the 8x8 shape (the model's "
                                      "nn.Flatten() flattens it).")
        if image.dtype != float32:
            return CheckResult(False, f"{title}: the image of dataset[{i}] has dtype "
                                      f"{image.dtype}; the model's weights are float32. Hint: "
                                      "pass dtype=mg.float32.")
        want = images[i] / 16
        got = image.detach().numpy().astype(float)
        if not np.allclose(got, want, atol=1e-6):
            hint = ("the grey levels go from 0 to 16; scale them to [0, 1]."
                    if np.allclose(got, images[i], atol=1e-6) or got.max() > 1
                    else "image i must be images[i], scaled to [0, 1].")
            return CheckResult(False, f"{title}: the pixels of dataset[{i}] are not right yet. "
                                      f"Hint: {hint}")
        value = _label_value(label)
        if value is None:
            kind = (f"a tensor of dtype {label.dtype}" if isinstance(label, Tensor)
                    else f"a {type(label).__name__}")
            return CheckResult(False, f"{title}: the label of dataset[{i}] is {kind}; "
                                      "CrossEntropyLoss wants an integer class index (a "
                                      "Python int or an int64 tensor).")
        if value != int(targets[i]):
            return CheckResult(False, f"{title}: the label of dataset[{i}] is {value}, but "
                                      "that image shows another digit. Hint: sample i pairs "
                                      "image i with target i.")
    try:
        batch_images, batch_labels = next(iter(DataLoader(dataset, batch_size=5)))
    except Exception as error:
        return CheckResult(False, f"{title}: DataLoader(dataset, batch_size=5) failed: "
                                  f"{type(error).__name__}: {error}")
    if tuple(batch_images.shape) != (5, 8, 8) or tuple(batch_labels.shape) != (5,):
        return CheckResult(False, f"{title}: a DataLoader batch of 5 has shapes "
                                  f"{tuple(batch_images.shape)} and "
                                  f"{tuple(batch_labels.shape)}; expected (5, 8, 8) and (5,).")
    return CheckResult(True, f"{title}: correct! len 12, samples ((8, 8) float32 in [0, 1], "
                             "label), and a DataLoader stacks them into batches.")


# ---------------------------------------------------------------- exercise 2

class _Probe(nn.Module):
    """Wraps a model and remembers, for each forward call, whether the model was in
    training mode and whether autograd was recording."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.calls = []

    def forward(self, input):
        self.calls.append((self.training, is_grad_enabled(), input.shape[0]))
        return self.model(input)


def _nearest_mean_model(images, labels):
    """A linear classifier with known weights (nearest class mean): no random numbers, and
    right on most digits but not all, so every counting mistake shows."""
    flat = images.reshape(len(images), -1)
    means = np.stack([flat[labels == c].mean(axis=0) for c in range(10)])
    layer = nn.Linear(64, 10)
    with no_grad():
        layer.weight.copy_(tensor(means, dtype=float32))
        layer.bias.copy_(tensor(-0.5 * (means ** 2).sum(axis=1), dtype=float32))
    return nn.Sequential(nn.Flatten(), layer)


def _accuracy_case():
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images / 16).astype(np.float32)
    model = _nearest_mean_model(images[:500], digits.target[:500])
    # 203 other digits in batches of 32: six full batches and a last one of 11.
    x, y = tensor(images[1000:1203]), tensor(digits.target[1000:1203])
    return model, x, y


@keeps_random_state
def check_accuracy(accuracy):
    """Exercise 2: ``accuracy(model, loader)`` -> the fraction of samples classified right,
    computed with ``model.eval()`` and under ``mg.no_grad()``."""
    title = "accuracy"
    if no_answer(accuracy):
        return CheckResult(False, _NO_ANSWER.format(title=title, what="the function"))
    if not callable(accuracy):
        return CheckResult(False, f"{title}: expected a function, got "
                                  f"{type(accuracy).__name__}.")
    model, x, y = _accuracy_case()
    with no_grad():
        predictions = model(x).argmax(dim=1)
    correct = (predictions == y).numpy()
    expected = float(correct.mean())
    per_batch_mean = float(np.mean([correct[i:i + 32].mean() for i in range(0, len(y), 32)]))
    first_batch = float(correct[:32].mean())

    probe = _Probe(model)
    probe.train()
    loader = DataLoader(TensorDataset(x, y), batch_size=32)
    try:
        got = accuracy(probe, loader)
    except Exception as error:  # the learner's code: report, never crash the notebook
        return CheckResult(False, f"{title}(model, loader) raised {type(error).__name__}: "
                                  f"{error}")
    if isinstance(got, Tensor) and got.numel() == 1:
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return CheckResult(False, f"{title}: returned {got!r}; expected a number between 0 "
                                  "and 1.")
    got = float(got)
    if not probe.calls:
        return CheckResult(False, f"{title}: the model was never called. Hint: loop over the "
                                  "loader and call model(inputs) on each batch.")
    seen = sum(n for _, _, n in probe.calls)
    if any(training for training, _, _ in probe.calls):
        return CheckResult(False, f"{title}: the model was still in training mode. Hint: call "
                                  "model.eval() before the loop (dropout, for one, behaves "
                                  "differently while training).")
    if any(grad for _, grad, _ in probe.calls):
        return CheckResult(False, f"{title}: autograd recorded a graph for every batch. Hint: "
                                  "evaluate inside `with mg.no_grad():` (no gradients are "
                                  "needed, so none should be prepared).")
    if abs(got - expected) < 1e-6:
        return CheckResult(True, f"{title}: correct! {got:.3f} of the check's {len(y)} digits "
                                 "are classified right, with eval() and no_grad().")
    if abs(got - 100 * expected) < 1e-4:
        return CheckResult(False, f"{title}: {got:g} looks like a percentage. Hint: return a "
                                  "fraction between 0 and 1.")
    if seen < len(y) or abs(got - first_batch) < 1e-6:
        return CheckResult(False, f"{title}: only {seen} of the {len(y)} samples went through "
                                  "the model. Hint: is a `return` inside the loop?")
    if abs(got - per_batch_mean) < 1e-6:
        return CheckResult(False, f"{title}: {got:.4f} is the mean of the batches' "
                                  "accuracies. Hint: the last batch is smaller than the others; "
                                  "count correct samples and samples, and divide at the end.")
    return CheckResult(False, f"{title}: {got:.4f} is not right yet. Hint: a prediction is the "
                              "class with the largest output (argmax over dim=1); compare it "
                              "with the labels and count the matches over the whole loader.")


# ---------------------------------------------------------------- build: the DataLoader

def _plug_data_loader(loader_class):
    """``minigrad.utils.data.DataLoader`` is the learner's class inside the block: code
    that builds its loader there (``mg.utils.data.DataLoader(train_set, ...)``) gets
    theirs."""
    return mock.patch.object(_data, "DataLoader", loader_class)


class _Numbered(Dataset):
    """Sample i is (a (2, 3) float32 tensor full of i, the label i as a Python int): any
    batch says which samples it holds. Not a TensorDataset, so minigrad's loader fetches
    the samples one by one and collates them."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        if not isinstance(index, (int, np.integer)) or not 0 <= index < self.n:
            raise IndexError(f"sample index {index!r} out of range for {self.n} samples")
        return tensor(np.full((2, 3), float(index), dtype=np.float32)), int(index)


def _datasets(n):
    """Three kinds of data set with n samples, labelled by their index: a Dataset of pairs,
    a TensorDataset, and a Subset of one (as random_split gives)."""
    rows = arange(2 * n, dtype=float32).reshape(n, 2)
    whole = TensorDataset(arange(n + 3), arange(n + 3) * 10)
    return [("a Dataset of (tensor, int) pairs", _Numbered(n)),
            ("a TensorDataset(x, labels)", TensorDataset(rows, arange(n))),
            ("a Subset of a TensorDataset", Subset(whole, list(range(3, n + 3))))]


# (samples, batch_size, drop_last): a small last batch, an exact division, a batch larger
# than the data set, batches of one
_LOADER_CASES = [(10, 4, False), (10, 4, True), (12, 4, False), (12, 4, True), (3, 8, False),
                 (3, 8, True), (7, 1, False), (23, 5, True)]


def _labels(batch):
    """The sample indices a batch holds (its last field is the label = the index)."""
    return [int(v) for v in np.asarray(batch[-1].numpy()).reshape(-1)]


def _epoch(loader, where):
    """One epoch of a loader as a list of batches (each a list of fields)."""
    batches = []
    for batch in loader:
        if isinstance(batch, Tensor) or not isinstance(batch, (tuple, list)):
            raise Mismatch(f"{where}: a batch is a {type(batch).__name__}; expected a list "
                           "with one tensor per field of the samples: [inputs, labels].")
        for field, value in enumerate(batch):
            if not isinstance(value, Tensor):
                raise Mismatch(f"{where}: field {field} of batch {len(batches) + 1} is a "
                               f"{type(value).__name__}; expected a tensor (stack the "
                               "samples' tensors, make one tensor of their numbers).")
        batches.append(list(batch))
    return batches


def _compare_epoch(got, want, n, batch_size, drop_last, shuffle, where):
    """Raise Mismatch at the first difference between two epochs' batches."""
    got_order = [i for batch in got for i in _labels(batch)]
    want_order = [i for batch in want for i in _labels(batch)]
    repeated = sorted({i for i in got_order if got_order.count(i) > 1})
    if repeated:
        raise Mismatch(f"{where}: sample {repeated[0]} came {got_order.count(repeated[0])} "
                       "times in one epoch. Hint: an epoch visits every sample once; a "
                       "shuffled order is a permutation of the indices.")
    if len(got) != len(want) or sorted(got_order) != sorted(want_order):
        last = n % batch_size
        if drop_last and last and len(got) == len(want) + 1:
            hint = f"drop_last=True throws the last, smaller batch (of {last}) away."
        elif not drop_last and last and len(got) == len(want) - 1:
            hint = f"with drop_last=False the last, smaller batch (of {last}) is kept."
        else:
            hint = "every sample once, in batches of batch_size."
        raise Mismatch(f"{where}: {len(got)} batches with {len(got_order)} samples; expected "
                       f"{len(want)} batches with {len(want_order)}. Hint: {hint}")
    if got_order != want_order:
        if not shuffle:
            hint = "without shuffle the samples come in order: 0, 1, 2, ..."
        elif got_order == sorted(got_order):
            hint = "with shuffle=True the order is random."
        else:
            hint = ("draw each epoch's order with mg.randperm(len(dataset), "
                    "generator=generator), once at the start of the epoch, as minigrad's "
                    "RandomSampler does: then the same seed gives the same batches.")
        raise Mismatch(f"{where}: the samples came in the order {got_order[:12]}; minigrad's "
                       f"DataLoader gives {want_order[:12]}. Hint: {hint}")
    for k, (mine, own) in enumerate(zip(got, want), start=1):
        if len(mine) != len(own):
            raise Mismatch(f"{where}: batch {k} has {len(mine)} field(s); expected "
                           f"{len(own)}, one tensor per field of a sample.")
        for field, (a, b) in enumerate(zip(mine, own)):
            _same_field_dtype(f"{where}: field {field} of batch {k}", a, b)
            if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype or not np.array_equal(
                    a.numpy(), b.numpy()):
                raise Mismatch(f"{where}: field {field} of batch {k} is a tensor of shape "
                               f"{tuple(a.shape)} and dtype {a.dtype}; expected shape "
                               f"{tuple(b.shape)} and dtype {b.dtype}, the samples' values "
                               "stacked along a new first dimension.")


def _same_field_dtype(what, got, want):
    """A batch's field has the dtype minigrad's collate gives: float32 samples stay float32
    (``same_dtype`` names a float64 slip), labels are int64 class indices."""
    if got.dtype == want.dtype:
        return
    if want.dtype == int64:
        raise Mismatch(f"{what} (the labels) is {str(got.dtype).replace('minigrad.', '')}, "
                       "where minigrad's own gives int64: CrossEntropyLoss wants int64 class "
                       "indices. Hint: a tensor made from a list of Python ints is int64, "
                       "and stacking int64 tensors keeps int64; give it no other dtype.")
    same_dtype(what, got, want)


_OWN_PATHS = {_data: [("DataLoader", "utils.data.DataLoader"),
                      ("RandomSampler", "utils.data.RandomSampler"),
                      ("BatchSampler", "utils.data.BatchSampler"),
                      ("default_collate", "utils.data.default_collate")]}


def _mine(what, function):
    """Run a call of the learner's loader: minigrad's own loader and its parts out of reach,
    errors reported with the learner's line (``run_learner``)."""
    with own_out_of_reach(_OWN_PATHS):
        return run_learner(what, function, _dataset_hint)


def _dataset_hint(error):
    if isinstance(error, AttributeError) and "tensors" in str(error):
        return (" Hint: a loader works for any Dataset, not only a TensorDataset: ask it for "
                "dataset[i], one sample at a time.")
    return ""


def _loader_case(loader_class, name, dataset, batch_size, drop_last, shuffle):
    """One loader of the learner's against minigrad's: len, then one epoch (two when
    shuffled: a new order every epoch, the same orders for the same seed)."""
    where = (f"DataLoader({name} of {len(dataset)}, batch_size={batch_size}, "
             f"shuffle={shuffle}, drop_last={drop_last})")
    options = dict(batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    if shuffle:
        mine = _mine(where, lambda: loader_class(
            dataset, generator=Generator().manual_seed(batch_size), **options))
        own = _data_loader_class()(dataset, generator=Generator().manual_seed(batch_size),
                                   **options)
    else:
        mine = _mine(where, lambda: loader_class(dataset, **options))
        own = _data_loader_class()(dataset, **options)
    length = _mine(f"len({where})", lambda: len(mine))
    if length != len(own):
        rest = len(dataset) % batch_size
        hint = ("a last, smaller batch counts unless drop_last=True" if rest
                else "batch_size divides the number of samples exactly here")
        raise Mismatch(f"len({where}) is {length}; expected {len(own)}. Hint: {hint}.")
    first = None
    for epoch in range(1, 3 if shuffle else 2):
        got = _mine(f"iterating over {where}", lambda: _epoch(mine, where))
        want = _epoch(own, where)
        order = [i for batch in got for i in _labels(batch)]
        try:
            _compare_epoch(got, want, len(dataset), batch_size, drop_last, shuffle,
                           f"{where}, epoch {epoch}")
        except Mismatch:
            if epoch == 2 and order == first:
                raise Mismatch(f"{where}: epoch 2 came in the same order as epoch 1. Hint: "
                               "draw a new order at the start of every epoch.") from None
            raise
        first = order


def _data_loader_class():
    """minigrad's own DataLoader (the name in ``utils.data`` may be the learner's)."""
    return DataLoader


def _default_generator_case(loader_class):
    """shuffle=True without a generator draws from the default one (mg.manual_seed)."""
    dataset = _Numbered(9)
    manual_seed(3)
    want = [i for batch in _epoch(DataLoader(dataset, batch_size=4, shuffle=True), "")
            for i in _labels(batch)]
    manual_seed(3)
    where = "DataLoader(a Dataset of 9, batch_size=4, shuffle=True) after mg.manual_seed(3)"
    got = [i for batch in _mine(where, lambda: _epoch(
        loader_class(dataset, batch_size=4, shuffle=True), where)) for i in _labels(batch)]
    if got != want:
        raise Mismatch(f"{where}: the samples came in the order {got}; minigrad's DataLoader "
                       f"gives {want}. Hint: without a generator, draw from the default one "
                       "(generator=None), which mg.manual_seed seeds.")


# PyTorch's defaults (torch.utils.data.DataLoader): DataLoader(dataset) alone gives batches
# of one sample, in order (shuffle=None, which is False), the last batch kept.
TORCH_LOADER_DEFAULTS = {"batch_size": 1, "shuffle": None, "drop_last": False,
                         "generator": None, "sampler": None, "collate_fn": None}


def _check_signature(loader_class):
    """Every default of the learner's ``__init__`` that PyTorch's DataLoader has too is
    PyTorch's (``shuffle=False`` counts as PyTorch's ``None``: both mean no shuffle)."""
    try:
        signature = inspect.signature(loader_class)
    except (TypeError, ValueError):
        return
    for name, parameter in signature.parameters.items():
        if name not in TORCH_LOADER_DEFAULTS:
            continue
        torch_default = TORCH_LOADER_DEFAULTS[name]
        shown = "False" if name == "shuffle" else repr(torch_default)
        if parameter.default is inspect.Parameter.empty:
            raise Mismatch(f"DataLoader(dataset): {name} has no default in your __init__; "
                           f"PyTorch's DataLoader has {name}={shown}, so DataLoader(dataset) "
                           "alone works. Hint: give every argument PyTorch's default.")
        if name == "shuffle":
            same = parameter.default is None or parameter.default is False
        else:
            same = (parameter.default == torch_default and
                    isinstance(parameter.default, bool) == isinstance(torch_default, bool))
        if not same:
            raise Mismatch(f"DataLoader(dataset): your __init__ has {name}="
                           f"{parameter.default!r} as its default; PyTorch's DataLoader has "
                           f"{name}={shown}. Hint: code written for PyTorch that leaves an "
                           "argument out must get PyTorch's.")


@keeps_random_state
def _loader_battery(loader_class):
    """Every case on the three kinds of data set, without and with shuffle; the defaults;
    shuffling from the default generator."""
    if not isinstance(loader_class, type):
        raise Mismatch(f"expected a class (class DataLoader: ...), got "
                       f"{type(loader_class).__name__}.")
    _check_signature(loader_class)
    count = 0
    for n, batch_size, drop_last in _LOADER_CASES:
        for name, dataset in _datasets(n):
            for shuffle in (False, True):
                _loader_case(loader_class, name, dataset, batch_size, drop_last, shuffle)
                count += 1
    dataset = _Numbered(3)
    got = _mine("DataLoader(a Dataset of 3)",
                lambda: _epoch(loader_class(dataset), "DataLoader(a Dataset of 3)"))
    _compare_epoch(got, _epoch(DataLoader(dataset), ""), 3, 1, False, False,
                   "DataLoader(a Dataset of 3), the defaults (batch_size=1)")
    _default_generator_case(loader_class)
    return (f"{count} loaders (3 kinds of data set, with and without shuffle and drop_last), "
            "batch by batch, and the defaults")


register(Piece(name="data_loader", chapter="10", defines="DataLoader",
               summary="the DataLoader: shuffled batches, drop_last",
               plug=_plug_data_loader, battery=_loader_battery,
               own={"utils.data.DataLoader": DataLoader,
                    "utils.data.RandomSampler": RandomSampler,
                    "utils.data.BatchSampler": BatchSampler,
                    "utils.data.default_collate": default_collate}))
