"""dropout: torch's graph (MulBackward0 with the mask as a non-differentiable input), reproducible masks
through a generator, identity without training."""
import numpy as np
import pytest

import derivgen
import derivgen.nn.functional as F
from tests.support.parity import graph_walk, torch


def _x():
    return derivgen.from_numpy(np.random.default_rng(0).standard_normal((4, 5))).requires_grad_(True)


def test_dropout_is_reproducible_with_a_generator():
    a = F.dropout(_x(), 0.4, generator=derivgen.manual_seed(3))
    b = F.dropout(_x(), 0.4, generator=np.random.default_rng(3))
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_dropout_values_and_gradient():
    x = _x()
    y = F.dropout(x, 0.25, generator=derivgen.manual_seed(1))
    kept = y.detach().numpy() != 0
    assert np.allclose(y.detach().numpy()[kept], x.detach().numpy()[kept] / 0.75)
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), kept / 0.75)


def test_dropout_eval_and_p0_are_identity():
    x = _x()
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


@pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (graph comparison)")
@pytest.mark.parametrize("p", [0.3, 1.0])
def test_dropout_graph_matches_torch(p):
    t = torch.randn(4, 5, requires_grad=True)
    ours = graph_walk([F.dropout(_x(), p)])
    theirs = graph_walk([torch.nn.functional.dropout(t, p)])
    assert ours == theirs
    assert F.dropout(_x(), 1.0).detach().numpy().sum() == 0
