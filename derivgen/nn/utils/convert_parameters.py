"""``parameters_to_vector`` / ``vector_to_parameters``: all parameters as one flat vector and back."""
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.core.typename import typename as _typename


def parameters_to_vector(parameters):
    return aten.cat([param.view(-1) for param in parameters], 0)


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
