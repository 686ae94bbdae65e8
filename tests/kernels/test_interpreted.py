"""The array forms of the generated kernels (derivgen/kernels/interpreted.py): every kernel's form gives
its compiled loop's results on the same operands, NaN, infinities and signed zeros included, in every
loop variant's calling convention; and the budget decides which calls a fresh process runs through them.

The test process itself runs every kernel compiled (tests/conftest.py stops the interpreted calls), so
the compiled loops here are Numba's.
"""
import json

import numpy as np
import pytest

from derivgen.kernels import interpreted
from derivgen.kernels.jit import LazyKernel
from derivgen.warmup import _kernels

KERNELS = dict(_kernels())
WITH_FORM = sorted(name for name, k in KERNELS.items() if isinstance(k.k1d, LazyKernel) and k.k1d.interpreted)

# values that reach each branch of the formulas: signed zeros, the usual clamp and threshold bounds,
# both sides of 1 and -1, infinities, NaN, and a spread of ordinary values
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 6.0, -3.0, 20.0, -20.0, 1e-3, -1e-3,
            np.inf, -np.inf, np.nan]
# scalar arguments (alpha, beta, min, max, exponent, ...): ordinary values of either sign, and 1
_SCALARS = [(0.5, 2.0, -1.5, 1.0), (2.0, -0.5, 3.0, 0.25), (1.0, 1.0, 1.0, 1.0)]


def _operands(k, dtype, n=64, seed=0):
    rng = np.random.default_rng(seed)
    base = np.concatenate([np.array(_SPECIAL), np.linspace(-4, 4, n - len(_SPECIAL))])
    return [rng.permutation(base).astype(dtype) for _ in range(k.n_arrays)]


def _tolerance(dtype):
    # numpy's and Numba's exp/log/tanh may round the last bit apart; a formula's cancellation
    # (``exp(x) - 1`` near 0) turns that into a small absolute difference
    return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)


def _assert_same(got, want, dtype, what):
    assert got.dtype == want.dtype, what
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    np.testing.assert_allclose(got, want, equal_nan=True, err_msg=what, **_tolerance(dtype))
    # the same infinities, and zeros of the same sign where the loop made an exact zero
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]), err_msg=what)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=what)


def _out_dtype(k, dtype):
    return np.bool_ if k.returns_bool else dtype


def test_all_but_the_functions_numpy_lacks_have_an_array_form():
    without = sorted(set(KERNELS) - set(WITH_FORM))
    assert without == ["erf_forward", "erfc_forward"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", WITH_FORM)
def test_array_form_matches_the_compiled_loop(name, dtype):
    k = KERNELS[name]
    arrays = _operands(k, dtype)
    zero = np.dtype(dtype).type(0)
    for scalars in _SCALARS:
        numbers = [np.dtype(dtype).type(v) for v in scalars[:k.n_scalars]]
        want = np.empty(64, _out_dtype(k, dtype))
        k.k1d.dispatcher(want, *arrays, *numbers, zero)
        got = np.empty_like(want)
        k.k1d.interpreted(got, *arrays, *numbers, zero)
        _assert_same(got, want, dtype, f"{name} {np.dtype(dtype)} scalars {numbers}")


@pytest.mark.parametrize("name", WITH_FORM)
def test_every_variant_calls_the_form_as_it_calls_its_loop(name):
    """The strided, bias-row, in-place and number-operand calling conventions of each variant, against
    the compiled 1-D loop on the same values made contiguous."""
    k = KERNELS[name]
    dtype = np.float64
    zero = np.float64(0)
    numbers = [np.float64(v) for v in _SCALARS[0][:k.n_scalars]]
    rows, cols = 4, 16
    mats = [a.reshape(cols, rows).T for a in _operands(k, dtype)]   # (4, 16), strided
    want = np.empty(rows * cols, _out_dtype(k, dtype))
    k.k1d.dispatcher(want, *[np.ascontiguousarray(m).reshape(-1) for m in mats], *numbers, zero)
    want = want.reshape(rows, cols)

    got = np.empty((rows, cols), want.dtype)
    k.k2d.interpreted(got, *mats, *numbers, zero)
    _assert_same(got, want, dtype, f"{name} _2d")
    got = np.empty((rows, cols), want.dtype)
    k.k2d_parallel.interpreted(got, *mats, *numbers, zero)
    _assert_same(got, want, dtype, f"{name} _2d_parallel")

    if k.n_arrays:
        # one operand as a number (a wrapped Python number, read through _elem)
        flat = [np.ascontiguousarray(m).reshape(-1) for m in mats]
        first = flat[0][5]
        ops = [first] + flat[1:]
        want_n = np.empty(rows * cols, want.dtype)
        k.k1d.dispatcher(want_n, *ops, *numbers, zero)
        got_n = np.empty_like(want_n)
        k.k1d_parallel.interpreted(got_n, *ops, *numbers, zero)
        _assert_same(got_n, want_n, dtype, f"{name} _1d with a number")

    if k.inplace is not None and not k.returns_bool:
        target = np.ascontiguousarray(mats[0]).reshape(-1).copy()
        others = [np.ascontiguousarray(m).reshape(-1) for m in mats[1:]]
        k.inplace.interpreted(target, *others, *numbers, zero)
        _assert_same(target, want.reshape(-1), dtype, f"{name} _inplace")

    if k.rows is not None:
        # the first operand a full matrix, the others one row each, read again for every row
        full = np.ascontiguousarray(mats[0])
        row_ops = [np.ascontiguousarray(m[1:2]) for m in mats[1:]]
        want_r = np.empty(rows * cols, want.dtype)
        k.k1d.dispatcher(want_r, full.reshape(-1), *[np.tile(r, (rows, 1)).reshape(-1) for r in row_ops],
                         *numbers, zero)
        got_r = np.empty((rows, cols), want.dtype)
        args = [full, 1] + [v for r in row_ops for v in (r, 0)]
        k.rows.interpreted(got_r, *args, *numbers, zero)
        _assert_same(got_r, want_r.reshape(rows, cols), dtype, f"{name} _rows")


def test_an_interpreted_call_raises_no_floating_point_warning():
    k = KERNELS["log_forward"]
    x = np.array([-1.0, 0.0, 1.0])
    out = np.empty(3)
    with np.errstate(all="raise"):
        k.k1d.interpreted(out, x, np.float64(0))
    np.testing.assert_array_equal(np.isnan(out), [True, False, False])
    assert out[1] == -np.inf


_FRESH = """
import json, sys
import numpy as np
import derivgen as torch
from derivgen.kernels import interpreted
x = torch.tensor(np.linspace(-2, 2, 8), requires_grad=True)
loss = (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()
loss.backward()
first = {"numba": "numba" in sys.modules, "active": interpreted.state.active, "calls_left": interpreted.state.calls,
         "grad": x.grad.tolist(), "loss": loss.item()}
rest = []
for step in range(40):
    x.grad = None
    (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum().backward()
    rest.append("numba" in sys.modules)
first["numba_after"] = rest
first["grad_after"] = x.grad.tolist()
float((torch.ones(200000, dtype=torch.float64) * 2).sum())
first["big_numba"] = "numba" in sys.modules
print(json.dumps(first))
"""


def _fresh(python_runner, env):
    res = python_runner(_FRESH, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _reference():
    import derivgen as torch
    x = torch.tensor(np.linspace(-2, 2, 8), requires_grad=True)
    loss = (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()
    loss.backward()
    return loss.item(), x.grad.tolist()


def test_a_fresh_process_runs_small_programs_without_numba_until_the_budget_is_spent(python_runner):
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "100"})
    loss, grad = _reference()
    assert out["numba"] is False and out["active"] is True
    # each elementwise forward and each elementwise VJP of the expression is one call
    assert 8 <= 100 - out["calls_left"] <= 20
    np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
    assert out["loss"] == pytest.approx(loss, rel=1e-12)
    # once the 100 calls are spent, the next call loads Numba, and every later step runs compiled
    spent = out["numba_after"].index(True)
    assert 0 < spent < 40 and all(out["numba_after"][spent:])
    np.testing.assert_allclose(out["grad_after"], grad, rtol=1e-12)


def test_a_large_call_or_a_zero_budget_loads_numba_at_once(python_runner):
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "0"})
    assert out["numba"] is True and out["active"] is False
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "100000"})
    assert out["numba"] is False and out["numba_after"] == [False] * 40
    assert out["big_numba"] is True  # 200,000 elements: past settings.small_array, so compiled


def test_admit_counts_calls_and_elements_and_refuses_what_the_forms_do_not_cover(monkeypatch):
    monkeypatch.setattr(interpreted, "state", interpreted._Budget())
    interpreted.state.active, interpreted.state.calls, interpreted.state.elements = True, 3, 100
    f8 = np.empty(10)
    assert interpreted.admit((f8, f8, np.float64(0)))
    assert interpreted.state.calls == 2 and interpreted.state.elements == 90
    assert not interpreted.admit((np.empty(10, np.int64), f8, np.int64(0)))      # an integer kernel
    assert not interpreted.admit((f8, np.empty(10, np.int32), np.float64(0)))    # an integer operand
    assert not interpreted.admit((np.empty(10, np.float16), np.float16(0)))      # float16
    assert interpreted.state.calls == 2 and interpreted.state.active
    assert not interpreted.admit((np.empty(95), np.float64(0)))                  # past the elements left
    assert not interpreted.state.active
    assert not interpreted.admit((f8, f8, np.float64(0)))                        # and nothing after


def test_making_a_dispatcher_ends_the_interpreted_calls(monkeypatch):
    monkeypatch.setattr(interpreted, "state", interpreted._Budget())
    interpreted.state.active = True
    k = KERNELS["sigmoid_forward"]
    LazyKernel(k.k1d.py_func, {}).dispatcher
    assert not interpreted.state.active
