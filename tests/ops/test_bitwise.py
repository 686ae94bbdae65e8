"""Bitwise ops on integer and bool tensors against PyTorch 2.13: ``bitwise_and/or/xor/not``, the shifts, the
operators ``& | ^ ~ << >>`` (reflected and in place), torch's type promotion (wrapped numbers, uint8 with int8,
bool with ints), shift amounts outside the type's width, and torch's errors on floating types. Each case runs
on derivgen and on torch side by side and compares values, dtypes, exception types and texts."""
import numpy as np
import pytest
import torch as real

import derivgen


def _inputs(t):
    return {"a": t.tensor([5, -3, 12, 0], dtype=t.int64), "b": t.tensor([3, 6, 1, 7], dtype=t.int32),
            "t": t.tensor([True, False, True, False]), "f": t.tensor([1.5, 2.0, 3.0, 4.0]),
            "u": t.tensor([200, 3, 7, 255], dtype=t.uint8), "i8": t.tensor([-100, 3, 7, -128], dtype=t.int8),
            "i16": t.tensor([-300, 3, 7, 32767], dtype=t.int16),
            "s": t.tensor([0, 1, 63, 64], dtype=t.int64), "neg": t.tensor([-1, 2, 70, -5], dtype=t.int64)}


CASES = {
    "and": lambda t, x: x["a"] & x["b"], "or": lambda t, x: x["a"] | x["b"], "xor": lambda t, x: x["a"] ^ x["b"],
    "not": lambda t, x: ~x["a"], "not_bool": lambda t, x: ~x["t"], "not_uint8": lambda t, x: ~x["u"],
    "bool_and": lambda t, x: x["t"] & ~x["t"], "bool_or": lambda t, x: x["t"] | x["t"], "bool_xor": lambda t, x: x["t"] ^ x["t"],
    "and_number": lambda t, x: x["a"] & 6, "rand_number": lambda t, x: 6 & x["a"], "or_true": lambda t, x: x["a"] | True,
    "bool_and_int": lambda t, x: x["t"] & 1, "bool_or_int": lambda t, x: x["t"] | 2, "rxor": lambda t, x: 9 ^ x["b"],
    "uint8_int8": lambda t, x: x["u"] & x["i8"], "uint8_wraps_number": lambda t, x: x["u"] ^ 300,
    "zero_dim": lambda t, x: x["a"] & t.tensor(6), "uint8_bool0": lambda t, x: x["u"] & t.tensor(True),
    "int16_int32": lambda t, x: x["i16"] | x["b"],
    "shl": lambda t, x: x["a"] << 2, "shr": lambda t, x: x["a"] >> 1, "shl_tensor": lambda t, x: x["a"] << x["b"],
    "rshl": lambda t, x: 1 << x["b"], "rshr": lambda t, x: 64 >> x["b"], "shr_uint8": lambda t, x: x["u"] >> 1,
    "shl_uint8": lambda t, x: x["u"] << 1, "shl_int8_wraps": lambda t, x: x["i8"] << 1, "shr_int8": lambda t, x: x["i8"] >> 3,
    "shl_int16": lambda t, x: x["i16"] << 4,
    "shl_width": lambda t, x: x["a"] << x["s"], "shr_width": lambda t, x: x["a"] >> x["s"],
    "shl_negative": lambda t, x: x["a"] << x["neg"], "shr_negative": lambda t, x: x["a"] >> x["neg"],
    "shr_uint8_wide": lambda t, x: x["u"] >> 9, "shl_int32_wide": lambda t, x: x["b"] << 40,
    "shl_bool_number": lambda t, x: x["t"] << 1,
    "fn_and": lambda t, x: t.bitwise_and(x["a"], x["b"]), "fn_or_number": lambda t, x: t.bitwise_or(x["u"], 8),
    "fn_xor": lambda t, x: t.bitwise_xor(x["t"], x["t"]), "fn_not": lambda t, x: t.bitwise_not(x["i8"]),
    "fn_left_shift": lambda t, x: t.bitwise_left_shift(x["a"], 3), "fn_right_shift": lambda t, x: t.bitwise_right_shift(x["a"], x["b"]),
    "fn_number_first": lambda t, x: t.bitwise_left_shift(2, x["a"]),
    "method_and": lambda t, x: x["a"].bitwise_and(3), "method_not": lambda t, x: x["b"].bitwise_not(),
    "method_shift": lambda t, x: x["u"].bitwise_right_shift(2),
    "inplace_xor": lambda t, x: x["a"].clone().bitwise_xor_(x["b"]), "inplace_not": lambda t, x: x["a"].clone().bitwise_not_(),
    "inplace_lshift": lambda t, x: x["a"].clone().bitwise_left_shift_(1), "inplace_rshift": lambda t, x: x["u"].clone().bitwise_right_shift_(x["u"]),
    "iand": lambda t, x: x["a"].clone().__iand__(x["b"]), "ior_keeps_int32": lambda t, x: x["b"].clone().__ior__(x["a"]),
    "ixor_bool": lambda t, x: x["t"].clone().__ixor__(x["t"]), "ilshift": lambda t, x: x["a"].clone().__ilshift__(2),
    "irshift": lambda t, x: x["a"].clone().__irshift__(x["b"]),
    "out": lambda t, x: t.bitwise_and(x["a"], x["b"], out=t.empty(4, dtype=t.int64)),
    "out_casts": lambda t, x: t.bitwise_and(x["a"], 3, out=t.empty(4, dtype=t.int32)),
    "out_not": lambda t, x: t.bitwise_not(x["u"], out=t.empty(0, dtype=t.uint8)),
    # errors
    "float_and": lambda t, x: x["f"] & x["a"], "float_number": lambda t, x: x["a"] & 1.5, "bool_float": lambda t, x: x["t"] & 1.5,
    "float_not_operator": lambda t, x: ~x["f"], "float_not": lambda t, x: t.bitwise_not(x["f"]),
    "float_not_": lambda t, x: x["f"].clone().bitwise_not_(), "float_xor_number": lambda t, x: t.bitwise_xor(x["a"], 2.5),
    "float_and_": lambda t, x: x["f"].clone().bitwise_and_(x["a"]), "float_shl": lambda t, x: x["f"] << 1,
    "float_shr": lambda t, x: x["f"] >> 1, "number_shl_float": lambda t, x: 2 << x["f"],
    "bool_shr": lambda t, x: x["t"] >> x["t"], "bool_shift_fn": lambda t, x: t.bitwise_left_shift(x["t"], x["t"]),
    "ixor_bool_int": lambda t, x: x["t"].clone().__ixor__(x["a"]), "iand_int_float": lambda t, x: x["a"].clone().__iand__(x["f"]),
    "ilshift_bool": lambda t, x: x["t"].clone().__ilshift__(1), "and_str": lambda t, x: x["a"] & "x",
    "and_none": lambda t, x: x["a"].__and__(None),
}


def _outcome(t, name):
    try:
        r = CASES[name](t, _inputs(t))
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc).__name__, str(exc)
    if r is NotImplemented:
        return "NotImplemented"
    return np.asarray(r.tolist()), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("name", CASES)
def test_bitwise_matches_torch(name):
    got, expected = _outcome(derivgen, name), _outcome(real, name)
    if isinstance(expected[0], np.ndarray):
        assert isinstance(got[0], np.ndarray), got
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1] == expected[1]
    else:
        assert got == expected


@pytest.mark.parametrize("op", ["bitwise_and_", "bitwise_left_shift_", "bitwise_not_"])
def test_inplace_returns_self_and_bumps_version(torch, op):
    x = torch.tensor([6, 3], dtype=torch.int64)
    version = x._version
    r = getattr(x, op)() if op == "bitwise_not_" else getattr(x, op)(1)
    assert r is x and x._version == version + 1


def test_inplace_on_view_writes_base(torch):
    base = torch.tensor([[1, 2], [4, 8]], dtype=torch.int32)
    base[:, 1] ^= torch.tensor([3, 3], dtype=torch.int32)
    assert base.tolist() == [[1, 1], [4, 11]]
