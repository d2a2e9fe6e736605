"""The next programs a course graduate runs (issue 28, "go beyond this list"), each written
as its authors write it and run twice: with ``torch`` and with ``minigrad`` in its place
(the import changed, nothing else). Tiny sizes and a few steps; data from scikit-learn's
bundled digits or seeded numpy (no downloads).

Each program (in ``programs_next_generative.py``, ``programs_next_sequences.py`` and
``programs_next_transformers.py``) is a function of ``torch``, the library it runs on: its
import lines become attribute reads (``nn = torch.nn  # (import torch.nn as nn)``), so that
they name the library passed in. minigrad draws its random numbers with numpy, so seeded
inits cannot match PyTorch's: each model, once built, goes through ``init`` (``harness``),
which records the torch model's ``state_dict`` and loads it into the minigrad one. Random
draws inside a program (noise, the reparameterisation's epsilon, minibatch indices, dropout
masks) are replaced by seeded numpy arrays or dropout 0. Each test compares what the program
computes (losses per step, gradients, outputs) at float32 tolerance: training lets rounding
grow a little, never more.

The programs: PyTorch's examples DCGAN, VAE and the word-language model (LSTM), its
seq2seq-with-attention and nn.Transformer language-modeling tutorials; a convolutional
autoencoder with ConvTranspose2d and Upsample; Karpathy's minGPT and makemore part 5
(WaveNet); Dive into Deep Learning's Transformer encoder (11.3, 11.5, 11.6, 11.7) and
transposed convolution (14.10).
"""

import numpy as np
import torch

import minigrad
from programs_next_generative import (conv_autoencoder, d2l_transposed_convolution, dcgan,
                                      makemore_wavenet, vae)
from programs_next_sequences import min_gpt, seq2seq_attention, word_language_model
from programs_next_transformers import d2l_transformer_encoder, transformer_tutorial


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


def test_dcgan():
    compare(dcgan)


def test_vae():
    compare(vae)


def test_conv_autoencoder():
    compare(conv_autoencoder)


def test_word_language_model():
    compare(word_language_model)


def test_seq2seq_attention():
    compare(seq2seq_attention)


def test_min_gpt():
    compare(min_gpt)


def test_makemore_wavenet():
    compare(makemore_wavenet)


def test_d2l_transformer_encoder():
    compare(d2l_transformer_encoder)


def test_transformer_tutorial():
    compare(transformer_tutorial)


def test_d2l_transposed_convolution():
    compare(d2l_transposed_convolution)
