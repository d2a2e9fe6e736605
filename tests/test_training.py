"""The seeds' training loops, end to end: zero_grad, accumulation, micro-batches."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim


class LinearRegressionModel(nn.Module):
    def __init__(self):
        super(LinearRegressionModel, self).__init__()
        self.linear = nn.Linear(1, 1, bias=False)

    def forward(self, x):
        out = self.linear(x)
        return out


def regression_data():
    x_train = np.arange(1, 12, dtype=np.float32).reshape(-1, 1)
    y_train = (2 * x_train + 1).astype(np.float32)
    return x_train, y_train


def run(epochs=50, zero_grad=True, lr=0.01):
    mg.manual_seed(0)
    x_train, y_train = regression_data()
    model = LinearRegressionModel()
    criterion = nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        inputs = mg.from_numpy(x_train).requires_grad_()
        labels = mg.from_numpy(y_train)
        if zero_grad:
            optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_with_zero_grad_the_loss_falls_every_epoch():
    losses = run(zero_grad=True, lr=0.001)
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert losses[-1] < 0.1 * losses[0]


def test_without_zero_grad_the_loss_stops_falling_and_rises():
    good = run(zero_grad=True, lr=0.001)
    bad = run(zero_grad=False, lr=0.001)
    assert bad[0] == good[0]  # same start
    low = int(np.argmin(bad))
    assert 0 < low < len(bad) - 1, "falls at first, then turns"
    assert bad[-1] > bad[low] * 10, "and rises"
    assert bad[-1] > good[-1]


def test_the_seed_zero_grad_printout():
    mg.manual_seed(0)
    x_train, y_train = regression_data()
    model = LinearRegressionModel()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    loss = nn.MSELoss()(model(mg.from_numpy(x_train)), mg.from_numpy(y_train))
    loss.backward()
    before = model.linear.weight.grad.clone()
    w = model.linear.weight.item()
    expected = np.mean(2 * (w * x_train - y_train) * x_train)
    assert before.item() == pytest.approx(expected, rel=1e-5) and before.shape == (1, 1)
    optimizer.zero_grad(set_to_none=False)
    assert repr(model.linear.weight.grad) == "tensor([[0.]])"


def test_four_micro_batches_of_16_equal_one_batch_of_64():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((64, 5)), rng.integers(0, 3, 64)
    mg.manual_seed(1)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)).double()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    optimizer.zero_grad()
    F.cross_entropy(model(mg.tensor(x)), mg.tensor(y)).backward()
    big = [p.grad.numpy().copy() for p in model.parameters()]

    accumulation_steps = 4
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        rows = slice(16 * i, 16 * (i + 1))
        loss = F.cross_entropy(model(mg.tensor(x[rows])), mg.tensor(y[rows]))
        (loss / accumulation_steps).backward()
    small = [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(big, small):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


def test_the_seed_adam_loop_with_variables():
    rng = np.random.default_rng(0)
    data, targets = rng.standard_normal((20, 4)), rng.standard_normal((20, 3))
    mg.manual_seed(0)
    W = mg.autograd.Variable(mg.randn(4, 3, dtype=mg.float64), requires_grad=True)
    b = mg.autograd.Variable(mg.randn(3, dtype=mg.float64), requires_grad=True)
    optimizer = optim.Adam([W, b], lr=0.05)
    first = last = None
    for epoch in range(30):
        total = 0.0
        for sample, target in zip(mg.tensor(data), mg.tensor(targets)):
            optimizer.zero_grad()
            output = mg.matmul(sample, W) + b
            loss = ((output - target) ** 2).sum()
            loss.backward()
            optimizer.step()
            total += loss.item()
        first = total if first is None else first
        last = total
    assert last < first / 2


def test_the_seed_manual_descent_with_grad_data():
    rng = np.random.default_rng(0)
    data, targets = rng.standard_normal((10, 4)), rng.standard_normal((10, 3))
    W = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    learning_rate = 0.01
    ((mg.tensor(data[0]) @ W + b) ** 2).sum().backward()  # so that .grad exists
    losses = []
    for _ in range(5):
        total = 0.0
        for sample, target in zip(mg.tensor(data), mg.tensor(targets)):
            W.grad.data.zero_()
            b.grad.data.zero_()
            loss = ((mg.matmul(sample, W) + b - target) ** 2).sum()
            loss.backward()
            W.data -= learning_rate * W.grad.data
            b.data -= learning_rate * b.grad.data
            total += loss.item()
        losses.append(total)
    assert losses[-1] < losses[0] and W.is_leaf
