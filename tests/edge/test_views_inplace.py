"""In-place ops on views: expanded views (elements sharing memory) are refused, other views write
through to their base; dtype casts into self are refused where torch refuses them."""
import pytest

from tests.support.edge import Case, check, ok, raises


def _view_write(t):
    a = t.ones(3)
    a[1:].mul_(2)
    return a


def _view_of_graph(t):
    x = t.tensor([1., 2., 3.], dtype=t.float64, requires_grad=True)
    y = x * 1
    y[:2].mul_(3)
    y.sum().backward()
    return y, x.grad


def _transpose_write(t):
    a = t.zeros(2, 3)
    a.t().add_(t.arange(2.))
    return a


def _diagonal_writes(t):
    a = t.zeros(3, 4)
    a.diagonal().fill_(1)
    a.diagonal(1).add_(2)
    a.diagonal(-1).sub_(3)
    return a


def _batched_diagonal_in_graph(t):
    w = t.arange(8., dtype=t.float64).reshape(2, 2, 2).requires_grad_()
    y = w * 1
    y.diagonal(0, 1, 2).mul_(3)
    y.sum().backward()
    return y, w.grad


CASES = [
    Case("expanded_add_", lambda t: t.zeros(1).expand(3).add_(1)),
    Case("expanded_mul_", lambda t: t.ones(3, 1).expand(3, 3).mul_(2)),
    Case("expanded_relu_", lambda t: t.ones(3, 1).expand(3, 2).relu_()),
    Case("expanded_size_one_dims_writable", lambda t: t.zeros(3).expand(1, 3).add_(1)),
    Case("expanded_then_cloned", lambda t: t.zeros(1).expand(3).clone().add_(1)),
    Case("slice_write_through", _view_write),
    Case("transpose_write_through", _transpose_write),
    Case("view_in_graph_backward", _view_of_graph),
    Case("leaf_requires_grad_inplace", lambda t: t.ones(2, requires_grad=True).add_(1)),
    Case("inplace_broadcast_to_bigger", lambda t: t.ones(3).add_(t.ones(2, 3))),
    Case("inplace_float_into_int", lambda t: t.ones(3, dtype=t.int64).add_(t.ones(3))),
    Case("inplace_int_into_float", lambda t: t.ones(3).add_(t.ones(3, dtype=t.int64))),
    Case("inplace_float_into_bool", lambda t: t.tensor([True]).mul_(1.5)),
    Case("inplace_float64_into_float32", lambda t: t.ones(2).mul_(t.tensor([2.5, 3.], dtype=t.float64))),
    Case("diagonal_write_through", _diagonal_writes),
    Case("batched_diagonal_in_graph", _batched_diagonal_in_graph),
]

EXPECTED = {
    'expanded_add_': raises('RuntimeError', 'unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.'),
    'expanded_mul_': raises('RuntimeError', 'unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.'),
    'expanded_relu_': raises('RuntimeError', 'unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.'),
    'expanded_size_one_dims_writable': ok(('float32', [1, 3], [[1.0, 1.0, 1.0]])),
    'expanded_then_cloned': ok(('float32', [3], [1.0, 1.0, 1.0])),
    'slice_write_through': ok(('float32', [3], [1.0, 2.0, 2.0])),
    'transpose_write_through': ok(('float32', [2, 3], [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])),
    'view_in_graph_backward': ok(('float64', [3], [3.0, 6.0, 3.0]), ('float64', [3], [3.0, 3.0, 1.0])),
    'leaf_requires_grad_inplace': raises('RuntimeError', 'a leaf Variable that requires grad is being used in an in-place operation.'),
    'inplace_broadcast_to_bigger': raises('RuntimeError', "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    'inplace_float_into_int': raises('RuntimeError', "result type Float can't be cast to the desired output type Long"),
    'inplace_int_into_float': ok(('float32', [3], [2.0, 2.0, 2.0])),
    'inplace_float_into_bool': raises('RuntimeError', "result type Float can't be cast to the desired output type Bool"),
    'inplace_float64_into_float32': ok(('float32', [2], [2.5, 3.0])),
    'diagonal_write_through': ok(('float32', [3, 4], [[1.0, 2.0, 0.0, 0.0], [-3.0, 1.0, 2.0, 0.0], [0.0, -3.0, 1.0, 2.0]])),
    'batched_diagonal_in_graph': ok(('float64', [2, 2, 2], [[[0.0, 1.0], [2.0, 9.0]], [[12.0, 5.0], [6.0, 21.0]]]),
                                    ('float64', [2, 2, 2], [[[3.0, 1.0], [1.0, 3.0]], [[3.0, 1.0], [1.0, 3.0]]])),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_views_inplace(torch, case):
    check(torch, case, EXPECTED[case.id])
