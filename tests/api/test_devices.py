"""Devices as a CPU-only PyTorch spells them: device objects, device= on every factory, Tensor.to and
.cpu/.cuda, the cuda/mps queries, the default device, and the errors for accelerators."""
import numpy as np
import pytest

CUDA_ERROR = "Torch not compiled with CUDA enabled"


def test_device_objects(torch):
    d = torch.device("cpu")
    assert (repr(d), str(d), d.type, d.index) == ("device(type='cpu')", "cpu", "cpu", None)
    d0 = torch.device("cpu", 0)
    assert (repr(d0), str(d0), d0.index) == ("device(type='cpu', index=0)", "cpu:0", 0)
    assert d0 == torch.device("cpu:0") and d0 != d and d == torch.device(d)
    assert hash(d0) == hash(torch.device("cpu:0"))
    assert torch.device("cpu") != "cpu"  # a device is not equal to its string, as in torch
    cuda = torch.device("cuda", 1)
    assert (repr(cuda), str(cuda)) == ("device(type='cuda', index=1)", "cuda:1")


@pytest.mark.parametrize("text,message", [
    ("", "Device string must not be empty"),
    ("cuda:x", "Invalid device string: 'cuda:x'"),
    ("cpu:-1", "Invalid device string: 'cpu:-1'"),
    ("foo", "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
            "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: foo"),
])
def test_bad_device_strings(torch, text, message):
    with pytest.raises(RuntimeError) as info:
        torch.device(text)
    assert str(info.value) == message


def test_negative_index(torch):
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        torch.device("cpu", -1)


FACTORIES = [
    ("tensor", lambda T, **kw: T.tensor([1.0, 2.0], **kw)),
    ("as_tensor", lambda T, **kw: T.as_tensor([1.0, 2.0], **kw)),
    ("zeros", lambda T, **kw: T.zeros(2, 3, **kw)),
    ("ones", lambda T, **kw: T.ones((2,), **kw)),
    ("full", lambda T, **kw: T.full((2,), 3.0, **kw)),
    ("empty", lambda T, **kw: T.empty(2, **kw)),
    ("arange", lambda T, **kw: T.arange(4, **kw)),
    ("linspace", lambda T, **kw: T.linspace(0, 1, 5, **kw)),
    ("rand", lambda T, **kw: T.rand(2, **kw)),
    ("randn", lambda T, **kw: T.randn(2, **kw)),
    ("randint", lambda T, **kw: T.randint(0, 5, (3,), **kw)),
    ("randperm", lambda T, **kw: T.randperm(4, **kw)),
    ("eye", lambda T, **kw: T.eye(3, **kw)),
    ("zeros_like", lambda T, **kw: T.zeros_like(T.ones(2), **kw)),
    ("ones_like", lambda T, **kw: T.ones_like(T.ones(2), **kw)),
    ("full_like", lambda T, **kw: T.full_like(T.ones(2), 7.0, **kw)),
    ("empty_like", lambda T, **kw: T.empty_like(T.ones(2), **kw)),
    ("rand_like", lambda T, **kw: T.rand_like(T.ones(2), **kw)),
    ("randn_like", lambda T, **kw: T.randn_like(T.ones(2), **kw)),
]


@pytest.mark.parametrize("name,make", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_factories_take_a_device(torch, name, make):
    for dev in ("cpu", torch.device("cpu"), None):
        assert make(torch, device=dev).device == torch.device("cpu")
    with pytest.raises(AssertionError) as info:
        make(torch, device="cuda")
    assert str(info.value) == CUDA_ERROR
    with pytest.raises(AssertionError):
        make(torch, device=torch.device("cuda", 0))


def test_tensor_to_and_cpu(torch):
    x = torch.ones(2)
    assert x.to("cpu") is x and x.to(torch.device("cpu")) is x and x.cpu() is x
    assert x.to("cpu", torch.float64).dtype == torch.float64
    assert x.to(device="cpu", dtype=torch.float64).dtype == torch.float64
    assert x.to(torch.zeros(1, dtype=torch.float64)).dtype == torch.float64
    assert x.to(torch.float64).tolist() == [1.0, 1.0]
    assert x.device.type == "cpu" and not x.is_cuda
    for move in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to("cuda:0"), lambda: x.to(device="cuda")):
        with pytest.raises(AssertionError) as info:
            move()
        assert str(info.value) == CUDA_ERROR


def test_mps_device_is_refused(torch):
    with pytest.raises(NotImplementedError) as info:
        torch.zeros(2, device="mps")
    assert str(info.value).startswith("Could not run 'aten::empty.memory_format' with arguments from the 'MPS' "
                                      "backend. This could be because the operator doesn't exist for this backend, "
                                      "or was omitted during the selective/custom build process (if using custom "
                                      "build).")


def test_accelerator_queries(torch):
    assert torch.cuda.is_available() is False
    assert torch.cuda.device_count() == 0
    assert torch.backends.mps.is_available() is False
    assert torch.cuda.manual_seed(0) is None


def test_default_device(torch):
    assert torch.get_default_device() == torch.device("cpu")
    x = torch.ones(2)
    try:
        torch.set_default_device("cuda")
        with pytest.raises(AssertionError, match=CUDA_ERROR):
            torch.zeros(2)
        # given no device, to() keeps a tensor where it is, whatever the default device
        assert x.to(torch.float32) is x and x.to(torch.float64).dtype == torch.float64
        assert x.to(dtype=torch.float64).device == torch.device("cpu")
    finally:
        torch.set_default_device("cpu")
    assert torch.zeros(2).device == torch.device("cpu")


def test_half_precision_dtypes_exist_but_are_refused():
    import derivgen
    assert repr(derivgen.float16) == "derivgen.float16" and derivgen.half is derivgen.float16
    assert repr(derivgen.bfloat16) == "derivgen.bfloat16"
    for dtype in (derivgen.float16, derivgen.bfloat16):
        for make in (lambda: derivgen.zeros(2, dtype=dtype), lambda: derivgen.tensor([1.0], dtype=dtype),
                     lambda: derivgen.ones(2).to(dtype), lambda: derivgen.ones(2).to(dtype=dtype),
                     lambda: derivgen.randn(2, dtype=dtype), lambda: derivgen.zeros_like(derivgen.ones(1), dtype=dtype)):
            with pytest.raises(TypeError, match=rf"^derivgen: dtype derivgen.{dtype.name} is not supported"):
                make()
    with pytest.raises(TypeError):
        derivgen.set_default_dtype(derivgen.float16)


HALF_MAKERS = [
    ("zeros", lambda T, d: T.zeros(2, dtype=d)), ("empty", lambda T, d: T.empty(2, 3, dtype=d)),
    ("full", lambda T, d: T.full((2,), 1.5, dtype=d)), ("arange", lambda T, d: T.arange(3, dtype=d)),
    ("tensor", lambda T, d: T.tensor([1.0, 2.0], dtype=d)), ("to", lambda T, d: T.ones(2).to(d)),
    ("to-kw", lambda T, d: T.ones(2).to(dtype=d)), ("new_zeros", lambda T, d: T.ones(2).new_zeros(2, dtype=d)),
    ("method", lambda T, d: T.ones(2).half() if d is T.float16 else T.ones(2).bfloat16()),
    ("type", lambda T, d: T.ones(2).type(d)),
    ("module", lambda T, d: T.nn.Linear(2, 2).half() if d is T.float16 else T.nn.Linear(2, 2).bfloat16()),
    ("module-to", lambda T, d: T.nn.Linear(2, 2).to(d)),
    ("set_default_dtype", lambda T, d: T.set_default_dtype(d)),
]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("what,make", HALF_MAKERS, ids=[m[0] for m in HALF_MAKERS])
def test_every_way_to_make_a_half_precision_tensor_gives_one_clear_error(what, make, name):
    """derivgen refuses float16 and bfloat16 everywhere with one TypeError naming the dtype (torch makes
    them); a refused module conversion leaves the module's parameters as they were."""
    import torch
    import derivgen
    make(torch, getattr(torch, name))  # torch makes it
    torch.set_default_dtype(torch.float32)
    before = derivgen.get_default_dtype()
    with pytest.raises(TypeError) as info:
        make(derivgen, getattr(derivgen, name))
    assert str(info.value).startswith(f"derivgen: dtype derivgen.{name} is not supported")
    assert str(info.value).endswith("half-precision tensors (float16, bfloat16) are not implemented")
    assert derivgen.get_default_dtype() is before


def test_numpy_float16_arrays_are_refused_not_converted():
    import derivgen
    half = np.ones((2, 3), np.float16)
    for make in (derivgen.tensor, derivgen.as_tensor, derivgen.from_numpy):
        with pytest.raises(TypeError, match=r"^derivgen: dtype derivgen.float16 is not supported"):
            make(half)
