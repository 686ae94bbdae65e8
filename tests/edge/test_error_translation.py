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


def test_numba_error_in_a_forward_is_translated():
    """A write into a read-only array makes Numba's compiler fail (TypingError); the op reports it as a
    RuntimeError naming the op, the shapes and the dtypes, never Numba's own exception."""
    x = derivgen.ones(3)
    x._array.flags.writeable = False
    with pytest.raises(RuntimeError) as info:
        x.add_(1)
    text = str(info.value).splitlines()[0]
    assert text.startswith("add_(): tensors [3] Float, [] Long: TypingError"), text
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
