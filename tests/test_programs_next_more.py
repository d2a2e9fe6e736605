"""The next programs a course graduate runs (issue 28, "go beyond this list"), each written
as its authors write it and run twice: with ``torch`` and with ``minigrad`` in its place
(the import changed, nothing else). Tiny sizes and a few steps; data from scikit-learn's
bundled digits or seeded numpy (no downloads).

Each program is a function of ``torch`` (the library it runs on): its import lines become
attribute reads (``nn = torch.nn  # (import torch.nn as nn)``), so that they name the library
passed in. minigrad draws its random numbers with numpy, so seeded inits cannot match PyTorch's: each
model, once built, goes through ``init`` (``harness``), which records the torch model's
``state_dict`` and loads it into the minigrad one. Random draws inside a program (noise,
the reparameterisation's epsilon, dropout masks) are replaced by seeded numpy arrays or
dropout 0. Each test compares what the program computes (losses per step, gradients,
outputs) at float32 tolerance: training lets rounding grow a little, never more.

The programs (what the report of issue 28 names): PyTorch's examples DCGAN, VAE, the
word-language model (LSTM) and the seq2seq-with-attention tutorial; a convolutional
autoencoder with ConvTranspose2d and Upsample; Karpathy's minGPT and makemore part 5
(WaveNet); Dive into Deep Learning's Transformer encoder (11.7, 11.5, 11.6, 11.3).
"""

import math

import numpy as np
import torch
from sklearn.datasets import load_digits

import minigrad

R = np.random.default_rng(2028)
DIGITS = load_digits()
IMAGES = (DIGITS.images[:16] / 16.0).astype(np.float32)  # (16, 8, 8) in [0, 1]
LABELS = DIGITS.target[:16].astype(np.int64)


def harness(program):
    """(what the program returns with torch, with minigrad, the largest relative difference)."""
    states = {}

    def record(name, model):
        if isinstance(model, list):  # a program's own list of parameter tensors
            states[name] = [p.detach().numpy().copy() for p in model]
        else:
            states[name] = {k: v.detach().numpy().copy() for k, v in
                            model.state_dict().items()}
        return model

    def load(name, model):
        if isinstance(model, list):
            with minigrad.no_grad():
                for p, value in zip(model, states[name], strict=True):
                    p.copy_(minigrad.tensor(value))
        else:
            model.load_state_dict({k: minigrad.tensor(v) for k, v in states[name].items()})
        return model

    theirs = program(torch, record)
    mine = program(minigrad, load)
    return theirs, mine


def numbers(value):
    if isinstance(value, (list, tuple)):
        return np.concatenate([numbers(v) for v in value]) if value else np.zeros(0)
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.asarray(value, dtype=np.float64).ravel()


def largest_relative_difference(theirs, mine):
    """Over every value the program returned: |mine - theirs| / (|theirs| + 1e-3)."""
    worst = 0.0
    for key in theirs:
        a, b = numbers(theirs[key]), numbers(mine[key])
        assert a.shape == b.shape, key
        if a.size:
            worst = max(worst, float(np.max(np.abs(a - b) / (np.abs(a) + 1e-3))))
    return worst


def compare(program, rtol=2e-4):
    theirs, mine = harness(program)
    assert theirs.keys() == mine.keys()
    for key in theirs:
        np.testing.assert_allclose(numbers(mine[key]), numbers(theirs[key]), rtol=rtol,
                                   atol=rtol * 0.1, err_msg=key)
    return largest_relative_difference(theirs, mine)


# ---------------------------------------------------------------- PyTorch examples: DCGAN
# examples/dcgan/main.py: Generator (ConvTranspose2d, BatchNorm2d, ReLU, Tanh) and
# Discriminator (Conv2d, LeakyReLU, BatchNorm2d, Sigmoid), weights_init, BCELoss, Adam with
# betas (0.5, 0.999), the two-step update; here at 16x16 (the digits, upsampled bilinearly),
# nz=8, ngf=ndf=4, three iterations. The noise is drawn by numpy.
NOISE = R.standard_normal((3, 8, 8, 1, 1)).astype(np.float32)


def dcgan(torch, init):
    nn = torch.nn  # (import torch.nn as nn)
    nz, ngf, ndf, nc = 8, 4, 4, 1

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            torch.nn.init.normal_(m.weight, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            torch.nn.init.normal_(m.weight, 1.0, 0.02)
            torch.nn.init.zeros_(m.bias)

    class Generator(nn.Module):
        def __init__(self):
            super(Generator, self).__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
                nn.Tanh()
            )

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super(Discriminator, self).__init__()
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
                nn.Sigmoid()
            )

        def forward(self, input):
            output = self.main(input)
            return output.view(-1, 1).squeeze(1)

    netG = Generator()
    netG.apply(weights_init)
    netG = init("G", netG)
    netD = Discriminator()
    netD.apply(weights_init)
    netD = init("D", netD)
    criterion = nn.BCELoss()
    real_label, fake_label = 1, 0
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    images = torch.nn.functional.interpolate(torch.tensor(IMAGES).unsqueeze(1) * 2 - 1,
                                             size=(16, 16), mode='bilinear',
                                             align_corners=False)
    out = {"errD": [], "errG": [], "D_x": [], "D_G_z1": [], "D_G_z2": []}
    for i in range(3):
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = images[i * 4:(i + 1) * 4]
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.tensor(NOISE[i][:batch_size])  # torch.randn(batch_size, nz, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G network: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        for key, value in (("errD", errD.item()), ("errG", errG.item()), ("D_x", D_x),
                           ("D_G_z1", D_G_z1), ("D_G_z2", D_G_z2)):
            out[key].append(value)
    out["G grad"] = [p.grad for p in netG.parameters()]
    out["D running_var"] = netD.main[3].running_var
    out["fake"] = netG(torch.tensor(NOISE[0][:2]))
    return out


def test_dcgan():
    compare(dcgan)


# ---------------------------------------------------------------- PyTorch examples: VAE
# examples/vae/main.py on the 8x8 digits (64 pixels, 32 hidden, 4 latent): fc1, fc21, fc22,
# fc3, fc4, reparameterize (its torch.randn_like replaced by numpy's draws), the loss
# BCE(reduction='sum') + KLD, Adam(lr=1e-3), three batches of train(), then test()'s
# reconstruction under no_grad.
EPS = R.standard_normal((4, 8, 4)).astype(np.float32)


def vae(torch, init):
    nn, optim = torch.nn, torch.optim  # (from torch import nn, optim)
    F = torch.nn.functional  # (from torch.nn import functional as F)

    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(64, 32)
            self.fc21 = nn.Linear(32, 4)
            self.fc22 = nn.Linear(32, 4)
            self.fc3 = nn.Linear(4, 32)
            self.fc4 = nn.Linear(32, 64)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std  # eps = torch.randn_like(std)

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 64))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    model = init("vae", VAE())
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    data_all = torch.tensor(IMAGES)
    out = {"loss": []}
    model.train()
    for batch_idx in range(3):
        data = data_all[batch_idx * 4:(batch_idx + 1) * 4]
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, torch.tensor(EPS[batch_idx][:4]))
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        out["loss"].append(loss.item())
        optimizer.step()
    out["fc1 grad"] = model.fc1.weight.grad
    model.eval()
    test_loss = 0
    with torch.no_grad():
        data = data_all[12:16]
        recon_batch, mu, logvar = model(data, torch.tensor(EPS[3][:4]))
        test_loss += loss_function(recon_batch, data, mu, logvar).item()
        n = min(data.size(0), 8)
        comparison = torch.cat([data.view(4, 1, 8, 8)[:n],
                                recon_batch.view(4, 1, 8, 8)[:n]])
    out["test_loss"] = test_loss
    out["comparison"] = comparison
    return out


def test_vae():
    compare(vae)


# ---------------------------------------------------------------- a convolutional autoencoder
# The autoencoder of many tutorials after a first course: Conv2d with stride 2 down,
# ConvTranspose2d (output_padding) and Upsample up, Sigmoid, MSELoss, Adam, four epochs on
# 16 digits with a DataLoader (no shuffling).
def conv_autoencoder(torch, init):
    nn = torch.nn  # (import torch.nn as nn)
    DataLoader = torch.utils.data.DataLoader  # (from torch.utils.data import DataLoader, ...)
    TensorDataset = torch.utils.data.TensorDataset

    class Autoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(
                nn.Conv2d(1, 4, 3, stride=2, padding=1),  # 8x8 -> 4x4
                nn.ReLU(),
                nn.Conv2d(4, 8, 3, stride=2, padding=1),  # -> 2x2
                nn.ReLU())
            self.decoder = nn.Sequential(
                nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),  # -> 4x4
                nn.ReLU(),
                nn.Upsample(scale_factor=2, mode='nearest'),  # -> 8x8
                nn.Conv2d(4, 1, 3, padding=1),
                nn.Sigmoid())

        def forward(self, x):
            return self.decoder(self.encoder(x))

    model = init("ae", Autoencoder())
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    dataset = TensorDataset(torch.tensor(IMAGES).unsqueeze(1))
    loader = DataLoader(dataset, batch_size=8, shuffle=False)
    out = {"loss": []}
    for epoch in range(4):
        for (img,) in loader:
            recon = model(img)
            loss = criterion(recon, img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        out["loss"].append(loss.item())
    out["decoder grad"] = model.decoder[0].weight.grad
    with torch.no_grad():
        out["reconstruction"] = model(torch.tensor(IMAGES[:2]).unsqueeze(1))
    return out


def test_conv_autoencoder():
    compare(conv_autoencoder)


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


def test_word_language_model():
    compare(word_language_model)


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


def test_seq2seq_attention():
    compare(seq2seq_attention)


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


def test_min_gpt():
    compare(min_gpt)


# ---------------------------------------------------------------- Karpathy's makemore, part 5
# "Building makemore Part 5: Building a WaveNet": the hand-written "torchified" layers
# (Linear, BatchNorm1d over (0, 1) with the unbiased var, Tanh, Embedding,
# FlattenConsecutive, Sequential), build_dataset with block_size 8, the hierarchical model,
# the last layer scaled by 0.1 under no_grad, the training loop (p.grad = None, the manual
# update p.data += -lr * p.grad), eval mode and split_loss. n_embd 6, n_hidden 12, on a few
# names; the minibatch indices are numpy's draw.
WORDS = ("emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily "
         "elizabeth mila ella avery sofia camila aria scarlett").split()
BATCHES = R.integers(0, 120, (4, 16))


def makemore_wavenet(torch, init):
    F = torch.nn.functional  # (import torch.nn.functional as F)

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            if self.training:
                if x.ndim == 2:
                    dim = 0
                elif x.ndim == 3:
                    dim = (0, 1)
                xmean = x.mean(dim, keepdim=True)
                xvar = x.var(dim, keepdim=True)
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim))

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    words = list(WORDS)
    chars = sorted(list(set(''.join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    vocab_size = len(stoi)
    block_size = 8

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + '.':
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]
        X = torch.tensor(X)
        Y = torch.tensor(Y)
        return X, Y

    Xtr, Ytr = build_dataset(words[:17])
    Xdev, Ydev = build_dataset(words[17:])
    n_embd, n_hidden = 6, 12
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = init("makemore", model.parameters())
    for p in parameters:
        p.requires_grad = True

    out = {"loss": []}
    for i in range(4):
        ix = torch.tensor(BATCHES[i] % Xtr.shape[0])  # torch.randint(0, Xtr.shape[0], ...)
        Xb, Yb = Xtr[ix], Ytr[ix]
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 150000 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        out["loss"].append(loss.item())
    out["grads"] = [p.grad for p in parameters]
    out["running var"] = model.layers[3].running_var

    for layer in model.layers:
        layer.training = False

    @torch.no_grad()
    def split_loss(split):
        x, y = {'train': (Xtr, Ytr), 'val': (Xdev, Ydev)}[split]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        return loss.item()

    out["train"], out["val"] = split_loss('train'), split_loss('val')
    return out


def test_makemore_wavenet():
    compare(makemore_wavenet)


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


def test_d2l_transformer_encoder():
    compare(d2l_transformer_encoder)
