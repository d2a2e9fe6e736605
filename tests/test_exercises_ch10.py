"""Chapter 10's exercise checks accept the right answers and reject wrong ones, without raising."""


import minigrad as mg
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch10
from minigrad.utils.data import Dataset


# ---------------------------------------------------------------- exercise 1: DigitsDataset

class DigitsDataset(Dataset):
    def __init__(self, images, targets):
        self.images, self.targets = images, targets

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image = mg.tensor(self.images[index], dtype=mg.float32) / 16
        return image, int(self.targets[index])


def test_digits_dataset_accepts_right_classes():
    assert ch10.check_digits_dataset(DigitsDataset)

    class TensorLabels(Dataset):  # converts everything up front, labels as int64 tensors
        def __init__(self, images, targets):
            self.images = mg.from_numpy(images).float() / 16
            self.targets = mg.tensor(targets)

        def __len__(self):
            return self.targets.shape[0]

        def __getitem__(self, index):
            return self.images[index], self.targets[index]

    result = ch10.check_digits_dataset(TensorLabels)
    assert result, result.message


def test_digits_dataset_rejects_wrong_classes():
    for answer in (None, MISSING):
        result = ch10.check_digits_dataset(answer)
        assert not result and "no answer yet" in result.message

    class NotADataset:
        pass

    result = ch10.check_digits_dataset(NotADataset)
    assert not result and "inherits from Dataset" in result.message

    class Unscaled(DigitsDataset):
        def __getitem__(self, index):
            return mg.tensor(self.images[index], dtype=mg.float32), int(self.targets[index])

    result = ch10.check_digits_dataset(Unscaled)
    assert not result and "[0, 1]" in result.message

    class Flat(DigitsDataset):
        def __getitem__(self, index):
            image, label = super().__getitem__(index)
            return image.reshape(64), label

    result = ch10.check_digits_dataset(Flat)
    assert not result and "8x8" in result.message

    class Float64(DigitsDataset):
        def __getitem__(self, index):
            return mg.tensor(self.images[index] / 16), int(self.targets[index])

    result = ch10.check_digits_dataset(Float64)
    assert not result and "float32" in result.message

    class FloatLabels(DigitsDataset):
        def __getitem__(self, index):
            image, label = super().__getitem__(index)
            return image, float(label)

    result = ch10.check_digits_dataset(FloatLabels)
    assert not result and "integer class index" in result.message

    class ShiftedLabels(DigitsDataset):
        def __getitem__(self, index):
            image, _ = super().__getitem__(index)
            return image, int(self.targets[(index + 1) % len(self.targets)])

    result = ch10.check_digits_dataset(ShiftedLabels)
    assert not result and "another digit" in result.message

    class WrongLength(DigitsDataset):
        def __len__(self):
            return len(self.images) * 64

    result = ch10.check_digits_dataset(WrongLength)
    assert not result and "__len__" in result.message

    class NoLength(Dataset):
        def __init__(self, images, targets):
            pass

    result = ch10.check_digits_dataset(NoLength)
    assert not result and "TypeError" in result.message

    class ImageOnly(DigitsDataset):
        def __getitem__(self, index):
            return super().__getitem__(index)[0]

    result = ch10.check_digits_dataset(ImageOnly)
    assert not result and "pair" in result.message


# ---------------------------------------------------------------- exercise 2: accuracy

def accuracy(model, loader):
    model.eval()
    correct = total = 0
    with mg.no_grad():
        for inputs, labels in loader:
            predictions = model(inputs).argmax(dim=1)
            correct += (predictions == labels).sum().item()
            total += len(labels)
    return correct / total


def test_accuracy_accepts_right_functions():
    assert ch10.check_accuracy(accuracy)

    @mg.no_grad()
    def as_a_tensor(model, loader):  # no_grad as a decorator; the answer as a 0-d tensor
        model.eval()
        correct = mg.tensor(0)
        for inputs, labels in loader:
            correct = correct + (model(inputs).argmax(1) == labels).sum()
        return correct / len(loader.dataset)

    result = ch10.check_accuracy(as_a_tensor)
    assert result, result.message


def test_accuracy_rejects_wrong_functions_with_hints():
    result = ch10.check_accuracy(None)
    assert not result and "no answer yet" in result.message
    result = ch10.check_accuracy(0.9)
    assert not result and "expected a function" in result.message

    def no_eval(model, loader):
        model.train()
        with mg.no_grad():
            return accuracy_counts(model, loader)

    result = ch10.check_accuracy(no_eval)
    assert not result and "model.eval()" in result.message

    def with_grad(model, loader):
        model.eval()
        return accuracy_counts(model, loader)

    result = ch10.check_accuracy(with_grad)
    assert not result and "no_grad" in result.message

    def percent(model, loader):
        return 100 * accuracy(model, loader)

    result = ch10.check_accuracy(percent)
    assert not result and "percentage" in result.message

    def mean_of_batches(model, loader):
        model.eval()
        scores = []
        with mg.no_grad():
            for inputs, labels in loader:
                scores.append((model(inputs).argmax(dim=1) == labels).float().mean().item())
        return sum(scores) / len(scores)

    result = ch10.check_accuracy(mean_of_batches)
    assert not result and "smaller" in result.message

    def returns_early(model, loader):
        model.eval()
        with mg.no_grad():
            for inputs, labels in loader:
                return (model(inputs).argmax(dim=1) == labels).float().mean().item()

    result = ch10.check_accuracy(returns_early)
    assert not result and "return" in result.message

    def wrong_dim(model, loader):
        model.eval()
        correct = total = 0
        with mg.no_grad():
            for inputs, labels in loader:
                outputs = model(inputs)
                correct += (outputs.max(dim=1).values == labels).sum().item()
                total += len(labels)
        return correct / total

    result = ch10.check_accuracy(wrong_dim)
    assert not result and "argmax" in result.message

    def never_calls(model, loader):
        return 0.5

    result = ch10.check_accuracy(never_calls)
    assert not result and "never called" in result.message

    def crashes(model, loader):
        model.eval()
        for inputs in loader:
            model(inputs)

    result = ch10.check_accuracy(crashes)
    assert not result and "raised" in result.message


def accuracy_counts(model, loader):
    correct = total = 0
    for inputs, labels in loader:
        correct += (model(inputs).argmax(dim=1) == labels).sum().item()
        total += len(labels)
    return correct / total


def test_checks_leave_the_default_random_stream_alone():
    mg.manual_seed(0)
    expected = mg.randn(3)
    mg.manual_seed(0)
    ch10.check_digits_dataset(DigitsDataset)
    ch10.check_accuracy(accuracy)
    assert mg.randn(3).tolist() == expected.tolist()

