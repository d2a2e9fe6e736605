"""Programs of ``test_programs_next_more.py`` (issue 28) built on attention layers: Dive
into Deep Learning's Transformer encoder and PyTorch's "Language Modeling with
nn.Transformer" tutorial. Each is a function of ``torch`` (the library it runs on) and
``init`` (see the test's ``harness``), written as its authors write it; random draws are
numpy's (below)."""

import math

import numpy as np

from programs_next_sequences import CORPUS

R = np.random.default_rng(2030)


# ---------------------------------------------------------------- D2L: the Transformer encoder
# Dive into Deep Learning 11.3 (masked_softmax with sequence_mask's X[~mask] = value,
# DotProductAttention with bmm), 11.5 (MultiHeadAttention with LazyLinear, transpose_qkv,
# repeat_interleave of valid_lens), 11.6 (PositionalEncoding: slices assigned in place) and
# 11.7 (PositionWiseFFN, AddNorm, TransformerEncoderBlock, TransformerEncoder with
# add_module), its shape checks, then a classifier on the encoder (mean pooling) trained
# three Adam steps. Dropout 0; tokens and valid lengths drawn by numpy.
TOKENS = R.integers(0, 20, (4, 7))
VALID = np.array([3, 7, 5, 2])


def d2l_transformer_encoder(torch, init):
    nn = torch.nn  # (from torch import nn)

    def masked_softmax(X, valid_lens):
        """Perform softmax operation by masking elements on the last axis."""
        def _sequence_mask(X, valid_len, value=0):
            maxlen = X.size(1)
            mask = torch.arange((maxlen), dtype=torch.float32,
                                device=X.device)[None, :] < valid_len[:, None]
            X[~mask] = value
            return X

        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        else:
            shape = X.shape
            if valid_lens.dim() == 1:
                valid_lens = torch.repeat_interleave(valid_lens, shape[1])
            else:
                valid_lens = valid_lens.reshape(-1)
            X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
            return nn.functional.softmax(X.reshape(shape), dim=-1)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

        def forward(self, queries, keys, values, valid_lens):
            queries = self.transpose_qkv(self.W_q(queries))
            keys = self.transpose_qkv(self.W_k(keys))
            values = self.transpose_qkv(self.W_v(values))
            if valid_lens is not None:
                valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            output_concat = self.transpose_output(output)
            return self.W_o(output_concat)

        def transpose_qkv(self, X):
            X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
            X = X.permute(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def transpose_output(self, X):
            X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
            X = X.permute(0, 2, 1, 3)
            return X.reshape(X.shape[0], X.shape[1], -1)

    class PositionalEncoding(nn.Module):
        def __init__(self, num_hiddens, dropout, max_len=1000):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.P = torch.zeros((1, max_len, num_hiddens))
            X = torch.arange(max_len, dtype=torch.float32).reshape(
                -1, 1) / torch.pow(10000, torch.arange(
                    0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
            self.P[:, :, 0::2] = torch.sin(X)
            self.P[:, :, 1::2] = torch.cos(X)

        def forward(self, X):
            X = X + self.P[:, :X.shape[1], :].to(X.device)
            return self.dropout(X)

    class PositionWiseFFN(nn.Module):
        def __init__(self, ffn_num_hiddens, ffn_num_outputs):
            super().__init__()
            self.dense1 = nn.LazyLinear(ffn_num_hiddens)
            self.relu = nn.ReLU()
            self.dense2 = nn.LazyLinear(ffn_num_outputs)

        def forward(self, X):
            return self.dense2(self.relu(self.dense1(X)))

    class AddNorm(nn.Module):
        def __init__(self, norm_shape, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.ln = nn.LayerNorm(norm_shape)

        def forward(self, X, Y):
            return self.ln(self.dropout(Y) + X)

    class TransformerEncoderBlock(nn.Module):
        def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
            super().__init__()
            self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
            self.addnorm1 = AddNorm(num_hiddens, dropout)
            self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
            self.addnorm2 = AddNorm(num_hiddens, dropout)

        def forward(self, X, valid_lens):
            Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
            return self.addnorm2(Y, self.ffn(Y))

    class TransformerEncoder(nn.Module):
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks,
                     dropout, use_bias=False):
            super().__init__()
            self.num_hiddens = num_hiddens
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
            self.blks = nn.Sequential()
            for i in range(num_blks):
                self.blks.add_module("block" + str(i), TransformerEncoderBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias))

        def forward(self, X, valid_lens):
            X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
            self.attention_weights = [None] * len(self.blks)
            for i, blk in enumerate(self.blks):
                X = blk(X, valid_lens)
                self.attention_weights[i] = blk.attention.attention.attention_weights
            return X

    out = {}
    valid_lens = torch.tensor([3, 2])
    X = torch.ones((2, 100, 24))
    encoder_blk = TransformerEncoderBlock(24, 48, 8, 0.5)
    encoder_blk.eval()
    out["block shape"] = list(encoder_blk(X, valid_lens).shape)
    encoder = TransformerEncoder(200, 24, 48, 8, 2, 0.5)
    out["encoder shape"] = list(encoder(torch.ones((2, 100), dtype=torch.long),
                                        valid_lens).shape)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = TransformerEncoder(20, 8, 16, 2, 2, 0.0)
            self.head = nn.LazyLinear(3)

        def forward(self, X, valid_lens):
            return self.head(self.encoder(X, valid_lens).mean(dim=1))

    net = Classifier()
    tokens, lens = torch.tensor(TOKENS), torch.tensor(VALID)
    net(tokens, lens)  # (the lazy layers take their shapes)
    net = init("classifier", net)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    out["loss"] = []
    for step in range(3):
        loss = nn.functional.cross_entropy(net(tokens, lens), torch.tensor([0, 1, 2, 1]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out["loss"].append(loss.item())
    out["W_q grad"] = net.encoder.blks[0].attention.W_q.weight.grad
    out["attention"] = net.encoder.attention_weights[1]
    return out


# ---------------------------------------------------------------- PyTorch tutorial: nn.Transformer
# "Language Modeling with nn.Transformer and torchtext": TransformerModel (Embedding scaled
# by sqrt(d_model), PositionalEncoding as a registered buffer, TransformerEncoderLayer,
# TransformerEncoder, the causal mask of nn.Transformer.generate_square_subsequent_mask,
# init_weights with .data.uniform_), batchify/get_batch, train() with CrossEntropyLoss, SGD
# lr 5.0, clip_grad_norm_(0.5), StepLR, and evaluate(). ntokens 12, d_model 8, 2 heads,
# d_hid 16, 2 layers, bptt 5, dropout 0; the corpus is numpy's draw (CORPUS).
def transformer_tutorial(torch, init):
    nn = torch.nn  # (from torch import nn, Tensor)
    TransformerEncoder = torch.nn.TransformerEncoder  # (from torch.nn import ...)
    TransformerEncoderLayer = torch.nn.TransformerEncoderLayer

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)

        def forward(self, src, src_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            if src_mask is None:
                src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
            output = self.transformer_encoder(src, src_mask)
            output = self.linear(output)
            return output

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0)]
            return self.dropout(x)

    def batchify(data, bsz):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data

    bptt = 5

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].reshape(-1)
        return data, target

    corpus = torch.tensor(CORPUS)
    train_data, val_data = batchify(corpus[:48], 3), batchify(corpus[48:], 2)
    ntokens = 12
    model = init("transformer", TransformerModel(ntokens, 8, 2, 16, 2, 0.0))
    criterion = nn.CrossEntropyLoss()
    lr = 5.0
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    out = {"loss": [], "lr": []}
    for epoch in range(2):
        model.train()
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            loss = criterion(output_flat, targets)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            out["loss"].append(loss.item())
        out["lr"].append(scheduler.get_last_lr()[0])
        scheduler.step()
    out["in_proj grad"] = model.transformer_encoder.layers[0].self_attn.in_proj_weight.grad
    model.eval()
    total_loss = 0.
    with torch.no_grad():
        for i in range(0, val_data.size(0) - 1, bptt):
            data, targets = get_batch(val_data, i)
            seq_len = data.size(0)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            total_loss += seq_len * criterion(output_flat, targets).item()
    out["val loss"] = total_loss / (len(val_data) - 1)
    return out
