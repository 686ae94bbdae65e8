"""Tensors: creation, attributes, indexing, joining, arithmetic and the NumPy bridge."""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)

np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_np)

x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_zeros = torch.zeros_like(x_data, dtype=torch.float)
print(f"Zeros Tensor: \n {x_zeros} \n")

shape = (2, 3,)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

tensor = torch.rand(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
print(bool(((tensor >= 0) & (tensor < 1)).all()))

tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)

t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)
print(t1.shape)

y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1)
print(torch.equal(y1, y2), torch.equal(y1, y3))

z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z1)
print(torch.equal(z1, z3))

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")

print(torch.is_tensor(t), torch.numel(torch.zeros(2, 3)))
print(torch.arange(5), torch.arange(1, 4), torch.arange(1, 2.5, 0.5))
print(torch.linspace(-1, 1, steps=5))
print(torch.full((2, 2), 7), torch.eye(3))
print(torch.zeros(2, 3).dtype, torch.tensor([1, 2]).dtype, torch.tensor([1.5]).dtype, torch.tensor([True]).dtype)
print(torch.tensor([1, 2, 3]).float(), torch.tensor([1.7, -2.2]).long(), torch.tensor([0, 3]).bool())
print(torch.tensor([[1, 2], [3, 4]]).to(torch.float64))
print(x_data.size(), x_data.size(0), x_data.dim(), x_data.ndim, x_data.numel())
