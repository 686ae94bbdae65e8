"""``UninitializedParameter`` / ``UninitializedBuffer`` used before materialisation, against torch: the
ValueError each use raises (its text, with the place named in ``<...>`` compared separately: torch names
its C functions, derivgen the method or function the program called), the RuntimeError of ``.shape``,
what torch still answers (``size()``, ``ndim``, ``dtype``, ``requires_grad``, repr, dtype conversions), a
lazy module converted with ``.double()`` before its first forward, and the tensor working once
materialised."""
import re

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import same_text

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

KINDS = ["UninitializedParameter", "UninitializedBuffer"]

USES = [
    ("numel", lambda T, p: p.numel(), "numel"),
    ("dim", lambda T, p: p.dim(), "dim"),
    ("item", lambda T, p: p.item(), "item"),
    ("detach", lambda T, p: p.detach(), "detach"),
    ("tolist", lambda T, p: p.tolist(), "tolist"),
    ("neg", lambda T, p: -p, "neg"),
    ("matmul", lambda T, p: p @ p, "matmul"),
    ("rsub", lambda T, p: 1 - p, None),
    ("add", lambda T, p: p + 1, None),
    ("radd", lambda T, p: 1 + p, None),
    ("mul-tensor", lambda T, p: p * T.ones(2), None),
    ("add_", lambda T, p: p.add_(1), None),
    ("sum", lambda T, p: p.sum(), None),
    ("view", lambda T, p: p.view(-1), None),
    ("clone", lambda T, p: p.clone(), None),
    ("torch.add", lambda T, p: T.add(p, 1), None),
    ("torch.exp", lambda T, p: T.exp(p), None),
    ("torch.mm", lambda T, p: T.mm(p, p), None),
    ("F.linear-weight", lambda T, p: T.nn.functional.linear(T.ones(2, 3), p), None),
    ("F.linear-input", lambda T, p: T.nn.functional.linear(p, T.ones(2, 3)), None),
    ("F.relu", lambda T, p: T.nn.functional.relu(p), None),
    ("len", lambda T, p: len(p), None),
]

_PLACE = re.compile(r"in <[^>]*>\.")


def _make(lib, kind):
    return getattr(lib.nn.parameter, kind)()


def _raised(lib, kind, fn):
    with pytest.raises(Exception) as info:
        fn(lib, _make(lib, kind))
    return info.type.__name__, same_text(str(info.value))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,fn,method", USES, ids=[u[0] for u in USES])
def test_use_before_materialise_raises_torchs_value_error(kind, name, fn, method):
    t_type, t_text = _raised(torch, kind, fn)
    d_type, d_text = _raised(derivgen, kind, fn)
    assert d_type == t_type == "ValueError"
    assert _PLACE.sub("in <...>.", d_text) == _PLACE.sub("in <...>.", t_text)
    assert d_text.startswith("Attempted to use an uninitialized parameter in <")
    if method is not None:
        assert f"in <method '{method}' of " in d_text and f"in <method '{method}' of " in t_text


@pytest.mark.parametrize("kind", KINDS)
def test_shape_raises_torchs_runtime_error(kind):
    texts = []
    for lib in (torch, derivgen):
        with pytest.raises(RuntimeError) as info:
            _make(lib, kind).shape
        texts.append(same_text(str(info.value)))
    assert texts[0] == texts[1] and "Can't access the shape" in texts[0]


@pytest.mark.parametrize("kind", KINDS)
def test_what_torch_still_answers(kind):
    answers = []
    for lib in (torch, derivgen):
        p = _make(lib, kind)
        d = p.double()
        answers.append((tuple(p.size()), p.ndim, str(p.dtype).split(".")[-1], p.requires_grad, repr(p), str(p),
                        p.is_floating_point(), p.is_complex(), str(d.dtype).split(".")[-1],
                        str(p.to(lib.float64).dtype).split(".")[-1], p.float() is p or type(p.float()).__name__))
    assert answers[0] == answers[1]


def test_lazy_module_converted_before_its_first_forward():
    x = np.random.default_rng(0).standard_normal((2, 4))
    results = []
    for lib in (torch, derivgen):
        lib.manual_seed(0)
        m = lib.nn.LazyLinear(3).double()
        bn = lib.nn.LazyBatchNorm1d().double()
        assert type(m.weight).__name__ == "UninitializedParameter"
        assert type(bn.running_mean).__name__ == "UninitializedBuffer"
        out = bn(m(lib.tensor(x)))
        results.append((str(out.dtype).split(".")[-1], str(m.weight.dtype).split(".")[-1],
                        str(bn.running_mean.dtype).split(".")[-1], tuple(m.weight.shape)))
    assert results[0] == results[1] == ("float64", "float64", "float64", (3, 4))


def test_materialised_parameter_works_in_ops():
    p = derivgen.nn.parameter.UninitializedParameter()
    p.materialize((2, 3))
    assert type(p) is derivgen.nn.Parameter and p.numel() == 6
    with derivgen.no_grad():
        p.fill_(2.0)
    (p * 3).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), np.full((2, 3), 3.0))
