"""Bad calls raise the error torch raises, naming the op and the shapes with torch's wording (the
exception type and the message are compared, ``torch.`` read as ``derivgen.``)."""
import numpy as np
import pytest

from tests.support.parity import torch

if torch is None:  # pragma: no cover
    pytest.skip("SKIPPED LOUDLY: PyTorch (the oracle of the error-message tests) is not installed",
                allow_module_level=True)

import derivgen  # noqa: E402


def _mk(T, shape, grad=False, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(a) if T is torch else derivgen.from_numpy(a)
    return t.requires_grad_(True) if grad else t


def _idx(T, values):
    a = np.asarray(values, dtype=np.int64)
    return torch.from_numpy(a) if T is torch else derivgen.from_numpy(a)


CASES = [
    ("mm-shapes", lambda T, F: T.mm(_mk(T, (3, 4)), _mk(T, (5, 4)))),
    ("matmul-2-2-shapes", lambda T, F: _mk(T, (2, 3)) @ _mk(T, (4, 5))),
    ("matmul-1-2-shapes", lambda T, F: _mk(T, (3,)) @ _mk(T, (4, 5))),
    ("matmul-0d", lambda T, F: T.matmul(_mk(T, ()), _mk(T, (3,)))),
    ("mm-not-matrix", lambda T, F: T.mm(_mk(T, (3,)), _mk(T, (3, 4)))),
    ("bmm-shapes", lambda T, F: T.bmm(_mk(T, (2, 3, 4)), _mk(T, (2, 5, 6)))),
    ("mv-shapes", lambda T, F: T.mv(_mk(T, (3, 4)), _mk(T, (5,)))),
    ("dot-sizes", lambda T, F: T.dot(_mk(T, (3,)), _mk(T, (4,)))),
    ("addmm-shapes", lambda T, F: T.addmm(_mk(T, (3, 5)), _mk(T, (3, 4)), _mk(T, (5, 4)))),
    ("sum-bad-dim", lambda T, F: _mk(T, (3, 4)).sum(2)),
    ("mean-bad-dim", lambda T, F: _mk(T, (3, 4)).mean(-3)),
    ("softmax-bad-dim", lambda T, F: F.softmax(_mk(T, (3, 4)), 2)),
    ("transpose-bad-dim", lambda T, F: _mk(T, (3, 4)).transpose(0, 2)),
    ("max-bad-dim", lambda T, F: _mk(T, (3, 4)).max(5)),
    ("cat-sizes", lambda T, F: T.cat([_mk(T, (2, 4)), _mk(T, (2, 3))])),
    ("cat-ndim", lambda T, F: T.cat([_mk(T, (2, 4)), _mk(T, (4,))])),
    ("stack-sizes", lambda T, F: T.stack([_mk(T, (3, 4)), _mk(T, (2, 4))])),
    ("getitem-int", lambda T, F: _mk(T, (3, 4))[5]),
    ("getitem-int-dim1", lambda T, F: _mk(T, (3, 4))[:, -5]),
    ("getitem-too-many", lambda T, F: _mk(T, (3, 4))[0, 1, 2]),
    ("getitem-tensor", lambda T, F: _mk(T, (3, 4))[_idx(T, [0, 5])]),
    ("select-range", lambda T, F: _mk(T, (3, 4)).select(1, 4)),
    ("gather-range", lambda T, F: _mk(T, (3, 4)).gather(1, _idx(T, [[0], [5], [1]]))),
    ("index_select-range", lambda T, F: _mk(T, (3, 4)).index_select(0, _idx(T, [3]))),
    ("embedding-range", lambda T, F: F.embedding(_idx(T, [0, 7]), _mk(T, (4, 3)))),
    ("view-size", lambda T, F: _mk(T, (3, 4)).view(5)),
    ("view-two-inferred", lambda T, F: _mk(T, (3, 4)).view(-1, -1)),
    ("view-noncontig", lambda T, F: _mk(T, (3, 4)).t().view(12)),
    ("reshape-size", lambda T, F: _mk(T, (3, 4)).reshape(5, 2)),
    ("expand-size", lambda T, F: _mk(T, (3, 4)).expand(3, 5)),
    ("permute-len", lambda T, F: _mk(T, (3, 4)).permute(0)),
    ("split-sizes", lambda T, F: _mk(T, (3, 4)).split([1, 1], 0)),
    ("narrow-range", lambda T, F: _mk(T, (3, 4)).narrow(1, 3, 2)),
    ("repeat-dims", lambda T, F: _mk(T, (3, 4)).repeat(2)),
    ("pad-odd", lambda T, F: F.pad(_mk(T, (3, 4)), (1, 2, 3))),
    ("tril-1d", lambda T, F: _mk(T, (3,)).tril()),
    ("nll-target-range", lambda T, F: F.nll_loss(_mk(T, (3, 4)), _idx(T, [0, 9, 1]))),
    ("nll-batch", lambda T, F: F.nll_loss(_mk(T, (3, 4)), _idx(T, [0, 1]))),
    ("layer_norm-shape", lambda T, F: F.layer_norm(_mk(T, (3, 4)), (5,))),
    ("bce-range", lambda T, F: F.binary_cross_entropy(_mk(T, (3,)) + 5, _mk(T, (3,)))),
    ("clamp-none", lambda T, F: T.clamp(_mk(T, (3,)))),
    ("div-rounding", lambda T, F: T.div(_mk(T, (3,)), 2.0, rounding_mode="round")),
    ("inplace-leaf", lambda T, F: _mk(T, (3,), grad=True).mul_(2)),
    ("inplace-view-of-leaf", lambda T, F: _mk(T, (3, 4), grad=True)[0].add_(1)),
    ("topk-k", lambda T, F: _mk(T, (3, 4)).topk(5)),
    ("one_hot-range", lambda T, F: F.one_hot(_idx(T, [0, 3]), 2)),
]


def _raise(T, fn):
    F = torch.nn.functional if T is torch else derivgen.nn.functional
    try:
        fn(T, F)
    except Exception as exc:  # noqa: BLE001 - the exception itself is what is compared
        return exc
    return None


@pytest.mark.parametrize("fn", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_error_matches_torch(fn):
    t_exc = _raise(torch, fn)
    d_exc = _raise(derivgen, fn)
    assert t_exc is not None, "torch does not raise: the case is wrong"
    assert d_exc is not None, f"derivgen does not raise; torch raises {type(t_exc).__name__}: {t_exc}"
    t_msg = str(t_exc).split("\n")[0].replace("torch.", "derivgen.")
    d_msg = str(d_exc).split("\n")[0]
    assert isinstance(d_exc, type(t_exc)) or issubclass(type(t_exc), type(d_exc)), \
        f"torch raises {type(t_exc).__name__}, derivgen {type(d_exc).__name__}: {d_msg}"
    assert d_msg == t_msg
