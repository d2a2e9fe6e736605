"""The CNN of PyTorch's "What is torch.nn really?" tutorial, on sklearn's 8x8 digits, with
minigrad and with PyTorch: one epoch of SGD (batch 64), timed.

    python benchmarks/cnn_digits.py [--epochs 3] [--size 28]

The model is the tutorial's: three Conv2d(kernel 3, stride 2, padding 1) with ReLU, then
avg_pool2d and a view to (batch, 10); on 8x8 images the last feature map is 1x1, so the
pool's kernel is 1 instead of the tutorial's 4. ``--size 28`` enlarges the digits to
MNIST's 28x28 (each pixel 4x4, the border cropped), where the last feature map is 4x4 and
the model is exactly the tutorial's, avg_pool2d(4) included. Both libraries start
from the same weights and see the same batches, and their losses must agree (float32, so
to 1e-4) before any time is reported.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: single-threaded BLAS for everyone

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import minigrad as mg  # noqa: E402

BATCH, LR, MOMENTUM = 64, 0.1, 0.9


def digits(size=8):
    """The 1797 images as (N, 1, size, size) floats in [0, 1] and their labels."""
    from sklearn.datasets import load_digits
    data = load_digits()
    images = data.images / 16.0
    if size != 8:
        images = np.kron(images, np.ones((4, 4)))  # 32x32
        border = (32 - size) // 2
        images = images[:, border:border + size, border:border + size]
    return images[:, None].astype(np.float32), data.target.astype(np.int64)


def make_model(lib, pool=1):
    nn, F = lib.nn, lib.nn.functional

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, pool)
            return xb.view(-1, xb.size(1))

    return Mnist_CNN()


def copy_weights(source, target, lib):
    """Give ``target`` (a model of ``lib``) the weights of ``source`` (a minigrad model)."""
    state = {name: lib.tensor(p.detach().numpy().copy()) for name, p in source.state_dict().items()}
    target.load_state_dict(state)


def epoch(lib, model, opt, x, y, order):
    """One epoch of SGD over the batches of ``order``; the mean loss."""
    losses = []
    for start in range(0, len(order), BATCH):
        rows = order[start:start + BATCH]
        xb, yb = lib.tensor(x[rows]), lib.tensor(y[rows])
        loss = lib.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return float(np.mean(losses))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--size", type=int, default=8, choices=(8, 28))
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    x, y = digits(args.size)
    pool = 1 if args.size == 8 else 4
    mg.manual_seed(0)
    ours = make_model(mg, pool)
    theirs = make_model(torch, pool)
    copy_weights(ours, theirs, torch)
    orders = np.random.default_rng(0).permutation(np.tile(np.arange(len(x)), (args.epochs, 1)),
                                                  axis=1)
    optimizers = {"minigrad": mg.optim.SGD(ours.parameters(), lr=LR, momentum=MOMENTUM),
                  "torch": torch.optim.SGD(theirs.parameters(), lr=LR, momentum=MOMENTUM)}
    times = {"minigrad": [], "torch": []}
    for e, order in enumerate(orders):
        results = {}
        for name, lib, model in (("minigrad", mg, ours), ("torch", torch, theirs)):
            start = time.perf_counter()
            results[name] = epoch(lib, model, optimizers[name], x, y, order)
            times[name].append(time.perf_counter() - start)
        if abs(results["minigrad"] - results["torch"]) > 1e-4 * max(1, abs(results["torch"])):
            raise SystemExit(f"epoch {e}: the losses differ: {results}")
        print(f"epoch {e}: mean loss {results['minigrad']:.4f} (torch {results['torch']:.4f}); "
              f"minigrad {times['minigrad'][-1]:.3f} s, torch {times['torch'][-1]:.3f} s")
    best = {name: min(t) for name, t in times.items()}
    print(f"best epoch (batch {BATCH}, {len(x)} images of {args.size}x{args.size}): minigrad {best['minigrad']:.3f} s, "
          f"torch {best['torch']:.3f} s, ratio {best['minigrad'] / best['torch']:.1f}x")


if __name__ == "__main__":
    main()
