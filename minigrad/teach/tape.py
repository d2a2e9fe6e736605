"""TensorFlow 2's ``GradientTape``, imitated on minigrad (chapter 11): the other design.

PyTorch and minigrad record every operation on a tensor that requires grad and *add* the
gradients into each leaf's ``.grad``. TensorFlow records only inside a ``with`` block, only
what the tape watches, and *returns* the gradients::

    w = mg.nn.Parameter(mg.tensor([2.0]))       # TensorFlow: w = tf.Variable([2.0])
    with GradientTape() as tape:
        z = 3 * w * w
    tape.gradient(z, w)                          # tensor([12.]); w.grad stays None

The imitation keeps TensorFlow's rules where they differ from PyTorch's: a tensor is
watched if it is a trainable variable (here: a tensor that requires grad, such as a
``Parameter``) or was passed to ``tape.watch``; operations made before the block are not on
the tape; a non-persistent tape gives one set of gradients; a source the target does not
depend on gets ``None``; a target with several elements is summed. It runs on minigrad's
engine (``autograd.grad``), so it never writes ``.grad``.
"""

import numpy as np

from .. import graph
from ..creation import from_numpy
from ..graph import AccumulateGrad, Node
from .. import Tensor

__all__ = ["GradientTape"]

ONE_SET_ONLY = ("A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)")


class GradientTape:
    """Records the operations of its ``with`` block; ``gradient(target, sources)`` returns
    d target / d source for each source, as ``tf.GradientTape`` does."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._watched = []   # constants passed to watch(): given requires_grad for the block
        self._nodes = {}     # id(tensor) -> the node its gradient reaches, for watched tensors
        self._span = None    # the creation numbers of the block's operations
        self._used = False

    def __enter__(self):
        self._span = [_now(), None]
        return self

    def __exit__(self, *error):
        self._span[1] = _now()
        for t in self._watched:  # a watched constant is a constant again after the block
            t.requires_grad_(False)
        return False

    def watch(self, tensor):
        """Record the operations on ``tensor`` too (a constant, not a variable)."""
        for t in tensor if isinstance(tensor, (list, tuple)) else [tensor]:
            if not t.requires_grad:
                t.requires_grad_(True)
                self._watched.append(t)
            self._nodes[id(t)] = graph.get_gradient_edge(t).node

    def _on_tape(self, node):
        """Was ``node``'s operation done inside the block?"""
        start, end = self._span
        return start < node.seq and (end is None or node.seq < end)

    def gradient(self, target, sources, output_gradients=None):
        """d target / d source for each of ``sources`` (a tensor or a list), summed over
        the target's elements; ``None`` where the target does not depend on a source (or
        only through operations outside the block)."""
        if self._span is None:
            raise RuntimeError("gradient() needs a tape that recorded something: use "
                               "`with GradientTape() as tape:` around the computation")
        if self._used and not self.persistent:
            raise RuntimeError(ONE_SET_ONLY)
        self._used = True
        single = isinstance(sources, Tensor)
        sources = [sources] if single else list(sources)
        grads = {id(s): None for s in sources}
        root = target.grad_fn
        if root is not None and self._on_tape(root):
            wanted = {self._node_of(s): s for s in sources if self._watches(s)}
            # The tape's operations only: one made before the block passes nothing back.
            order = [node for node in graph.execution_order([root])
                     if type(node) is AccumulateGrad or self._on_tape(node)]
            seed = (np.ones(target.shape, target.dtype.numpy) if output_gradients is None
                    else output_gradients.detach().numpy())
            for node, grad in graph.propagate(order, [root], [seed]):
                if node in wanted:
                    grads[id(wanted[node])] = from_numpy(np.array(grad))
        result = [grads[id(s)] for s in sources]
        return result[0] if single else result

    def _watches(self, tensor):
        """A tensor passed to watch(), or a trainable variable (one that requires grad)."""
        return id(tensor) in self._nodes or (self.watch_accessed_variables
                                              and tensor.requires_grad)

    def _node_of(self, tensor):
        node = self._nodes.get(id(tensor))
        return node if node is not None else graph.get_gradient_edge(tensor).node


def _now():
    """A creation number between the operations before and after this moment: nodes are
    numbered as they are made (``Node.seq``), so a new, unused node's number is one."""
    return Node(()).seq
