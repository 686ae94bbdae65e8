"""The graph-path printer's maximum/minimum: torch's ``maximum``/``minimum`` take two tensors, so a bound that
is a plain number (hardtanh's ``min_val``) must print as ``clamp_min``/``clamp_max``, and the resulting call
must run on derivgen's ops with torch's values."""
import numpy as np
import sympy as sp

from derivgen.codegen.printers import GraphPrinter


def _printer():
    p = GraphPrinter({}, None, {"maximum", "minimum", "clamp_min", "clamp_max"})
    p.tensor_names = {"self", "other"}
    return p


def test_max_min_with_a_number_bound_print_as_clamp():
    x, y, lo, hi = sp.symbols("self other lo hi")
    p = _printer()
    assert p.doprint(sp.Max(x, lo)) == "_ops.clamp_min(self, lo)"
    assert p.doprint(sp.Min(lo, x)) == "_ops.clamp_max(self, lo)"
    assert p.doprint(sp.Max(x, y, lo)) in ("_ops.clamp_min(_ops.maximum(self, other), lo)",
                                          "_ops.clamp_min(_ops.maximum(other, self), lo)")
    assert p.doprint(sp.Max(lo, hi)) in ("max(lo, hi)", "max(hi, lo)")
    assert p.needed_ops == {"clamp_min", "clamp_max", "maximum"}


def test_hardtanh_graph_tangent_matches_torch():
    """hardtanh's graph-path JVP (taken when the tangent itself needs a graph) bounds by plain numbers."""
    import torch

    import derivgen
    from derivgen.generated import jvp, ops
    vals = np.array([-2.0, -0.5, 0.1, 0.7, 3.0])
    t = derivgen.tensor(vals, dtype=derivgen.float64)
    tangent = derivgen.ones(5, dtype=derivgen.float64, requires_grad=True)
    got = jvp.hardtanh_jvp_graph(t, -1.0, 0.5, tangent, ops.hardtanh_default(t, -1.0, 0.5))
    tv = torch.tensor(vals, requires_grad=True)
    expected, = torch.autograd.grad(torch.nn.functional.hardtanh(tv, -1.0, 0.5).sum(), tv)
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy())
    assert got.requires_grad
