"""The logic behind the widgets, as plain functions that tests call without a browser.

``backward_steps`` replays the engine's walk (``graph.propagate``) without changing any
``.grad``; ``accumulation_states`` presses backward() and zero_() for real;
``training_run`` trains the seeds' linear regression; ``tangent_at`` asks autograd for a
slope.
"""

from dataclasses import dataclass, field

import numpy as np

from .. import graph, nn, optim
from ..creation import from_numpy, tensor
from ..dtypes import float64
from ..random import manual_seed
from .. import Tensor

__all__ = ["BackwardStep", "backward_steps", "accumulation_states", "training_run",
           "tangent_at", "REGRESSION_X", "REGRESSION_Y"]


@dataclass
class BackwardStep:
    """One node of the backward pass: which node runs, the gradient that reached it, and
    every gradient that has arrived anywhere so far (by graph node).

    ``sent``: the gradients sent along edges by the nodes that ran before, as
    ``(from_node, to_node, input_index, gradient)``; ``sending``: what this node sends now;
    ``waiting``: {node: the sum in its buffer} for nodes that have received some gradient
    but not run yet (where paths meet, the sum grows until the node runs); ``done``: the
    nodes that ran before."""
    index: int
    node: object
    grad: np.ndarray
    arrived: dict = field(repr=False)
    sent: list = field(default_factory=list, repr=False)
    sending: list = field(default_factory=list, repr=False)
    waiting: dict = field(default_factory=dict, repr=False)
    done: list = field(default_factory=list, repr=False)

    @property
    def name(self):
        return self.node.name()

    def describe(self, names=None):
        leaf = type(self.node) is graph.AccumulateGrad
        grad = _numbers(self.grad)
        if leaf:
            who = _name_of(self.node.variable, names) or "a leaf"
            return f"step {self.index + 1}: AccumulateGrad adds {grad} into {who}.grad"
        sends = ", ".join(_numbers(g) for *_, g in self.sending)
        return (f"step {self.index + 1}: {self.name} receives {grad} and sends "
                f"{sends or 'nothing'} to its {len(self.sending)} input(s)")


def _numbers(value):
    return " ".join(np.array2string(np.asarray(value), precision=4).split())


def _name_of(tensor, names):
    for name, t in (names or {}).items():
        if t is tensor:
            return name
    return None


def _sends(node, grad):
    """What ``node`` sends along each edge when it runs with ``grad`` (the engine calls the
    same ``apply`` right after: an op's backward changes nothing)."""
    if type(node) is graph.AccumulateGrad:
        return []
    return [(node, nxt, k, g) for k, (nxt, g) in enumerate(zip(node.inputs, node.apply(grad)))
            if nxt is not None and g is not None]


def _buffers(sent, ran):
    """{node: sum of the gradients sent to it} for the nodes that have not run yet."""
    buffers = {}
    for _, to, _, g in sent:
        if to not in ran:
            buffers[to] = buffers[to] + g if to in buffers else g
    return buffers


def backward_steps(root):
    """Every step ``root.backward()`` would take, in order, without changing any ``.grad``
    (the graph is not freed either)."""
    if not isinstance(root, Tensor) or not root.requires_grad:
        raise ValueError("backward_steps needs a tensor that requires grad, e.g. a loss")
    if root.numel() != 1:
        raise ValueError("backward_steps starts from one number: reduce the output first (.sum())")
    start = graph.get_gradient_edge(root).node
    order = graph.execution_order([start])
    steps, arrived, sent = [], {}, []
    seed = np.ones(root.shape, root.detach().numpy().dtype)
    for i, (node, grad) in enumerate(graph.propagate(order, [start], [seed])):
        done = [step.node for step in steps]
        arrived[node] = grad
        sending = _sends(node, grad)
        steps.append(BackwardStep(i, node, grad, dict(arrived), sent=list(sent),
                                  sending=sending, waiting=_buffers(sent, set(done) | {node}),
                                  done=done))
        sent.extend(sending)
    return steps


def accumulation_states(actions=("backward", "backward", "backward", "zero_")):
    """The seed example for real: x = 2, then each action in turn; "backward" computes
    z = 3x² afresh and runs z.backward(). Returns x.grad after each action (None before the
    first backward)."""
    x = tensor([2.0], requires_grad=True)
    states = []
    for action in actions:
        if action == "backward":
            z = 3 * x * x
            z.backward()
        elif action == "zero_":
            if x.grad is not None:
                x.grad.zero_()
        elif action == "none":
            x.grad = None
        else:
            raise ValueError(f"unknown action {action!r}: use 'backward', 'zero_' or 'none'")
        states.append(None if x.grad is None else x.grad.item())
    return states


# The seeds' linear regression: y = 2x + 1 on x = 1..11.
REGRESSION_X = np.arange(1, 12, dtype=np.float32).reshape(-1, 1)
REGRESSION_Y = 2 * REGRESSION_X + 1


def training_run(lr=0.001, zero_grad=True, accumulation_steps=1, epochs=50, seed=0,
                 optimizer="SGD"):
    """Train ``nn.Linear(1, 1, bias=False)`` on the seeds' data; return the loss per epoch.

    Each epoch splits the 11 points into ``accumulation_steps`` micro-batches, calls
    backward on each (loss scaled by its share of the points) and steps once: with
    ``zero_grad`` the gradient equals the full batch's whatever the split; without it,
    gradients of earlier epochs pile up.
    """
    manual_seed(seed)
    model = nn.Linear(1, 1, bias=False)
    opt = getattr(optim, optimizer)(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    n = len(REGRESSION_X)
    losses = []
    for _ in range(epochs):
        if zero_grad:
            opt.zero_grad()
        total = 0.0
        for rows in np.array_split(np.arange(n), accumulation_steps):
            if len(rows) == 0:
                continue
            loss = criterion(model(from_numpy(REGRESSION_X[rows])), from_numpy(REGRESSION_Y[rows]))
            (loss * (len(rows) / n)).backward()
            total += loss.item() * len(rows) / n
        opt.step()
        losses.append(total)
    return losses


def tangent_at(f, x0):
    """f(x0) and f'(x0), the slope computed by minigrad's autograd."""
    x = tensor(float(x0), dtype=float64, requires_grad=True)
    y = f(x)
    y.backward()
    return y.item(), x.grad.item()
