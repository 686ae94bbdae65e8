"""Higher-order gradients: with ``create_graph=True`` every node runs its table formulas as differentiable
ops (``_apply_graph``), so gradients can be differentiated again, to any order.

* second and third derivatives and mixed partials against sympy (derivgen and torch run the same body);
* ``gradgradcheck`` over every row of formulas.yaml (samples from ``tests/support/samples.py``);
* Hessian-vector products of a small MLP (mm + tanh/relu + sum) against finite differences of its
  gradient, and against torch's numbers when torch is installed.
"""
import os

import numpy as np
import pytest
import sympy as sp

import derivgen
from derivgen.table import load_table


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


XS = [0.3, -0.7, 1.2, 2.0]


def _x(torch, values=XS):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=True)


# ---- second and third derivatives -------------------------------------------------------------------

S = sp.Symbol("s")
SCALAR_FUNCTIONS = {
    # name: (derivgen/torch expression, sympy expression)
    "x^3": (lambda x: x * x * x, S ** 3),
    "sin*exp": (lambda x: x.sin() * x.exp(), sp.sin(S) * sp.exp(S)),
    "tanh(x^2)": (lambda x: (x * x).tanh(), sp.tanh(S ** 2)),
    "sigmoid/x": (lambda x: x.sigmoid() / (x * x + 1), 1 / (1 + sp.exp(-S)) / (S ** 2 + 1)),
    "log(1+x^2)*cos": (lambda x: (x * x + 1).log() * x.cos(), sp.log(1 + S ** 2) * sp.cos(S)),
    "sqrt(x^2+1)^-1": (lambda x: (x * x + 1).sqrt().reciprocal(), 1 / sp.sqrt(S ** 2 + 1)),
    "pow": (lambda x: (x * x + 2).pow(1.5), (S ** 2 + 2) ** sp.Rational(3, 2)),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_first_second_third_derivatives(torch, name):
    f, expr = SCALAR_FUNCTIONS[name]
    x = _x(torch)
    y = f(x)
    g1, = torch.autograd.grad(y.sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g1.sum(), x, create_graph=True)
    g3, = torch.autograd.grad(g2.sum(), x)
    assert g1.requires_grad and g1.grad_fn is not None and g2.grad_fn is not None
    assert g3.grad_fn is None and not g3.requires_grad
    for order, g in ((1, g1), (2, g2), (3, g3)):
        expect = sp.lambdify(S, sp.diff(expr, S, order), "numpy")(np.array(XS))
        np.testing.assert_allclose(_val(g), expect, rtol=1e-10, atol=1e-12, err_msg=f"order {order} of {name}")


def test_mixed_partial_derivatives(torch):
    a, b = sp.symbols("a b")
    expr = a * b ** 2 + sp.sin(a * b)
    x = torch.tensor([0.4, -1.3], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.1, 0.6], dtype=torch.float64, requires_grad=True)
    f = x * y * y + (x * y).sin()
    gx, gy = torch.autograd.grad(f.sum(), [x, y], create_graph=True)
    gxy, = torch.autograd.grad(gx.sum(), y, retain_graph=True)
    gyx, = torch.autograd.grad(gy.sum(), x)
    xs, ys = np.array([0.4, -1.3]), np.array([1.1, 0.6])
    expect = sp.lambdify((a, b), sp.diff(expr, a, b), "numpy")(xs, ys)
    np.testing.assert_allclose(_val(gxy), expect, rtol=1e-12)
    np.testing.assert_allclose(_val(gyx), expect, rtol=1e-12)


def test_without_create_graph_the_gradient_is_a_constant(torch):
    x = _x(torch)
    g, = torch.autograd.grad((x * x * x).sum(), x)
    assert g.grad_fn is None and not g.requires_grad


def test_double_backward_via_backward_into_grad(torch):
    x = _x(torch)
    g, = torch.autograd.grad(x.sin().sum(), x, create_graph=True)
    (g * g).sum().backward()
    np.testing.assert_allclose(_val(x.grad), 2 * np.sin(XS) * -np.cos(XS) * -1 * -1, rtol=1e-12)


def test_gradient_of_gradient_through_broadcast_and_reductions(torch):
    m = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([0.3, 0.7, -1.1], dtype=torch.float64, requires_grad=True)
    y = ((m * v).tanh().sum(0) * v).mean()
    gm, gv = torch.autograd.grad(y, [m, v], create_graph=True)
    assert tuple(gm.shape) == (2, 3) and tuple(gv.shape) == (3,)
    hv, = torch.autograd.grad((gm * gm).sum() + gv.sum(), v)
    assert tuple(hv.shape) == (3,)
    assert torch.autograd.gradgradcheck(lambda m, v: ((m * v).tanh().sum(0) * v).mean(), (m, v))


# ---- Hessian-vector products on a small MLP ------------------------------------------------------------

def _mlp_data(seed=0):
    rng = np.random.default_rng(seed)
    return dict(x=rng.standard_normal((5, 4)), w1=rng.standard_normal((4, 6)) * 0.5,
                w2=rng.standard_normal((6, 3)) * 0.5, t=rng.standard_normal((5, 3)),
                v1=rng.standard_normal((4, 6)), v2=rng.standard_normal((6, 3)))


def _mlp_loss(x, w1, w2, t, act):
    h = x.mm(w1)
    h = h.tanh() if act == "tanh" else h.relu()
    d = h.mm(w2) - t
    return (d * d).sum()


def _mlp_grad_numpy(torch, data, w1, w2, act):
    """The gradient of the loss at (w1, w2), as arrays (a first-order backward)."""
    W1 = torch.tensor(w1, dtype=torch.float64, requires_grad=True)
    W2 = torch.tensor(w2, dtype=torch.float64, requires_grad=True)
    X = torch.tensor(data["x"], dtype=torch.float64)
    Tt = torch.tensor(data["t"], dtype=torch.float64)
    g1, g2 = torch.autograd.grad(_mlp_loss(X, W1, W2, Tt, act), [W1, W2])
    return _val(g1), _val(g2)


def _mlp_hvp(torch, data, act):
    X = torch.tensor(data["x"], dtype=torch.float64)
    Tt = torch.tensor(data["t"], dtype=torch.float64)
    W1 = torch.tensor(data["w1"], dtype=torch.float64, requires_grad=True)
    W2 = torch.tensor(data["w2"], dtype=torch.float64, requires_grad=True)
    V1 = torch.tensor(data["v1"], dtype=torch.float64)
    V2 = torch.tensor(data["v2"], dtype=torch.float64)
    g1, g2 = torch.autograd.grad(_mlp_loss(X, W1, W2, Tt, act), [W1, W2], create_graph=True)
    h1, h2 = torch.autograd.grad((g1 * V1).sum() + (g2 * V2).sum(), [W1, W2])
    return _val(h1), _val(h2)


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_mlp_hessian_vector_product_against_finite_differences(torch, act):
    data = _mlp_data()
    h1, h2 = _mlp_hvp(torch, data, act)
    eps = 1e-6
    p1, p2 = _mlp_grad_numpy(torch, data, data["w1"] + eps * data["v1"], data["w2"] + eps * data["v2"], act)
    m1, m2 = _mlp_grad_numpy(torch, data, data["w1"] - eps * data["v1"], data["w2"] - eps * data["v2"], act)
    np.testing.assert_allclose(h1, (p1 - m1) / (2 * eps), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h2, (p2 - m2) / (2 * eps), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_mlp_hvp_with_autograd_functional(torch, act):
    data = _mlp_data(1)
    X = torch.tensor(data["x"], dtype=torch.float64)
    Tt = torch.tensor(data["t"], dtype=torch.float64)
    W1 = torch.tensor(data["w1"], dtype=torch.float64)
    W2 = torch.tensor(data["w2"], dtype=torch.float64)
    V = (torch.tensor(data["v1"], dtype=torch.float64), torch.tensor(data["v2"], dtype=torch.float64))

    def loss(w1, w2):
        return _mlp_loss(X, w1, w2, Tt, act)
    _, hvp = torch.autograd.functional.hvp(loss, (W1, W2), V)
    _, vhp = torch.autograd.functional.vhp(loss, (W1, W2), V)
    h1, h2 = _mlp_hvp(torch, data, act)
    for got in (hvp, vhp):
        np.testing.assert_allclose(_val(got[0]), h1, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_val(got[1]), h2, rtol=1e-10, atol=1e-12)


def test_mlp_hvp_equals_torch():
    """derivgen's Hessian-vector products are torch's numbers (skipped loudly without torch)."""
    real_torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed; cannot compare "
                                                     "derivgen's HVP numbers with PyTorch's")
    for act in ("tanh", "relu"):
        data = _mlp_data(2)
        for ours, theirs in zip(_mlp_hvp(derivgen, data, act), _mlp_hvp(real_torch, data, act)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# ---- gradgradcheck over every row of the table -------------------------------------------------------------

from tests.support.paths import REPO  # noqa: E402


def _diff_rows():
    try:
        return [e for e in load_table(os.path.join(REPO, "formulas.yaml")) if e.formulas]
    except Exception as exc:  # noqa: BLE001 - report a broken table as one failing test, not a collection error
        return [pytest.param(None, marks=pytest.mark.xfail(reason=f"formulas.yaml does not load: {exc}",
                                                          strict=True))]


def _as_positional(fn, sample):
    """``(f, leaves)``: ``f(*leaves)`` calls the row with fresh leaves at the differentiable positions."""
    args, kwargs, leaves = sample.leaves(requires_grad=True)
    index = {id(t): i for i, t in enumerate(leaves)}

    def sub(v, new):
        if isinstance(v, derivgen.Tensor) and id(v) in index:
            return new[index[id(v)]]
        if isinstance(v, list):
            return [sub(e, new) for e in v]
        return v

    def f(*new):
        return fn(*[sub(a, new) for a in args], **{k: sub(v, new) for k, v in kwargs.items()})
    return f, leaves


@pytest.mark.parametrize("entry", _diff_rows(), ids=lambda e: getattr(e, "name", "table"))
def test_gradgradcheck_every_row(entry):
    """Second derivatives of every differentiable row: the graph path (``_apply_graph``) of its node is
    itself differentiated by the engine and compared with central differences of the first derivative.
    The first sample of each row gets the full Jacobian check, the others the fast (random projection)
    check."""
    from tests.support import samples as op_samples
    samples = op_samples.samples_for(entry, derivgen.float64)
    assert samples, op_samples.missing_message(entry)
    fn = op_samples.row_function(entry)
    failures = []
    checked = 0
    for k, s in enumerate(samples):
        f, leaves = _as_positional(fn, s)
        if not leaves:
            continue
        checked += 1
        try:
            derivgen.autograd.gradgradcheck(f, tuple(leaves), fast_mode=k > 0)
        except Exception as exc:  # noqa: BLE001 - collect every failing sample of the row
            failures.append(f"{s!r}: {type(exc).__name__}: {exc}")
    assert checked, f"no sample of '{entry.name}' has a differentiable input"
    assert not failures, f"gradgradcheck of row '{entry.name}' ({entry.file}:{entry.line}) fails:\n" + \
        "\n".join(failures)


def test_gradgradcheck_catches_a_graph_path_that_drops_a_dependency(monkeypatch):
    """The per-row check is meaningful: a node whose Tensor-op (create_graph) path loses its dependence on
    the saved result still passes gradcheck but fails gradgradcheck."""
    from derivgen.generated import nodes
    x = derivgen.tensor([[0.3, -0.6], [1.1, 0.2]], dtype=derivgen.float64, requires_grad=True)
    assert derivgen.autograd.gradgradcheck(lambda t: t.tanh(), (x,))

    def broken(node, grads, needs):
        result = node._saved_result.detach()
        return [grads[0] * (1 - result * result)]
    monkeypatch.setattr(nodes.TanhBackward0, "_apply_graph", broken)
    assert derivgen.autograd.gradcheck(lambda t: t.tanh(), (x,))
    with pytest.raises(derivgen.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        derivgen.autograd.gradgradcheck(lambda t: t.tanh(), (x,))
