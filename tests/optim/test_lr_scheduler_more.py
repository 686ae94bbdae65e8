"""The other learning-rate schedulers against torch: LinearLR, ConstantLR, PolynomialLR,
MultiplicativeLR, CosineAnnealingWarmRestarts, CyclicLR (lr and momentum), OneCycleLR (lr, momentum and
Adam's betas), SequentialLR, ChainedScheduler and ReduceLROnPlateau: the same floats over many steps,
equal state_dicts, resuming from a state_dict, and torch's errors and warnings."""
import math

import pytest

from tests.optim._run import torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _opt(lib, kind="SGD"):
    params = [lib.ones(2, requires_grad=True), lib.ones(1, requires_grad=True)]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _mult(epoch):
    return 0.95


SINGLE = [
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 7}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}),
    ("MultiplicativeLR", {"lr_lambda": _mult}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.2, "step_size_up": 3}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": [0.2, 0.5], "step_size_up": 2, "step_size_down": 5,
                  "mode": "triangular2"}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.2, "step_size_up": 4, "mode": "exp_range", "gamma": 0.9}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 30}),
    ("OneCycleLR", {"max_lr": [0.5, 1.0], "epochs": 3, "steps_per_epoch": 10, "anneal_strategy": "linear",
                    "three_phase": True}),
]


def _run(lib, name, options, steps=29, kind="SGD"):
    opt = _opt(lib, kind)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **options)
    seen = [(sched.get_last_lr(), [g.get("momentum") for g in opt.param_groups],
             [g.get("betas") for g in opt.param_groups])]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), [g.get("momentum") for g in opt.param_groups],
                     [g.get("betas") for g in opt.param_groups]))
        assert [g["lr"] for g in opt.param_groups] == seen[-1][0]
    return seen, sched, opt


def _comparable(state):
    return {k: v for k, v in state.items() if k not in ("_scale_fn_ref", "_scale_fn_custom", "lr_lambdas",
                                                         "anneal_func", "_anneal_func_type")}


@pytest.mark.parametrize("name,options", SINGLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SINGLE)])
def test_sequence_and_state_dict_are_torch_s(name, options):
    ours, s1, _ = _run(derivgen, name, options)
    theirs, s2, _ = _run(torch, name, options)
    assert ours == theirs  # exact floats, momentum too
    assert len({tuple(lrs) for lrs, _, _ in ours}) > 1
    assert _comparable(s1.state_dict()) == _comparable(s2.state_dict())


@pytest.mark.parametrize("name,options", [SINGLE[7], SINGLE[10]])
def test_cyclic_schedules_drive_adam_betas(name, options):
    ours, _, _ = _run(derivgen, name, options, steps=20, kind="Adam")
    theirs, _, _ = _run(torch, name, options, steps=20, kind="Adam")
    assert ours == theirs
    assert len({b[0] for _, _, b in ours}) > 2


@pytest.mark.parametrize("name,options", SINGLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SINGLE)])
def test_resume_from_state_dict(name, options):
    full, _, _ = _run(derivgen, name, options, steps=20)
    _, sched, opt = _run(derivgen, name, options, steps=8)
    saved = sched.state_dict()
    opt_state = opt.state_dict()
    opt2 = _opt(derivgen)
    sched2 = getattr(derivgen.optim.lr_scheduler, name)(opt2, **options)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(saved)
    rest = []
    for _ in range(12):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    assert rest == [lrs for lrs, _, _ in full[9:]]


def _composite(lib, name):
    opt = _opt(lib)
    sl = lib.optim.lr_scheduler
    if name == "SequentialLR":
        sched = sl.SequentialLR(opt, [sl.LinearLR(opt, start_factor=0.1, total_iters=4),
                                      sl.ExponentialLR(opt, gamma=0.9),
                                      sl.CosineAnnealingLR(opt, T_max=6)], milestones=[4, 9])
    else:
        sched = sl.ChainedScheduler([sl.ConstantLR(opt, factor=0.5, total_iters=3),
                                     sl.ExponentialLR(opt, gamma=0.9)])
    lrs = [sched.get_last_lr()]
    for _ in range(20):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched


@pytest.mark.parametrize("name", ["SequentialLR", "ChainedScheduler"])
def test_composite_schedulers(name):
    ours, s1 = _composite(derivgen, name)
    theirs, s2 = _composite(torch, name)
    assert ours == theirs
    d1, d2 = s1.state_dict(), s2.state_dict()
    assert d1["_schedulers"] == d2["_schedulers"]
    assert {k: v for k, v in d1.items() if k != "_schedulers"} == {k: v for k, v in d2.items() if k != "_schedulers"}


def _plateau(lib, **options):
    opt = _opt(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4]
    lrs = []
    for m in metrics:
        opt.step()
        sched.step(m)
        lrs.append(sched.get_last_lr())
    return lrs, sched


@pytest.mark.parametrize("options", [{}, {"patience": 1, "factor": 0.5, "cooldown": 2},
                                     {"mode": "max", "threshold_mode": "abs", "patience": 2, "min_lr": [0.02, 0.1]},
                                     {"patience": 0, "factor": 0.1, "min_lr": 0.001, "eps": 1e-3}])
def test_reduce_lr_on_plateau(options):
    ours, s1 = _plateau(derivgen, **options)
    theirs, s2 = _plateau(torch, **options)
    assert ours == theirs
    assert s1.state_dict() == s2.state_dict()


@pytest.mark.parametrize("make,message", [
    (lambda sl, o: sl.LinearLR(o, start_factor=0),
     "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
    (lambda sl, o: sl.LinearLR(o, end_factor=1.5), "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda sl, o: sl.ConstantLR(o, factor=2.0), "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda sl, o: sl.CosineAnnealingWarmRestarts(o, T_0=0), "Expected positive integer T_0, but got 0"),
    (lambda sl, o: sl.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "Expected integer T_mult >= 1, but got 0"),
    (lambda sl, o: sl.ReduceLROnPlateau(o, factor=1.0), "Factor should be < 1.0."),
    (lambda sl, o: sl.ReduceLROnPlateau(o, mode="up"), "mode up is unknown!"),
    (lambda sl, o: sl.OneCycleLR(o, max_lr=0.1), "You must define either total_steps OR (epochs AND steps_per_epoch)"),
    (lambda sl, o: sl.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="x"),
     "anneal_strategy must be one of 'cos' or 'linear', instead got x"),
    (lambda sl, o: sl.CyclicLR(o, base_lr=0.1, max_lr=0.2, mode="nope"),
     "mode is invalid and scale_fn is None"),
    (lambda sl, o: sl.SequentialLR(o, [sl.ConstantLR(o)], milestones=[1]),
     "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone "
     "points, but got number of schedulers 1 and the number of milestones to be equal to 1"),
])
def test_errors(make, message):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError) as info:
            make(lib.optim.lr_scheduler, _opt(lib))
        assert str(info.value) == message


def test_scheduler_step_before_optimizer_step_warns():
    for lib in (derivgen, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.LinearLR(opt)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()


def test_onecycle_past_total_steps_raises():
    for lib in (derivgen, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        opt.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
            sched.step()


def test_cosine_warm_restarts_fractional_epoch():
    out = []
    for lib in (derivgen, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2)
        lrs = []
        for i in range(12):
            opt.step()
            sched.step(i + 0.25)
            lrs.append(sched.get_last_lr())
        out.append(lrs)
    assert out[0] == out[1]
    assert not math.isclose(out[0][0][0], out[0][1][0])
