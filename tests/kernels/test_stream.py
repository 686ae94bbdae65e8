"""Non-temporal stores (``derivgen.kernels.stream``) and the 64-byte aligned pooled buffers they need:
every element written, at every length (vector body and scalar remainder), for 1-D and 2-D outputs, and
the vector stores really are non-temporal on x86."""
import platform
import re

import numba
import numpy as np
import pytest

from derivgen.kernels import buffers
from derivgen.kernels import numba_backend  # noqa: F401 - gives the stores their compiled meaning
from derivgen.kernels.stream import ALIGN, stream_store, stream_store2, streamable


@numba.njit(error_model="numpy")
def _affine(o, x):
    for i in range(o.shape[0]):
        stream_store(o, i, x[i] * np.float32(2) + np.float32(1))


@numba.njit(error_model="numpy")
def _scale_rows(o, x, b):
    for i in range(o.shape[0]):
        for j in range(o.shape[1]):
            stream_store2(o, i, j, x[i, j] * b[j])


@pytest.mark.parametrize("n", [1, 7, 16, 100, 1000, 65536 + 13, (1 << 20) + 5])
def test_stream_store_1d_writes_every_element(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    o = buffers.empty((n,), np.float32) if n * 4 >= buffers.POOL_MIN else _aligned((n,))
    assert streamable(o)
    o[:] = np.nan
    _affine(o, x)
    np.testing.assert_array_equal(o, x * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("shape", [(1, 16), (5, 48), (33, 2064), (512, 2048)])
def test_stream_store_2d_writes_every_element(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[1]).astype(np.float32)
    o = _aligned(shape)
    assert streamable(o)
    o[:] = np.nan
    _scale_rows(o, x, b)
    np.testing.assert_array_equal(o, x * b)


def test_streamable_refuses_misaligned_and_strided_outputs():
    a = _aligned((64, 32))
    assert streamable(a) and streamable(a.reshape(-1))
    assert not streamable(a.reshape(-1)[1:])          # data off the boundary
    assert streamable(a[:, :17])                      # rows contiguous, every row aligned (stride 128)
    assert not streamable(a[:, ::2])                  # rows not contiguous
    assert not streamable(_aligned((3, 20)))          # 80-byte rows: row 1 off the boundary


def test_pooled_buffers_are_aligned_and_reused():
    buffers.empty_cache()
    a = buffers.empty((1 << 18, 3), np.float32)
    assert a.ctypes.data % ALIGN == 0 and buffers.sole_owner(a)
    address = a.ctypes.data
    del a
    b = buffers.empty((3 << 18,), np.float32)
    assert b.ctypes.data == address                   # the freed buffer again, same alignment
    view = b[1:]
    assert not buffers.sole_owner(b)
    del view, b
    buffers.empty_cache()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 instruction names")
def test_vector_stores_are_non_temporal():
    f32 = numba.types.float32
    _affine.compile((f32[::1], f32[::1]))
    asm = _affine.inspect_asm((f32[::1], f32[::1]))
    assert re.search(r"\bvmovntps\b|\bmovntps\b", asm)


def _aligned(shape):
    n = int(np.prod(shape)) * 4
    raw = np.empty(n + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + n].view(np.float32).reshape(shape)
