"""The recurrent cells, ``nn.RNNCell``, ``nn.LSTMCell`` and ``nn.GRUCell`` as in ``torch.nn``,
and the one-step functions that they and the multi-layer ``nn.RNN``/``LSTM``/``GRU`` share.

Each step is written with minigrad's public ops (``F.linear``, ``sigmoid``, ``tanh``,
``chunk``), so autograd takes gradients through time with no op of its own. The steps follow
PyTorch's CPU kernels (``aten/src/ATen/native/RNN.cpp``) term by term: the input part of the
gates, ``linear(x, w_ih, b_ih)``, is computed by the caller (a layer does it once for the whole
sequence), the hidden part is added to it, and the gates come out of ``chunk`` in PyTorch's
order: ``i, f, g, o`` for the LSTM, ``r, z, n`` for the GRU.
"""

import math

from .. import creation
from ..tensor_device import check_device
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "rnn_tanh_step", "rnn_relu_step",
           "lstm_step", "gru_step", "check_sizes"]


# ------------------------------------------------------------------ one step

def rnn_tanh_step(input_gates, hidden, w_hh, b_hh, w_hr=None):
    """``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``input_gates`` being the first two terms."""
    return (F.linear(hidden, w_hh, b_hh) + input_gates).tanh()


def rnn_relu_step(input_gates, hidden, w_hh, b_hh, w_hr=None):
    """As ``rnn_tanh_step`` with ReLU in place of tanh."""
    return (F.linear(hidden, w_hh, b_hh) + input_gates).relu()


def lstm_step(input_gates, hidden, w_hh, b_hh, w_hr=None):
    """``(h, c)`` -> ``(h', c')``: ``c' = f * c + i * g``, ``h' = o * tanh(c')`` (then
    ``h' W_hr^T`` with a projection)."""
    hx, cx = hidden
    gates = F.linear(hx, w_hh, b_hh) + input_gates
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    cy = forgetgate.sigmoid() * cx + ingate.sigmoid() * cellgate.tanh()
    hy = outgate.sigmoid() * cy.tanh()
    if w_hr is not None:
        hy = F.linear(hy, w_hr)
    return hy, cy


def gru_step(input_gates, hidden, w_hh, b_hh, w_hr=None):
    """``h' = (1 - z) * n + z * h``, written as PyTorch computes it: ``(h - n) * z + n``."""
    i_r, i_z, i_n = input_gates.chunk(3, 1)
    h_r, h_z, h_n = F.linear(hidden, w_hh, b_hh).chunk(3, 1)
    reset_gate = (h_r + i_r).sigmoid()
    update_gate = (h_z + i_z).sigmoid()
    new_gate = (i_n + h_n * reset_gate).tanh()
    return (hidden - new_gate) * update_gate + new_gate


# ------------------------------------------------------------------ checks

def check_sizes(size, name):
    """``input_size`` and ``hidden_size``: whole numbers above zero, as PyTorch asks."""
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"{name} should be of type int, got: {type(size).__name__}")
    if size <= 0:
        raise ValueError(f"{name} must be greater than zero")


def _check_cell_input(input, input_size):
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{input_size}")


def _check_cell_hidden(input, hx, hidden_size, label):
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} batch "
                           f"size {hx.shape[0]}")
    if hx.shape[1] != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                           f"expected {hidden_size}")


def _check_dims(input, name, what="input"):
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {input.dim()}D instead")


# ------------------------------------------------------------------ the cells

class RNNCellBase(Module):
    """The parameters of one cell: ``weight_ih`` (chunks * hidden, input), ``weight_hh``
    (chunks * hidden, hidden), ``bias_ih`` and ``bias_hh``, each drawn from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in that order, as PyTorch does."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        check_device(device)
        check_sizes(input_size, "input_size")
        check_sizes(hidden_size, "hidden_size")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(creation.empty(num_chunks * hidden_size, input_size,
                                                  dtype=dtype))
        self.weight_hh = Parameter(creation.empty(num_chunks * hidden_size, hidden_size,
                                                  dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, hx):
        """(input, hx, is_batched): a 1-D input (one sample) becomes a batch of one."""
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        _check_cell_input(input, self.input_size)
        if hx is None:
            hx = creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched

    def _step(self, step, input, hidden):
        input_gates = F.linear(input, self.weight_ih, self.bias_ih)
        return step(input_gates, hidden, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU): one step of ``nn.RNN``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        _check_dims(input, "RNNCell")
        if hx is not None:
            _check_dims(hx, "RNNCell", "hidden")
        input, hx, is_batched = self._batched(input, hx)
        _check_cell_hidden(input, hx, self.hidden_size, "0")
        if self.nonlinearity == "tanh":
            step = rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = self._step(step, input, hx)
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """``(h', c') = cell(x, (h, c))``: one step of ``nn.LSTM`` (gates i, f, g, o)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        _check_dims(input, "LSTMCell")
        if hx is not None:
            for idx, value in enumerate(hx):
                _check_dims(value, "LSTMCell", f"hx[{idx}]")
        is_batched = input.dim() == 2
        if hx is None:
            input, h, is_batched = self._batched(input, None)
            hx = (h, h)
        else:
            input, h, is_batched = self._batched(input, hx[0])
            hx = (h, hx[1] if is_batched else hx[1].unsqueeze(0))
        _check_cell_hidden(input, hx[0], self.hidden_size, "0")
        _check_cell_hidden(input, hx[1], self.hidden_size, "1")
        h, c = self._step(lstm_step, input, hx)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """``h' = (1 - z) * n + z * h``: one step of ``nn.GRU`` (gates r, z, n)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        _check_dims(input, "GRUCell")
        if hx is not None:
            _check_dims(hx, "GRUCell", "hidden")
        input, hx, is_batched = self._batched(input, hx)
        _check_cell_hidden(input, hx, self.hidden_size, "0")
        out = self._step(gru_step, input, hx)
        return out if is_batched else out.squeeze(0)
