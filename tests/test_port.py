"""A PyTorch user's training script runs on minigrad by changing the import, and prints the
same numbers.

The script below is written once, in the style of PyTorch's tutorials ("What is torch.nn
really?", "Learning PyTorch with examples"), and run with ``lib`` = minigrad and ``lib`` =
torch. Only the random draws are made outside it (numpy), so that both libraries start from
the same weights and see the same batches.
"""

import math

import numpy as np
import pytest

import minigrad as mg

R = np.random.default_rng(7)
X_TRAIN = R.random((240, 16)).astype(np.float32)
Y_TRAIN = (X_TRAIN[:, :4].sum(axis=1) * 1.5).astype(np.int64) % 3
X_VALID = R.random((60, 16)).astype(np.float32)
Y_VALID = (X_VALID[:, :4].sum(axis=1) * 1.5).astype(np.int64) % 3
WEIGHTS = [R.uniform(-0.25, 0.25, shape).astype(np.float32)
           for shape in ((32, 16), (32,), (3, 32), (3,))]


def digits_like_script(lib, tmp_path):
    """Dataset, DataLoader, a Module with a Lambda layer, SGD with momentum, a learning-rate
    schedule, gradient clipping, train/eval, no_grad, save/load: what the transcript says."""
    nn, optim, F = lib.nn, lib.optim, lib.nn.functional
    data = lib.utils.data
    x_train, y_train, x_valid, y_valid = map(lib.tensor, (X_TRAIN, Y_TRAIN, X_VALID, Y_VALID))
    train_dl = data.DataLoader(data.TensorDataset(x_train, y_train), batch_size=32)
    valid_dl = data.DataLoader(data.TensorDataset(x_valid, y_valid), batch_size=64)
    dev = lib.device("cuda") if lib.cuda.is_available() else lib.device("cpu")

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    model = nn.Sequential(Lambda(lambda x: x.view(-1, 16)), nn.Linear(16, 32), nn.ReLU(),
                          nn.Linear(32, 3)).to(dev)
    with lib.no_grad():
        for p, w in zip(model.parameters(), WEIGHTS):
            p.copy_(lib.tensor(w))
    opt = optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    scheduler = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    transcript = []
    for epoch in range(5):
        model.train()
        for xb, yb in train_dl:
            loss = F.cross_entropy(model(xb.to(dev)), yb.to(dev))
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.3)
            opt.step()
            opt.zero_grad()
        scheduler.step()
        model.eval()
        with lib.no_grad():
            losses, nums, correct = [], [], 0
            for xb, yb in valid_dl:
                out = model(xb)
                losses.append(F.cross_entropy(out, yb).item())
                nums.append(len(xb))
                correct += (lib.argmax(out, dim=1) == yb).float().sum().item()
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
        transcript.append((epoch, val_loss, correct / len(y_valid), norm.item(),
                           scheduler.get_last_lr()[0]))
    lib.save(model.state_dict(), tmp_path / f"{lib.__name__}.pt")
    restored = nn.Sequential(Lambda(lambda x: x.view(-1, 16)), nn.Linear(16, 32), nn.ReLU(),
                             nn.Linear(32, 3))
    restored.load_state_dict(lib.load(tmp_path / f"{lib.__name__}.pt"))
    with lib.no_grad():
        same = bool((restored(x_valid) == model(x_valid)).all())
    return transcript, same, str(model), sum(p.numel() for p in model.parameters())


def polynomial_script(lib):
    """"Learning PyTorch with examples": fit a cubic to sin(x) with RMSprop."""
    x = lib.linspace(-math.pi, math.pi, 200, dtype=lib.float64)
    y = lib.sin(x)
    xx = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3]))
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1)).double()
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.05]], dtype=lib.float64))
        model[0].bias.fill_(0.0)
    loss_fn = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.RMSprop(model.parameters(), lr=1e-3)
    for _ in range(300):
        loss = loss_fn(model(xx), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item(), model[0].weight.tolist(), model[0].bias.item()


def test_a_training_script_prints_the_same_numbers(torch, tmp_path):
    ours = digits_like_script(mg, tmp_path)
    theirs = digits_like_script(torch, tmp_path)
    (our_log, our_same, our_repr, our_count) = ours
    (their_log, their_same, their_repr, their_count) = theirs
    assert our_same and their_same  # save -> load gives back the same model
    assert our_repr == their_repr and our_count == their_count
    assert [row[0] for row in our_log] == [row[0] for row in their_log]
    np.testing.assert_allclose([row[1:] for row in our_log], [row[1:] for row in their_log],
                               rtol=2e-4, atol=1e-6)
    assert our_log[-1][1] < our_log[0][1]  # and it learnt something


def test_the_polynomial_tutorial_fits_the_same_cubic(torch):
    our_loss, our_weight, our_bias = polynomial_script(mg)
    their_loss, their_weight, their_bias = polynomial_script(torch)
    assert our_loss == pytest.approx(their_loss, rel=1e-9)
    np.testing.assert_allclose(our_weight, their_weight, rtol=1e-9)
    assert our_bias == pytest.approx(their_bias, rel=1e-9, abs=1e-12)
