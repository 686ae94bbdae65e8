"""Fit a small MLP to a noisy sine: ``nn.Sequential`` + ``nn.MSELoss`` + a hand-written SGD step under
``no_grad``. The script is a PyTorch program: replace the import line by ``import torch`` and it runs
under PyTorch and prints the same losses.

    python examples/mlp_regression.py                      # train from derivgen's own initialisation
    python examples/mlp_regression.py --save-init w.npz    # also write the initial weights
    python examples/mlp_regression.py --load-init w.npz    # start from weights written by either library
"""
import sys

import numpy as np

import derivgen as torch


def make_data(n=256):
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 3.0, (n, 1)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y)


def main(argv):
    torch.manual_seed(0)
    x, y = make_data()
    model = torch.nn.Sequential(
        torch.nn.Linear(1, 32), torch.nn.Tanh(),
        torch.nn.Linear(32, 32), torch.nn.Tanh(),
        torch.nn.Linear(32, 1),
    )
    if "--load-init" in argv:
        state = np.load(argv[argv.index("--load-init") + 1])
        model.load_state_dict({k: torch.from_numpy(state[k]) for k in state.files})
    if "--save-init" in argv:
        np.savez(argv[argv.index("--save-init") + 1], **{k: v.numpy() for k, v in model.state_dict().items()})
    print(model)
    loss_fn = torch.nn.MSELoss()
    lr = 0.1
    for step in range(201):
        loss = loss_fn(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        if step % 20 == 0:
            print(f"step {step:3d}  loss {loss.item():.6f}")


if __name__ == "__main__":
    main(sys.argv[1:])
