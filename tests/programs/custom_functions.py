"""Custom autograd Functions as tutorials write them: MyReLU with save_for_backward, Exp saving its
output, a function with non-tensor arguments and needs_input_grad, mark_non_differentiable, and
once_differentiable; graph names, gradients and gradcheck."""
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
y = MyReLU.apply(x)
print(y, y.grad_fn.name(), type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
print(Exp.apply(x), torch.autograd.gradcheck(Exp.apply, (x,)))


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


x = torch.tensor([1.0, 2.0], requires_grad=True)
MulConstant.apply(x, 5.0).sum().backward()
print(x.grad)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


inp = (torch.arange(6, dtype=torch.double).reshape(2, 3).requires_grad_(), torch.ones(4, 3, dtype=torch.double, requires_grad=True),
       torch.zeros(4, dtype=torch.double, requires_grad=True))
print(torch.autograd.gradcheck(LinearFunction.apply, inp, eps=1e-6, atol=1e-4))
out = LinearFunction.apply(*inp)
print(out, out.grad_fn.name())
out.sum().backward()
print(inp[1].grad, inp[2].grad)


class SortWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_values, grad_idx):
        idx, = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad.scatter_(0, idx, grad_values)
        return grad


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
values, idx = SortWithIndex.apply(x)
print(values, idx, idx.requires_grad)
(values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)


class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ((x >= ctx.lo) & (x <= ctx.hi)).to(g.dtype), None, None


x = torch.linspace(-2, 2, 5, requires_grad=True)
Clamp.apply(x, -1.0, 1.0).sum().backward()
print(x.grad)
try:
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    Bad.apply(torch.ones(2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
