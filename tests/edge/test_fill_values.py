"""``fill_`` and ``full`` with numbers at and beyond a dtype's range give what torch gives: the value, or
the same error type and text (torch is the oracle; the direct fill of derivgen.ops.inplace and the
general path must both agree with it)."""
import pytest

import derivgen

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed, so the fill parity "
                                            "tests have no oracle")

VALUES = [0, -0.0, 2.5, -1, -255, -256, 300, 2 ** 40, 2 ** 63, 2 ** 64, -2 ** 63 - 1, 3.4e38, 3.4028235e38,
          1e40, -1e39, float("inf"), -float("inf"), float("nan"), True]
DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _outcome(lib, how, value, dtype):
    try:
        if how == "fill_":
            x = lib.zeros(3, dtype=getattr(lib, dtype))
            with lib.no_grad():
                x.fill_(value)
        else:
            x = lib.full((3,), value, dtype=getattr(lib, dtype))
    except (RuntimeError, OverflowError, TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    return "value", repr(x.tolist())


@pytest.mark.parametrize("how", ["fill_", "full"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_fill_value_range_matches_torch(how, dtype, value):
    assert _outcome(derivgen, how, value, dtype) == _outcome(torch, how, value, dtype)
