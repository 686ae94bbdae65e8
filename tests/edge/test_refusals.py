"""Where torch refuses: bool subtraction and negation, integers to negative integer powers, alpha of
the wrong kind, integer tensors requiring grad, mean of integers, shape and dtype mismatches, refused Scalar
values (CELU's alpha of 0, the negative slope of an in-place activation's backward), integer operands of
ops torch implements for floating dtypes only, masks and conditions that are not boolean."""
import pytest

from tests.support.edge import Case, check, ok, raises

CASES = [
    Case("bool_minus_bool", lambda t: t.tensor([True]) - t.tensor([False])),
    Case("number_minus_bool", lambda t: 1 - t.tensor([True])),
    Case("bool_minus_number", lambda t: t.tensor([True]) - 1),
    Case("float_minus_true", lambda t: t.tensor([1.]) - True),
    Case("int_minus_bool_tensor", lambda t: t.tensor([1, 2]) - t.tensor([True])),
    Case("sub_bool_tensors_function", lambda t: t.sub(t.tensor([True]), t.tensor([True]))),
    Case("neg_bool", lambda t: -t.tensor([True])),
    Case("neg_bool_method", lambda t: t.tensor([True]).neg()),
    Case("int_to_negative_power", lambda t: t.tensor([2, 3]) ** -1),
    Case("int_to_negative_power_inplace", lambda t: t.tensor([2]).pow_(-1)),
    Case("bool_to_bool_power", lambda t: t.tensor([True]) ** t.tensor([True])),
    Case("int_alpha_float", lambda t: t.tensor([1]).add(1, alpha=1.5)),
    Case("int_sub_alpha_float", lambda t: t.tensor([1]).sub(t.tensor([1]), alpha=0.5)),
    Case("rsub_alpha_float", lambda t: t.rsub(t.tensor([1]), 1, alpha=0.5)),
    Case("int_alpha_bool", lambda t: t.tensor([1]).add(t.tensor([1]), alpha=True)),
    Case("bool_alpha_bool", lambda t: t.tensor([True]).add(t.tensor([True]), alpha=True)),
    Case("int_plus_float_alpha_float", lambda t: t.tensor([1]).add(1.5, alpha=2.5)),
    Case("int_tensor_requires_grad", lambda t: t.tensor([1, 2], requires_grad=True)),
    Case("int_requires_grad_", lambda t: t.ones(2, dtype=t.int64).requires_grad_()),
    Case("mean_int", lambda t: t.tensor([1, 2]).mean()),
    Case("mm_shapes", lambda t: t.ones(2, 3).mm(t.ones(2, 3))),
    Case("mm_dtypes", lambda t: t.ones(2, 3).mm(t.ones(3, 2, dtype=t.float64))),
    Case("broadcast_mismatch", lambda t: t.ones(2, 3) + t.ones(4)),
    Case("view_bad_size", lambda t: t.ones(6).view(4)),
    Case("reshape_bad_size", lambda t: t.ones(6).reshape(4, -1)),
    Case("index_out_of_range", lambda t: t.ones(3)[5]),
    Case("dim_out_of_range", lambda t: t.ones(3).sum(2)),
    Case("softmax_dim_out_of_range", lambda t: t.ones(3).softmax(1)),
    Case("item_of_many", lambda t: t.ones(2).item()),
    Case("backward_of_non_scalar", lambda t: t.ones(2, requires_grad=True).mul(2).backward()),
    Case("abs_bool", lambda t: t.tensor([True]).abs()),
    # called twice: the second call takes the dispatcher's compiled fast path, which must refuse too
    Case("celu_alpha_zero", lambda t: [t.celu(t.ones(3), alpha=0.) for _ in range(2)]),
    Case("celu_inplace_alpha_zero", lambda t: [t.nn.functional.celu_(t.ones(3), alpha=0.) for _ in range(2)]),
    Case("leaky_relu_inplace_negative_slope_backward", lambda t: t.nn.functional.leaky_relu_(
        t.ones(2, requires_grad=True) * 1, -0.5).sum().backward()),
    Case("logaddexp_int", lambda t: t.logaddexp(t.tensor([1, 2]), t.tensor([1, 2]))),
    Case("logsigmoid_int", lambda t: t.nn.functional.logsigmoid(t.tensor([1, 2]))),
    Case("softshrink_int", lambda t: t.nn.functional.softshrink(t.tensor([1, 2]))),
    Case("hardshrink_int", lambda t: t.nn.functional.hardshrink(t.tensor([1, 2]))),
    Case("where_long_condition", lambda t: t.where(t.tensor([1, 0]), t.tensor([1.]), t.tensor([2.]))),
    Case("masked_fill_long_mask", lambda t: t.tensor([1., 2.]).masked_fill(t.tensor([1, 0]), 3.)),
    Case("masked_fill_value_dim_before_mask", lambda t: t.tensor([1., 2.]).masked_fill(
        t.tensor([1, 0]), t.tensor([3.]))),
]

EXPECTED = {
    'bool_minus_bool': raises('RuntimeError', 'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.'),
    'number_minus_bool': raises('RuntimeError', 'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'bool_minus_number': raises('RuntimeError', 'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'float_minus_true': raises('RuntimeError', 'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'int_minus_bool_tensor': raises('RuntimeError', 'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'sub_bool_tensors_function': raises('RuntimeError', 'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.'),
    'neg_bool': raises('RuntimeError', 'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'neg_bool_method': raises('RuntimeError', 'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    'int_to_negative_power': raises('RuntimeError', 'Integers to negative integer powers are not allowed.'),
    'int_to_negative_power_inplace': raises('RuntimeError', 'Integers to negative integer powers are not allowed.'),
    'bool_to_bool_power': raises('NotImplementedError', '"pow" not implemented for \'Bool\''),
    'int_alpha_float': raises('RuntimeError', 'For integral input tensors, argument alpha must not be a floating point number.'),
    'int_sub_alpha_float': raises('RuntimeError', 'For integral input tensors, argument alpha must not be a floating point number.'),
    'rsub_alpha_float': raises('RuntimeError', 'For integral input tensors, argument alpha must not be a floating point number.'),
    'int_alpha_bool': raises('RuntimeError', 'Boolean alpha only supported for Boolean results.'),
    'bool_alpha_bool': ok(('bool', [1], [True])),
    'int_plus_float_alpha_float': ok(('float32', [1], [4.75])),
    'int_tensor_requires_grad': raises('RuntimeError', 'Only Tensors of floating point and complex dtype can require gradients'),
    'int_requires_grad_': raises('RuntimeError', 'only Tensors of floating point dtype can require gradients'),
    'mean_int': raises('RuntimeError', 'mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long'),
    'mm_shapes': raises('RuntimeError', 'mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)'),
    'mm_dtypes': raises('RuntimeError', 'expected m1 and m2 to have the same dtype, but got: float != double'),
    'broadcast_mismatch': raises('RuntimeError', 'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1'),
    'view_bad_size': raises('RuntimeError', "shape '[4]' is invalid for input of size 6"),
    'reshape_bad_size': raises('RuntimeError', "shape '[4, -1]' is invalid for input of size 6"),
    'index_out_of_range': raises('IndexError', 'index 5 is out of bounds for dimension 0 with size 3'),
    'dim_out_of_range': raises('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 2)'),
    'softmax_dim_out_of_range': raises('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)'),
    'item_of_many': raises('RuntimeError', 'a Tensor with 2 elements cannot be converted to Scalar'),
    'backward_of_non_scalar': raises('RuntimeError', 'grad can be implicitly created only for scalar outputs'),
    'abs_bool': raises('NotImplementedError', '"abs_cpu" not implemented for \'Bool\''),
    'celu_alpha_zero': raises('RuntimeError', 'ZeroDivisionError: alpha cannot be 0 for CELU'),
    'celu_inplace_alpha_zero': raises('RuntimeError', 'ZeroDivisionError: alpha cannot be 0 for CELU'),
    'logaddexp_int': raises('NotImplementedError', '"logaddexp_cpu" not implemented for \'Long\''),
    'logsigmoid_int': raises('NotImplementedError', '"log_sigmoid_cpu" not implemented for \'Long\''),
    'softshrink_int': raises('NotImplementedError', '"softshrink_check" not implemented for \'Long\''),
    'hardshrink_int': raises('NotImplementedError', '"hardshrink_cpu" not implemented for \'Long\''),
    'where_long_condition': raises('RuntimeError', 'where expected condition to be a boolean tensor, but got a tensor with dtype Long'),
    'masked_fill_long_mask': raises('RuntimeError', 'masked_fill_ only supports boolean masks, but got mask with dtype long int'),
    'masked_fill_value_dim_before_mask': raises('RuntimeError', 'masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).'),
    'leaky_relu_inplace_negative_slope_backward': raises('RuntimeError', 'In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward calculation with negative slope'),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_refusals(torch, case):
    check(torch, case, EXPECTED[case.id])
