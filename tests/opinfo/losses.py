"""Registry entries of the fused losses (``minigrad/ops/losses.py`` and the cross-entropy
nodes of ``nn/loss_functions.py``). Corners: differences at exactly +-beta (smooth L1) and
+-delta (Huber), where the formula switches from square to line; probabilities of 0 and 1
where binary cross-entropy's log is clamped at -100."""

import numpy as np

from . import base, op, with_corners

TWO = ((3, 4), (3, 4))
LABELS = [1, 0, 3]


def F(lib):
    return lib.nn.functional


def probs(rng, dtype):
    p = rng.uniform(0.1, 1.0, (3, 4))
    return (p / p.sum(1, keepdims=True)).astype(dtype)


def targets(lib):
    return lib.tensor(LABELS)


# b = 0 at the corners' places: a - b is exactly the corner value
ZERO_START = with_corners((3, 4), (0.0, 0.0, 0.0, 0.0, 0.0))

op("MseLossBackward0", lambda lib, a, b: F(lib).mse_loss(a, b), args=TWO)
op("MseLossBackward0", lambda lib, a, b: F(lib).mse_loss(a, b, reduction="none"), args=TWO,
   tag="none")
op("SmoothL1LossBackward0", lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.5),
   args=((3, 4), ZERO_START), corners=(0.5, -0.5, 0.0, 0.25, -0.75))
op("SmoothL1LossBackward0", lambda lib, a, b: F(lib).smooth_l1_loss(a, b, reduction="sum"),
   args=((3, 4), ZERO_START), corners=(1.0, -1.0, 0.0), tag="sum")
op("HuberLossBackward0", lambda lib, a, b: F(lib).huber_loss(a, b, delta=0.5),
   args=((3, 4), ZERO_START), corners=(0.5, -0.5, 0.0, 0.25, -0.75))
op("BinaryCrossEntropyBackward0", lambda lib, p, t: F(lib).binary_cross_entropy(p, t),
   args=((3, 4), (3, 4)), domain=((0.05, 0.95), (0.0, 1.0)), grads=(True, True))
op("BinaryCrossEntropyBackward0",
   lambda lib, p, t: F(lib).binary_cross_entropy(p, t, reduction="sum"),
   args=((3, 4), lambda rng, dtype: rng.integers(0, 2, (3, 4)).astype(dtype)),
   domain=(0.05, 0.95), corners=(0.0, 1.0), grads=(True, False), double=False, tag="at_0_and_1")
op("BinaryCrossEntropyWithLogitsBackward0",
   lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t), args=TWO,
   domain=(None, (0.0, 1.0)), corners=(0.0, 40.0, -40.0))
op("BinaryCrossEntropyWithLogitsBackward0",
   lambda lib, x, t, w: F(lib).binary_cross_entropy_with_logits(
       x, t, pos_weight=w, reduction="sum"), args=((3, 4), (3, 4), (4,)),
   domain=(None, (0.0, 1.0), (0.5, 2.0)), grads=(True, True, False), tag="pos_weight")
op("NllLossBackward0", lambda lib, x: F(lib).nll_loss(x, targets(lib)))
op("NllLossBackward0",
   lambda lib, x, w: F(lib).nll_loss(x, targets(lib), weight=w, reduction="sum"),
   args=((3, 4), (4,)), domain=(None, (0.5, 2.0)), grads=(True, False), tag="weight")
op("NllLossBackward0", lambda lib, x: F(lib).nll_loss(x, targets(lib), ignore_index=0),
   tag="ignore")
op("NllLoss2DBackward0",
   lambda lib, x: F(lib).nll_loss(x, lib.tensor(np.array([[[0, 1], [2, 0]]] * 2))),
   args=((2, 3, 2, 2),))
op("NllLossBackward0", lambda lib, x: F(lib).cross_entropy(x, targets(lib)),
   tag="cross_entropy")
op("DivBackward1", lambda lib, x, p: F(lib).cross_entropy(x, p), args=((3, 4), probs))
op("NegBackward0", lambda lib, x, p: F(lib).cross_entropy(x, p, reduction="sum"),
   args=((3, 4), probs), tag="cross_entropy_sum")
base("CrossEntropyProbsBackward", "cross-entropy of class probabilities: a node under "
                                  "PyTorch's name of its last step, DivBackward1 or NegBackward0")
