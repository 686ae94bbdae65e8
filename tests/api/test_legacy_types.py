"""The legacy typed tensor classes (``FloatTensor``, ``ByteTensor``, ...), the legacy ``Tensor(...)``
constructor and ``Tensor.type`` against PyTorch 2.13."""
import pytest

NAMES = ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
         "BoolTensor")


def _dtype_name(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize("name", NAMES)
def test_class_dtype_and_isinstance(torch, name):
    cls = getattr(torch, name)
    assert cls.__name__ == name
    assert not cls.is_cuda and not cls.is_sparse
    assert not issubclass(cls, torch.Tensor)
    made = cls(2, 3)
    assert type(made) is torch.Tensor
    assert made.dtype is cls.dtype and tuple(made.shape) == (2, 3)
    assert isinstance(made, cls)
    assert isinstance(torch.zeros(1, dtype=cls.dtype), cls)
    others = [getattr(torch, n) for n in NAMES if n != name]
    assert not any(isinstance(made, o) for o in others)
    assert not isinstance(3, cls)
    assert made.type() in (f"torch.{name}", f"derivgen.{name}")


@pytest.mark.parametrize("name", ("FloatTensor", "LongTensor", "ByteTensor", "BoolTensor"))
def test_class_constructors(torch, name):
    cls = getattr(torch, name)
    assert tuple(cls().shape) == (0,)
    assert tuple(cls(torch.Size([2, 2])).shape) == (2, 2)
    data = cls([1, 0, 1])
    assert data.dtype is cls.dtype and data.tolist() == cls((1, 0, 1)).tolist()
    assert data.tolist() == torch.tensor([1, 0, 1], dtype=cls.dtype).tolist()
    alias = cls(data)
    assert alias.dtype is cls.dtype and not alias.requires_grad
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        cls("a")
    wrong = torch.zeros(2, dtype=torch.float64)
    with pytest.raises(TypeError):
        cls(wrong)


def test_tensor_legacy_constructor(torch):
    assert tuple(torch.Tensor(2, 3).shape) == (2, 3)
    assert torch.Tensor(2, 3).dtype is torch.get_default_dtype()
    assert torch.Tensor().shape == torch.Size([0])
    t = torch.Tensor([1, 2])
    assert t.dtype is torch.float32 and t.tolist() == [1.0, 2.0]
    assert torch.Tensor(torch.tensor([1., 2.])).tolist() == [1.0, 2.0]


def test_type_conversions(torch):
    x = torch.randn(2, 2)
    assert x.type(torch.DoubleTensor).dtype is torch.float64
    assert x.type("torch.IntTensor").dtype is torch.int32
    assert x.type(torch.int8).dtype is torch.int8
    assert x.type(dtype=torch.uint8, non_blocking=False).dtype is torch.uint8
    assert x.type(torch.FloatTensor) is x
    assert x.type("torch.FloatTensor") is x
    assert torch.tensor([1]).type(torch.Tensor).dtype is torch.float32
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    with pytest.raises(ValueError, match="invalid type: 'FloatTensor'"):
        x.type("FloatTensor")
    with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
        x.type(3)


def test_type_keeps_autograd(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x.type(torch.DoubleTensor)
    assert y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype is torch.float32 and x.grad.tolist() == [1.0, 1.0]


def test_pickled_class_is_the_same_class(torch):
    import pickle
    assert pickle.loads(pickle.dumps(torch.FloatTensor)) is torch.FloatTensor


def test_derivgen_names_its_types_derivgen():
    import derivgen
    assert derivgen.zeros(1).type() == "derivgen.FloatTensor"
    assert derivgen.zeros(1).type("derivgen.LongTensor").dtype is derivgen.int64
    assert repr(derivgen.ByteTensor) == "<class 'derivgen.ByteTensor'>"
