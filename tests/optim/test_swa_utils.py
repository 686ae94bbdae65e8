"""``optim.swa_utils`` against PyTorch: ``AveragedModel`` with SWA's equal weights, EMA (per tensor and
per list) and ``use_buffers``; ``update_bn``'s recomputed BatchNorm statistics; ``SWALR``'s learning
rates (cos and linear, with and without annealing epochs), its state_dict and errors."""
import numpy as np
import pytest

from tests.optim._run import torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def make_model(lib, dtype):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
    model = model.double() if dtype == "float64" else model
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return model


def train_and_average(lib, dtype, steps=5, **averaged_options):
    """SGD on a fixed data stream, folding the model into an AveragedModel after every step."""
    model = make_model(lib, dtype)
    averaged = lib.optim.swa_utils.AveragedModel(model, **averaged_options)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((6, 4)).astype(dtype))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
    return averaged


def _values(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


AVERAGING = [{}, {"use_buffers": True}, {"avg_fn": "ema"}, {"multi_avg_fn": "ema"}, {"multi_avg_fn": "swa"},
             {"multi_avg_fn": "ema", "use_buffers": True}]


def _options(lib, options):
    made = dict(options)
    if made.get("avg_fn") == "ema":
        made["avg_fn"] = lib.optim.swa_utils.get_ema_avg_fn(0.9)
    if made.get("multi_avg_fn") == "ema":
        made["multi_avg_fn"] = lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)
    if made.get("multi_avg_fn") == "swa":
        made["multi_avg_fn"] = lib.optim.swa_utils.get_swa_multi_avg_fn()
    return made


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", AVERAGING, ids=[str(o) for o in AVERAGING])
def test_averaged_model_matches_torch(options, dtype):
    ours = train_and_average(derivgen, dtype, **_options(derivgen, options))
    theirs = train_and_average(torch, dtype, **_options(torch, options))
    a, b = _values(ours), _values(theirs)
    assert list(a) == list(b)
    assert a["n_averaged"] == b["n_averaged"] == 5 and a["n_averaged"].dtype == np.int64
    for key in b:
        assert a[key].dtype == b[key].dtype, key
        if dtype == "float64":
            # the models' own training (matmul sums) agrees to rounding; the averaging adds none
            np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-14, err_msg=key)
        else:
            np.testing.assert_allclose(a[key], b[key], rtol=1e-5, atol=1e-6, err_msg=key)
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(dtype)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(derivgen.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5)


@pytest.mark.parametrize("make", ["swa", "ema"])
def test_multi_avg_fns_are_bit_equal(make):
    rng = np.random.default_rng(4)
    starts, ends = [rng.standard_normal((3, 5)), rng.standard_normal(7)], [rng.standard_normal((3, 5)),
                                                                              rng.standard_normal(7)]
    results = []
    for lib in (derivgen, torch):
        fn = (lib.optim.swa_utils.get_swa_multi_avg_fn() if make == "swa"
              else lib.optim.swa_utils.get_ema_multi_avg_fn(0.3))
        averaged = [lib.tensor(s) for s in starts]
        for n in range(4):
            fn(averaged, [lib.tensor(e * (n + 1)) for e in ends], lib.tensor(n + 1))
        results.append([a.numpy() for a in averaged])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_update_bn_recomputes_running_statistics():
    stats = []
    for lib in (derivgen, torch):
        model = make_model(lib, "float64")
        rng = np.random.default_rng(5)
        loader = [(lib.tensor(rng.standard_normal((8, 4))), lib.zeros(8)) for _ in range(3)]
        model.eval()
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training
        bn = model[1]
        assert bn.momentum == 0.1
        stats.append([bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(), int(bn.num_batches_tracked)])
    np.testing.assert_allclose(stats[0][0], stats[1][0], rtol=1e-12)
    np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-12)
    assert stats[0][2] == stats[1][2] == 3
    for lib in (derivgen, torch):  # no BatchNorm: nothing to do, the loader is not read
        lib.optim.swa_utils.update_bn(None, lib.nn.Linear(2, 2))


@pytest.mark.parametrize("options", [{"swa_lr": 0.05}, {"swa_lr": 0.05, "anneal_strategy": "linear"},
                                     {"swa_lr": 0.2, "anneal_epochs": 0}, {"swa_lr": [0.01, 0.3], "anneal_epochs": 3}])
def test_swalr_learning_rates(options):
    def lrs(lib):
        groups = [{"params": [lib.ones(1, requires_grad=True)]}, {"params": [lib.ones(1, requires_grad=True)],
                                                                   "lr": 0.5}]
        opt = lib.optim.SGD(groups, lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, **options)
        out = []
        for _ in range(14):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        state = sched.state_dict()
        return out, {k: v for k, v in state.items() if k != "_get_lr_called_within_step"}

    (ours, s1), (theirs, s2) = lrs(derivgen), lrs(torch)
    assert ours == theirs
    assert sorted(s1) == sorted(s2)
    assert {k: s1[k] for k in ("swa_lr", "anneal_epochs", "_anneal_strategy", "last_epoch", "base_lrs")
            if k in s1} == {k: s2[k] for k in ("swa_lr", "anneal_epochs", "_anneal_strategy", "last_epoch",
                                                 "base_lrs") if k in s2}


def test_swalr_errors():
    for lib in (derivgen, torch):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="^anneal_strategy must be one of 'cos' or 'linear', instead got "
                                             "exp$"):
            lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_strategy="exp")
        with pytest.raises(ValueError, match="^anneal_epochs must be equal or greater than 0, got -1$"):
            lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=-1)
        with pytest.raises(ValueError, match=r"^Invalid decay value 1.5 provided. Please provide a value in \[0,1\] "
                                             "range.$"):
            lib.optim.swa_utils.get_ema_avg_fn(1.5)
        with pytest.raises(AssertionError, match="^Only one of avg_fn and multi_avg_fn should be provided$"):
            lib.optim.swa_utils.AveragedModel(lib.nn.Linear(1, 1), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
                                              multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn())
