"""No traceback from inside numpy or Numba: out-of-range indices and bad inputs give torch's error
types, and an exception that still escapes numpy/Numba in an op becomes a RuntimeError naming the op,
its tensors' shapes and dtypes (derivgen.ops.errors)."""
import numpy as np
import pytest

import derivgen
from derivgen.ops import errors
from tests.support.edge import Case, check, raises

CASES = [
    Case("gather_index_out_of_range", lambda t: t.ones(3).gather(0, t.tensor([5]))),
    Case("index_select_out_of_range", lambda t: t.ones(3).index_select(0, t.tensor([5]))),
    Case("embedding_out_of_range", lambda t: t.nn.functional.embedding(t.tensor([5]), t.ones(3, 2))),
    Case("tensor_index_out_of_range", lambda t: t.ones(3)[t.tensor([5])]),
    Case("cross_entropy_target_out_of_range", lambda t: t.nn.functional.cross_entropy(t.zeros(2, 3), t.tensor([0, 3]))),
    Case("cat_dims_mismatch", lambda t: t.cat([t.ones(2, 2), t.ones(3)])),
    Case("stack_shapes_mismatch", lambda t: t.stack([t.ones(2), t.ones(3)])),
    Case("matmul_vector_sizes", lambda t: t.ones(3) @ t.ones(4)),
    Case("expand_bad_size", lambda t: t.ones(2).expand(3)),
    Case("permute_wrong_length", lambda t: t.ones(2, 3).permute(0)),
]

EXPECTED = {
    'gather_index_out_of_range': raises('RuntimeError', 'index 5 is out of bounds for dimension 0 with size 3'),
    'index_select_out_of_range': raises('IndexError', 'index out of range in self'),
    'embedding_out_of_range': raises('IndexError', 'index out of range in self'),
    'tensor_index_out_of_range': raises('IndexError', 'index 5 is out of bounds for dimension 0 with size 3'),
    'cross_entropy_target_out_of_range': raises('IndexError', 'Target 3 is out of bounds.'),
    'cat_dims_mismatch': raises('RuntimeError', 'Tensors must have same number of dimensions: got 2 and 1'),
    'stack_shapes_mismatch': raises('RuntimeError', 'stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1'),
    'matmul_vector_sizes': raises('RuntimeError', 'inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively'),
    'expand_bad_size': raises('RuntimeError', 'The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [2]'),
    'permute_wrong_length': raises('RuntimeError', 'permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1'),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_error_translation(torch, case):
    check(torch, case, EXPECTED[case.id])


def test_numba_error_in_a_forward_is_translated(monkeypatch):
    """A kernel that Numba's compiler cannot type (TypingError) in an op's forward: the op reports it as a
    RuntimeError naming the op, the shapes and the dtypes, never Numba's own exception."""
    import numba

    @numba.njit
    def untypable(a):
        return a.no_such_attribute

    from derivgen.generated import kernels
    monkeypatch.setattr(type(kernels.add_Tensor_forward), "forward",
                        lambda self, tensors, scalars=(), out=None: untypable(tensors[0]._array))
    x = derivgen.ones(3, dtype=derivgen.int64)
    with pytest.raises(RuntimeError) as info:
        x.add_(1)  # the general path: an int tensor and a 0-dim int64 operand
    text = str(info.value).splitlines()[0]
    assert text.startswith("add_(): tensors [3] Long, [] Long: TypingError"), text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_numpy_error_in_a_forward_is_translated(monkeypatch):
    """An exception raised inside numpy during a hand-written forward is translated at the same point."""
    from derivgen.ops import forwards

    def broken(self, dim, keepdim=False, *, dtype=None):
        return np.add.reduce(self, axis=7)
    monkeypatch.setattr(forwards, "cumsum", lambda self, dim, *, dtype=None: broken(self, dim))
    with pytest.raises(RuntimeError, match=r"^cumsum\(\): tensors \[2, 3\] Double: AxisError"):
        derivgen.ones(2, 3, dtype=derivgen.float64).cumsum(0)


def test_own_errors_pass_through_unchanged():
    """derivgen's own checks already raise torch's errors: the translation point leaves them alone."""
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)$"):
        derivgen.ones(2, 3).mm(derivgen.ones(2, 3))
    assert not errors.is_foreign(RuntimeError("x"))


# ---- backward kernels: the generated kernel calls of a node's backward translate at the same point --

def _huge_saved(t):
    """``sin``'s backward reads its saved input, which an unpack hook hands back broadcast to 24 TiB: the
    kernel's output cannot be allocated (numpy's MemoryError in derivgen, the allocator's in torch)."""
    x = t.tensor([0.5, 1.0, 2.0], dtype=t.float64, requires_grad=True)
    with t.autograd.graph.saved_tensors_hooks(lambda s: s, lambda s: s.expand(1 << 20, 1 << 20, 3)):
        y = x.sin()
    y.sum().backward()


def test_numpy_error_in_a_backward_kernel_is_torchs_runtime_error(torch):
    with pytest.raises(RuntimeError) as info:
        _huge_saved(torch)
    if torch is derivgen:
        text = str(info.value).splitlines()[0]
        assert text.startswith("sin_backward_self(): tensors [3] Double, [1048576, 1048576, 3] Double: "
                               "MemoryError: Unable to allocate 24.0 TiB"), text
        assert info.value.__cause__ is None and info.value.__suppress_context__


def test_numba_error_in_a_backward_kernel_is_translated():
    """float16 arrays reach Numba, which has no float16 arithmetic on the CPU: the kernel call raises a
    RuntimeError naming the kernel, the shapes and the dtypes, never Numba's own exception."""
    from derivgen.generated import kernels
    half = np.ones((2, 3), np.float16)
    with pytest.raises(RuntimeError) as info:
        kernels.mul_Tensor_backward_self.call2(half, half)
    assert str(info.value).splitlines()[0] == ("mul_Tensor_backward_self(): tensors [2, 3] float16, [2, 3] float16: "
                                               "NotImplementedError: float16")
    assert not errors.is_foreign(info.value)


def test_own_errors_in_a_backward_kernel_pass_through_unchanged():
    from derivgen.generated import kernels
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           r"at non-singleton dimension 0$"):
        kernels.mul_Tensor_backward_self((np.ones(3), np.ones(4)))


LAYOUT_HOOKS = {
    "expanded": lambda g: g[:1].expand(2, 3),
    "transposed": lambda g: g.t().contiguous().t(),
    "strided": lambda g: g.repeat(1, 2)[:, ::2],
    "zero_dim_broadcast": lambda g: g.sum().expand(2, 3),
}
LAYOUT_OPS = {"sin": lambda y: y.sin(), "mul": lambda y: y * y, "pow": lambda y: y ** 3,
              "div": lambda y: 1 / y, "tanh": lambda y: y.tanh(), "mm": lambda y: y.mm(y.t())}


@pytest.mark.parametrize("op", LAYOUT_OPS)
@pytest.mark.parametrize("hook", LAYOUT_HOOKS)
def test_backward_kernels_take_gradients_of_any_layout(op, hook):
    """A hook may return an expanded, transposed or strided gradient: the backward kernels read it as
    torch's do (same gradient), never failing inside Numba."""
    import torch
    grads = []
    for t in (derivgen, torch):
        x = t.tensor([[0.5, 1.0, 2.0], [1.5, 0.3, 0.7]], dtype=t.float64, requires_grad=True)
        y = x * 1.0
        y.register_hook(LAYOUT_HOOKS[hook])
        LAYOUT_OPS[op](y).sum().backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


# A saved-tensor unpack hook that returns a tensor of the wrong shape makes the backward helpers' numpy
# calls fail (torch raises its own RuntimeError there): derivgen's engine turns what numpy raises into a
# RuntimeError naming the node and the incoming gradient, never numpy's ValueError/IndexError.
WRONG_SAVED = {
    "log_softmax": (lambda t, x: x.log_softmax(1), "LogSoftmaxBackward0"),
    "cumprod": (lambda t, x: x.cumprod(1), "CumprodBackward0"),
    "prod_dim": (lambda t, x: x.prod(1), "ProdBackward1"),
    "gather": (lambda t, x: x.gather(1, t.tensor([[0], [1], [2]])), "GatherBackward0"),
    "var_dim": (lambda t, x: x.var(1), "VarBackward0"),
    "sort": (lambda t, x: x.sort(1)[0], "SortBackward0"),
}


def _backward_with_wrong_saved_values(torch, op):
    x = torch.randn(3, 4, requires_grad=True)

    def unpack(t):
        return torch.ones(7, 2, dtype=t.dtype)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = op(torch, x)
    y.sum().backward()


@pytest.mark.parametrize("name", sorted(WRONG_SAVED))
def test_numpy_errors_in_backward_helpers_are_runtime_errors(torch, name):
    op, node = WRONG_SAVED[name]
    if torch is not derivgen and name == "log_softmax":
        pytest.skip("torch's log_softmax backward reads the wrong-shaped saved output without a check")
    with pytest.raises(RuntimeError) as info:
        _backward_with_wrong_saved_values(torch, op)
    if torch is derivgen:
        assert str(info.value).startswith(f"{node}(): tensors "), str(info.value)


def test_a_users_own_exception_in_backward_passes_unchanged(torch):
    x = torch.randn(3, 4, requires_grad=True)

    def unpack(t):
        raise ValueError("the user's own error")
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.log_softmax(1)
    with pytest.raises(ValueError, match="the user's own error"):
        y.sum().backward()
