"""Loss functions and activations on fixed inputs: values, reductions, class weights, ignore_index,
label smoothing, and the functional and module forms of the common activations, with gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F

logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [-1.0, 3.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
target = torch.tensor([0, 2, 1, 1])
print(F.cross_entropy(logits, target))
print(nn.CrossEntropyLoss(reduction="sum")(logits, target), nn.CrossEntropyLoss(reduction="none")(logits, target))
print(nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))(logits, target))
print(nn.CrossEntropyLoss(ignore_index=1)(logits, target), nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target))
probs = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]])
print(F.cross_entropy(logits, probs))
print(F.nll_loss(F.log_softmax(logits, dim=1), target), nn.NLLLoss()(torch.log_softmax(logits, 1), target))
loss = F.cross_entropy(logits, target)
loss.backward()
print(logits.grad)

pred = torch.tensor([0.5, 1.5, 2.0, -1.0], requires_grad=True)
tgt = torch.tensor([1.0, 1.0, 3.0, 0.0])
print(F.mse_loss(pred, tgt), F.l1_loss(pred, tgt), F.smooth_l1_loss(pred, tgt), F.huber_loss(pred, tgt, delta=0.5))
print(nn.MSELoss(reduction="none")(pred, tgt), nn.L1Loss(reduction="sum")(pred, tgt))
p = torch.tensor([0.9, 0.2, 0.6])
t = torch.tensor([1.0, 0.0, 1.0])
print(F.binary_cross_entropy(p, t), nn.BCELoss(weight=torch.tensor([1.0, 2.0, 3.0]))(p, t))
print(F.binary_cross_entropy_with_logits(torch.tensor([2.0, -1.0, 0.5]), t))
print(F.kl_div(torch.log_softmax(logits.detach(), 1), probs, reduction="batchmean"))
print(nn.KLDivLoss(reduction="sum")(torch.log(probs), probs))
print(F.cosine_similarity(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 1.0], [1.0, 1.0]])))
print(F.margin_ranking_loss(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 1.0]), torch.tensor([1.0, 1.0])))
print(F.soft_margin_loss(torch.tensor([0.5, -0.5]), torch.tensor([1.0, -1.0])))
print(nn.HingeEmbeddingLoss()(torch.tensor([0.3, 2.0]), torch.tensor([1.0, -1.0])))
print(nn.TripletMarginLoss(margin=1.0)(torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 3.0]])))
print(F.poisson_nll_loss(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 2.0])))
print(nn.GaussianNLLLoss()(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 1.5]), torch.tensor([0.5, 0.5])))

x = torch.linspace(-2.7, 3.3, 7, requires_grad=True)  # no rounded value below is within 10 ulps of a rounding boundary
for name in ["relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid", "tanh", "softplus",
             "softsign", "hardtanh", "hardsigmoid", "hardswish", "leaky_relu", "logsigmoid", "tanhshrink",
             "softshrink", "hardshrink"]:
    y = getattr(F, name)(x)
    g, = torch.autograd.grad(y.sum(), x)
    print(f"{name:12s}", torch.round(y.detach(), decimals=4).tolist(), torch.round(g, decimals=4).tolist())
print(F.softmax(x, dim=0).sum(), F.log_softmax(x, 0)[-1], F.softmin(x, dim=0)[0], F.glu(torch.arange(4.0)))
print(F.gelu(x, approximate="tanh")[0], F.leaky_relu(x, 0.2)[0], F.elu(x, alpha=2.0)[0], F.threshold(x, 0.5, -1.0))
print(torch.relu(x), torch.sigmoid(x)[3], torch.tanh(x)[3], torch.selu(x)[0], torch.celu(x)[0])
print(nn.PReLU()(x), nn.Softsign()(x)[0], nn.LogSigmoid()(x)[0], nn.Softmin(dim=0)(x)[0], nn.ReLU6()(x * 3))
print(nn.SiLU(), nn.GELU(approximate="tanh"), nn.LeakyReLU(0.01), nn.Softplus(beta=2, threshold=10), nn.PReLU(3))
