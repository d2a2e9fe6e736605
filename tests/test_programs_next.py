"""The programs a course graduate runs next, run with ``import minigrad as torch``: each
program (in ``programs_next.py``) is a third-party PyTorch program (Dive into Deep
Learning's builders' guide and CNN chapters, which write every model with lazy layers;
PyTorch's "Learn the basics" tutorials; its word-embeddings tutorial; in
``programs_next_cnn.py``: AlexNet, VGG, ResNet, TextCNN, a 1-d CNN, a char-RNN), run once with torch
and once with only its imports changed to minigrad; what each prints must be the same text
with the same numbers (at float32 tolerance).

The random draws of the originals (``torch.rand(2, 20)``, the layers' random initial weights)
would differ between the two libraries, so inputs come from numpy (``DATA``) and, after a
model's first call, ``set_weights`` gives every parameter the same deterministic values in
both. Everything else is the program's own code.

A program that stops on minigrad (a missing API) is listed in ``STOPS`` with where it stops;
its test checks that it still stops there, so that closing the gap shows up here.
"""

import contextlib
import io
import re

import numpy as np
import pytest
import torch

import minigrad
import programs_next
import programs_next_cnn
from programs_next import PRELUDE

DATA = {**programs_next.DATA, **programs_next_cnn.DATA}
PROGRAMS = {**programs_next.PROGRAMS, **programs_next_cnn.PROGRAMS}

# Where a program stops on minigrad: (exception type, words of its message). None now:
# d2l_bn_lenet stopped at LazyBatchNorm2d, learn_the_basics at torch.accelerator (issue 28).
STOPS = {}

ADDRESS = re.compile(r" object at 0x[0-9a-f]+")
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[+-]?\d+)?")


def with_minigrad(source):
    """The program with its imports changed, as a user would change them."""
    source = re.sub(r"^import torch$", "import minigrad as torch", source, flags=re.M)
    source = re.sub(r"^import torch\.(\S+) as", r"import minigrad.\1 as", source, flags=re.M)
    return re.sub(r"^from torch(\S*) import", r"from minigrad\1 import", source, flags=re.M)


def run(source, lib):
    """What the program prints, run with ``lib`` as ``torch``."""
    names = {"DATA": DATA, "torch": lib}
    exec(compile(PRELUDE, "<prelude>", "exec"), names)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "<program>", "exec"), names)
    return printed.getvalue()


def split(text):
    """(the text with each number replaced by #, whitespace runs made one space; the
    numbers). Memory addresses (``<AddBackward0 object at 0x7f...>``) are left out."""
    text = ADDRESS.sub("", text.replace("minigrad", "torch"))
    numbers = [float(n) for n in NUMBER.findall(text)]
    return " ".join(NUMBER.sub("#", text).split()), numbers


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in STOPS])
def test_the_program_prints_what_it_prints_with_pytorch(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = PROGRAMS[name]
    theirs = run(source, torch)
    mine = run(with_minigrad(source), minigrad)
    mine_text, mine_numbers = split(mine)
    theirs_text, theirs_numbers = split(theirs)
    assert mine_text == theirs_text, f"minigrad printed:\n{mine}\ntorch printed:\n{theirs}"
    np.testing.assert_allclose(mine_numbers, theirs_numbers, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", list(STOPS))
def test_the_program_still_stops_where_it_stopped(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    error, words = STOPS[name]
    with pytest.raises(error, match=words):
        run(with_minigrad(PROGRAMS[name]), minigrad)
