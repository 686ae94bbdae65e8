"""``BackwardHookFunction``: the identity custom Function that full backward hooks of a Module attach
to (its node, ``BackwardHookFunctionBackward``, sits between the module's inputs or outputs and the
rest of the graph, as in torch). ``derivgen.nn.modules._functions`` exports it under torch's path."""
from derivgen.autograd.function import Function


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args
