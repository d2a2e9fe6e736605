"""The programs of ``test_programs_next.py``: third-party PyTorch programs as their authors
wrote them, with their random draws replaced by ``DATA`` (numpy) and ``set_weights``
(``PRELUDE``), so that torch and minigrad start from the same numbers."""

import numpy as np

R = np.random.default_rng(2024)
DATA = {
    "X20": R.random((2, 20)).astype(np.float32),
    "W20": R.random((20, 20)).astype(np.float32),
    "X4": R.random((2, 4)).astype(np.float32),
    "X8": R.random((4, 8)).astype(np.float32),
    "X5": R.random((2, 5)).astype(np.float32),
    "IMG": R.random((1, 1, 28, 28)).astype(np.float32),
    "IMAGES": R.random((24, 28, 28)).astype(np.float32),
    "LABELS": R.integers(0, 10, 24),
    "IMG3": R.random((3, 28, 28)).astype(np.float32),
}

PRELUDE = '''
def pattern(shape):
    """Deterministic values in place of the original's random ones."""
    n = 1
    for size in shape:
        n *= size
    return ((torch.arange(n, dtype=torch.float32) * 0.37).sin() * 0.3).reshape(shape)


def set_weights(net):
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(pattern(p.shape))
'''

# Dive into Deep Learning, 6.1 "Layers and Modules" and 6.4 "Lazy Initialization".
D2L_LAYERS_AND_MODULES = '''
import torch
from torch import nn
from torch.nn import functional as F

net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(net[0].weight)
X = torch.tensor(DATA["X20"])  # torch.rand(2, 20)
print(net(X).shape)
print(net[0].weight.shape)
print(net)
set_weights(net)
print(net(X))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.out = nn.LazyLinear(10)

    def forward(self, X):
        return self.out(F.relu(self.hidden(X)))


net = MLP()
net(X)
set_weights(net)
print(net(X).shape, net(X).sum())


class MySequential(nn.Module):
    def __init__(self, *args):
        super().__init__()
        for idx, module in enumerate(args):
            self.add_module(str(idx), module)

    def forward(self, X):
        for module in self.children():
            X = module(X)
        return X


net = MySequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
net(X)
set_weights(net)
print(net(X))


class FixedHiddenMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.rand_weight = torch.tensor(DATA["W20"])  # torch.rand((20, 20))
        self.linear = nn.LazyLinear(20)

    def forward(self, X):
        X = self.linear(X)
        X = F.relu(X @ self.rand_weight + 1)
        X = self.linear(X)
        while X.abs().sum() > 1:
            X /= 2
        return X.sum()


net = FixedHiddenMLP()
net(X)
set_weights(net)
print(net(X))


class NestMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.LazyLinear(64), nn.ReLU(), nn.LazyLinear(32), nn.ReLU())
        self.linear = nn.LazyLinear(16)

    def forward(self, X):
        return self.linear(self.net(X))


chimera = nn.Sequential(NestMLP(), nn.LazyLinear(20), FixedHiddenMLP())
chimera(X)
set_weights(chimera)
print(chimera(X))
'''

# Dive into Deep Learning, 6.2 "Parameter Management", 6.3 "Parameter Initialization",
# 6.5 "Custom Layers".
D2L_PARAMETERS = '''
import torch
from torch import nn
from torch.nn import functional as F

net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
X = torch.tensor(DATA["X4"])  # torch.rand(size=(2, 4))
print(net(X).shape)
set_weights(net)
print(net[2].state_dict())
print(type(net[2].bias), net[2].bias.data)
print(net[2].weight.grad == None)
print([(name, param.shape) for name, param in net.named_parameters()])

shared = nn.LazyLinear(8)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                    nn.LazyLinear(1))
net(X)
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
print(net[2].weight.data[0] == net[4].weight.data[0])


def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_42(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 42)


net[6].apply(init_42)
print(net[6].weight.data)
print(net(X))


class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()


layer = CenteredLayer()
print(layer(torch.tensor([1.0, 2, 3, 4, 5])))
net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
Y = net(torch.tensor(DATA["X8"]))  # torch.rand(4, 8)
set_weights(net)
Y = net(torch.tensor(DATA["X8"]))
print(abs(Y.mean().item()) < 1e-5)


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(pattern((in_units, units)))  # torch.randn(in_units, units)
        self.bias = nn.Parameter(pattern((units,)))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)


linear = MyLinear(5, 3)
print(linear.weight)
print(linear(torch.tensor(DATA["X5"])))
net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.ones(2, 64)))
'''

# Dive into Deep Learning, 6.6 "File I/O": saving tensors and a lazy MLP, loading into a
# fresh (lazy) clone.
D2L_FILE_IO = '''
import torch
from torch import nn
from torch.nn import functional as F

x = torch.arange(4)
torch.save(x, "x-file")
x2 = torch.load("x-file")
print(x2)
y = torch.zeros(4)
torch.save([x, y], "x-files")
x2, y2 = torch.load("x-files")
print((x2, y2))
mydict = {"x": x, "y": y}
torch.save(mydict, "mydict")
mydict2 = torch.load("mydict")
print(mydict2)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.output = nn.LazyLinear(10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))


net = MLP()
X = torch.tensor(DATA["X20"])  # torch.randn(size=(2, 20))
Y = net(X)
set_weights(net)
Y = net(X)
torch.save(net.state_dict(), "mlp.params")
clone = MLP()
clone.load_state_dict(torch.load("mlp.params"))
print(clone.eval())
Y_clone = clone(X)
print(Y_clone == Y)
'''

# Dive into Deep Learning, 7.6 "Convolutional Neural Networks (LeNet)": the model with lazy
# layers, its layer summary, one forward and backward.
D2L_LENET = '''
import torch
from torch import nn

net = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.LazyLinear(120), nn.Sigmoid(),
    nn.LazyLinear(84), nn.Sigmoid(),
    nn.LazyLinear(10))

X = torch.tensor(DATA["IMG"])  # torch.randn(1, 1, 28, 28)
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, "output shape:\\t", X.shape)
set_weights(net)
out = net(torch.tensor(DATA["IMG"]))
print(out)
loss = nn.CrossEntropyLoss()(out, torch.tensor([3]))
loss.backward()
print(loss, net[0].weight.grad.sum(), net[-1].bias.grad)
'''

# Dive into Deep Learning, 8.3 "Network in Network" and 8.4 "GoogLeNet" (the blocks and a
# layer summary, on a small input), with d2l's init_cnn (xavier_uniform_, drawn at random:
# its values are replaced by set_weights before anything is printed from them).
D2L_MODERN_CNNS = '''
import torch
from torch import nn
from torch.nn import functional as F


def nin_block(out_channels, kernel_size, strides, padding):
    return nn.Sequential(
        nn.LazyConv2d(out_channels, kernel_size, strides, padding), nn.ReLU(),
        nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU(),
        nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU())


net = nn.Sequential(
    nin_block(8, kernel_size=5, strides=2, padding=0),
    nn.MaxPool2d(3, stride=2),
    nin_block(10, kernel_size=3, strides=1, padding=1),
    nn.Dropout(0.5),
    nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten())
X = torch.tensor(DATA["IMG"])
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\\t', X.shape)
set_weights(net)
net.eval()
print(net(torch.tensor(DATA["IMG"])))


class Inception(nn.Module):
    def __init__(self, c1, c2, c3, c4, **kwargs):
        super(Inception, self).__init__(**kwargs)
        self.b1_1 = nn.LazyConv2d(c1, kernel_size=1)
        self.b2_1 = nn.LazyConv2d(c2[0], kernel_size=1)
        self.b2_2 = nn.LazyConv2d(c2[1], kernel_size=3, padding=1)
        self.b3_1 = nn.LazyConv2d(c3[0], kernel_size=1)
        self.b3_2 = nn.LazyConv2d(c3[1], kernel_size=5, padding=2)
        self.b4_1 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
        self.b4_2 = nn.LazyConv2d(c4, kernel_size=1)

    def forward(self, x):
        b1 = F.relu(self.b1_1(x))
        b2 = F.relu(self.b2_2(F.relu(self.b2_1(x))))
        b3 = F.relu(self.b3_2(F.relu(self.b3_1(x))))
        b4 = F.relu(self.b4_2(self.b4_1(x)))
        return torch.cat((b1, b2, b3, b4), dim=1)


blk = Inception(4, (4, 8), (2, 4), 4)
x = torch.tensor(DATA["IMG3"][None, :, :12, :12])
print(blk(x).shape)
set_weights(blk)
print(blk(x).sum(), blk(x)[0, :, 0, 0])


def init_cnn(module):
    if type(module) == nn.Linear or type(module) == nn.Conv2d:
        nn.init.xavier_uniform_(module.weight)


net = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.ReLU(), nn.Flatten(),
                    nn.LazyLinear(10))
net(torch.tensor(DATA["IMG"]))
net.apply(init_cnn)
print(net)
'''

# Dive into Deep Learning, 8.5 "Batch Normalization", the concise LeNet.
D2L_BN_LENET = '''
import torch
from torch import nn

net = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5), nn.LazyBatchNorm2d(), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), nn.LazyBatchNorm2d(), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.LazyLinear(120), nn.LazyBatchNorm1d(), nn.Sigmoid(),
    nn.LazyLinear(84), nn.LazyBatchNorm1d(), nn.Sigmoid(),
    nn.LazyLinear(10))
X = torch.tensor(DATA["IMG"]).repeat(2, 1, 1, 1)
print(net(X).shape)
'''

# PyTorch's "Learn the basics": "Build the Neural Network", then "Quickstart"'s training
# and test loops, on a small in-memory data set in place of FashionMNIST, with a custom
# Dataset as in "Datasets & DataLoaders".
LEARN_THE_BASICS = '''
import torch
from torch import nn
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


DEVICE_LINE
print(f"Using {device} device")
model = NeuralNetwork().to(device)
set_weights(model)
print(model)

X = torch.tensor(DATA["IMG"][0])  # torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")

input_image = torch.tensor(DATA["IMG3"])  # torch.rand(3,28,28)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=28*28, out_features=20)
set_weights(layer1)
hidden1 = layer1(flat_image)
print(hidden1.size())
print(f"Before ReLU: {hidden1}\\n\\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \\n")


class CustomImageDataset(Dataset):
    def __init__(self, images, labels, transform=None, target_transform=None):
        self.images = images
        self.labels = labels
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = self.labels[idx]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


training_data = CustomImageDataset(torch.tensor(DATA["IMAGES"][:16]),
                                   torch.tensor(DATA["LABELS"][:16]))
test_data = CustomImageDataset(torch.tensor(DATA["IMAGES"][16:]),
                               torch.tensor(DATA["LABELS"][16:]))
batch_size = 4
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)
for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 2 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n")


epochs = 3
for t in range(epochs):
    print(f"Epoch {t+1}\\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
print("Done!")
'''

# PyTorch's "Learn the basics": "Automatic Differentiation with torch.autograd".
LEARN_AUTOGRAD = '''
import torch

x = torch.ones(5)
y = torch.zeros(3)
w = pattern((5, 3)).requires_grad_()  # torch.randn(5, 3, requires_grad=True)
b = pattern((3,)).requires_grad_()  # torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)
z = torch.matmul(x, w)+b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nSecond call\\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nCall after zeroing gradients\\n{inp.grad}")
'''

# PyTorch's "Word Embeddings: Encoding Lexical Semantics": the N-gram language model.
NGRAM_LANGUAGE_MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

CONTEXT_SIZE = 2
EMBEDDING_DIM = 10
test_sentence = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:
Then being asked, where all thy beauty lies,
Where all the treasure of thy lusty days;""".split()
ngrams = [
    (
        [test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)],
        test_sentence[i]
    )
    for i in range(CONTEXT_SIZE, len(test_sentence))
]
print(ngrams[:3])
vocab = set(test_sentence)
word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}


class NGramLanguageModeler(nn.Module):

    def __init__(self, vocab_size, embedding_dim, context_size):
        super(NGramLanguageModeler, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        log_probs = F.log_softmax(out, dim=1)
        return log_probs


losses = []
loss_function = nn.NLLLoss()
model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
set_weights(model)
optimizer = optim.SGD(model.parameters(), lr=0.001)

for epoch in range(5):
    total_loss = 0
    for context, target in ngrams:
        context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
        model.zero_grad()
        log_probs = model(context_idxs)
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    losses.append(total_loss)
print(losses)
print(model.embeddings.weight[word_to_ix["beauty"]])
'''

PROGRAMS = {
    "d2l_layers_and_modules": D2L_LAYERS_AND_MODULES,
    "d2l_parameters": D2L_PARAMETERS,
    "d2l_file_io": D2L_FILE_IO,
    "d2l_lenet": D2L_LENET,
    "d2l_modern_cnns": D2L_MODERN_CNNS,
    "d2l_bn_lenet": D2L_BN_LENET,
    # The tutorial today (PyTorch 2.6 and later) picks the device with torch.accelerator,
    # before that (2.0) with torch.cuda:
    "learn_the_basics": LEARN_THE_BASICS.replace(
        "DEVICE_LINE", 'device = torch.accelerator.current_accelerator().type '
                       'if torch.accelerator.is_available() else "cpu"'),
    "learn_the_basics_2_0": LEARN_THE_BASICS.replace(
        "DEVICE_LINE", 'device = "cuda" if torch.cuda.is_available() else "cpu"'),
    "learn_autograd": LEARN_AUTOGRAD,
    "ngram_language_model": NGRAM_LANGUAGE_MODEL,
}
