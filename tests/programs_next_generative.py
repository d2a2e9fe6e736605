"""Programs of ``test_programs_next_more.py`` (issue 28) that make or rebuild data: PyTorch's
DCGAN and VAE examples, a convolutional autoencoder, Karpathy's makemore part 5 (WaveNet),
Dive into Deep Learning's transposed convolution (14.10).
Each is a function of ``torch`` (the library it runs on) and ``init`` (see the test's
``harness``), written as its authors write it; random draws are numpy's (below)."""

import numpy as np
from sklearn.datasets import load_digits

R = np.random.default_rng(2028)
IMAGES = (load_digits().images[:16] / 16.0).astype(np.float32)  # (16, 8, 8) in [0, 1]


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


# ---------------------------------------------------------------- D2L: transposed convolution
# Dive into Deep Learning 14.10 "Transposed Convolution": trans_conv by hand against
# nn.ConvTranspose2d (weight.data assigned), padding, stride, the multi-channel shape check
# tconv(conv(X)).shape == X.shape, and the connection to matrix transposition (kernel2matrix,
# corr2d by a matrix product, the transposed convolution by W's transpose). A Conv2d's
# random init is replaced by ``init``.
CHANNELS = R.random((1, 10, 16, 16)).astype(np.float32)


def d2l_transposed_convolution(torch, init):
    nn = torch.nn  # (from torch import nn)

    def trans_conv(X, K):
        h, w = K.shape
        Y = torch.zeros((X.shape[0] + h - 1, X.shape[1] + w - 1))
        for i in range(X.shape[0]):
            for j in range(X.shape[1]):
                Y[i: i + h, j: j + w] += X[i, j] * K
        return Y

    def corr2d(X, K):
        h, w = K.shape
        Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
        for i in range(Y.shape[0]):
            for j in range(Y.shape[1]):
                Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
        return Y

    out = {}
    X = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    K = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    out["trans_conv"] = trans_conv(X, K)
    X, K = X.reshape(1, 1, 2, 2), K.reshape(1, 1, 2, 2)
    tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, bias=False)
    tconv.weight.data = K
    out["tconv"] = tconv(X)
    tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, padding=1, bias=False)
    tconv.weight.data = K
    out["padding"] = tconv(X)
    tconv = nn.ConvTranspose2d(1, 1, kernel_size=2, stride=2, bias=False)
    tconv.weight.data = K
    out["stride"] = tconv(X)
    X = torch.tensor(CHANNELS)  # torch.rand(size=(1, 10, 16, 16))
    conv = init("conv", nn.Conv2d(10, 20, kernel_size=5, padding=2, stride=3))
    tconv = init("tconv", nn.ConvTranspose2d(20, 10, kernel_size=5, padding=2, stride=3))
    out["same shape"] = float(tconv(conv(X)).shape == X.shape)
    out["round trip"] = tconv(conv(X))[0, 0, :2]

    X = torch.arange(9.0).reshape(3, 3)
    K = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    Y = corr2d(X, K)
    out["corr2d"] = Y

    def kernel2matrix(K):
        k, W = torch.zeros(5), torch.zeros((4, 9))
        k[:2], k[3:5] = K[0, :], K[1, :]
        W[0, :5], W[1, 1:6], W[2, 3:8], W[3, 4:] = k, k, k, k
        return W

    W = kernel2matrix(K)
    out["by matmul"] = float((Y == torch.matmul(W, X.reshape(-1)).reshape(2, 2)).all())
    Z = trans_conv(Y, K)
    out["transposed by W.T"] = float((Z == torch.matmul(W.T, Y.reshape(-1)).reshape(3, 3)).all())
    return out
