"""vmap of every elementwise table row (rows with ``forward:``), against torch.func.vmap of the same aten
overload, on the rows' own samples: every tensor batched, only the first batched, and the first batched
along its last dimension (so rows of different rank broadcast through the batch dimension)."""
import os
import warnings

import numpy as np
import pytest
import torch

import derivgen
from derivgen.core.tensor import Tensor
from derivgen.table import load_table
from tests.support.paths import REPO
from tests.support.samples import row_function, samples_for

ENTRIES = load_table(os.path.join(REPO, "formulas.yaml"))
ELEMENTWISE = [e for e in ENTRIES if e.forward and not e.schema.base.endswith("_")]
B = 3
LOOPED = {"masked_fill.Tensor"}  # a batched fill value: torch runs its per-example fallback too


def _torch_op(entry):
    return getattr(getattr(torch.ops.aten, entry.schema.base), entry.schema.overload or "default")


def _to_torch(v):
    if isinstance(v, Tensor):
        return torch.from_numpy(np.array(v._array))
    if isinstance(v, list):
        return [_to_torch(x) for x in v]
    return v


def _batched(t, rng, in_dim):
    """A batch of B examples shaped like ``t`` (values near t's, keeping its domain) along ``in_dim``."""
    a = t._array
    if a.dtype.kind == "f":
        stack = np.stack([a * (1 + 0.1 * rng.random(a.shape)) for _ in range(B)], in_dim)
    else:
        stack = np.stack([a] * B, in_dim)
    return Tensor._make(np.ascontiguousarray(stack))


def _variants(s):
    """(in_dims per positional arg, batched positions) choices for one sample."""
    tensors = [i for i, a in enumerate(s.args) if isinstance(a, Tensor) and not a._wrapped]
    out = [tensors]
    if len(tensors) > 1:
        out.append(tensors[:1])
    return out


@pytest.mark.parametrize("entry", ELEMENTWISE, ids=lambda e: e.name)
def test_vmap_elementwise_row(entry):
    fn = row_function(entry)
    op = _torch_op(entry)
    samples = samples_for(entry, derivgen.float64)
    assert samples
    checked = 0
    for k, s in enumerate(samples):
        if any(isinstance(v, Tensor) for v in s.kwargs.values()) or any(isinstance(a, list) for a in s.args):
            continue
        torch_kwargs = {k2: _to_torch(v) for k2, v in s.kwargs.items()}
        for batched_positions in _variants(s):
            for last in (False, True):
                rng = np.random.default_rng(k)
                args, dims = [], []
                for i, a in enumerate(s.args):
                    if i in batched_positions:
                        d = a.dim() if (last and i == batched_positions[0]) else 0
                        args.append(_batched(a, rng, d))
                        dims.append(d)
                    else:
                        args.append(a)
                        dims.append(None)
                with warnings.catch_warnings():
                    if entry.name not in LOOPED:  # an elementwise row must not take the per-example loop
                        warnings.simplefilter("error")
                    got = derivgen.vmap(lambda *a: fn(*a, **s.kwargs), in_dims=tuple(dims))(*args)
                # torch's scalar arguments stay Python numbers: map them over as in_dim None
                want = torch.func.vmap(lambda *a: op(*a, **torch_kwargs), in_dims=tuple(dims))(*[_to_torch(a) for a in args])
                assert tuple(got.shape) == tuple(want.shape), (entry.name, got.shape, want.shape)
                np.testing.assert_allclose(got._array, want.numpy(), rtol=1e-10, atol=1e-12, err_msg=entry.name)
                checked += 1
    assert checked, f"{entry.name}: no positional sample to vmap"
