"""Every differentiable op of minigrad, defined in one place each (chapters 2, 3 and 5).

Where an op lives
-----------------
One class per op, named like PyTorch's node for it (``x * y`` makes a ``MulBackward0``),
grouped by family:

* ``op.py``: ``Op``, the base class, and the one path that runs and records every op;
* ``formulas.py``: the few helpers a backward formula needs that arrays and Tensors
  spell differently (``sum_to``, ``where``, ``transpose_last``, ...);
* ``arithmetic.py``: ``+ - * /``, powers and the other operators (``//``, ``%``, ``fmod``,
  ``atan2``, ``lerp``, ``addcmul``, ``addcdiv``);
* ``selection.py``: ops that pick one input per element: ``maximum``, ``minimum``,
  ``clamp``, ``masked_fill``, ``where``;
* ``reductions.py``: ``sum`` and the other ops that reduce many elements to fewer;
* ``softmax.py``: ``softmax``, ``log_softmax``, ``logsumexp``;
* ``sorting.py``: ops that pick elements by position: ``sort``, ``topk``, ``median``,
  ``max``/``min`` along a dim;
* ``shape.py``: reshape/view, (un)squeeze, expand, permute, transpose, stack and cat;
* ``indexing.py``: ``x[key]``, gather, and the ops that pick, place or overwrite elements
  (flip, index_select, take, diagonal, tril, scatter, index_add, ...);
* ``convolution.py``: ``F.conv2d`` (with im2col and col2im, its backward's ops) and ``F.pad``;
* ``pooling.py``: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``;
* ``normalization.py``: ``F.layer_norm`` and ``F.batch_norm``;
* ``embedding.py``: ``F.embedding``;
* ``linalg.py``: matrix products: ``@`` in each shape case, ``addmm`` (behind
  ``nn.Linear``), ``bmm``, ``einsum``;
* ``losses.py``: the fused losses of ``nn.functional`` (``mse_loss``, ``nll_loss``, ...);
* ``pointwise.py``: math functions of one tensor, element by element (``exp``, ``log``,
  ``sin``, ``tanh``, ``sigmoid``, rounding, ``abs``, dtype casts, ``clone``, ...);
* ``activations.py``: ``relu``, ``leaky_relu``, ``gelu`` and the other activation functions.

How to add an op
----------------
Write ``forward`` on numpy arrays (save what backward needs with ``save_for_backward``)
and ``backward`` from the output's gradient and the saved values, in operations arrays and
Tensors both understand, then call ``YourOpBackward0.run((tensor, ...))``::

    class CubeBackward0(Op):
        def forward(self, a):
            self.save_for_backward(a)
            return a ** 3

        def backward(self, grad, a):
            return grad * 3 * a * a

    y = CubeBackward0.run((x,))   # y.grad_fn is <CubeBackward0>

That is all: ``y.backward()`` runs the formula on arrays, and
``autograd.grad(y, x, create_graph=True)`` runs it on Tensors, so it is recorded and
second derivatives come for free.
"""

from .op import Op

__all__ = ["Op"]
