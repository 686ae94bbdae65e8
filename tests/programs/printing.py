"""What print shows: tensors of every common dtype and size (summarised large tensors, scientific
notation, negative zeros, nan / inf), requires_grad and grad_fn in reprs, set_printoptions, Size,
dtypes and devices, and nested models."""
import torch
import torch.nn as nn

print(torch.tensor([1.0, 2.5, -3.25]))
print(torch.tensor([1e-5, 1.0, 1e5]))
print(torch.tensor([1e-10, 1e10]))
print(torch.tensor([0.1, 0.25], dtype=torch.float64))
print(torch.tensor([1, -2, 300]))
print(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([1, 2], dtype=torch.int8))
print(torch.tensor([True, False]))
print(torch.tensor(3.5), torch.tensor(7), torch.tensor([]), torch.zeros(0, 3))
print(torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0]))
print(torch.arange(2000.0))
print(torch.arange(1200).reshape(40, 30))
print(torch.ones(2, 3, 4))
print(torch.linspace(0, 1, 7))
print(torch.tensor([123456789.0, 1.0]))
print(torch.tensor([[1.5, 2.0], [3.0, 4.125]], requires_grad=True))
w = torch.tensor([1.0, 2.0], requires_grad=True)
print(w * 2, w.sum(), w[0], w.view(2, 1), w.exp())
print(torch.nn.Parameter(torch.zeros(2)))
print(repr(torch.zeros(2)), str(torch.ones(1)))
print(f"{torch.tensor(2.5).item():.2f}", torch.tensor([1.23456789]))
print(torch.zeros(2, 3).shape, torch.Size([2, 3]), torch.zeros(2, 3).size(), torch.Size([2, 3])[1:])
print(torch.float32, torch.float64, torch.int64, torch.long, torch.float, torch.double, torch.bool, torch.uint8)
print(torch.device("cpu"), torch.zeros(1).device, torch.device("cpu", 0), repr(torch.device("cpu")))
print(torch.tensor([1, 2]).type(), torch.zeros(1).dtype.is_floating_point, torch.int32.is_floating_point)
print(str(torch.float16), torch.get_default_dtype(), torch.finfo(torch.float32).eps, torch.iinfo(torch.int8).max)

torch.set_printoptions(precision=2)
print(torch.tensor([1.23456, 2.34567]))
torch.set_printoptions(precision=4, sci_mode=False)
print(torch.tensor([1e-5, 1.0]))
torch.set_printoptions(profile="default")
print(torch.tensor([1.23456, 2.34567]))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(10))
torch.set_printoptions(profile="default")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.LeakyReLU(0.1, inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


model = nn.Sequential(
    Block(),
    nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten(),
    nn.ModuleDict({"head": nn.Linear(8, 4), "aux": nn.Linear(8, 2)}),
    nn.ModuleList([nn.Dropout(0.2), nn.GELU(), nn.Softmax(dim=-1)]),
    nn.Embedding(10, 3, padding_idx=0),
    nn.LSTM(4, 8, num_layers=2, batch_first=True, bidirectional=True),
    nn.LayerNorm(8, eps=1e-6),
    nn.MaxPool2d(2), nn.AvgPool1d(3, stride=2), nn.ConvTranspose2d(4, 2, 2, stride=2),
    nn.Sigmoid(), nn.Tanh(), nn.ELU(alpha=0.5), nn.Hardtanh(-2, 2), nn.Identity(), nn.CrossEntropyLoss(),
)
print(model)
print(nn.Linear(3, 4, bias=False), nn.Conv1d(2, 4, 5, dilation=2, groups=2), nn.BatchNorm1d(5, momentum=None))
print(nn.GroupNorm(2, 4), nn.MSELoss(reduction="sum"), nn.Upsample(scale_factor=2, mode="nearest"))
print(nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(3, 3))]))
