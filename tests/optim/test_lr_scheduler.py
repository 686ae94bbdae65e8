"""Learning-rate schedulers: the lr sequence over many epochs (the same floats as PyTorch's, recursive
forms included), get_last_lr, state_dict, resuming from a state_dict, and several groups."""
import pytest

from tests.optim._run import torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _halve_every_3(epoch):
    return 0.5 ** (epoch // 3)


SCHEDULERS = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 2, "gamma": 0.7}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.93}),
    ("CosineAnnealingLR", {"T_max": 7}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": _halve_every_3}),
    ("LambdaLR", {"lr_lambda": lambda e: 1.0 / (1 + e)}),
]


def _sequence(lib, name, options, epochs=25):
    params = [lib.ones(2, requires_grad=True), lib.ones(1, requires_grad=True)]
    opt = lib.optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}], lr=0.1)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **options)
    lrs = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == lrs[-1]
    return lrs, sched


@pytest.mark.parametrize("name,options", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_lr_sequence_is_torch_s(name, options):
    ours, s1 = _sequence(derivgen, name, options)
    theirs, s2 = _sequence(torch, name, options)
    assert ours == theirs  # exact floats
    assert len(set(map(tuple, ours))) > 1
    d1, d2 = s1.state_dict(), s2.state_dict()
    if name == "LambdaLR":
        assert d1.pop("lr_lambdas") == d2.pop("lr_lambdas") == [None, None]
    assert d1 == d2


@pytest.mark.parametrize("name,options", SCHEDULERS[:6])
def test_resume_from_state_dict(name, options):
    lrs, sched = _sequence(derivgen, name, options, epochs=10)
    saved = sched.state_dict()
    p = derivgen.ones(2, requires_grad=True)
    q = derivgen.ones(1, requires_grad=True)
    opt = derivgen.optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1)
    for group, lr in zip(opt.param_groups, lrs[-1]):
        group["lr"] = lr
    resumed = getattr(derivgen.optim.lr_scheduler, name)(opt, **options)
    resumed.load_state_dict(saved)
    for group, lr in zip(opt.param_groups, lrs[-1]):
        group["lr"] = lr
    full, _ = _sequence(derivgen, name, options, epochs=15)
    for expected in full[11:]:
        opt.step()
        resumed.step()
        assert resumed.get_last_lr() == expected


def test_not_an_optimizer(torch):
    with pytest.raises(TypeError) as info:
        torch.optim.lr_scheduler.StepLR(object(), 2)
    assert str(info.value) == "object is not an Optimizer"


def test_lambda_count_must_match_groups(torch):
    opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError) as info:
        torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 2.0])
    assert str(info.value) == "Expected 1 lr_lambdas, but got 2"
