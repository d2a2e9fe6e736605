"""Programs of ``test_programs_next_more.py`` (issue 28) on sequences: PyTorch's
word-language model (LSTM), its seq2seq-with-attention tutorial and Karpathy's minGPT. Each
is a function of ``torch`` (the library it runs on) and ``init`` (see the test's
``harness``), written as its authors write it; random draws are numpy's (below)."""

import math

import numpy as np

R = np.random.default_rng(2029)


# ---------------------------------------------------------------- PyTorch examples: word LM
# examples/word_language_model: RNNModel (Embedding, LSTM, Dropout, Linear decoder with tied
# weights, its init_weights and init_hidden), main.py's batchify, get_batch,
# repackage_hidden, train() with clip_grad_norm_ and the manual SGD update
# p.data.add_(p.grad, alpha=-lr), and evaluate(). Vocabulary 12, 2 layers of 8, bptt 5;
# dropout 0 (a mask is each library's own draw); the corpus is numpy's draw.
CORPUS = R.integers(0, 12, 61)


def word_language_model(torch, init):
    nn = torch.nn  # (import torch.nn as nn)
    F = torch.nn.functional  # (import torch.nn.functional as F)

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5,
                     tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ['LSTM', 'GRU']:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                if nhid != ninp:
                    raise ValueError('When using the tied flag, nhid must be equal to emsize')
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type = rnn_type
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == 'LSTM':
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data

    bptt = 5

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    corpus = torch.tensor(CORPUS)
    train_data = batchify(corpus[:48], 3)
    val_data = batchify(corpus[48:], 2)
    ntokens = 12
    model = init("lm", RNNModel('LSTM', ntokens, 8, 8, 2, 0.0, tie_weights=True))
    criterion = nn.NLLLoss()
    lr, clip = 20.0, 0.25
    out = {"loss": [], "grad norm": []}

    model.train()
    hidden = model.init_hidden(3)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        out["grad norm"].append(torch.nn.utils.clip_grad_norm_(model.parameters(), clip).item())
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        out["loss"].append(loss.item())
    out["encoder grad"] = model.encoder.weight.grad

    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(2)
    with torch.no_grad():
        for i in range(0, val_data.size(0) - 1, bptt):
            data, targets = get_batch(val_data, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    out["val loss"] = total_loss / (len(val_data) - 1)
    out["val ppl"] = math.exp(out["val loss"])
    return out


# ---------------------------------------------------------------- PyTorch tutorial: seq2seq
# "NLP From Scratch: Translation with a Sequence to Sequence Network and Attention":
# EncoderRNN (Embedding, GRU batch_first, Dropout), BahdanauAttention (Wa, Ua, Va),
# AttnDecoderRNN (teacher forcing, torch.cat, bmm, log_softmax), train_epoch with NLLLoss and
# two Adam optimizers, then greedy decoding with topk. Vocabularies of 10 and 11 words,
# sequences of 6, hidden 8, dropout 0; the sentence pairs are numpy's draw.
SOURCE = R.integers(2, 10, (6, 6))
TARGET = np.concatenate([R.integers(2, 11, (6, 5)), np.ones((6, 1), np.int64)], 1)


def seq2seq_attention(torch, init):
    nn, optim = torch.nn, torch.optim  # (import torch.nn as nn; from torch import optim)
    F = torch.nn.functional  # (import torch.nn.functional as F)
    SOS_token, MAX_LENGTH, dropout_p = 0, 6, 0.0

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    def train_epoch(batches, encoder, decoder, encoder_optimizer, decoder_optimizer,
                    criterion):
        total_loss = 0
        for input_tensor, target_tensor in batches:
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(
                decoder_outputs.view(-1, decoder_outputs.size(-1)),
                target_tensor.view(-1)
            )
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        return total_loss / len(batches)

    hidden_size = 8
    encoder = init("encoder", EncoderRNN(10, hidden_size, dropout_p))
    decoder = init("decoder", AttnDecoderRNN(hidden_size, 11, dropout_p))
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    batches = [(torch.tensor(SOURCE[i:i + 3]), torch.tensor(TARGET[i:i + 3])) for i in (0, 3)]
    out = {"epoch loss": [train_epoch(batches, encoder, decoder, encoder_optimizer,
                                      decoder_optimizer, criterion) for _ in range(3)]}
    out["attention grad"] = decoder.attention.Va.weight.grad
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(torch.tensor(SOURCE[:2]))
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        out["decoded ids"] = topi.squeeze()
        out["attentions"] = decoder_attn
    return out


# ---------------------------------------------------------------- Karpathy's minGPT
# mingpt/model.py (NewGELU, CausalSelfAttention with its tril mask buffer and masked_fill,
# Block, GPT with ModuleDict/ModuleList, _init_weights and the scaled c_proj init,
# configure_optimizers' decay/no-decay groups for AdamW, forward with cross_entropy and
# ignore_index=-1, generate greedily with top_k) and trainer.py's step with
# clip_grad_norm_. n_layer 2, n_head 2, n_embd 8, block 7, vocabulary 7; the "sort" demo's
# data drawn by numpy.
SORT = R.integers(0, 3, (3, 4, 4))


def min_gpt(torch, init):
    nn = torch.nn  # (import torch.nn as nn)
    F = torch.nn.functional  # (from torch.nn import functional as F)

    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                               (x + 0.044715 * torch.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout = nn.Dropout(config.attn_pdrop)
            self.resid_dropout = nn.Dropout(config.resid_pdrop)
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size,
                                                               config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            y = self.resid_dropout(self.c_proj(y))
            return y

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = nn.ModuleDict(dict(
                c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
                act=NewGELU(),
                dropout=nn.Dropout(config.resid_pdrop),
            ))
            m = self.mlp
            self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlpf(self.ln_2(x))
            return x

    class Config:
        n_layer, n_head, n_embd, vocab_size, block_size = 2, 2, 8, 7, 7
        embd_pdrop = resid_pdrop = attn_pdrop = 0.0

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.block_size = config.block_size
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.embd_pdrop),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                torch.nn.init.zeros_(module.bias)
                torch.nn.init.ones_(module.weight)

        def configure_optimizers(self, train_config):
            decay = set()
            no_decay = set()
            whitelist_weight_modules = (torch.nn.Linear, )
            blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
            for mn, m in self.named_modules():
                for pn, p in m.named_parameters():
                    fpn = '%s.%s' % (mn, pn) if mn else pn
                    if pn.endswith('bias'):
                        no_decay.add(fpn)
                    elif pn.endswith('weight') and isinstance(m, whitelist_weight_modules):
                        decay.add(fpn)
                    elif pn.endswith('weight') and isinstance(m, blacklist_weight_modules):
                        no_decay.add(fpn)
            param_dict = {pn: p for pn, p in self.named_parameters()}
            inter_params = decay & no_decay
            union_params = decay | no_decay
            assert len(inter_params) == 0
            assert len(param_dict.keys() - union_params) == 0
            optim_groups = [
                {"params": [param_dict[pn] for pn in sorted(list(decay))],
                 "weight_decay": train_config["weight_decay"]},
                {"params": [param_dict[pn] for pn in sorted(list(no_decay))],
                 "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(optim_groups, lr=train_config["learning_rate"],
                                     betas=train_config["betas"])

        def forward(self, idx, targets=None):
            b, t = idx.size()
            assert t <= self.block_size
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                _, idx_next = torch.topk(probs, k=1, dim=-1)  # (do_sample=False)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    model = init("gpt", GPT(Config()))
    optimizer = model.configure_optimizers(dict(weight_decay=0.1, learning_rate=5e-3,
                                                betas=(0.9, 0.95)))
    out = {"loss": []}
    for step in range(3):
        inp = SORT[step]                         # the sort demo: a sequence, then it sorted
        cat = np.concatenate([inp, np.sort(inp, 1)], 1)
        x = torch.tensor(cat[:, :-1])
        y = torch.tensor(cat[:, 1:].copy())
        y[:, :3] = -1                            # only the sorted half is predicted
        logits, loss = model(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        out["loss"].append(loss.item())
    out["wte grad"] = model.transformer.wte.weight.grad
    out["c_attn grad"] = model.transformer.h[0].attn.c_attn.weight.grad
    out["generated"] = model.generate(torch.tensor(SORT[0][:2]), 2, top_k=3)
    return out
