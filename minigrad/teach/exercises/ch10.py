"""Exercise checks for chapter 10 (data and the training loop):
``from minigrad.teach.exercises import ch10``.

Each function takes the learner's answer, builds the right answer itself with minigrad and
returns a ``CheckResult`` (prints ✓ or ✗ with a hint); none of them raises, and each leaves
the default random generator as it found it.
"""

import numbers

import numpy as np

from ... import nn
from ...creation import tensor, zeros
from ...dtypes import float32, int64
from ...graph import is_grad_enabled, no_grad
from ...tensor import Tensor
from ...utils.data import DataLoader, Dataset, TensorDataset
from ..checks import CheckResult
from ..checks import keeps_random_state as _leaves_rng_alone, no_answer as _no_answer

__all__ = ["check_batches_per_epoch", "check_digits_dataset", "check_accuracy"]

# (n_samples, batch_size, drop_last): exact divisions, a small last batch, a batch bigger
# than the data set, and the split of chapter 10.
BATCH_CASES = [(10, 4, False), (10, 4, True), (64, 32, False), (64, 32, True),
               (1438, 32, False), (1438, 32, True), (1437, 50, False), (3, 8, False),
               (3, 8, True), (1, 1, False)]


_NO_ANSWER = ("{title}: no answer yet. Define {what} in the cell above and run it, then run "
              "this check again.")


def _loader_length(n_samples, batch_size, drop_last):
    """What ``len(DataLoader(...))`` says, from a data set of that many samples."""
    return len(DataLoader(TensorDataset(zeros(n_samples)), batch_size=batch_size,
                          drop_last=drop_last))


# ---------------------------------------------------------------- exercise 1

@_leaves_rng_alone
def check_batches_per_epoch(batches_per_epoch):
    """Exercise 1: ``batches_per_epoch(n_samples, batch_size, drop_last)`` -> a whole number."""
    title = "batches_per_epoch"
    if _no_answer(batches_per_epoch):
        return CheckResult(False, _NO_ANSWER.format(title=title, what="the function"))
    if not callable(batches_per_epoch):
        return CheckResult(False, f"{title}: expected a function, got "
                                  f"{type(batches_per_epoch).__name__}.")
    for n, size, drop_last in BATCH_CASES:
        call = f"{title}({n}, {size}, drop_last={drop_last})"
        try:
            got = batches_per_epoch(n, size, drop_last)
        except Exception as error:  # the learner's code: report, never crash the notebook
            return CheckResult(False, f"{call} raised {type(error).__name__}: {error}")
        if isinstance(got, Tensor) and got.numel() == 1:
            got = got.item()
        want = _loader_length(n, size, drop_last)
        if isinstance(got, bool) or not isinstance(got, numbers.Real):
            return CheckResult(False, f"{call} returned {got!r}; expected a whole number.")
        if got == want:
            continue
        if not float(got).is_integer():
            return CheckResult(False, f"{call} returned {got!r}, which is not a whole number. "
                                      "Hint: a loader cannot yield part of a batch; round the "
                                      "right way (math.ceil or // ).")
        if n % size == 0:
            hint = ("here batch_size divides the number of samples exactly: is there really a "
                    "last, smaller batch?")
        elif drop_last:
            hint = "drop_last=True throws the last, incomplete batch away."
        else:
            hint = "with drop_last=False the last, smaller batch still counts."
        return CheckResult(False, f"{call} returned {got!r}, which is not right yet. "
                                  f"Hint: {hint}")
    return CheckResult(True, f"{title}: correct on all {len(BATCH_CASES)} test inputs, "
                             "and it agrees with len(DataLoader(...)).")


# ---------------------------------------------------------------- exercise 2

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


@_leaves_rng_alone
def check_digits_dataset(dataset_class):
    """Exercise 2: ``DigitsDataset(images, targets)``, a ``Dataset`` whose sample i is
    ``(image i as a float32 (8, 8) tensor scaled to [0, 1], label i as an integer)``."""
    title = "DigitsDataset"
    if _no_answer(dataset_class):
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


# ---------------------------------------------------------------- exercise 3

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


@_leaves_rng_alone
def check_accuracy(accuracy):
    """Exercise 3: ``accuracy(model, loader)`` -> the fraction of samples classified right,
    computed with ``model.eval()`` and under ``mg.no_grad()``."""
    title = "accuracy"
    if _no_answer(accuracy):
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
