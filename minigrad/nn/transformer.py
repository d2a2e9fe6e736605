"""Attention and the Transformer encoder, as in ``torch.nn``:
``nn.MultiheadAttention`` (``F.multi_head_attention_forward``'s computation, its packed
in-projection, masks and head-averaged weights), ``nn.TransformerEncoderLayer``,
``nn.TransformerEncoder`` and ``nn.Transformer.generate_square_subsequent_mask`` (the
course's "next programs": PyTorch's "Language Modeling with nn.Transformer" tutorial and
the word-language model's TransformerModel). Everything is composed of recorded ops
(linear, bmm, softmax, masked_fill), so gradients, double backward and forward mode come
from theirs; PyTorch's fused fast path (eval mode) computes the same numbers up to rounding.
"""

import copy
import math

from .. import creation, dtypes
from ..graph import no_grad
from ..tensor_device import check_device
from . import functional as F
from . import init
from .layers import Dropout, Linear, ModuleList
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter

__all__ = ["MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "Transformer", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention's ``out_proj`` (a Linear; the name is in its
    repr)."""


def _as_additive(mask, dtype, name):
    """A boolean mask (True: not allowed) as 0 / -inf to add to the scores; a float mask as
    it is."""
    if mask is None:
        return None
    if mask.dtype == dtypes.bool_:
        return creation.zeros(*mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads of embed_dim / num_heads features each: queries,
    keys and values projected by ``in_proj_weight`` (3 * embed_dim, embed_dim; Xavier
    uniform, bias zeros), attended per head, joined and projected by ``out_proj``.
    Inputs (L, N, E), or (N, L, E) with ``batch_first``, or unbatched (L, E). Returns
    ``(output, weights)``: the weights averaged over the heads (or per head), or None with
    ``need_weights=False``."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        check_device(device)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("add_bias_kv and add_zero_attn: minigrad's "
                                      "MultiheadAttention has neither; leave them False")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        dtype = dtype or dtypes.float32
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(creation.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(creation.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(creation.empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        self.add_zero_attn = False
        self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _projections(self, query, key, value):
        E = self.embed_dim
        b = self.in_proj_bias
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        if self._qkv_same_embed_dim and key is value and query is key:
            proj = F.linear(query, self.in_proj_weight, b)
            return proj[..., :E], proj[..., E:2 * E], proj[..., 2 * E:]
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                 f"received {query.dim()}-D query tensor")
        if self.batch_first and batched:  # (the same objects stay the same: self-attention)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        if not batched:
            same_kv, same_qk = key is value, query is key
            query = query.unsqueeze(1)
            key = query if same_qk else key.unsqueeze(1)
            value = key if same_kv else value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, "
                                 f"but got {embed_dim}")
        heads, head_dim = self.num_heads, self.head_dim
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask`"
                               " to create this mask.")
        mask = _as_additive(attn_mask, query.dtype, "attn_mask")
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, "
                                       f"but should be {(tgt_len, src_len)}.")
                mask = mask.unsqueeze(0)
            elif tuple(mask.shape) != (bsz * heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but "
                                   f"should be {(bsz * heads, tgt_len, src_len)}.")
        padding = _as_additive(key_padding_mask, query.dtype, "key_padding_mask")
        if padding is not None:
            if tuple(padding.shape) != (bsz, src_len):
                raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, "
                                     f"but got {tuple(padding.shape)}")
            padding = padding.view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1).reshape(
                bsz * heads, 1, src_len)
            mask = padding if mask is None else mask + padding
        q, k, v = self._projections(query, key, value)
        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        scores = (q * math.sqrt(1.0 / float(head_dim))) @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores + mask
        weights = F.softmax(scores, dim=-1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, p=self.dropout)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
        out = out.view(tgt_len, bsz, embed_dim)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.view(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear, activation, dropout, linear), each
    with dropout, a residual connection and LayerNorm (after, or before with
    ``norm_first``), as in "Attention Is All You Need"."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies: each its own parameters),
    applied in turn, then ``norm`` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                         is_causal=bool(is_causal))
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Only ``nn.Transformer.generate_square_subsequent_mask`` (the causal mask programs
    use with TransformerEncoder); the encoder-decoder model itself is not in minigrad."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("nn.Transformer (the encoder-decoder model): minigrad has "
                                  "nn.TransformerEncoderLayer and nn.TransformerEncoder; build "
                                  "the model from those, or use PyTorch")

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz): -inf above the diagonal, 0 on and below it."""
        with no_grad():
            return creation.full((sz, sz), float("-inf"),
                                 dtype=dtype or dtypes.float32).triu(diagonal=1)
