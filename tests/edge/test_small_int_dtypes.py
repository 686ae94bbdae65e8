"""int8, uint8 and int16 end to end against PyTorch 2.13: factories, casts, arithmetic with wrap-around,
reductions (integer sums are int64), comparisons, indexing, printing, and torch's ``promote_types``,
``result_type`` and ``can_cast`` over every pair of dtypes (binary-op promotion itself is in
test_dtype_promotion.py)."""
import numpy as np
import pytest

import derivgen

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


def _outcome(lib, fn):
    try:
        return "ok", repr(fn(lib)).replace("derivgen", "torch")
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception itself
        return "raises", type(e).__name__, str(e)


CASES = {
    "tensor int8": lambda t: t.tensor([1, -2, 127], dtype=t.int8),
    "tensor uint8": lambda t: t.tensor([1, 2, 255], dtype=t.uint8),
    "tensor int16": lambda t: t.tensor([1, 2, 300], dtype=t.int16),
    "zeros uint8": lambda t: t.zeros(2, dtype=t.uint8),
    "ones int8": lambda t: t.ones(2, 2, dtype=t.int8),
    "arange int8": lambda t: t.arange(5, dtype=t.int8),
    "full uint8": lambda t: t.full((2,), 7, dtype=t.uint8),
    "randint uint8 dtype": lambda t: t.randint(0, 5, (3,), dtype=t.uint8).dtype,
    "float to int16": lambda t: t.tensor([1.7, -2.5, 300.]).to(t.int16),
    "byte()": lambda t: t.tensor([1., 2.]).byte(),
    "char()": lambda t: t.tensor([1., 2.]).char(),
    "short()": lambda t: t.tensor([1., 2.]).short(),
    "from_numpy uint8": lambda t: t.from_numpy(np.array([1, 2], np.uint8)),
    "uint8 + int python number wraps": lambda t: t.tensor([250, 2], dtype=t.uint8) + 10,
    "int8 * 3 wraps": lambda t: t.tensor([100, 2], dtype=t.int8) * 3,
    "uint8 + 0.5": lambda t: t.tensor([1, 2], dtype=t.uint8) + 0.5,
    "uint8 0-dim + int8": lambda t: t.tensor(5, dtype=t.uint8) + t.tensor([1, 2], dtype=t.int8),
    "uint8 / uint8": lambda t: t.tensor([5, 2], dtype=t.uint8) / t.tensor([2, 2], dtype=t.uint8),
    "uint8 // 2": lambda t: t.tensor([5, 3], dtype=t.uint8) // 2,
    "uint8 - uint8 wraps": lambda t: t.tensor([1, 2], dtype=t.uint8) - t.tensor([3, 1], dtype=t.uint8),
    "neg int8 wraps": lambda t: -t.tensor([1, -128], dtype=t.int8),
    "abs int8": lambda t: t.tensor([1, -5], dtype=t.int8).abs(),
    "pow uint8": lambda t: t.tensor([3], dtype=t.uint8) ** 2,
    "clamp uint8": lambda t: t.tensor([3, 200], dtype=t.uint8).clamp(5, 100),
    "exp int8": lambda t: t.tensor([1], dtype=t.int8).exp(),
    "sqrt uint8": lambda t: t.tensor([4], dtype=t.uint8).sqrt(),
    "sum uint8 is int64": lambda t: t.tensor([200, 100], dtype=t.uint8).sum(),
    "sum int8 dim": lambda t: t.tensor([[1, 2], [3, 4]], dtype=t.int8).sum(0),
    "prod int16": lambda t: t.tensor([2, 3], dtype=t.int16).prod(),
    "cumsum uint8": lambda t: t.tensor([200, 100], dtype=t.uint8).cumsum(0),
    "empty uint8 sum": lambda t: t.zeros(0, dtype=t.uint8).sum(),
    "mean uint8 refused": lambda t: t.tensor([1, 2], dtype=t.uint8).mean(),
    "max uint8": lambda t: t.tensor([1, 2], dtype=t.uint8).max(),
    "eq uint8 number": lambda t: t.tensor([1, 2], dtype=t.uint8) == 2,
    "int8 < uint8": lambda t: t.tensor([-1, 2], dtype=t.int8) < t.tensor([1, 2], dtype=t.uint8),
    "where int8 uint8": lambda t: t.where(t.tensor([True, False]), t.tensor([1, 2], dtype=t.int8),
                                          t.tensor([3, 4], dtype=t.uint8)),
    "index uint8": lambda t: t.tensor([5, 6, 7], dtype=t.uint8)[t.tensor([2, 0])],
    "mask int8": lambda t: t.tensor([5, 6, 7], dtype=t.int8)[t.tensor([True, False, True])],
    "sort uint8 values": lambda t: t.tensor([5, 6, 7], dtype=t.uint8).sort(descending=True)[0],
    "cat uint8 int8": lambda t: t.cat([t.tensor([1], dtype=t.uint8), t.tensor([2], dtype=t.int8)]),
    "matmul int8": lambda t: t.tensor([[1, 2]], dtype=t.int8) @ t.tensor([[3], [4]], dtype=t.int8),
    "requires_grad uint8 refused": lambda t: t.tensor([1], dtype=t.uint8).requires_grad_(),
    "add_ float into uint8 refused": lambda t: t.tensor([1], dtype=t.uint8).add_(0.5),
    "add_ int8 into uint8": lambda t: t.tensor([1], dtype=t.uint8).add_(t.tensor([2], dtype=t.int8)),
    "add_ uint8 into float": lambda t: t.tensor([1.5]).add_(t.tensor([2], dtype=t.uint8)),
    "print 2-d int8": lambda t: t.arange(-3, 3, dtype=t.int8).reshape(2, 3),
    "item uint8": lambda t: t.tensor([255], dtype=t.uint8).item(),
    "tolist int8": lambda t: t.tensor([-1], dtype=t.int8).tolist(),
    "type() uint8": lambda t: t.tensor([4], dtype=t.uint8).type(),
    "dtype attributes": lambda t: [(d.is_floating_point, d.is_signed, d.is_complex, d.itemsize)
                                   for d in (t.int8, t.uint8, t.int16, t.short)],
    "result_type uint8 with big int": lambda t: t.result_type(t.tensor([1], dtype=t.uint8), 1000),
    "result_type uint8 with float": lambda t: t.result_type(t.tensor([1], dtype=t.uint8), 2.5),
    "result_type of numbers": lambda t: (t.result_type(3, 2.5), t.result_type(True, 2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(case):
    assert _outcome(derivgen, CASES[case]) == _outcome(torch, CASES[case])


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_can_cast(a):
    for b in DTYPES:
        ours = derivgen.promote_types(getattr(derivgen, a), getattr(derivgen, b))
        assert repr(ours).replace("derivgen", "torch") == repr(torch.promote_types(getattr(torch, a),
                                                                                    getattr(torch, b)))
        assert derivgen.can_cast(getattr(derivgen, a), getattr(derivgen, b)) == \
            torch.can_cast(getattr(torch, a), getattr(torch, b))


def test_uint8_pickles_and_saves(tmp_path):
    import pickle
    x = derivgen.tensor([1, 255], dtype=derivgen.uint8)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype is derivgen.uint8 and y.tolist() == [1, 255]
    derivgen.save(x, tmp_path / "x.pt")
    z = derivgen.load(tmp_path / "x.pt")
    assert z.dtype is derivgen.uint8 and z.tolist() == [1, 255]
