"""vmap's ``randomness`` modes: 'error' (the default) refuses every random operation inside vmap with
torch's error; derivgen refuses 'same' and 'different' too, with a clear error, rather than give draws
that break their guarantee."""
import pytest

import derivgen

RANDOM_CALLS = {
    "rand": lambda t, x: x + t.rand(3),
    "randn": lambda t, x: x + t.randn(3),
    "dropout": lambda t, x: t.nn.functional.dropout(x, 0.5),
    "rand_like": lambda t, x: x * t.rand_like(x),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_error_mode_refuses_random_ops(torch, name):
    call = RANDOM_CALLS[name]
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        torch.func.vmap(lambda x: call(torch, x))(torch.ones(2, 3))


def test_nonrandom_dropout_and_draws_outside_vmap_are_fine(torch):
    out = torch.func.vmap(lambda x: torch.nn.functional.dropout(x, 0.5, training=False))(torch.ones(2, 3))
    assert tuple(out.shape) == (2, 3)
    noise = torch.rand(2, 3)
    out = torch.func.vmap(lambda x, n: x + n)(torch.ones(2, 3), noise)
    assert torch.equal(out, 1 + noise)


def test_error_mode_holds_inside_nested_and_per_example_code(torch):
    def inner(x):
        return torch.func.vmap(lambda y: y + torch.rand(()))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torch.func.vmap(inner)(torch.ones(2, 3))


@pytest.mark.parametrize("mode", ["same", "different"])
def test_same_and_different_are_refused_clearly(mode):
    with pytest.raises(NotImplementedError, match=f"randomness='{mode}' is not supported by derivgen"):
        derivgen.func.vmap(lambda x: x + derivgen.rand(3), randomness=mode)(derivgen.ones(2, 3))


def test_the_guard_is_removed_after_vmap_and_after_an_error():
    with pytest.raises(RuntimeError):
        derivgen.func.vmap(lambda x: x + derivgen.rand(3))(derivgen.ones(2, 3))
    assert derivgen.rand(3).shape == (3,)
    derivgen.func.vmap(lambda x: x * 2)(derivgen.ones(2, 3))
    assert derivgen.randn(2).shape == (2,)
