"""nn.RNN, nn.LSTM, nn.GRU, their cells and nn.utils.rnn against PyTorch.

Each parity test builds the layer in both libraries, copies PyTorch's weights into minigrad's
(by name, through ``load_state_dict``), runs forward and backward on the same input and
compares the outputs, the final states and every gradient (parameters, input, initial
states). The backward pass starts from random weights on every output, so a gradient that
leaves out a time step, a direction or a layer shows. Float64 throughout, so the bound
(1e-10) is far below any mistake yet above summation-order noise.
"""

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.utils.rnn as rnn_module  # the import path, as torch.nn.utils.rnn's
from minigrad import nn
from minigrad.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence,
                                   pad_sequence, unpack_sequence,
                                   unpad_sequence)

TOL = dict(rtol=1e-10, atol=1e-12)


def _np(t):
    return t.detach().numpy()


def _pair(torch, kind, *args, **kwargs):
    """The same layer in both libraries, minigrad's with PyTorch's weights, in float64."""
    theirs = getattr(torch.nn, kind)(*args, **kwargs).double()
    ours = getattr(nn, kind)(*args, **kwargs).double()
    ours.load_state_dict({k: mg.tensor(_np(v)) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _leaves(lib, arrays):
    return [None if a is None else lib.tensor(a, requires_grad=True) for a in arrays]


def _flatten(result):
    """(output, h_n) or (output, (h_n, c_n)) or a cell's h or (h, c) -> a list of tensors."""
    out = []
    for part in (result if isinstance(result, tuple) else (result,)):
        out.extend(_flatten(part) if isinstance(part, tuple) else [part])
    return out


def _backward(outputs, weights):
    loss = sum((o * w).sum() for o, w in zip(outputs, weights))
    loss.backward()


def check_parity(torch, kind, args, kwargs, arrays, call, seed=0):
    """Run ``call(module, *leaves)`` in both libraries; compare outputs and all gradients."""
    ours, theirs = _pair(torch, kind, *args, **kwargs)
    results = {}
    for lib, module in ((mg, ours), (torch, theirs)):
        leaves = _leaves(lib, arrays)
        outputs = _flatten(call(module, *leaves))
        weights = [lib.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(o.shape)))
                   for o in outputs]
        _backward(outputs, weights)
        results[lib] = (outputs, leaves, dict(module.named_parameters()))
    (mo, ml, mp), (to, tl, tp) = results[mg], results[torch]
    assert len(mo) == len(to)
    for a, b in zip(mo, to):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), **TOL)
    for a, b in zip(ml, tl):
        assert (a.grad is None) == (b.grad is None)  # an input the call does not use
        if a.grad is not None:
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), **TOL)
    assert list(mp) == list(tp)
    for name in tp:
        assert tp[name].grad is not None, name
        np.testing.assert_allclose(_np(mp[name].grad), _np(tp[name].grad), **TOL, err_msg=name)


# ------------------------------------------------------------------ layers

LAYERS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu")),
    ("RNN", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(bias=False, batch_first=True)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2)),
    ("LSTM", dict(bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, bias=False)),
    ("LSTM", dict(proj_size=2)),
    ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=3)),
    ("GRU", dict(bidirectional=True, batch_first=True)),
    ("GRU", dict(num_layers=2, bidirectional=True, bias=False)),
]
IDS = [f"{k}-" + "-".join(f"{a}={b}" for a, b in kw.items()) for k, kw in LAYERS]


def _state_shapes(kind, kwargs, batch):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = kwargs.get("proj_size") or 5
    lead = (layers,) if batch is None else (layers, batch)
    return [lead + (h,)] + ([lead + (5,)] if kind == "LSTM" else [])


@pytest.mark.parametrize("with_state", [False, True], ids=["zero-state", "given-state"])
@pytest.mark.parametrize("kind,kwargs", LAYERS, ids=IDS)
def test_layer_matches_pytorch(kind, kwargs, with_state, torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3) if kwargs.get("batch_first") else (4, 2, 3))
    states = [rng.standard_normal(s) for s in _state_shapes(kind, kwargs, 2)]

    def call(module, x, *states):
        if not with_state:
            return module(x)
        return module(x, tuple(states) if kind == "LSTM" else states[0])
    check_parity(torch, kind, (3, 5), kwargs, [x] + (states if with_state else []), call)


UNBATCHED = [2, 6, 7, 9, 13]  # batch_first is ignored for unbatched input (6 has it)


@pytest.mark.parametrize("kind,kwargs", [LAYERS[i] for i in UNBATCHED],
                         ids=[IDS[i] for i in UNBATCHED])
def test_unbatched_input_matches_pytorch(kind, kwargs, torch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3))
    states = [rng.standard_normal(s) for s in _state_shapes(kind, kwargs, None)]
    check_parity(torch, kind, (3, 5), kwargs, [x], lambda m, x: m(x))
    check_parity(torch, kind, (3, 5), kwargs, [x] + states,
                 lambda m, x, *s: m(x, tuple(s) if kind == "LSTM" else s[0]))


def test_long_sequence_gradient_through_time(torch):
    """40 steps: the gradient of the last output reaches the first input."""
    x = np.random.default_rng(3).standard_normal((40, 1, 2))
    check_parity(torch, "LSTM", (2, 3), {}, [x], lambda m, x: m(x)[0][-1])
    check_parity(torch, "GRU", (2, 3), {}, [x], lambda m, x: m(x)[0][-1])


def test_float32_layer_is_close_to_pytorch(torch):
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours.load_state_dict({k: mg.tensor(_np(v)) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((6, 2, 3)).astype(np.float32)
    out, (h, c) = ours(mg.tensor(x))
    t_out, (t_h, t_c) = theirs(torch.tensor(x))
    assert out.dtype == mg.float32 and h.dtype == mg.float32
    for a, b in ((out, t_out), (h, t_h), (c, t_c)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def test_dropout_between_layers(torch):
    """In eval mode (and with p=0) dropout changes nothing; in training it zeroes outputs of
    all layers but the last, so the output changes, and h_n of the first layer does not."""
    x = np.random.default_rng(5).standard_normal((5, 3, 3))
    check_parity(torch, "GRU", (3, 5), dict(num_layers=2, dropout=0.5),
                 [x], lambda m, x: m.eval()(x))
    check_parity(torch, "LSTM", (3, 5), dict(num_layers=2, dropout=0.0), [x], lambda m, x: m(x))
    model = nn.GRU(3, 5, num_layers=2, dropout=0.5)
    mg.manual_seed(0)
    train_out, train_h = model(mg.tensor(x).float())
    eval_out, eval_h = model.eval()(mg.tensor(x).float())
    assert not np.allclose(_np(train_out), _np(eval_out))
    np.testing.assert_allclose(_np(train_h[0]), _np(eval_h[0]), rtol=1e-6)
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last"):
        nn.RNN(3, 5, dropout=0.2)


def test_parameters_names_shapes_and_init(torch):
    for kind, kwargs in LAYERS:
        ours, theirs = getattr(nn, kind)(3, 5, **kwargs), getattr(torch.nn, kind)(3, 5, **kwargs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert repr(ours) == repr(theirs)
        assert [[tuple(p.shape) for p in w] for w in ours.all_weights] == \
               [[tuple(p.shape) for p in w] for w in theirs.all_weights]
    # PyTorch: every parameter from U(-1/sqrt(hidden), 1/sqrt(hidden)); >= 2,048 draws per
    # tensor put the largest |value| within 1% of the bound (P(miss) = 0.99^2048 < 1e-8 each)
    mg.manual_seed(0)
    model = nn.LSTM(8, 512)
    bound = 1 / math.sqrt(512)
    for name, p in model.named_parameters():
        values = np.abs(_np(p))
        assert p.dtype == mg.float32 and values.max() <= bound, name
        assert values.max() >= bound * 0.99, name
    positional = nn.RNN(3, 5, 2, "relu", False)  # nonlinearity is the 4th argument, as in torch
    assert positional.nonlinearity == "relu" and positional.bias is False
    assert positional.mode == torch.nn.RNN(3, 5, 2, "relu", False).mode == "RNN_RELU"
    double = nn.GRU(2, 3, dtype=mg.float64)
    assert all(p.dtype == mg.float64 for p in double.parameters())


def test_seeded_init_is_deterministic_and_in_parameter_order():
    """Same seed, same numbers; the draws go in named_parameters order, as PyTorch's."""
    mg.manual_seed(7)
    a = nn.LSTM(3, 4, bidirectional=True)
    mg.manual_seed(7)
    b = nn.LSTM(3, 4, bidirectional=True)
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(_np(p), _np(q))
    mg.manual_seed(7)
    first = mg.empty(16, 3).uniform_(-0.5, 0.5)
    np.testing.assert_array_equal(_np(a.weight_ih_l0), _np(first))


def test_state_dict_round_trip_with_pytorch(torch):
    ours = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    theirs = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    theirs.load_state_dict({k: torch.tensor(_np(v)) for k, v in ours.state_dict().items()})
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(ours.state_dict()[k]))


def test_flatten_parameters_and_module_conversions():
    model = nn.LSTM(2, 3)
    assert model.flatten_parameters() is None
    model.double()
    out, (h, c) = model(mg.randn(4, 1, 2, dtype=mg.float64))
    assert out.dtype == h.dtype == c.dtype == mg.float64


# ------------------------------------------------------------------ cells

CELLS = [("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu")),
         ("RNNCell", dict(bias=False)), ("LSTMCell", dict()), ("LSTMCell", dict(bias=False)),
         ("GRUCell", dict()), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("kind,kwargs", CELLS,
                         ids=[f"{k}-{'-'.join(map(str, kw.values()))}" for k, kw in CELLS])
def test_cell_matches_pytorch_over_steps(kind, kwargs, batched, torch):
    rng = np.random.default_rng(6)
    lead = (2,) if batched else ()
    xs = [rng.standard_normal(lead + (3,)) for _ in range(3)]
    h0 = rng.standard_normal(lead + (4,))
    c0 = rng.standard_normal(lead + (4,))

    def call(cell, x0, x1, x2, h0, c0):
        state = (h0, c0) if kind == "LSTMCell" else h0
        first = cell(x0)  # no state: zeros
        outs = []
        for x in (x1, x2):
            state = cell(x, state)
            outs.append(state)
        return (first,) + tuple(outs)
    check_parity(torch, kind, (3, 4), kwargs, xs + [h0, c0], call)


def test_cell_repr_and_parameters(torch):
    for kind, kwargs in CELLS:
        ours, theirs = getattr(nn, kind)(3, 4, **kwargs), getattr(torch.nn, kind)(3, 4, **kwargs)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


# ------------------------------------------------------------------ errors

def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001  (compared below)
        return type(e), str(e)
    return None


ERRORS = {
    "bad nonlinearity": lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "proj_size on GRU": lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    "proj_size on RNN": lambda lib: lib.nn.RNN(3, 4, proj_size=2),
    "proj_size too big": lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    "negative proj_size": lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    "zero layers": lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    "float hidden size": lambda lib: lib.nn.GRU(3, 4.0),
    "zero hidden size": lambda lib: lib.nn.GRU(3, 0),
    "float input size": lambda lib: lib.nn.RNN(3.0, 4),
    "dropout above 1": lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    "bool dropout": lambda lib: lib.nn.LSTM(3, 4, dropout=True),
    "int bias": lambda lib: lib.nn.LSTM(3, 4, bias=1),
    "int batch_first": lambda lib: lib.nn.LSTM(3, 4, batch_first=1),
    "4-D input": lambda lib: lib.nn.RNN(3, 4)(lib.zeros(1, 2, 3, 3)),
    "4-D input LSTM": lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(1, 2, 3, 3)),
    "4-D input GRU": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(1, 2, 3, 3)),
    "wrong features": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 2)),
    "wrong dtype": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 3, dtype=lib.float64)),
    "empty sequence": lambda lib: lib.nn.RNN(3, 4)(lib.zeros(0, 2, 3)),
    "wrong h0 batch": lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4)),
    "wrong h0 layers": lambda lib: lib.nn.GRU(3, 4, 2)(lib.zeros(5, 2, 3), lib.zeros(1, 2, 4)),
    "2-D h0 for batch": lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3), lib.zeros(2, 4)),
    "3-D h0 unbatched": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 3), lib.zeros(1, 1, 4)),
    "LSTM 2-D states for batch": lambda lib: lib.nn.LSTM(3, 4)(
        lib.zeros(5, 2, 3), (lib.zeros(1, 4), lib.zeros(1, 4))),
    "LSTM 3-D states unbatched": lambda lib: lib.nn.LSTM(3, 4)(
        lib.zeros(5, 3), (lib.zeros(1, 1, 4), lib.zeros(1, 1, 4))),
    "LSTM wrong c0": lambda lib: lib.nn.LSTM(3, 4)(
        lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 5))),
    "LSTM wrong h0 with proj": lambda lib: lib.nn.LSTM(3, 4, proj_size=2)(
        lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4))),
    "cell 3-D input": lambda lib: lib.nn.RNNCell(3, 4)(lib.zeros(1, 2, 3)),
    "cell 3-D hidden": lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 3), lib.zeros(1, 2, 4)),
    "LSTMCell 3-D c": lambda lib: lib.nn.LSTMCell(3, 4)(
        lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(1, 2, 4))),
    "cell wrong features": lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 5)),
    "cell wrong batch": lambda lib: lib.nn.RNNCell(3, 4)(lib.zeros(2, 3), lib.zeros(3, 4)),
    "cell wrong hidden": lambda lib: lib.nn.RNNCell(3, 4)(lib.zeros(2, 3), lib.zeros(2, 5)),
    "LSTMCell wrong c batch": lambda lib: lib.nn.LSTMCell(3, 4)(
        lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4))),
    "cell bad nonlinearity": lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="gelu")(
        lib.zeros(3)),
    "pad empty list": lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    "pad not iterable": lambda lib: lib.nn.utils.rnn.pad_sequence(3),
    "pad bad side": lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="up"),
    "pack unsorted": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [3, 4, 1]),
    "pack zero length": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [4, 3, 0]),
    "pack wrong count": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [4, 3]),
    "pad_packed short total": lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 3, 1]), total_length=2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_pytorch(name, torch):
    """The same exception type and message as PyTorch (dtype names aside)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _error(mg, ERRORS[name]), _error(torch, ERRORS[name])
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] is theirs[0]
    assert ours[1].replace("minigrad.", "torch.") == theirs[1]


def test_errors_where_messages_differ(torch):
    """Same exception type; minigrad's message says more (or PyTorch has none of its own)."""
    for fn in (lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3), lib.zeros(3, 4)]),
               lambda lib: lib.nn.utils.rnn.pad_sequence([lib.tensor(1.0)]),
               lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 3, dtype=lib.float64))):
        ours, theirs = _error(mg, fn), _error(torch, fn)
        assert ours is not None and theirs is not None and ours[0] is theirs[0], (ours, theirs)
    with pytest.raises(RuntimeError, match="lengths must not exceed the padded length"):
        pack_padded_sequence(mg.zeros(4, 3, 2), [5, 3, 1])  # PyTorch reads past the tensor


# ------------------------------------------------------------------ nn.utils.rnn

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_pytorch(batch_first, side, torch):
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    results = {}
    for lib in (mg, torch):
        seqs = _leaves(lib, arrays)
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.5,
                                            padding_side=side)
        weights = np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results[lib] = (out, [s.grad for s in seqs])
    (mo, mgrads), (to, tgrads) = results[mg], results[torch]
    np.testing.assert_array_equal(_np(mo), _np(to))
    for a, b in zip(mgrads, tgrads):
        np.testing.assert_array_equal(_np(a), _np(b))
    ints = pad_sequence([mg.ones(2, dtype=mg.int64), mg.ones(3, dtype=mg.int64)])
    assert ints.dtype == mg.int64 and ints.tolist() == [[1, 1], [1, 1], [0, 1]]


@pytest.mark.parametrize("enforce_sorted,with_state", [(True, True), (False, True),
                                                        (False, False)])
@pytest.mark.parametrize("kind,kwargs", [("LSTM", dict(bidirectional=True, num_layers=2)),
                                         ("LSTM", dict(proj_size=2)),
                                         ("GRU", dict(bidirectional=True)),
                                         ("RNN", dict(batch_first=True))])
def test_packed_sequences_through_layers_match_pytorch(kind, kwargs, enforce_sorted, with_state,
                                                       torch):
    """pack_padded_sequence -> layer -> pad_packed_sequence: outputs, states, gradients."""
    batch_first = kwargs.get("batch_first", False)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    states = [rng.standard_normal(s) for s in _state_shapes(kind, kwargs, 4)]

    def call(module, x, *states):
        utils = mg.nn.utils.rnn if isinstance(module, nn.Module) else torch.nn.utils.rnn
        packed = utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                            enforce_sorted=enforce_sorted)
        if with_state:
            out, hidden = module(packed, tuple(states) if kind == "LSTM" else states[0])
        else:
            out, hidden = module(packed)
        assert isinstance(out, utils.PackedSequence)
        padded, out_lengths = utils.pad_packed_sequence(out, batch_first=batch_first,
                                                        padding_value=0.25, total_length=6)
        assert out_lengths.tolist() == lengths
        return (padded, packed.data) + (hidden if kind == "LSTM" else (hidden,))
    check_parity(torch, kind, (3, 5), kwargs, [x] + (states if with_state else []), call)


def test_pack_sequence_and_unpack_match_pytorch(torch):
    rng = np.random.default_rng(10)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]
    ours = pack_sequence([mg.tensor(a) for a in arrays], enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays],
                                              enforce_sorted=False)
    assert isinstance(ours, PackedSequence)
    np.testing.assert_array_equal(_np(ours.data), _np(theirs.data))
    for a, b in zip(ours[1:], theirs[1:]):
        assert a.tolist() == b.tolist() and a.dtype == mg.int64
    for a, b in zip(unpack_sequence(ours), arrays):
        np.testing.assert_array_equal(_np(a), b)
    padded = pad_sequence([mg.tensor(a) for a in arrays], batch_first=True)
    for a, b in zip(unpad_sequence(padded, mg.tensor([2, 4, 3]), batch_first=True), arrays):
        np.testing.assert_array_equal(_np(a), b)
    assert ours.double().data.dtype == mg.float64


def test_importable_as_in_pytorch():
    assert rnn_module.pad_sequence is pad_sequence
    assert mg.nn.utils.rnn.pack_padded_sequence is pack_padded_sequence


# ------------------------------------------------------------------ a real program

def test_pytorch_lstm_tagger_tutorial_prints_pytorchs_numbers(torch):
    """PyTorch's LSTM part-of-speech tagger tutorial (tests/programs), 20 of its 300 epochs,
    from PyTorch's starting weights: every tensor it prints holds PyTorch's numbers.
    (``python tests/programs/lstm_pos_tagger.py`` runs all 300 and prints both.)"""
    path = Path(__file__).parent / "programs" / "lstm_pos_tagger.py"
    spec = importlib.util.spec_from_file_location("lstm_pos_tagger", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    record, replay = program.torch_start()
    printed = {torch: [], mg: []}
    program.run(torch, 20, record, printed[torch].append)
    program.run(mg, 20, replay, printed[mg].append)
    theirs, ours = _flatten(tuple(printed[torch])), _flatten(tuple(printed[mg]))
    assert len(ours) == len(theirs) == 6
    for a, b in zip(ours, theirs):
        if isinstance(b, dict):
            assert a == b
        else:
            assert a.dtype == mg.float32 and tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    assert not np.allclose(_np(ours[4]), _np(ours[5])), "the tagger trained"
