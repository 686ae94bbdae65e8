"""A Python-facing op given exactly one Tensor calls its row directly when only one of its rows can take a
single argument (``x.sum()``, ``x.max()``, ``x.round()``): the row the argument parser picks for that call,
proven here for every such op of the generated library, and the same result either way."""
import pytest

import derivgen
from derivgen.generated import ops
from derivgen.ops import binding


def _single_argument_ops():
    """(name, rows, row) for the ops with several rows of which exactly one takes one Tensor alone."""
    found = []
    for name in sorted(set(ops.FUNCTIONS) | set(ops.METHODS)):
        rows = getattr(ops, f"_{name}_rows", None)
        if rows is None or len(rows) < 2:
            continue
        one = [ov for ov in rows if ov.required == 1 and ov.positional and ov.positional[0].kind == "tensor"
               and not ov.positional[0].optional]
        if len(one) == 1 and all(ov.required >= 2 for ov in rows if ov is not one[0]):
            found.append((name, rows, one[0]))
    return found


CASES = _single_argument_ops()


def test_the_common_reductions_are_among_them():
    names = {name for name, _, _ in CASES}
    assert {"sum", "mean", "max", "min", "prod", "all", "any", "round"} <= names


@pytest.mark.parametrize("name,rows,row", CASES, ids=[c[0] for c in CASES])
def test_the_parser_picks_the_same_row(name, rows, row):
    x = derivgen.tensor([[0.5, -1.5], [2.0, 3.0]])
    picked, _, _ = binding._pick(name, rows, (x,), {})
    assert picked is row


@pytest.mark.parametrize("name", ["sum", "mean", "max", "prod", "median", "norm"])
def test_direct_call_equals_the_parsed_call(name):
    x = derivgen.tensor([[0.5, -1.5], [2.0, 3.0]], requires_grad=True)
    direct = getattr(ops, name)(x)  # the generated function (Tensor.norm is torch's composite instead)
    # the same call with a keyword takes the parser's way
    keywords = {"dtype": None} if name in ("sum", "mean", "prod") else {}
    parsed = binding.dispatch(name, getattr(ops, f"_{name}_rows"), (x,), keywords)
    assert direct.item() == parsed.item() and type(direct.grad_fn) is type(parsed.grad_fn)


def _single_row_int_ops():
    """(name, row) for one-row ops whose required parameters are a Tensor then ints (``unsqueeze``,
    ``select``, ``transpose``): those take the direct call for plain int arguments."""
    found = []
    for name in sorted(set(ops.FUNCTIONS) | set(ops.METHODS)):
        rows = getattr(ops, f"_{name}_rows", None)
        if rows is None or len(rows) != 1:
            continue
        row = rows[0]
        kinds = [p.kind for p in row.positional[:row.required]]
        if len(kinds) >= 2 and kinds[0] == "tensor" and set(kinds[1:]) == {"int"} and len(row.as_is) >= len(kinds):
            found.append((name, row))
    return found


INT_CASES = _single_row_int_ops()


def test_the_common_int_argument_ops_are_among_them():
    assert {"unsqueeze", "select", "transpose"} <= {n for n, _ in INT_CASES}


@pytest.mark.parametrize("name,row", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_plain_int_arguments_call_the_row_directly_with_the_parsed_result(monkeypatch, name, row):
    x = derivgen.arange(24.0).reshape(2, 3, 4).requires_grad_()
    args = (x,) + (1,) * (row.required - 1)
    try:
        parsed = binding._dispatch_general(name, [row], args, {})
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:  # the direct call must refuse alike
        with pytest.raises(type(exc)) as direct_exc:
            binding.dispatch(name, [row], args, {})
        assert str(direct_exc.value) == str(exc)
        return
    monkeypatch.setattr(binding, "_pick", lambda *a: pytest.fail("the parser ran"))
    monkeypatch.setattr(binding, "_route_key", lambda *a: pytest.fail("the route cache was asked"))
    direct = binding.dispatch(name, [row], args, {})
    parsed, direct = (parsed, direct) if isinstance(parsed, tuple) else ((parsed,), (direct,))
    for p, d in zip(parsed, direct):
        assert p.shape == d.shape and p.dtype == d.dtype and type(p.grad_fn) is type(d.grad_fn)
        assert p.detach().numpy().tolist() == d.detach().numpy().tolist()


def test_values_that_need_converting_still_take_the_parser():
    x = derivgen.arange(6.0).reshape(2, 3)
    row, = ops._unsqueeze_rows
    for dim in (True, 1.0):
        with pytest.raises(TypeError, match="unsqueeze"):
            binding.dispatch("unsqueeze", [row], (x, dim), {})
    assert binding.dispatch("unsqueeze", [row], (x, derivgen.tensor(1)), {}).shape == (2, 1, 3)


@pytest.mark.parametrize("name", ["addcmul", "addcmul_", "addcdiv", "addcdiv_"])
def test_keyword_only_numbers_call_the_row_directly(monkeypatch, name):
    import numpy as np
    import torch as real_torch
    a = np.array([[0.5, -1.5], [2.0, 3.0]])
    ours = [derivgen.tensor(a + i) for i in range(3)]
    theirs = [real_torch.tensor(a + i) for i in range(3)]
    expected = getattr(theirs[0], name)(theirs[1], theirs[2], value=0.25)
    with monkeypatch.context() as m:
        m.setattr(binding, "_pick", lambda *a: pytest.fail("the parser ran"))
        m.setattr(binding, "_route_key", lambda *a: pytest.fail("the route cache was asked"))
        got = getattr(ours[0], name)(ours[1], ours[2], value=0.25)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    # values the row does not take as they are still go through the parser, with its conversions and errors
    got = getattr(derivgen.tensor(a), name)(ours[1], ours[2], value=np.float64(0.25))
    np.testing.assert_array_equal(got.numpy(), getattr(real_torch.tensor(a), name)(
        theirs[1], theirs[2], value=np.float64(0.25)).numpy())
    with pytest.raises(TypeError):
        getattr(derivgen.tensor(a), name)(ours[1], ours[2], value="x")
    with pytest.raises(TypeError):
        getattr(derivgen.tensor(a), name)(ours[1], ours[2], scale=0.25)
