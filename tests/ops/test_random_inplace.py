"""Random in-place Tensor methods (uniform_, normal_, bernoulli_, exponential_, geometric_, log_normal_,
cauchy_, random_) and bernoulli, run on torch and on derivgen: torch's nodes and versions, zero gradients to
the overwritten tensor, the draw's range, dtype and rough statistics, generator= reproducibility, and
torch's errors. The streams differ from torch's (derivgen draws from numpy's PCG64), so values are
compared through their distribution, not element by element."""
import pytest

CALLS = [("uniform_", (), "UniformBackward0"), ("uniform_", (-2.0, 3.0), "UniformBackward0"),
         ("normal_", (), "NormalBackward0"), ("normal_", (1.0, 0.5), "NormalBackward0"),
         ("bernoulli_", (0.3,), "BernoulliBackward2"), ("exponential_", (2.0,), "ExponentialBackward0"),
         ("geometric_", (0.3,), "GeometricBackward0"), ("log_normal_", (), "LogNormalBackward0"),
         ("cauchy_", (), "CauchyBackward0"), ("random_", (), "RandomBackward2"), ("random_", (5,), "RandomBackward1"),
         ("random_", (2, 5), "RandomBackward0")]


@pytest.mark.parametrize("name,args,node", CALLS, ids=[f"{c[0]}{c[1]}" for c in CALLS])
def test_in_a_graph_records_torchs_node_and_zero_gradient(torch, name, args, node):
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = a * 2
    out = getattr(b, name)(*args)
    assert out is b and b._version == 1
    assert out.grad_fn.name() == node
    assert [f.name() for f, _ in out.grad_fn.next_functions] == ["MulBackward0"]
    (g,) = torch.autograd.grad((out * 3).sum(), a)
    assert g.tolist() == [[0.0] * 4] * 3


def test_bernoulli_with_tensor_p(torch):
    a = torch.randn(3, dtype=torch.float64, requires_grad=True)
    p = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64, requires_grad=True)
    b = a.clone()
    out = b.bernoulli_(p)
    assert out.grad_fn.name() == "BernoulliBackward1"
    assert [f.name() for f, _ in out.grad_fn.next_functions] == ["CloneBackward0", "torch::autograd::AccumulateGrad"
                                                                 if torch.__name__ == "torch" else
                                                                 "derivgen::autograd::AccumulateGrad"]
    ga, gp = torch.autograd.grad(out.sum(), [a, p])
    assert ga.tolist() == [0.0] * 3 and gp.tolist() == [0.0] * 3
    q = torch.tensor([0.2, 0.7], dtype=torch.float64, requires_grad=True).sigmoid()
    d = torch.bernoulli(q)
    assert d.grad_fn.name() == "BernoulliBackward0" and set(d.tolist()) <= {0.0, 1.0}
    e = torch.bernoulli(torch.zeros(2000, dtype=torch.float64), 0.25)
    assert e.dtype == torch.float64 and set(e.tolist()) == {0.0, 1.0} and 0.2 < float(e.mean()) < 0.3
    assert set(torch.ones(50).bernoulli(0.0).tolist()) == {0.0}


def test_on_a_leaf_requiring_grad_is_refused(torch):
    for name in ("uniform_", "normal_", "bernoulli_", "random_"):
        x = torch.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                               "operation."):
            getattr(x, name)()


def test_a_view_rewrites_its_base_history(torch):
    a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    b = a.clone()
    b[0].uniform_()
    assert b.grad_fn.name() in ("CopySlices", "torch::autograd::CopySlices", "derivgen::autograd::CopySlices")
    (g,) = torch.autograd.grad(b.sum(), a)
    assert g.tolist() == [[0.0] * 3, [1.0] * 3]


def _stats(torch, dtype, name, *args):
    x = torch.empty(40000, dtype=dtype)
    getattr(x, name)(*args)
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_have_the_distribution(torch, dtype):
    torch.manual_seed(0)  # the bounds below hold with margin for this seed (a few standard errors)
    dt = getattr(torch, dtype)
    u = _stats(torch, dt, "uniform_", 2.0, 3.0)
    assert u.dtype == dt and float(u.min()) >= 2 and float(u.max()) < 3 and abs(float(u.mean()) - 2.5) < 0.02
    n = _stats(torch, dt, "normal_", 2.0, 3.0)
    assert abs(float(n.mean()) - 2) < 0.1 and abs(float(n.std()) - 3) < 0.1
    e = _stats(torch, dt, "exponential_", 2.0)
    assert float(e.min()) >= 0 and abs(float(e.mean()) - 0.5) < 0.02
    g = _stats(torch, dt, "geometric_", 0.5)
    assert float(g.min()) == 1 and abs(float(g.mean()) - 2) < 0.05 and bool((g == g.round()).all())
    ln = _stats(torch, dt, "log_normal_", 0.0, 0.5).log()
    assert abs(float(ln.mean())) < 0.02 and abs(float(ln.std()) - 0.5) < 0.02
    c = _stats(torch, dt, "cauchy_", 1.0, 2.0).sort()[0]
    assert abs(float(c[20000]) - 1) < 0.1 and abs(float(c[30000]) - 3) < 0.2  # median, upper quartile
    b = _stats(torch, dt, "bernoulli_", 0.25)
    assert set(b.tolist()) == {0.0, 1.0} and abs(float(b.mean()) - 0.25) < 0.02


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_random_ranges(torch, dtype):
    torch.manual_seed(0)
    dt = getattr(torch, dtype)
    full = torch.empty(4000, dtype=dt).random_()
    assert full.dtype == dt and float(full.min()) >= 0 and (float(full.max()) > 1) == (dtype != "bool")
    to = 2 if dtype == "bool" else 3
    assert sorted(set(torch.empty(4000, dtype=dt).random_(to).tolist())) == list(range(to))
    if dtype != "bool":
        assert sorted(set(torch.empty(4000, dtype=dt).random_(-2, 2).tolist())) == [-2, -1, 0, 1]


def test_generator_makes_draws_reproducible(torch):
    for name, args in (("uniform_", ()), ("normal_", ()), ("bernoulli_", (0.5,)), ("exponential_", ()),
                       ("random_", (10,))):
        draws = [getattr(torch.empty(6), name)(*args, generator=torch.Generator().manual_seed(7)) for _ in range(2)]
        assert torch.equal(draws[0], draws[1])
    torch.manual_seed(3)
    first = torch.empty(5).normal_()
    torch.manual_seed(3)
    assert torch.equal(torch.empty(5).normal_(), first)


ERRORS = [
    (lambda T: T.empty(3).uniform_(1, 0), RuntimeError, "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    (lambda T: T.empty(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda T: T.empty(3).bernoulli_(2.0), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=2"),
    (lambda T: T.empty(3).bernoulli_(-0.5), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=-0.5"),
    (lambda T: T.empty(3).bernoulli_(T.tensor([0.5, 2.0, 0.1])), RuntimeError, "Expected p_in >= 0 && p_in <= 1"),
    (lambda T: T.bernoulli(T.tensor([0.2, 1.5])), RuntimeError, "Expected p_in >= 0 && p_in <= 1"),
    (lambda T: T.bernoulli(T.zeros(3), 2.0), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=2"),
    (lambda T: T.empty(3).exponential_(0), RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda T: T.empty(3).geometric_(1.5), RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1.5"),
    (lambda T: T.empty(3).log_normal_(1, 0), RuntimeError, "log_normal_ expects std > 0.0, but found std=0"),
    (lambda T: T.empty(3).cauchy_(0, 0), RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=0"),
    (lambda T: T.empty(3).random_(5, 2), RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    (lambda T: T.empty(3).random_(0), RuntimeError, "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
    (lambda T: T.empty(3, dtype=T.bool).random_(3), RuntimeError, "to - 1 is out of bounds for bool"),
    (lambda T: T.empty(3, dtype=T.int64).uniform_(), NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda T: T.empty(3, dtype=T.int64).normal_(), NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda T: T.empty(3, dtype=T.int64).exponential_(), RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Long"),
    (lambda T: T.empty(3, dtype=T.int64).log_normal_(), NotImplementedError, "\"log_normal_cpu\" not implemented for 'Long'"),
    (lambda T: T.empty(3, dtype=T.int64).cauchy_(), RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified long int"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_torchs(torch, i):
    fn, kind, text = ERRORS[i]
    with pytest.raises(kind) as info:
        fn(torch)
    assert str(info.value).startswith(text)
