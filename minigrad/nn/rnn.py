"""Recurrent layers, ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` as in ``torch.nn``: several layers,
one or two directions, ``batch_first``, dropout between layers, unbatched (2-D) input, initial
states and packed sequences (``nn.utils.rnn.pack_padded_sequence``).

A layer runs its cell (``rnn_cells``) once per time step, with minigrad's public ops only, so
``backward()`` goes through time by itself. The loops follow PyTorch's CPU implementation
(``aten/src/ATen/native/RNN.cpp``): the input part of every gate is one ``linear`` over the
whole sequence, each direction keeps its own state, the reverse direction walks the steps
backwards, and the directions' outputs are joined along the features. A packed sequence is
run the same way, each step on the sequences still going (the batch shrinks from step to
step); an ordinary one is the case where it never shrinks.

The parameters are named, shaped, ordered and initialised as PyTorch's (``weight_ih_l0``,
``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, then ``..._reverse``, then layer 1; every
one from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in that order), so
``model.load_state_dict(torch_model.state_dict())`` gives the same model.
"""

import math
import numbers
import warnings

from .. import creation
from .._tensor import Tensor
from ..ops.shape import cat, stack
from ..tensor_device import check_device
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .rnn_cells import (GRUCell, LSTMCell, RNNCell, RNNCellBase, check_sizes, gru_step,
                        lstm_step, rnn_relu_step, rnn_tanh_step)
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_STEPS = {"LSTM": lstm_step, "GRU": gru_step, "RNN_TANH": rnn_tanh_step,
          "RNN_RELU": rnn_relu_step}


# ------------------------------------------------------------------ states as tensors or pairs

def _map(fn, hidden):
    """``fn`` applied to a state: one tensor (RNN, GRU) or the pair ``(h, c)`` (LSTM)."""
    return tuple(fn(h) for h in hidden) if isinstance(hidden, tuple) else fn(hidden)


def _output_of(hidden):
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _join(parts):
    """States of several groups of sequences, stacked along the batch (dim 0)."""
    if isinstance(parts[0], tuple):
        return tuple(cat([p[k] for p in parts]) for k in range(len(parts[0])))
    return cat(parts)


# ------------------------------------------------------------------ one direction of one layer

def _forward_direction(step, input_gates, hidden, params, batch_sizes):
    """Run ``step`` forwards over ``input_gates`` ((sum of batch_sizes, gates), step after
    step); sequences that end drop out of the batch and keep their last state.
    Returns (outputs of every step, final state of every sequence)."""
    outputs, finished, offset, last = [], [], 0, batch_sizes[0]
    hidden = _map(lambda h: h[:last], hidden)
    for batch in batch_sizes:
        if batch < last:  # the sequences from `batch` on have ended
            finished.append(_map(lambda h: h[batch:last], hidden))
            hidden = _map(lambda h: h[:batch], hidden)
        last = batch
        hidden = step(input_gates[offset:offset + batch], hidden, *params)
        outputs.append(_output_of(hidden))
        offset += batch
    finished.append(hidden)
    return outputs, _join(finished[::-1])


def _reverse_direction(step, input_gates, hidden0, params, batch_sizes):
    """The same, last step first: a sequence joins when the walk reaches its last step,
    with its initial state from ``hidden0``."""
    outputs, offset, last = [], input_gates.shape[0], batch_sizes[-1]
    hidden = _map(lambda h: h[:last], hidden0)
    for batch in reversed(batch_sizes):
        if batch > last:
            hidden = _join([hidden, _map(lambda h: h[last:batch], hidden0)])
        last = batch
        hidden = step(input_gates[offset - batch:offset], hidden, *params)
        outputs.append(_output_of(hidden))
        offset -= batch
    return outputs[::-1], hidden


# ------------------------------------------------------------------ the layers

class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: arguments, checks, parameters and the loop
    over layers and directions. ``mode`` is one of "RNN_TANH", "RNN_RELU", "LSTM", "GRU"."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        check_sizes(input_size, "input_size")
        check_sizes(hidden_size, "hidden_size")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for name, shape in shapes:
                    name = name.format(layer, suffix)
                    setattr(self, name, Parameter(creation.empty(*shape, dtype=dtype)))
                    names.append(name)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights_names(self):
        return [name for names in self._all_weights for name in names]

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction, as PyTorch gives them."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Does nothing, as PyTorch's does off the GPU (programs call it; cuDNN is not here)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -------------------------------------------------------------- checks, as PyTorch's

    def _check_input(self, input, batch_sizes):
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _expected_hidden_size(self, mini_batch, cell=False):
        size = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    @staticmethod
    def _check_hidden_size(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _check_forward_args(self, input, hidden, batch_sizes, mini_batch):
        self._check_input(input, batch_sizes)
        self._check_hidden_size(hidden, self._expected_hidden_size(mini_batch))

    # -------------------------------------------------------------- the loop

    def _zeros(self, mini_batch, dtype, cell=False):
        return creation.zeros(*self._expected_hidden_size(mini_batch, cell), dtype=dtype)

    def _run(self, data, hidden, batch_sizes):
        """``data``: the steps one after the other, (sum of batch_sizes, features);
        ``hidden``: (layers * directions, batch, size), or a pair for the LSTM.
        Returns the last layer's outputs in the same layout, and the final states."""
        if len(batch_sizes) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(index)
                input_gates = F.linear(data, w_ih, b_ih)
                h0 = _map(lambda h: h[index], hidden)
                run = _reverse_direction if direction == 1 else _forward_direction
                steps, final = run(step, input_gates, h0, (w_hh, b_hh, w_hr), batch_sizes)
                outputs.append(cat(steps))
                finals.append(final)
            data = outputs[0] if num_directions == 1 else cat(outputs, dim=1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        if isinstance(finals[0], tuple):
            return data, tuple(stack([f[k] for f in finals]) for k in range(2))
        return data, stack(finals)

    def _layer_params(self, index):
        names = self._all_weights[index]
        params = [getattr(self, name) for name in names]
        w_ih, w_hh = params[:2]
        b_ih, b_hh = params[2:4] if self.bias else (None, None)
        w_hr = params[-1] if self.proj_size > 0 else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def _forward(self, input, hx, name):
        """Shared by the three layers; ``hx`` is checked by the caller's ``_prepare``."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            hx = self._prepare_packed(data, hx, sizes[0] if sizes else 0, sorted_indices)
            output, hidden = self._run(data, hx, sizes)
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self._permute_hidden(hidden, unsorted_indices))
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}.forward() expects a Tensor or a PackedSequence as input, "
                            f"got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(self._dim_message(name, input))
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        mini_batch = input.shape[batch_dim]
        hx = self._prepare(input, hx, is_batched, mini_batch)
        if self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[0], input.shape[1]
        output, hidden = self._run(input.reshape(steps * batch, input.shape[2]), hx,
                                   [batch] * steps)
        output = output.view(steps, batch, output.shape[-1])
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = _map(lambda h: h.squeeze(1), hidden)
        return output, hidden

    def _dim_message(self, name, input):
        tensor = " tensor" if name == "RNN" else ""
        return f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead"

    @staticmethod
    def _permute_hidden(hx, permutation):
        if permutation is None:
            return hx
        return _map(lambda h: h.index_select(1, permutation), hx)

    def _prepare(self, input, hx, is_batched, mini_batch):
        """RNN and GRU: the initial state, checked (LSTM overrides it)."""
        if hx is not None:
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
        else:
            hx = self._zeros(mini_batch, input.dtype)
        self._check_forward_args(input, hx, None, mini_batch)
        return hx

    def _prepare_packed(self, data, hx, mini_batch, sorted_indices):
        if hx is None:
            hx = self._zeros(mini_batch, data.dtype)
        else:
            hx = self._permute_hidden(hx, sorted_indices)
        self._check_forward_args(data, hx, True, mini_batch)
        return hx


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` in each layer
    (``nonlinearity="relu"``: ReLU). ``rnn(input, h0)`` -> ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class GRU(RNNBase):
    """Gated recurrent unit: reset gate r, update gate z, candidate n;
    ``h_t = (1 - z) * n + z * h_{t-1}``. ``gru(input, h0)`` -> ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


class LSTM(RNNBase):
    """Long short-term memory: input, forget, cell and output gates (i, f, g, o);
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (times ``W_hr^T`` with
    ``proj_size``). ``lstm(input, (h0, c0))`` -> ``(output, (h_n, c_n))``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")

    def _check_forward_args(self, input, hidden, batch_sizes, mini_batch):
        self._check_input(input, batch_sizes)
        self._check_hidden_size(hidden[0], self._expected_hidden_size(mini_batch),
                                "Expected hidden[0] size {}, got {}")
        self._check_hidden_size(hidden[1], self._expected_hidden_size(mini_batch, cell=True),
                                "Expected hidden[1] size {}, got {}")

    def _prepare(self, input, hx, is_batched, mini_batch):
        if hx is None:
            hx = (self._zeros(mini_batch, input.dtype),
                  self._zeros(mini_batch, input.dtype, cell=True))
        elif is_batched:
            if hx[0].dim() != 3 or hx[1].dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        else:
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but "
                                   f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_forward_args(input, hx, None, mini_batch)
        return tuple(hx)

    def _prepare_packed(self, data, hx, mini_batch, sorted_indices):
        if hx is None:
            hx = (self._zeros(mini_batch, data.dtype),
                  self._zeros(mini_batch, data.dtype, cell=True))
        else:
            hx = self._permute_hidden(tuple(hx), sorted_indices)
        self._check_forward_args(data, hx, True, mini_batch)
        return hx
