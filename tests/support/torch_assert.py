"""``assert_equal``: torch's ``TestCase.assertEqual`` for ported PyTorch tests, written once for both
libraries. Tensors compare by shape and values (float tolerances by dtype, as torch's defaults: float32
rtol 1.3e-6 / atol 1e-5, float64 rtol 1e-7 / atol 1e-7); a tensor against a Python number or a nested list
compares values; sequences compare element by element; anything else compares with ``==``."""
import math
import numbers

import numpy as np

_TOLERANCES = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "float16": (1e-3, 1e-5)}


def _is_tensor(x):
    return hasattr(x, "detach") and hasattr(x, "shape") and hasattr(x, "requires_grad")


def _array(x):
    if _is_tensor(x):
        return np.asarray(x.detach().numpy())
    return np.asarray(x)


def _tolerance(*arrays):
    rtol, atol = 0.0, 0.0
    for a in arrays:
        r, t = _TOLERANCES.get(str(a.dtype), (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, t)
    return rtol, atol


def assert_equal(actual, expected, atol=None, rtol=None, msg=None, exact_dtype=False):
    """Raise AssertionError unless ``actual`` equals ``expected`` in torch's sense (see module doc)."""
    if actual is None or expected is None:
        assert actual is expected, msg or f"{actual!r} is not {expected!r}"
        return
    if _is_tensor(actual) or _is_tensor(expected):
        a, e = _array(actual), _array(expected)
        if _is_tensor(actual) and _is_tensor(expected):
            assert tuple(a.shape) == tuple(e.shape), msg or f"shape {tuple(a.shape)} != {tuple(e.shape)}"
            if exact_dtype:
                assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], msg
        else:
            a, e = np.broadcast_arrays(a, e)
        r, t = _tolerance(a, e)
        r = r if rtol is None else rtol
        t = t if atol is None else atol
        if a.dtype.kind in "fc" or e.dtype.kind in "fc":
            ok = np.allclose(a.astype(np.float64), e.astype(np.float64), rtol=r, atol=t, equal_nan=True)
        else:
            ok = np.array_equal(a, e)
        assert ok, msg or f"tensors differ:\n{a}\n!=\n{e}"
        return
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), msg or f"lengths {len(actual)} != {len(expected)}"
        for x, y in zip(actual, expected):
            assert_equal(x, y, atol=atol, rtol=rtol, msg=msg)
        return
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) and not (
            isinstance(actual, bool) or isinstance(expected, bool)):
        if isinstance(actual, numbers.Integral) and isinstance(expected, numbers.Integral):
            assert actual == expected, msg or f"{actual} != {expected}"
            return
        r = 1.3e-6 if rtol is None else rtol
        t = 1e-5 if atol is None else atol
        assert math.isclose(actual, expected, rel_tol=r, abs_tol=t) or (
            math.isnan(actual) and math.isnan(expected)), msg or f"{actual} != {expected}"
        return
    assert actual == expected, msg or f"{actual!r} != {expected!r}"


def assert_not_equal(actual, expected, msg=None):
    try:
        assert_equal(actual, expected)
    except AssertionError:
        return
    raise AssertionError(msg or f"{actual!r} equals {expected!r}")
