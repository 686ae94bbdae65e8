"""Convolutions whose batch spans several column chunks (``derivgen.ops.forwards.conv`` makes columns and
products a few samples at a time): the chunk size is shrunk so that each case has whole chunks and a
shorter last one, and outputs and all three gradients must match torch's in float64, for 1-D, 2-D
(both input-gradient layouts) and 3-D, plain and transposed, padded, strided, dilated, grouped."""
import numpy as np
import pytest

import derivgen
from derivgen.ops.forwards import conv as conv_forwards

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CASES = [
    ("1d", (7, 2, 11), (3, 2, 3), [2], [1], [1], False, [0], 1),
    ("2d-wide", (7, 3, 9, 9), (4, 3, 3, 3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ("2d-wide-padded", (5, 2, 8, 7), (3, 2, 3, 2), [1, 1], [1, 2], [1, 1], False, [0, 0], 1),
    ("2d-strided-dilated-groups", (7, 4, 11, 10), (6, 2, 3, 2), [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
    ("2d-long-rows", (5, 1, 6, 20), (2, 1, 3, 3), [1, 1], [2, 2], [1, 1], False, [0, 0], 1),
    ("2d-transposed", (7, 4, 5, 6), (4, 3, 3, 3), [2, 2], [1, 0], [1, 1], True, [1, 0], 1),
    ("3d", (5, 2, 5, 6, 4), (3, 2, 3, 2, 3), [1, 2, 1], [1, 0, 2], [2, 1, 1], False, [0, 0, 0], 1),
    ("3d-groups", (7, 4, 4, 5, 5), (4, 2, 2, 3, 2), [1, 1, 2], [0, 1, 1], [1, 1, 1], False, [0, 0, 0], 2),
    ("3d-transposed", (5, 2, 3, 4, 3), (2, 3, 3, 2, 3), [2, 1, 2], [1, 0, 1], [1, 1, 1], True, [1, 0, 0], 1),
]


@pytest.mark.parametrize("samples_per_chunk", [1, 2, 3])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_chunked_convolution_matches_torch(case, samples_per_chunk, monkeypatch):
    _, x_shape, w_shape, stride, padding, dilation, transposed, output_padding, groups = case
    # a chunk holds samples_per_chunk samples' columns of the larger of the layer's column blocks
    rows = max(x_shape[1] * int(np.prod(w_shape[2:])), w_shape[1] * groups * int(np.prod(w_shape[2:])))
    monkeypatch.setattr(conv_forwards, "_CHUNK_BYTES", samples_per_chunk * rows * 8)
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(
        w_shape[1] * groups if transposed else w_shape[0])
    results = []
    for lib in (torch, derivgen):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.convolution(xs, ws, bs, stride, padding, dilation, transposed, output_padding, groups)
        g = np.random.default_rng(8).standard_normal(tuple(y.shape))
        y.backward(lib.tensor(g))
        results.append([t.detach().numpy() for t in (y, xs.grad, ws.grad, bs.grad)])
    for theirs, ours, what in zip(*results, ("output", "input grad", "weight grad", "bias grad")):
        assert ours.shape == theirs.shape, what
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10, err_msg=what)


def test_chunks_cover_the_batch_with_a_shorter_last_one(monkeypatch):
    """The chunking itself: consecutive, covering every sample, the last one shorter."""
    x = np.zeros((7, 2, 6, 6, 1))
    monkeypatch.setattr(conv_forwards, "_CHUNK_BYTES", 3 * 2 * 9 * 16 * 8)
    spans = [(b0, b1) for b0, b1, _ in conv_forwards._column_chunks(x, (3, 3, 1), (4, 4, 1), (1, 1, 1), (0, 0, 0),
                                                                      (1, 1, 1), 1)]
    assert spans == [(0, 3), (3, 6), (6, 7)]
