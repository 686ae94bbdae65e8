"""A custom Dataset (__len__ / __getitem__) with a transform and a target transform (one-hot by
scatter_), a DataLoader with a collate_fn, dict samples, and a sampler."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, SequentialSampler


class SquaresDataset(Dataset):
    def __init__(self, n, transform=None, target_transform=None):
        self.x = np.arange(n, dtype=np.float32)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        value = torch.tensor([self.x[idx]])
        label = int(self.x[idx]) % 4
        if self.transform:
            value = self.transform(value)
        if self.target_transform:
            label = self.target_transform(label)
        return value, label


def one_hot(y):
    return torch.zeros(4, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)


ds = SquaresDataset(10, transform=lambda v: v ** 2, target_transform=one_hot)
print(len(ds))
print(ds[3])
train_dataloader = DataLoader(ds, batch_size=4, shuffle=False)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
print(train_features.squeeze(), train_labels[0])

plain = SquaresDataset(6)
loader = DataLoader(plain, batch_size=3)
for values, labels in loader:
    print(values.dtype, values.shape, labels, labels.dtype)


class DictDataset(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"id": i, "feat": torch.full((2,), float(i)), "name": f"item{i}"}


for batch in DataLoader(DictDataset(), batch_size=2):
    print(batch["id"], batch["feat"].tolist(), batch["name"])


def pad_collate(batch):
    seqs = [torch.ones(n) * n for n in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    return padded, lengths


class Lengths(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i + 1


for padded, lengths in DataLoader(Lengths(), batch_size=2, collate_fn=pad_collate):
    print(padded, lengths)

print(list(SequentialSampler(range(4))), list(DataLoader(range(5), batch_size=2)))
