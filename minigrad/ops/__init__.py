"""Every differentiable op of minigrad, defined in one place each (chapters 2, 3 and 5).

Where an op lives
-----------------
One class per op, named like PyTorch's node for it (``x * y`` makes a ``MulBackward0``),
grouped by family. In each family module the classes come first and the public functions
that check arguments and run them follow (``floor(input)`` after ``FloorBackward0``); at
the end, ``FUNCTIONS`` names the functions that are ``minigrad.<name>`` and ``METHODS``
those that are also Tensor methods (``x.floor()`` is ``floor(x)``: ``minigrad.methods``
attaches them). The families:

* ``op.py``: ``Op``, the base class, and the one path that runs and records every op;
* ``formulas.py``: the helpers a backward formula needs that arrays and Tensors spell
  differently (``sum_to``, ``where``, ``sin``, ``sigmoid``, ...);
* ``arithmetic.py``: ``+ - * /``, powers and the other operators (``//``, ``%``, ``fmod``,
  ``atan2``, ``lerp``, ``addcmul``, ``addcdiv``);
* ``pointwise.py``: math functions of one tensor, element by element (``exp``, ``log``,
  ``sin``, ``tanh``, ``sigmoid``, ``abs``, ``logit``, dtype casts, ``clone``, ...);
* ``rounding.py``: ``floor``, ``ceil``, ``round``, ``trunc``, ``frac``, ``nan_to_num``, the
  logical ops, ``bernoulli``: gradients of zeros or steps;
* ``activations.py``: ``relu``, ``leaky_relu``, ``gelu`` and the other activation functions;
* ``selection.py``: ops that pick one input per element: ``maximum``, ``minimum``,
  ``clamp``, ``masked_fill``, ``where``;
* ``reductions.py``: ``sum`` and the other ops that reduce many elements to fewer,
  ``cumprod``;
* ``moments.py``: ``var``, ``std``, ``var_mean``, ``std_mean``;
* ``histograms.py``: ``histc``, ``histogram`` (counting: no gradient);
* ``softmax.py``: ``softmax``, ``log_softmax``, ``logsumexp``;
* ``sorting.py``: ops that pick elements by position: ``sort``, ``topk``, ``median``,
  ``max``/``min`` along a dim;
* ``shape.py``: reshape/view, (un)squeeze, expand, permute, transpose, stack, cat,
  ``movedim``, ``meshgrid``;
* ``indexing.py``: ``x[key]``, gather, and the ops that pick elements (``flip``,
  ``repeat``, ``index_select``, ``take``, ``roll``, ``select``, ``narrow``, ...);
* ``diagonals.py``: ``tril``/``triu``, ``diagonal``, ``diag``, ``trace``;
* ``scatter.py``: ``scatter``, ``scatter_add``, ``index_add``, ``index_fill``;
* ``linalg.py``: matrix products: ``@`` in each shape case, ``addmm`` (behind
  ``nn.Linear``), ``bmm``, ``dot``, ``einsum``;
* ``convolution.py``: ``F.conv2d`` (with im2col and col2im, its backward's ops) and ``F.pad``;
* ``pooling.py``: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``;
* ``normalization.py``: ``F.layer_norm`` and ``F.batch_norm``;
* ``embedding.py``: ``F.embedding``;
* ``inplace.py``: the nodes that in-place changes leave (``fill_``, ``copy_``,
  ``x[key] = v``, a change through a view);
* ``losses.py``: the fused losses of ``nn.functional`` (``mse_loss``, ``nll_loss``, ...).

Four kinds of Tensor method are written as methods, in classes that ``minigrad.methods``
copies onto ``Tensor``: the operators (``x + y``, ``x @ w``, comparisons:
``tensor_arithmetic.py``, where the hot paths of every training step are tuned), shapes
and views (``reshape``, ``view``, ``permute``, ...: ``tensor_shape.py``), ``x[key]`` and
``x[key] = v`` (``tensor_indexing.py``) and the in-place methods (``tensor_inplace.py``).
Each is one call to its class here. Every other op, and every new one, is a function in
its family as above.

How to add an op
----------------
Write ``forward`` on numpy arrays (save what backward needs with ``save_for_backward``)
and ``backward`` from the output's gradient and the saved values, in operations arrays and
Tensors both understand (``op.py`` says what a backward may use), then a public function
that checks its argument and calls ``YourOpBackward0.run((tensor, ...))``, and add its name
to ``FUNCTIONS`` (and ``METHODS``) at the end of the module::

    class LogitBackward0(Op):
        def forward(self, a):
            self.save_for_backward(a)
            return np.log(a / (1 - a))

        def backward(self, grad, a):
            return grad / (a * (1 - a))

    def logit(input):
        check_tensor("logit", input)
        return LogitBackward0.run((input,), input._float_data())

    FUNCTIONS = (..., "logit")       # minigrad.logit(x)
    METHODS = (..., "logit")         # x.logit()

That is all the package needs: ``y.backward()`` runs the formula on arrays, and
``autograd.grad(y, x, create_graph=True)`` runs it on Tensors, so it is recorded and second
derivatives follow, as long as backward keeps the rules in ``op.py`` ("Rules of a
backward"): it may use the saved inputs and the output; a value forward computed is a
constant to autograd, so a backward that uses one under ``create_graph`` raises unless the
op declares it (``constants = (k,)``) or recomputes it from the inputs. Then give the op an
entry in the test registry (``tests/opinfo/``): its sample inputs, the points where its
formula changes, and whether it has a second derivative; the registry checks it against
PyTorch. CONTRIBUTING.md has the whole recipe.
"""

from . import (activations, arithmetic, diagonals, histograms, indexing, linalg, matrices,
               moments, pointwise, reductions, rounding, scatter, selection, shape, softmax,
               sorting)
from .op import Op

__all__ = ["Op", "FAMILIES"]

# The families whose public functions are declared at their end (``FUNCTIONS``, ``METHODS``).
FAMILIES = (activations, arithmetic, diagonals, histograms, indexing, linalg, matrices,
            moments, pointwise, reductions, rounding, scatter, selection, shape, softmax,
            sorting)
