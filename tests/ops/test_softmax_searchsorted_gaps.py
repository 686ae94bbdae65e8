"""softmax / log_softmax refuse integer and bool tensors with torch's kernel error; searchsorted and bucketize
write into ``out=`` with torch's dtype check. Each test runs on PyTorch 2.13 (the oracle) and on derivgen."""
import pytest

from tests.support.torch_assert import assert_equal


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype, shape, dim, message", [
    ("int64", (2, 3), 0, '"{fn}_kernel_impl" not implemented for \'Long\''),
    ("int64", (2, 3), -1, '"{fn}_lastdim_kernel_impl" not implemented for \'Long\''),
    ("int32", (2, 3), 1, '"{fn}_lastdim_kernel_impl" not implemented for \'Int\''),
    ("int16", (2, 1), 0, '"{fn}_kernel_impl" not implemented for \'Short\''),
    ("int8", (4,), 0, '"{fn}_lastdim_kernel_impl" not implemented for \'Char\''),
    ("uint8", (), 0, '"{fn}_lastdim_kernel_impl" not implemented for \'Byte\''),
    ("bool", (2, 3), 1, '"{fn}_lastdim_kernel_impl" not implemented for \'Bool\''),
])
def test_softmax_of_integers_raises(torch, fn, dtype, shape, dim, message):
    x = torch.ones(shape, dtype=getattr(torch, dtype))
    for call in (lambda: getattr(torch, fn)(x, dim), lambda: getattr(torch.nn.functional, fn)(x, dim),
                 lambda: getattr(x, fn)(dim)):
        with pytest.raises(NotImplementedError) as info:
            call()
        assert str(info.value) == message.format(fn=fn)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_integers_with_dtype_and_empty(torch, fn):
    x = torch.tensor([1, 2, 4])
    expected = {"softmax": [0.04201006516814232, 0.11419519782066345, 0.8437947034835815],
                "log_softmax": [-3.1698460578918457, -2.1698460578918457, -0.1698460578918457]}[fn]
    assert_equal(getattr(torch, fn)(x, 0, dtype=torch.float32), torch.tensor(expected))
    empty = getattr(torch, fn)(torch.ones((0, 3), dtype=torch.int64), 1)
    assert empty.dtype == torch.int64 and tuple(empty.shape) == (0, 3)


def _inputs(torch):
    s = torch.tensor([1.0, 3.0, 5.0], requires_grad=True)
    v = torch.tensor([[2.0, 6.0], [0.0, 3.0]], requires_grad=True)
    return s, v


@pytest.mark.parametrize("op", ["searchsorted", "bucketize"])
@pytest.mark.parametrize("right", [False, True])
def test_out_is_written_and_returned(torch, op, right):
    s, v = _inputs(torch)
    out = torch.full((2, 2), -7, dtype=torch.int64)
    r = torch.searchsorted(s, v, right=right, out=out) if op == "searchsorted" else \
        torch.bucketize(v, s, right=right, out=out)
    assert r is out
    assert_equal(out, torch.tensor([[1, 3], [0, 2 if right else 1]]), exact_dtype=True)


def test_out_int32_resizes_an_empty_out(torch):
    s, v = _inputs(torch)
    out = torch.empty(0, dtype=torch.int32)
    r = torch.bucketize(v, s, out_int32=True, out=out)
    assert r is out and tuple(out.shape) == (2, 2)
    assert_equal(out, torch.tensor([[1, 3], [0, 1]], dtype=torch.int32), exact_dtype=True)


def test_out_view_writes_its_base(torch):
    s, _ = _inputs(torch)
    base = torch.zeros(2, 2, dtype=torch.int64)
    torch.searchsorted(s, torch.tensor([2.0, 6.0]), out=base[:, 0])
    assert_equal(base, torch.tensor([[1, 0], [3, 0]]))


@pytest.mark.parametrize("op", ["searchsorted", "bucketize"])
@pytest.mark.parametrize("out_int32, out_dtype, name", [
    (False, "float32", "Float"), (True, "int64", "Long"), (False, "int32", "Int")])
def test_out_dtype_must_match_out_int32(torch, op, out_int32, out_dtype, name):
    s, v = _inputs(torch)
    out = torch.zeros(2, 2, dtype=getattr(torch, out_dtype))
    with pytest.raises(RuntimeError) as info:
        if op == "searchsorted":
            torch.searchsorted(s, v, out_int32=out_int32, out=out)
        else:
            torch.bucketize(v, s, out_int32=out_int32, out=out)
    assert str(info.value) == ("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                               "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
                               f"dtype {name} and out_int32 flag is {out_int32}")
    assert out.tolist() == [[0, 0], [0, 0]]
