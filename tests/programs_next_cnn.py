"""More programs for ``test_programs_next.py`` (the CNNs and sequence models after the
course), written as their authors write them, from memory: Dive into Deep Learning's
AlexNet and VGG (8.1, 8.2, on small inputs), ResNet (8.6) with BatchNorm2d, its TextCNN
(16.3) with Conv1d and AdaptiveAvgPool1d, a 1-d CNN with MaxPool1d, Dropout1d and GroupNorm
as PyTorch's forums write one, and a character-level RNN trained a few steps. Random
draws are replaced by ``DATA`` and ``set_weights``, as in ``programs_next.py``."""

import numpy as np

R = np.random.default_rng(2028)
DATA = {
    "IMG32": R.random((2, 1, 32, 32)).astype(np.float32),
    "IMG24": R.random((2, 3, 24, 24)).astype(np.float32),
    "TOKENS": R.integers(0, 20, (4, 12)),
    "SEQ": R.random((4, 3, 16)).astype(np.float32),
    "TEXT": "hello minigrad, hello torch. " * 3,
}

# Dive into Deep Learning, 8.1 "AlexNet" and 8.2 "VGG" (smaller: fewer channels, a 32x32
# input), their layer summaries, one forward in eval mode (Dropout off), loss and backward.
D2L_ALEXNET_VGG = '''
import torch
from torch import nn

net = nn.Sequential(
    nn.LazyConv2d(8, kernel_size=5, stride=2, padding=1), nn.ReLU(),
    nn.MaxPool2d(kernel_size=3, stride=2),
    nn.LazyConv2d(16, kernel_size=3, padding=2), nn.ReLU(),
    nn.MaxPool2d(kernel_size=3, stride=2),
    nn.LazyConv2d(16, kernel_size=3, padding=1), nn.ReLU(),
    nn.Flatten(),
    nn.LazyLinear(32), nn.ReLU(), nn.Dropout(p=0.5),
    nn.LazyLinear(10))
X = torch.tensor(DATA["IMG32"])
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, "output shape:\\t", X.shape)
set_weights(net)
net.eval()
out = net(torch.tensor(DATA["IMG32"]))
print(out)


def vgg_block(num_convs, out_channels):
    layers = []
    for _ in range(num_convs):
        layers.append(nn.LazyConv2d(out_channels, kernel_size=3, padding=1))
        layers.append(nn.ReLU())
    layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
    return nn.Sequential(*layers)


arch = ((1, 4), (1, 8), (2, 8))
conv_blks = [vgg_block(num_convs, out_channels) for num_convs, out_channels in arch]
vgg = nn.Sequential(*conv_blks, nn.Flatten(), nn.LazyLinear(16), nn.ReLU(),
                    nn.Dropout(0.5), nn.LazyLinear(10))
X = torch.tensor(DATA["IMG32"])
for blk in vgg:
    X = blk(X)
    print(blk.__class__.__name__, "output shape:\\t", X.shape)
set_weights(vgg)
vgg.train()
vgg[-2].p = 0.0  # (the draw of a dropout mask is each library's own)
loss = nn.CrossEntropyLoss()(vgg(torch.tensor(DATA["IMG32"])), torch.tensor([1, 7]))
loss.backward()
print(loss, vgg[0][0].weight.grad.abs().sum(), vgg[-1].bias.grad)
'''

# Dive into Deep Learning, 8.6 "Residual Networks (ResNet)": the Residual block with
# LazyConv2d and LazyBatchNorm2d, its shapes, a small ResNet trained two SGD steps.
D2L_RESNET = '''
import torch
from torch import nn
from torch.nn import functional as F


class Residual(nn.Module):
    """The Residual block of ResNet models."""
    def __init__(self, num_channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1,
                                   stride=strides)
        self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1,
                                       stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.LazyBatchNorm2d()
        self.bn2 = nn.LazyBatchNorm2d()

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


blk = Residual(3)
X = torch.tensor(DATA["IMG24"][:, :, :6, :6])
print(blk(X).shape)
blk = Residual(6, use_1x1conv=True, strides=2)
print(blk(X).shape)


def b1():
    return nn.Sequential(
        nn.LazyConv2d(8, kernel_size=7, stride=2, padding=3),
        nn.LazyBatchNorm2d(), nn.ReLU(),
        nn.MaxPool2d(kernel_size=3, stride=2, padding=1))


def block(num_residuals, num_channels, first_block=False):
    blk = []
    for i in range(num_residuals):
        if i == 0 and not first_block:
            blk.append(Residual(num_channels, use_1x1conv=True, strides=2))
        else:
            blk.append(Residual(num_channels))
    return nn.Sequential(*blk)


net = nn.Sequential(b1(), block(2, 8, first_block=True), block(2, 16),
                    nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LazyLinear(10))
X = torch.tensor(DATA["IMG24"])
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, "output shape:\\t", X.shape)
set_weights(net)
for module in net.modules():  # (the summary ran with each library's random weights)
    if isinstance(module, nn.BatchNorm2d):
        module.reset_running_stats()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(2):
    loss = F.cross_entropy(net(torch.tensor(DATA["IMG24"])), torch.tensor([2, 5]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
net.eval()
print(net(torch.tensor(DATA["IMG24"])))
print(net[0][1].running_mean, net[0][1].num_batches_tracked)
'''

# Dive into Deep Learning, 16.3 "Sentiment Analysis: Using Convolutional Neural Networks"
# (TextCNN), smaller, on fixed tokens, with its init_weights (xavier_uniform_, replaced by
# set_weights) and three Adam steps.
D2L_TEXTCNN = '''
import torch
from torch import nn


class TextCNN(nn.Module):
    def __init__(self, vocab_size, embed_size, kernel_sizes, num_channels,
                 **kwargs):
        super(TextCNN, self).__init__(**kwargs)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.constant_embedding = nn.Embedding(vocab_size, embed_size)
        self.dropout = nn.Dropout(0.5)
        self.decoder = nn.Linear(sum(num_channels), 2)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.relu = nn.ReLU()
        self.convs = nn.ModuleList()
        for c, k in zip(num_channels, kernel_sizes):
            self.convs.append(nn.Conv1d(2 * embed_size, c, k))

    def forward(self, inputs):
        embeddings = torch.cat((
            self.embedding(inputs), self.constant_embedding(inputs)), dim=2)
        embeddings = embeddings.permute(0, 2, 1)
        encoding = torch.cat([
            torch.squeeze(self.relu(self.pool(conv(embeddings))), dim=-1)
            for conv in self.convs], dim=1)
        outputs = self.decoder(self.dropout(encoding))
        return outputs


net = TextCNN(20, 6, [3, 4, 5], [4, 4, 4])


def init_weights(module):
    if type(module) in (nn.Linear, nn.Conv1d):
        nn.init.xavier_uniform_(module.weight)


net.apply(init_weights)
print(net)
set_weights(net)
net.constant_embedding.weight.requires_grad = False
net.eval()
tokens = torch.tensor(DATA["TOKENS"])
print(net(tokens))
net.train()
net.dropout.p = 0.0  # (each library draws its own dropout mask)
trainer = torch.optim.Adam(filter(lambda p: p.requires_grad, net.parameters()), lr=0.01)
loss = nn.CrossEntropyLoss(reduction="none")
labels = torch.tensor([0, 1, 1, 0])
for epoch in range(3):
    l = loss(net(tokens), labels)
    trainer.zero_grad()
    l.sum().backward()
    trainer.step()
    print(epoch, l.sum().item())
'''

# A 1-d CNN for sequences as PyTorch's forums write one: Conv1d, GroupNorm, MaxPool1d,
# AvgPool1d, Dropout1d (off in eval), LazyConv1d.
SEQUENCE_CNN = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SeqNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, kernel_size=3, padding=1)
        self.gn1 = nn.GroupNorm(2, 8)
        self.pool1 = nn.MaxPool1d(2)
        self.drop = nn.Dropout1d(0.2)
        self.conv2 = nn.LazyConv1d(8, kernel_size=3, padding="same")
        self.pool2 = nn.AvgPool1d(2)
        self.fc = nn.Linear(8 * 4, n_classes)

    def forward(self, x):
        x = self.pool1(F.relu(self.gn1(self.conv1(x))))
        x = self.drop(x)
        x = self.pool2(F.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


model = SeqNet()
x = torch.tensor(DATA["SEQ"])
model.eval()
model(x)
print(model)
set_weights(model)
print(model(x))
model.train()
model.drop.p = 0.0
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
y = torch.tensor([0, 2, 1, 1])
for epoch in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
'''

# A character-level RNN (after Karpathy's char-rnn and PyTorch's name-generation tutorial):
# an Embedding, a 1-layer nn.RNN, a Linear decoder, trained with Adam and
# clip_grad_norm_ on a short text; then greedy sampling.
CHAR_RNN = '''
import torch
import torch.nn as nn

text = DATA["TEXT"]
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)


class CharRNN(nn.Module):
    def __init__(self, vocab_size, hidden_size=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 8)
        self.rnn = nn.RNN(8, hidden_size, batch_first=True)
        self.fc = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.fc(out), h


model = CharRNN(len(chars))
set_weights(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
seq_len = 10
for step in range(4):
    i = step * seq_len
    x = data[i:i + seq_len].unsqueeze(0)
    y = data[i + 1:i + seq_len + 1].unsqueeze(0)
    logits, _ = model(x)
    loss = criterion(logits.view(-1, len(chars)), y.view(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(step, round(loss.item(), 4))

with torch.no_grad():
    x = torch.tensor([[stoi["h"]]])
    h = None
    out = "h"
    for _ in range(8):
        logits, h = model(x, h)
        nxt = logits[0, -1].argmax().item()
        out += itos[nxt]
        x = torch.tensor([[nxt]])
print(repr(out))
'''

PROGRAMS = {
    "d2l_alexnet_vgg": D2L_ALEXNET_VGG,
    "d2l_resnet": D2L_RESNET,
    "d2l_textcnn": D2L_TEXTCNN,
    "sequence_cnn": SEQUENCE_CNN,
    "char_rnn": CHAR_RNN,
}
