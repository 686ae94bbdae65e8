"""Loss reductions as torch's ``torch.nn._reduction`` spells them: the legacy ``size_average`` / ``reduce``
pair mapped to ``reduction``, and the enum the loss rows take (none 0, mean 1, sum 2)."""
from derivgen.core.registry import aten
from derivgen.kernels.dispatch import broadcast_shape


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else ("sum" if reduce else "none")
    enum = {"none": 0, "mean": 1, "sum": 2}
    if reduction not in enum:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return enum[reduction]


def _broadcast_target(input, target):
    """torch's pointwise losses: warn when the target's size differs from the input's, then broadcast
    both (with the broadcast's error when they cannot be)."""
    if tuple(target.shape) == tuple(input.shape):
        return input, target
    import warnings
    warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                  "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same "
                  "size.", stacklevel=3)
    shape = broadcast_shape([tuple(input.shape), tuple(target.shape)])
    return aten.expand(input, shape), aten.expand(target, shape)


def apply_reduction(loss, reduction):
    """torch's apply_loss_reduction: mean, sum or the loss itself (reduction as the enum)."""
    return aten.mean(loss) if reduction == 1 else aten.sum(loss) if reduction == 2 else loss
