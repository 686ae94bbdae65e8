"""A training loop with the usual PyTorch pieces: ``DataLoader`` with two worker processes, an MLP whose
middle block is activation-checkpointed, ``AdamW`` with ``OneCycleLR``, ``clip_grad_norm_``, a forward
hook and a full backward hook on a layer, and an optimizer step hook. The script is a PyTorch program:
``--torch`` runs the same code on PyTorch (weights and data come from numpy, so both print the same
losses up to float32 rounding).

    python examples/training_loop.py            # derivgen
    python examples/training_loop.py --torch    # PyTorch
"""
import sys

import numpy as np

if "--torch" in sys.argv:
    import torch
else:
    import derivgen as torch

from_ckpt = __import__(torch.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(4, 32)
        self.block = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32))
        self.out = torch.nn.Linear(32, 1)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        h = h + from_ckpt.checkpoint(self.block, h, use_reentrant=False)  # recomputed in backward
        return self.out(torch.tanh(h))


def numpy_weights(model):
    rng = np.random.default_rng(1)
    return {k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
            for k, v in model.state_dict().items()}


def main():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (240, 4)).astype(np.float32)
    y = (np.sin(x[:, :1] * x[:, 1:2]) + 0.5 * x[:, 2:3] - 0.2 * x[:, 3:4] ** 2).astype(np.float32)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    order = rng.permutation(len(dataset)).tolist()  # the same sampling order for both libraries
    loader = torch.utils.data.DataLoader(dataset, batch_size=24, sampler=order, num_workers=2,
                                         persistent_workers=True)
    model = Net()
    model.load_state_dict(numpy_weights(model))
    calls = {"forward": 0, "steps": 0}
    grad_norms = []
    model.out.register_forward_hook(lambda mod, args, out: calls.__setitem__("forward", calls["forward"] + 1))
    model.out.register_full_backward_hook(lambda mod, gi, go: grad_norms.append(float(go[0].norm())))
    epochs = 4
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    opt.register_step_post_hook(lambda o, args, kwargs: calls.__setitem__("steps", calls["steps"] + 1))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, epochs=epochs, steps_per_epoch=len(loader))
    loss_fn = torch.nn.MSELoss()
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            sched.step()
            total += loss.item() * len(xb)
        print(f"epoch {epoch}  lr {sched.get_last_lr()[0]:.6f}  loss {total / len(dataset):.5f}")
    print(f"forward hook calls {calls['forward']}  optimizer steps {calls['steps']}  "
          f"backward hook calls {len(grad_norms)}")


if __name__ == "__main__":
    main()
