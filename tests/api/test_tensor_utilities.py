"""equal / isclose / allclose, torch's keyword names (input=, other=, size=), the Generator and the
random functions that take one, as in PyTorch (random values themselves differ by design)."""
import math

import pytest

NAN, INF = math.nan, math.inf


def test_equal(torch):
    a = torch.tensor([1.0, 2.0])
    assert torch.equal(a, torch.tensor([1.0, 2.0])) is True and a.equal(torch.tensor([1.0, 2.0])) is True
    assert torch.equal(a, torch.tensor([1.0, 2.5])) is False
    assert torch.equal(torch.ones(2), torch.ones(3)) is False
    assert torch.equal(torch.ones(2), torch.ones(2, dtype=torch.float64)) is True
    nan = torch.tensor([NAN])
    assert torch.equal(nan, nan) is False
    with pytest.raises(TypeError) as info:
        torch.equal(torch.ones(1), 1)
    assert str(info.value) == "equal(): argument 'other' (position 2) must be Tensor, not int"


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 0.05, "rtol": 0},
                                    {"rtol": 0, "atol": 0}])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_isclose_values(torch, kwargs, dtype):
    dt = getattr(torch, dtype)
    a = torch.tensor([1.0, NAN, INF, -INF, INF, 2.0, 1e-9, 100.0, 0.0], dtype=dt)
    b = torch.tensor([1.0 + 1e-7, NAN, INF, INF, 5.0, 2.1, 0.0, 100.001, -0.0], dtype=dt)
    expected = {
        (): [True, False, True, False, False, False, True, True, True],
        ("equal_nan",): [True, True, True, False, False, False, True, True, True],
        ("rtol",): [True, False, True, False, False, True, True, True, True],
        ("atol", "rtol"): [True, False, True, False, False, False, True, True, True],
    }
    got = torch.isclose(a, b, **kwargs).tolist()
    key = tuple(sorted(kwargs))
    if kwargs == {"rtol": 0, "atol": 0}:
        assert got == [False, False, True, False, False, False, False, False, True]
    else:
        assert got == expected[tuple(k for k in ("equal_nan", "rtol", "atol") if k in kwargs)
                               if key != ("atol", "rtol") else ("atol", "rtol")]
    assert a.isclose(b, **kwargs).tolist() == got
    assert torch.allclose(a, b, **kwargs) is all(got)
    assert torch.isclose(a, b, **kwargs).dtype == torch.bool


def test_isclose_integers_broadcast_and_errors(torch):
    assert torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3]), atol=0.5).tolist() == [True, False]
    assert torch.isclose(torch.tensor([1, 5]), torch.tensor([2, 5]), rtol=0.6, atol=0).tolist() == [True, True]
    assert torch.isclose(torch.tensor([[1.0], [2.0]]), torch.tensor([1.0, 2.0])).tolist() == [[True, False],
                                                                                             [False, True]]
    assert torch.allclose(torch.tensor([1.0]), torch.tensor(1.0))
    for call, message in [
        (lambda: torch.isclose(torch.tensor([1]), torch.tensor([1.0])), "Long did not match Float"),
        (lambda: torch.isclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)),
         "Float did not match Double"),
        (lambda: torch.isclose(torch.ones(1), torch.ones(1), rtol=-1), "rtol must be greater than or equal to zero, "
                                                                       "but got -1"),
        (lambda: torch.isclose(torch.ones(1), torch.ones(1), atol=-1), "atol must be greater than or equal to zero, "
                                                                       "but got -1"),
        (lambda: torch.allclose(torch.ones(2), torch.ones(3)), "The size of tensor a (2) must match the size of "
                                                               "tensor b (3) at non-singleton dimension 0"),
    ]:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == message


def test_keyword_names(torch):
    a, b = torch.ones(2, 3), torch.ones(3, 2)
    assert torch.matmul(input=a, other=b).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert torch.mm(input=a, mat2=b).shape == (2, 2)
    assert torch.add(input=a, other=a, alpha=2).sum().item() == 18.0
    assert torch.where(condition=a > 0, input=a, other=a * 0).sum().item() == 6.0
    assert torch.reshape(input=a, shape=(3, 2)).shape == (3, 2)
    assert torch.flatten(input=a).shape == (6,)
    assert torch.softmax(input=a, dim=1).shape == (2, 3)
    assert torch.max(input=torch.tensor([1.0, 5.0])).item() == 5.0
    assert torch.sum(input=a, dim=1).tolist() == [3.0, 3.0]
    assert torch.randn(size=(2, 3)).shape == (2, 3)
    assert torch.rand(size=(4,)).shape == (4,)
    assert torch.zeros(size=(2, 3)).shape == (2, 3) and torch.ones(size=[2]).shape == (2,)
    assert torch.empty(size=(1, 2)).shape == (1, 2)
    assert torch.full(size=(2,), fill_value=3.0).tolist() == [3.0, 3.0]
    assert torch.isclose(input=a, other=a).all().item()


def test_generator_reproducibility(torch):
    g = torch.Generator()
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    a = torch.randn(5, generator=g)
    b = torch.rand(3, generator=g)
    state = g.get_state()
    c = torch.randint(0, 100, (4,), generator=g)
    d = torch.randperm(10, generator=g)
    g.set_state(state)
    assert torch.equal(torch.randint(0, 100, (4,), generator=g), c)
    assert torch.equal(torch.randperm(10, generator=g), d)
    g.manual_seed(3)
    assert torch.equal(torch.randn(5, generator=g), a) and torch.equal(torch.rand(3, generator=g), b)
    assert sorted(d.tolist()) == list(range(10)) and d.dtype == torch.int64
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s


def test_manual_seed_returns_the_default_generator(torch):
    g = torch.manual_seed(11)
    assert isinstance(g, torch.Generator) and g.initial_seed() == 11 and torch.initial_seed() == 11
    x = torch.randn(4)
    torch.manual_seed(11)
    assert torch.equal(torch.randn(4), x)
    state = torch.get_rng_state()
    y = torch.rand(3)
    torch.set_rng_state(state)
    assert torch.equal(torch.rand(3), y)


def test_randint_forms_and_randperm(torch):
    assert torch.randint(10, (3,)).shape == (3,)
    r = torch.randint(3, 5, (100,))
    assert r.dtype == torch.int64 and set(r.tolist()) <= {3, 4}
    assert torch.randperm(0).tolist() == []
    assert torch.randperm(4, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(RuntimeError, match="^Trying to create tensor with negative dimension -1: \\[-1\\]$"):
        torch.randperm(-1)


def test_docstrings_say_random_streams_differ_from_torch():
    import derivgen
    from derivgen.core import generator
    from derivgen.ops import factories
    assert "The streams differ from torch's" in " ".join(generator.__doc__.split())
    assert "not the numbers torch draws" in " ".join(factories.__doc__.split())
    assert "not torch's numbers" in derivgen.randn.__doc__ and "not torch's numbers" in derivgen.rand.__doc__
