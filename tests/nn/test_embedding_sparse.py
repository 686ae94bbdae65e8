"""``sparse=True`` embeddings: derivgen has no sparse tensors, so where torch would make a sparse gradient
for the weight (a trainable ``Embedding(sparse=True)``, ``F.embedding(..., sparse=True)`` on a weight
requiring grad with grad mode on) it raises a NotImplementedError naming the missing feature; where torch
makes no gradient (frozen ``from_pretrained``, no_grad, a weight without grad) the lookup runs and matches
torch's values and repr."""
import numpy as np
import pytest

import derivgen
from derivgen.nn.functional import SPARSE_EMBEDDING_UNSUPPORTED

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

REFUSED = [
    ("module", lambda T: T.nn.Embedding(5, 3, sparse=True)),
    ("module-padding", lambda T: T.nn.Embedding(5, 3, padding_idx=0, sparse=True)),
    ("from_pretrained-trainable", lambda T: T.nn.Embedding.from_pretrained(T.ones(4, 2), freeze=False, sparse=True)),
    ("functional", lambda T: T.nn.functional.embedding(T.tensor([0, 2]), T.ones(4, 2, requires_grad=True),
                                                       sparse=True)),
]


@pytest.mark.parametrize("name,fn", REFUSED, ids=[c[0] for c in REFUSED])
def test_sparse_gradient_is_refused_naming_the_missing_feature(name, fn):
    assert fn(torch) is not None  # torch makes these (its sparse gradient is what derivgen lacks)
    with pytest.raises(NotImplementedError) as info:
        fn(derivgen)
    assert str(info.value) == SPARSE_EMBEDDING_UNSUPPORTED
    assert "sparse=True" in str(info.value) and "no sparse tensors" in str(info.value)


WITHOUT_GRADIENT = [
    ("frozen", lambda T, w, i: T.nn.Embedding.from_pretrained(w, sparse=True)(i)),
    ("frozen-padding", lambda T, w, i: T.nn.Embedding.from_pretrained(w, padding_idx=1, sparse=True)(i)),
    ("functional-no-grad-weight", lambda T, w, i: T.nn.functional.embedding(i, w, sparse=True)),
    ("functional-under-no_grad", lambda T, w, i: _no_grad(T, w, i)),
]


def _no_grad(T, w, i):
    with T.no_grad():
        return T.nn.functional.embedding(i, w.requires_grad_(), sparse=True)


@pytest.mark.parametrize("name,fn", WITHOUT_GRADIENT, ids=[c[0] for c in WITHOUT_GRADIENT])
def test_lookups_without_a_gradient_match_torch(name, fn):
    w = np.random.default_rng(0).standard_normal((6, 3))
    idx = np.array([[0, 5, 1], [2, 2, 4]])
    outs = []
    for lib in (torch, derivgen):
        out = fn(lib, lib.tensor(w), lib.tensor(idx))
        outs.append((out.numpy(), out.requires_grad))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    assert outs[1][1] == outs[0][1] is False


def test_frozen_sparse_repr_matches_torch():
    w = np.ones((4, 2))
    reprs = [repr(lib.nn.Embedding.from_pretrained(lib.tensor(w), sparse=True)) for lib in (torch, derivgen)]
    assert reprs[0] == reprs[1] and "sparse=True" in reprs[0]


def test_dense_embedding_still_trains_as_torch():
    w = np.random.default_rng(1).standard_normal((5, 3))
    idx = np.array([1, 3, 1])
    grads = []
    for lib in (torch, derivgen):
        m = lib.nn.Embedding.from_pretrained(lib.tensor(w), freeze=False)
        m(lib.tensor(idx)).pow(2).sum().backward()
        grads.append(m.weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-14)
