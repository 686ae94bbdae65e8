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
        one = [ov for ov in rows if ov.required == 1 and ov.tensor_prefix >= 1]
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
