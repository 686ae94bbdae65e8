"""Tensor repr parity with torch's ``_tensor_str`` on the same data (``torch.`` spelled ``derivgen.``).

A few cases have fixed expected strings, so the formatting is tested without torch too."""
import math

import numpy as np
import pytest

import derivgen

_rng = np.random.default_rng(1234)
RAND_40x40 = (_rng.standard_normal((40, 40)) * 3).tolist()
RAND_3x4 = (_rng.standard_normal((3, 4))).tolist()
RAND_11 = _rng.uniform(-50, 50, (11, 11, 11)).tolist()


def _mul(lib, t):
    return t * 2


CASES = {
    "int_mode": lambda lib: lib.tensor([1.0, 2.0]),
    "int_mode_negative": lambda lib: lib.tensor([-1.0, 20.0, 300.0]),
    "fixed": lambda lib: lib.tensor([1.5, -2.25, 0.125]),
    "mixed_widths": lambda lib: lib.tensor([123.456, 0.5, -5.5, 1000.25]),
    "sci_small": lambda lib: lib.tensor([1e-5, 1.0, 2.5]),
    "sci_large": lambda lib: lib.tensor([1e10, 1.0]),
    "sci_ratio": lambda lib: lib.tensor([0.001, 12345.5]),
    "int_mode_sci": lambda lib: lib.tensor([1e9, 1.0]),
    "zero_dim": lambda lib: lib.tensor(3.14159),
    "zero_dim_int_valued": lambda lib: lib.tensor(2.0),
    "zero_dim_negative": lambda lib: lib.tensor(-0.5),
    "zeros": lambda lib: lib.zeros(2, 3),
    "nonfinite": lambda lib: lib.tensor([float("nan"), float("inf"), -float("inf"), 1.5]),
    "nonfinite_int_mode": lambda lib: lib.tensor([float("nan"), 2.0, 3.0]),
    "empty_1d": lambda lib: lib.tensor([]),
    "empty_2d": lambda lib: lib.zeros(0, 3),
    "empty_3d_float64": lambda lib: lib.zeros(2, 0, 3, dtype=lib.float64),
    "wrap_lines": lambda lib: lib.arange(30.0) / 7,
    "matrix": lambda lib: lib.tensor(RAND_3x4),
    "matrix_3d": lambda lib: lib.tensor([[[1.0, -2.0], [3.5, 4.0]], [[5.0, 6.0], [7.0, 8.25]]]),
    "summarized_1d": lambda lib: lib.arange(2000.0),
    "summarized_2d": lambda lib: lib.tensor(RAND_40x40),
    "summarized_3d": lambda lib: lib.tensor(RAND_11),
    "not_summarized_1000": lambda lib: lib.arange(1000.0) / 4,
    "float64": lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float64),
    "float64_int_mode": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64),
    "float64_zero_dim": lambda lib: lib.tensor(0.1, dtype=lib.float64),
    "float64_matrix_suffix_wrap": lambda lib: lib.tensor(RAND_3x4, dtype=lib.float64) * 1000,
    "requires_grad": lambda lib: lib.tensor([1.0, 2.0, 3.0], requires_grad=True),
    "requires_grad_float64": lambda lib: lib.tensor([1.0, 2.5], dtype=lib.float64, requires_grad=True),
    "grad_fn": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_sum": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).sum(),
    "grad_fn_float64": lambda lib: lib.tensor(RAND_3x4, dtype=lib.float64, requires_grad=True).exp(),
    "grad_fn_long_line": lambda lib: (lib.arange(12.0, dtype=lib.float64) * 123.456).requires_grad_() * 1,
    "ints": lambda lib: lib.tensor([1, 2, 3]),
    "ints_widths": lambda lib: lib.tensor([-10, 200, 3, 40000]),
    "ints_matrix": lambda lib: lib.tensor([[1, -2], [300, 4]]),
    "int_zero_dim": lambda lib: lib.tensor(5),
    "int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    "ints_summarized": lambda lib: lib.arange(5000),
    "ints_empty": lambda lib: lib.tensor([], dtype=lib.int64),
    "bools": lambda lib: lib.tensor([True, False, True]),
    "bool_zero_dim": lambda lib: lib.tensor(False),
    "bool_matrix": lambda lib: lib.tensor([[True], [False]]),
    "comparison": lambda lib: lib.tensor([1.0, 2.0]) > 1.5,
}

FIXED = {
    "int_mode": "tensor([1., 2.])",
    "fixed": "tensor([ 1.5000, -2.2500,  0.1250])",
    "sci_small": "tensor([1.0000e-05, 1.0000e+00, 2.5000e+00])",
    "zero_dim": "tensor(3.1416)",
    "empty_1d": "tensor([])",
    "empty_2d": "tensor([], size=(0, 3))",
    "float64": "tensor([1.5000, 2.0000], dtype=derivgen.float64)",
    "requires_grad": "tensor([1., 2., 3.], requires_grad=True)",
    "grad_fn": "tensor([2., 4.], grad_fn=<MulBackward0>)",
    "ints": "tensor([1, 2, 3])",
    "int32": "tensor([1, 2], dtype=derivgen.int32)",
    "bools": "tensor([ True, False,  True])",
    "summarized_1d": "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])",
}


@pytest.mark.parametrize("case", sorted(FIXED))
def test_repr_fixed(case):
    assert repr(CASES[case](derivgen)) == FIXED[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_repr_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours = repr(CASES[case](derivgen))
    theirs = repr(CASES[case](torch)).replace("torch.", "derivgen.")
    assert ours == theirs, f"\nderivgen:\n{ours}\ntorch:\n{theirs}"


def test_str_is_repr_and_float_format_of_zero_dim():
    t = derivgen.tensor(2.5)
    assert str(t) == repr(t) == "tensor(2.5000)"
    assert f"{t:.2f}" == "2.50" and math.isclose(float(t), 2.5)


def test_repr_with_a_float64_default_dtype_matches_torch():
    torch = pytest.importorskip("torch")
    builders = [lambda lib: lib.tensor([1.5, 2.0]), lambda lib: lib.tensor([1.5], dtype=lib.float32),
                lambda lib: lib.zeros(0, dtype=lib.float32), lambda lib: lib.tensor([]),
                lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 3]
    prev = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        derivgen.set_default_dtype(derivgen.float64)
        for build in builders:
            assert repr(build(derivgen)) == repr(build(torch)).replace("torch.", "derivgen.")
    finally:
        torch.set_default_dtype(prev)
        derivgen.set_default_dtype(derivgen.float32)
