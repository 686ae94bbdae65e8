"""How NumPy scalars and mismatched dtypes meet Tensors: what torch computes, or refuses and with what
text. Each body runs against derivgen and PyTorch (the ``torch`` fixture)."""
import numpy as np
import pytest

NUMPY_SCALARS = [np.float32(2.0), np.float64(2.0), np.int64(2), np.bool_(True)]


@pytest.mark.parametrize("number", NUMPY_SCALARS, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("op", ["*", "+", "-", "/", "**"])
def test_a_numpy_scalar_on_the_left_gives_a_tensor_with_history(torch, number, op):
    x = torch.ones(3, requires_grad=True)
    result = {"*": lambda: number * x, "+": lambda: number + x, "-": lambda: number - x,
              "/": lambda: number / x, "**": lambda: number ** x}[op]()
    assert isinstance(result, torch.Tensor)
    assert result.dtype == torch.float32 and result.grad_fn is not None
    result.sum().backward()
    assert x.grad is not None


def test_an_array_on_the_left_is_refused(torch):
    x = torch.ones(3)
    with pytest.raises(TypeError, match="unsupported operand"):
        np.ones(3) * x


def test_a_numpy_bool_number_is_read_as_a_float(torch):
    x = torch.ones(3, dtype=torch.int64)
    for result in (x * np.bool_(True), np.bool_(True) * x, torch.mul(x, np.bool_(True))):
        assert result.dtype == torch.float32 and result.tolist() == [1.0, 1.0, 1.0]
    assert torch.add(x, np.bool_(True)).tolist() == [2.0, 2.0, 2.0]
    assert x.clamp(min=np.bool_(True)).dtype == torch.float32
    assert torch.full((2,), np.bool_(True)).dtype == torch.float32
    y = torch.ones(3)
    assert torch.add(y, y, alpha=np.bool_(True)).tolist() == [2.0, 2.0, 2.0]  # not a Boolean alpha
    assert torch.add(y, y, alpha=np.bool_(False)).tolist() == [1.0, 1.0, 1.0]
    b = torch.ones(3, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating point"):
        b.add(b, alpha=np.bool_(True))


def _index_put_message(dest, source):
    return (f"Index put requires the source and destination dtypes match, got {dest} for the destination and "
            f"{source} for the source.")


def test_index_put_refuses_a_source_of_another_dtype(torch):
    i = torch.tensor([1])
    cases = [(torch.zeros(4, dtype=torch.int64), torch.tensor([2.7]), "Long", "Float"),
             (torch.zeros(4), torch.tensor([2], dtype=torch.int64), "Float", "Long"),
             (torch.zeros(4), torch.tensor(2.5, dtype=torch.float64), "Float", "Double")]
    for dest, source, d, s in cases:
        for call in (lambda: dest.index_put_((i,), source), lambda: dest.index_put((i,), source, accumulate=True)):
            with pytest.raises(RuntimeError) as info:
                call()
            assert str(info.value) == _index_put_message(d, s)
        with pytest.raises(RuntimeError) as info:
            dest[i] = source  # assignment with tensor indices is an index_put_
        assert str(info.value) == _index_put_message(d, s)


def test_assigning_a_number_with_tensor_indices_takes_the_tensors_dtype(torch):
    t = torch.zeros(4, dtype=torch.int64)
    t[torch.tensor([1, 2])] = 2.7
    assert t.tolist() == [0, 2, 2, 0]
    u = torch.zeros(2, 3)
    u[torch.tensor([1]), 1:] = 5
    assert u.dtype == torch.float32 and u.tolist() == [[0, 0, 0], [0, 5, 5]]


@pytest.mark.parametrize("call", ["clamp_min_", "clamp_max_"])
@pytest.mark.parametrize("dtype, name", [("int64", "long int"), ("int32", "int"), ("bool", "bool")])
def test_an_integral_tensor_clamped_in_place_by_a_float_is_refused(torch, call, dtype, name):
    t = torch.zeros(4, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError) as info:
        getattr(t, call)(0.5)
    assert str(info.value) == f"result type Float can't be cast to the desired output type {name}"
    assert t.tolist() == [0, 0, 0, 0]
    assert getattr(torch.zeros(4, dtype=torch.int64), call)(2).dtype == torch.int64  # an int bound is fine


def test_an_out_tensor_must_hold_the_results_type(torch):
    out = torch.zeros(4, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.add(torch.zeros(4), 1, out=out)
    wider = torch.zeros(4, dtype=torch.float64)
    assert torch.add(torch.ones(4), 1, out=wider) is wider and wider.tolist() == [2.0] * 4
