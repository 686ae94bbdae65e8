"""A VAE on synthetic binary vectors: encoder to mu / logvar, the reparameterisation trick with noise
drawn from a fixed NumPy generator, a sigmoid decoder, BCE + KL loss, and sampling from the prior."""
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

rng = np.random.default_rng(2)
data = torch.from_numpy((rng.random((64, 12)) > 0.5).astype(np.float32))


class VAE(nn.Module):
    def __init__(self, d_in=12, d_hidden=16, d_latent=2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc21 = nn.Linear(d_hidden, d_latent)
        self.fc22 = nn.Linear(d_hidden, d_latent)
        self.fc3 = nn.Linear(d_latent, d_hidden)
        self.fc4 = nn.Linear(d_hidden, d_in)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 12))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 12), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD, BCE, KLD


model = VAE()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
noise = torch.from_numpy(rng.standard_normal((20, 64, 2)).astype(np.float32))
model.train()
for epoch in range(20):
    optimizer.zero_grad()
    recon, mu, logvar = model(data, noise[epoch])
    loss, bce, kld = loss_function(recon, data, mu, logvar)
    loss.backward()
    optimizer.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss {loss.item() / len(data):.4f} (bce {bce.item():.2f}, kld {kld.item():.2f})")
print(recon.shape, mu.shape, logvar.grad_fn.name(), loss.grad_fn.name())

model.eval()
with torch.no_grad():
    z = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))
    sample = model.decode(z)
    print(sample.shape, bool(((sample > 0) & (sample < 1)).all()))
    print((sample > 0.5).int())
    mu, logvar = model.encode(data[:3])
    print(torch.round(mu, decimals=2), logvar.exp().shape)
eps = torch.randn_like(mu)
print(eps.shape, eps.dtype, eps.requires_grad)
