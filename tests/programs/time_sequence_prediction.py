"""PyTorch's example "time_sequence_prediction" (two LSTMCells and a Linear learn sine waves,
trained with LBFGS), written from memory as the example has it, run on a library given as
``torch``: ``python tests/programs/time_sequence_prediction.py`` runs it with minigrad and
with PyTorch and prints both.

Changes besides the import: the data set is generated in memory (the example's
``generate_sine_wave.py`` saves it with ``torch.save``) and is smaller by default (``N`` waves
of ``L`` points; the example has 100 of 1,000); the number of steps is an argument; and, as in
``lstm_pos_tagger.py``, a ``start`` hook can give the model PyTorch's starting weights.
"""

import sys

import numpy as np

import minigrad


def generate_sine_wave(N=100, L=1000, T=20):  # noqa: N803  (the example's names)
    np.random.seed(2)
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype("float64")


def run(torch, steps=15, N=100, L=1000, future=1000, start=lambda obj: obj, out=print):  # noqa: N803
    nn, optim = torch.nn, torch.optim

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()  # noqa: UP008
            self.lstm1 = nn.LSTMCell(1, 51)
            self.lstm2 = nn.LSTMCell(51, 51)
            self.linear = nn.Linear(51, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):  # if we should predict the future
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.cat(outputs, dim=1)
            return outputs

    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = generate_sine_wave(N, L)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = start(Sequence())
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    # begin to train
    for i in range(steps):
        out("STEP: ", i)

        def closure():
            optimizer.zero_grad()
            out_ = seq(input)
            loss = criterion(out_, target)
            out("loss:", loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            out("test loss:", loss.item())
            y = pred.detach().numpy()
    return y


def torch_start(torch):
    """(record, replay): PyTorch's run records its model's starting weights, minigrad's run
    starts from them."""
    seen = {}

    def record(model):
        seen.update({k: v.detach().clone() for k, v in model.state_dict().items()})
        return model

    def replay(model):
        model.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in seen.items()})
        return model
    return record, replay


if __name__ == "__main__":
    import torch
    sizes = dict(steps=2, N=10, L=100, future=100)
    if len(sys.argv) > 1 and sys.argv[1] == "full":
        sizes = dict(steps=15, N=100, L=1000, future=1000)
    record, replay = torch_start(torch)
    print("---- PyTorch")
    run(torch, **sizes, start=record)
    print("---- minigrad")
    run(minigrad, **sizes, start=replay)
