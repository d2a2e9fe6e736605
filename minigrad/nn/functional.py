"""``minigrad.nn.functional`` (``F``): layers and losses as plain functions (chapters 6–7).

``linear`` and most losses are single fused ops with a hand-written backward: one node
instead of several, which is both what PyTorch does and what keeps small models fast. The
losses live in ``loss_functions.py`` and the normalisations in ``_norms.py``; they are all
reachable from here, as in ``torch.nn.functional``.
"""

import math
import warnings

import numpy as np

from .. import creation, dtypes
from ..ops import linalg
from ..ops.op import saving_versions_of
from ..ops.shape import TBackward0
from ..ops import activations
from ..ops.activations import hardswish  # noqa: F401  (F.hardswish)
from ..ops.embedding import EmbeddingBackward0
from .._tensor import wrap
from ..graph import no_grad
from ..random import numpy_rng
from ._arguments import expect_tensor
from ._norms import batch_norm, group_norm, layer_norm  # noqa: F401  (F.batch_norm, ...)
from .conv import (conv1d, conv2d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                   scalar_name)
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d,  # noqa: F401
                      avg_pool2d, max_pool1d, max_pool2d)
from .upsampling import interpolate, upsample  # noqa: F401  (F.interpolate, F.upsample)
from .loss_functions import (  # noqa: F401  (and F.MseLossBackward0, which chapter 7 shows)
    MseLossBackward0, binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
    huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)

__all__ = ["relu", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear",
           "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "dropout", "dropout1d",
           "dropout2d", "one_hot",
           "gelu", "embedding", "batch_norm", "layer_norm", "group_norm",
           "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "hardswish", "conv_transpose1d",
           "conv_transpose2d", "interpolate", "upsample", "scaled_dot_product_attention"]


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where x > 0, ``negative_slope * x`` elsewhere: a ReLU whose negative side keeps
    a small slope, so a unit that only gets negative inputs still gets a gradient."""
    expect_tensor("leaky_relu", "input", 1, input)
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"leaky_relu_cpu" not implemented for {input.dtype}: '
                                  "use a float tensor (x.float())")
    slope = float(negative_slope)
    if not inplace:
        return _leaky_relu(input, slope)
    # In place, as Tensor.relu_ does it: recorded in the graph, or a plain numpy update.
    if input._check_inplace():
        return input._record_in_place(lambda before: _leaky_relu(before, slope, in_place=True))
    a = input._data
    np.copyto(a, a * slope, where=~(a > 0))
    input._bump_version()
    return input


def _leaky_relu(input, slope, in_place=False):
    op = activations.LeakyReluBackward1 if in_place else activations.LeakyReluBackward0
    return op.run((input,), input._data, slope)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


# ------------------------------------------------------------------------------ GELU

def gelu(input, *, approximate="none"):
    """``x * Φ(x)``, Φ the standard normal CDF: a smooth ReLU (about 0 for x << 0, about x
    for x >> 0), the activation of transformers. ``approximate="tanh"`` uses
    ``Φ(x) ≈ (1 + tanh(sqrt(2/π) (x + 0.044715 x³))) / 2`` instead, as GPT-2 did."""
    expect_tensor("gelu", "input", 1, input)
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}: use 'none' or 'tanh'")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh. (got "
                           f"{approximate!r})")
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"GeluKernelImpl" not implemented for {input.dtype}: use a '
                                  "float tensor (x.float())")
    return activations.GeluBackward0.run((input,), a, approximate)


def _implicit_dim(input, dim, name):
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if input.ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return input.softmax(_implicit_dim(input, dim, "softmax"))


def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(_implicit_dim(input, dim, "log_softmax"))


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` as one op (weight has shape (out_features, in_features)).

    A batch (N, in) is one fused node; other shapes are viewed as such a batch and back,
    as PyTorch does (so their grad_fn is ViewBackward0)."""
    expect_tensor("linear", "input", 1, input)
    x, w = input._data, weight._data
    if x.dtype != w.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {input.dtype} and {weight.dtype}: "
            f"convert the input (x.{'double' if w.dtype == np.float64 else 'float'}()) or the "
            "model (model.double() / model.float())")
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        rows = "x".join(map(str, x.shape[:-1])) if x.ndim > 1 else "1"
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1] if x.ndim else 1} "
            f"and {w.shape[1]}x{w.shape[0]}): the layer expects {w.shape[1]} input features "
            f"but the input's last dimension is {x.shape[-1] if x.ndim else 'missing'}")
    if x.dtype == np.bool_ and x.size and w.size:  # (an empty product is PyTorch's too)
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool': a linear "
                                  "layer multiplies numbers; convert the input (x.float())")
    if (x.dtype == np.bool_ and bias is not None and not w.shape[1]
            and math.prod(x.shape[:-1]) and w.shape[0]):
        raise RuntimeError("result type Long can't be cast to the desired output type Bool: "
                           "PyTorch adds the bias to a product over no features as integers; "
                           "convert the input, weight and bias (x.float())")
    if x.ndim != 2:
        rows = math.prod(x.shape[:-1])  # not -1: with no features, -1 would be any number
        batch = linear(input.reshape(rows, w.shape[1]), weight, bias)
        return batch.view(*x.shape[:-1], w.shape[0])
    # As in PyTorch: the weight reaches the product through a transpose node.
    w_t = TBackward0.run_view_of(weight)  # weight.t()
    if bias is None:
        return linalg.MmBackward0.run((input, w_t), x, w_t._data)
    return linalg.AddmmBackward0.run((bias, input, w_t), bias._data, x, w_t._data)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    keep = numpy_rng(generator).random(input.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * wrap((keep * scale).astype(input._data.dtype))


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each channel input[n, c] (a sequence of L values) of (N, C, L)
    or (C, L), with probability p, and scale the rest by 1/(1-p) (training only)."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, inplace).squeeze(0)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each feature map input[n, c] (H, W) of (N, C, H, W), with
    probability p, and scale the rest by 1/(1-p) (training only). As PyTorch, a 3-D input
    is taken as (N, C, L) (with a warning: use dropout1d), and other ranks are allowed with
    a warning."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead.",
                      UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L): use dropout1d for that.", UserWarning, stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def _check_p(p):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace):
    """PyTorch's feature dropout: one draw per (sample, channel), the same for all of the
    channel's positions."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or input.numel() == 0:
        return input
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_name(a.dtype)}: dropout scales by 1/(1-p); use a float "
                           "tensor (x.float())")
    keep = numpy_rng(None).random(a.shape[:2]) >= p
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    mask = wrap((keep * scale).astype(a.dtype).reshape(a.shape[:2] + (1,) * (a.ndim - 2)))
    return input.mul_(mask) if inplace else input * mask


def one_hot(tensor, num_classes=-1):
    """Class indices (int64) -> rows of 0s with a 1 at each index: shape (..., num_classes).
    ``num_classes=-1`` takes one more than the largest index."""
    labels = tensor._data
    if labels.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor, "
                           f"not {tensor.dtype}: convert the labels first (labels.long())")
    if num_classes < 0 and not labels.size:
        raise RuntimeError("Can not infer total number of classes from empty tensor: "
                           "pass num_classes")
    if labels.size and labels.min() < 0:
        raise RuntimeError("Class values must be non-negative. (got "
                           f"{int(labels.min())}: a label of -1 would silently become the "
                           "last class)")
    n = int(labels.max()) + 1 if num_classes < 0 else num_classes
    if labels.size and labels.max() >= n:
        raise RuntimeError(f"Class values must be smaller than num_classes. (got "
                           f"{int(labels.max())} with num_classes={n})")
    return wrap(np.eye(n, dtype=np.int64)[labels])


# ------------------------------------------------------------------------------ embedding

def _padding_row(padding_idx, rows):
    """``padding_idx`` as a row number (-1 is the last row); None stays None."""
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + rows if padding_idx < 0 else padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` (num_embeddings, embedding_dim) that the integers in ``input``
    pick: a tensor of shape ``input.shape + (embedding_dim,)``. The row ``padding_idx``
    gets no gradient, so it stays what it is (zeros in nn.Embedding): the vector of the
    padding that makes short sequences as long as the others. ``max_norm``: each row looked
    up whose ``norm_type``-norm is larger is first scaled down to that norm, in place (as
    PyTorch's ``embedding_renorm_``); ``scale_grad_by_freq``: a row's gradient is divided by
    how often its index occurs in ``input``."""
    if sparse:
        raise NotImplementedError("sparse=True: minigrad has no sparse gradients; use "
                                  "sparse=False (the gradient is a dense tensor)")
    if max_norm is not None:
        _renorm_rows(input, weight, max_norm, norm_type)
    out = _embedding(input, weight, padding_idx)
    if scale_grad_by_freq and out.requires_grad:
        indices = input._data
        _, where, counts = np.unique(indices, return_inverse=True, return_counts=True)
        scale = (1.0 / counts[where.reshape(indices.shape)]).astype(out._data.dtype)[..., None]
        out.register_hook(lambda grad: grad * wrap(scale))
    return out


def _renorm_rows(input, weight, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: the rows ``input`` looks up, scaled in place (no
    gradient) to norm ``max_norm`` where theirs is larger (by max_norm / (norm + 1e-7))."""
    expect_tensor("embedding", "indices", 2, input)
    rows = np.unique(input._data)
    if rows.size == 0:
        return
    with no_grad():
        table = weight._data
        norms = np.linalg.norm(table[rows].astype(np.float64), ord=norm_type, axis=1)
        big = norms > max_norm
        if big.any():
            factors = (max_norm / (norms[big] + 1e-7)).astype(table.dtype)
            picked = wrap(rows[big])
            weight[picked] = weight[picked] * wrap(factors[:, None])


def _embedding(input, weight, padding_idx):
    """``embedding`` without its options: the checks and the lookup."""
    expect_tensor("embedding", "indices", 2, input)
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D: one row per index, got shape "
                           f"{list(weight.shape)}")
    rows = weight.shape[0]
    padding_idx = _padding_row(padding_idx, rows)
    indices = input._data
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead (while checking arguments for "
            "embedding): indices are whole numbers, convert them with .long()")
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        bad = indices[(indices < 0) | (indices >= rows)].flat[0]
        raise IndexError(f"index out of range in self: index {bad} is not a row of the "
                         f"embedding's weight, whose {rows} rows go from 0 to {rows - 1}")
    return saving_versions_of(
        EmbeddingBackward0.run((weight,), indices=indices, padding_idx=padding_idx), input)


from .activations_more import (  # noqa: E402, F401  (F.elu, ...: nn.functional's names)
    cosine_similarity, elu, hardtanh, kl_div, logsigmoid,
                               mish, normalize, pad, relu6, selu, silu, softplus, softsign)
from .activations_more import __all__ as _more_functions  # noqa: E402

__all__ += _more_functions


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims, scale 1/sqrt(E) by default;
    ``attn_mask`` boolean (True: attend) or added; ``is_causal``: each position attends to
    itself and the earlier ones."""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        allowed = creation.ones(L, S, dtype=dtypes.bool_).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == dtypes.bool_:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value
