"""The runtime's hand-written clamp loops against numpy's selection, for writable inputs (their compiled
functions are kept per dtype and called directly) and read-only ones (through Numba's dispatcher)."""
import numpy as np
import pytest

from derivgen.kernels import loops


def _inputs(dtype, writeable):
    x = np.array([-2.0, -0.5, 0.0, -0.0, 0.25, 1.0, 3.0, np.nan, np.inf, -np.inf], dtype)
    g = np.linspace(1.0, 2.0, x.size).astype(dtype)
    if not writeable:
        x.flags.writeable = False
        g.flags.writeable = False
    return x, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("writeable", [True, False])
@pytest.mark.parametrize("lo, hi", [(0.0, None), (None, 1.0), (-1.0, 1.0), (1.0, -1.0)])
def test_clamp_and_its_gradient_match_numpy(dtype, writeable, lo, hi):
    t = np.dtype(dtype).type
    x, g = _inputs(dtype, writeable)
    lo_, hi_ = (None if v is None else t(v) for v in (lo, hi))
    for _ in range(2):  # the second call runs the kept compiled function
        want = x.copy()
        if lo is not None:
            want = np.where(want < lo_, lo_, want)
        if hi is not None:
            want = np.where(want > hi_, hi_, want)
        got = loops.clamp(x, lo_, hi_)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        inside = np.ones(x.shape, bool)
        if lo is not None:
            inside &= x >= lo_
        if hi is not None:
            inside &= x <= hi_
        np.testing.assert_array_equal(loops.clamp_grad(g, x, lo_, hi_), np.where(inside, g, t(0)))
    if writeable:
        assert np.dtype(dtype) in loops._CLAMP_ENTRIES and np.dtype(dtype) in loops._CLAMP_GRAD_ENTRIES


def test_clamp_reads_a_non_contiguous_array():
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T
    np.testing.assert_array_equal(loops.clamp(x, np.float32(2), np.float32(9)), np.clip(x, 2, 9))
