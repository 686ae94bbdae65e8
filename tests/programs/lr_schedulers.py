"""Learning-rate schedulers as training loops use them: StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR, LambdaLR, OneCycleLR, ReduceLROnPlateau, get_last_lr and the optimizer's lr."""
import torch
from torch import nn, optim
from torch.optim import lr_scheduler

model = nn.Linear(2, 1)


def run(make, steps=8, metric=None):
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = make(opt)
    lrs = []
    for epoch in range(steps):
        opt.zero_grad()
        model(torch.ones(1, 2)).sum().backward()
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric[epoch])
        lrs.append(round(opt.param_groups[0]["lr"], 8))
    return type(sched).__name__, lrs


print(run(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5)))
print(run(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.1)))
print(run(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9)))
print(run(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=8, eta_min=0.001)))
print(run(lambda o: lr_scheduler.LambdaLR(o, lr_lambda=lambda epoch: 0.95 ** epoch)))
print(run(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=8)))
print(run(lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1),
          metric=[1.0, 0.9, 0.95, 0.97, 0.96, 0.8, 0.85, 0.9]))
print(run(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4)))

opt = optim.Adam(model.parameters(), lr=1e-3)
scheduler = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
for epoch in range(5):
    opt.step()
    scheduler.step()
    print(epoch, scheduler.get_last_lr(), scheduler.last_epoch)
print(scheduler.state_dict())
warm = lr_scheduler.SequentialLR(opt, schedulers=[lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
                                                  lr_scheduler.ExponentialLR(opt, gamma=0.5)], milestones=[2])
for _ in range(4):
    opt.step()
    warm.step()
    print(warm.get_last_lr())
