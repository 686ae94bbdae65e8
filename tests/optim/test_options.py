"""The options every optimizer takes, against PyTorch: ``differentiable=True`` on every optimizer that
takes it (differentiating through several ``opt.step()`` calls, as meta-learning does: the final loss's
gradient with respect to the initial weights; torch's refusal where a step changes a saved buffer), ``foreach`` / ``fused`` (accepted; the same results as torch's implementations they
select), ``capturable`` (refused on CPU tensors with torch's AssertionError), and the option errors."""
import numpy as np
import pytest

from tests.optim._run import run, torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def meta_gradient(lib, name, options, steps):
    """``steps`` differentiable steps from ``w0``, then the gradient of a loss of the result w.r.t. ``w0``."""
    rng = np.random.default_rng(0)
    w0 = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x, y = lib.tensor(rng.standard_normal((5, 3))), lib.tensor(rng.standard_normal((5, 2)))
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **options)
    for _ in range(steps):
        q = p.clone()  # the step changes p in place, so the inner loss's graph must not save p itself
        inner = ((x @ q - y) ** 2).sum() + (q ** 4).sum() * 0.1
        p.grad, = lib.autograd.grad(inner, q, create_graph=True)
        opt.step()
    assert p.grad_fn is not None and p.requires_grad
    ((x @ p - y).sin() ** 2).sum().backward()
    return p.detach().numpy(), w0.grad.numpy()


META_CASES = [
    ("SGD", {"lr": 0.05}), ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.05}), ("Adam", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.05}), ("Adagrad", {"lr": 0.05, "lr_decay": 0.1, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5}), ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05}), ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.7), "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05}), ("ASGD", {"lr": 0.05, "t0": 1, "lambd": 0.1, "weight_decay": 0.1}),
]
# these save a state buffer that their next step changes in place, so torch can differentiate
# through one step only
ONE_STEP_CASES = [("Adamax", {"lr": 0.05}), ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
                  ("Rprop", {"lr": 0.05}), ("Rprop", {"lr": 0.05, "maximize": True}),
                  ("Adam", {"lr": 0.05, "amsgrad": True}), ("RMSprop", {"lr": 0.01, "centered": True})]


@pytest.mark.parametrize("steps", [2, 3])
@pytest.mark.parametrize("name,options", META_CASES, ids=[f"{n}-{o}" for n, o in META_CASES])
def test_differentiate_through_steps(name, options, steps):
    ours, our_grad = meta_gradient(derivgen, name, options, steps)
    theirs, their_grad = meta_gradient(torch, name, options, steps)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, atol=1e-14)
    assert np.abs(their_grad).max() > 1e-2


@pytest.mark.parametrize("name,options", ONE_STEP_CASES, ids=[f"{n}-{o}" for n, o in ONE_STEP_CASES])
def test_state_saved_then_changed_in_place_is_refused_as_in_torch(name, options):
    ours, our_grad = meta_gradient(derivgen, name, options, 1)
    theirs, their_grad = meta_gradient(torch, name, options, 1)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, atol=1e-14)
    for lib in (derivgen, torch):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            meta_gradient(lib, name, options, 3)


def test_differentiable_step_records_and_plain_step_does_not():
    for lib in (derivgen, torch):
        w0 = lib.ones(3, dtype=lib.float64, requires_grad=True)
        p = w0.clone()
        opt = lib.optim.SGD([p], lr=0.5, differentiable=True)
        p.grad = w0 * 2
        opt.step()
        p.sum().backward()
        np.testing.assert_array_equal(w0.grad.numpy(), np.zeros(3))  # d/dw0 (w0 - 0.5 * 2 * w0) = 0
        leaf = lib.ones(3, requires_grad=True)
        plain = lib.optim.SGD([leaf], lr=0.5)
        leaf.grad = lib.ones(3)
        plain.step()
        assert leaf.grad_fn is None and leaf.is_leaf
        with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
            lib.optim.SGD([w0.clone()], lr=0.1)


def test_differentiable_on_a_leaf_is_torchs_in_place_error():
    for lib in (derivgen, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.Adam([p], differentiable=True)
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                               "operation.$"):
            opt.step()


CAPTURABLE = ["Adam", "AdamW", "RMSprop", "Adamax", "Adadelta", "NAdam", "RAdam", "ASGD", "Rprop"]


@pytest.mark.parametrize("name", CAPTURABLE)
def test_capturable_on_cpu_is_refused_as_in_torch(name):
    messages = []
    for lib in (derivgen, torch):
        p = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([p], capturable=True)
        assert opt.step() is None  # no gradient yet: nothing to check
        p.grad = lib.ones(3)
        with pytest.raises(AssertionError) as info:
            opt.step()
        messages.append(str(info.value))
        np.testing.assert_array_equal(p.detach().numpy(), np.ones(3, np.float32))
    assert messages[0] == messages[1]


FUSED = ["SGD", "Adam", "AdamW", "Adagrad"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FUSED)
def test_fused_gives_torchs_fused_results(name, dtype):
    options = {"fused": True, "lr": 0.05, **({"momentum": 0.9} if name == "SGD" else {})}
    ours, o1, _ = run(derivgen, name, options, dtype, steps=6)
    theirs, o2, _ = run(torch, name, options, dtype, steps=6)
    # torch's fused kernels round a few products differently from its single-tensor code, which is
    # what derivgen's loops reproduce
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12 if dtype == "float64" else 1e-6, atol=0)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for k in s2["state"]:
        assert {key: str(v.dtype).split(".")[-1] for key, v in s1["state"][k].items()} == \
            {key: str(v.dtype).split(".")[-1] for key, v in s2["state"][k].items()}  # fused steps are float32


FOREACH = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Adadelta", "NAdam", "RAdam", "ASGD", "Rprop"]


@pytest.mark.parametrize("name", FOREACH)
def test_foreach_gives_torchs_foreach_results(name):
    options = {"foreach": True, **({"momentum": 0.9} if name == "SGD" else {})}
    ours, o1, _ = run(derivgen, name, options, "float64", steps=6)
    theirs, o2, _ = run(torch, name, options, "float64", steps=6)
    # torch's multi-tensor code regroups a few operations (ASGD's decay joins the gradient), so its
    # roundings differ from the single-tensor code's, which derivgen always runs
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-8 if name == "ASGD" else 0)
    assert o1.state_dict()["param_groups"] == o2.state_dict()["param_groups"]


@pytest.mark.parametrize("name", FUSED)
def test_option_conflicts(name):
    for lib in (derivgen, torch):
        cls = getattr(lib.optim, name)
        with pytest.raises(RuntimeError, match="^`fused` does not support `differentiable`$"):
            cls([lib.ones(1, requires_grad=True)], fused=True, differentiable=True)
        with pytest.raises(RuntimeError, match="^`fused` and `foreach` cannot be `True` together.$"):
            cls([lib.ones(1, requires_grad=True)], fused=True, foreach=True)


def meta_learning_rate(lib, name, options, steps):
    """As ``meta_gradient``, with the learning rate a tensor that requires grad: its gradient too."""
    rng = np.random.default_rng(0)
    w0 = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    lr = lib.tensor(0.05, dtype=lib.float64, requires_grad=True)
    x, y = lib.tensor(rng.standard_normal((5, 3))), lib.tensor(rng.standard_normal((5, 2)))
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], lr=lr, differentiable=True, **options)
    for _ in range(steps):
        q = p.clone()
        inner = ((x @ q - y) ** 2).sum() + (q ** 4).sum() * 0.1
        p.grad, = lib.autograd.grad(inner, q, create_graph=True)
        opt.step()
    ((x @ p - y).sin() ** 2).sum().backward()
    return p.detach().numpy(), w0.grad.numpy(), lr.grad.item()


@pytest.mark.parametrize("name,options", [("SGD", {}), ("Adam", {}), ("AdamW", {"weight_decay": 0.1})])
def test_learning_rate_tensor_gets_a_gradient(name, options):
    ours = meta_learning_rate(derivgen, name, options, 3)
    theirs = meta_learning_rate(torch, name, options, 3)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
    assert ours[2] == pytest.approx(theirs[2], rel=1e-12) and abs(theirs[2]) > 1


@pytest.mark.parametrize("name", FUSED)
def test_fused_refuses_integer_parameters(name):
    messages = []
    for lib in (derivgen, torch):
        p = lib.zeros(2, dtype=lib.int64)
        p.grad = lib.ones(2, dtype=lib.int64)
        opt = getattr(lib.optim, name)([p], lr=0.1, fused=True)
        with pytest.raises(RuntimeError) as info:
            opt.step()
        messages.append(str(info.value).replace(lib.__name__ + ".", ""))
    assert messages[0] == messages[1]
    assert messages[0].startswith("`fused=True` requires all the params to be floating point Tensors")


ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Adadelta", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS",
       "SparseAdam", "Adafactor", "Muon"]


@pytest.mark.parametrize("name", ALL)
def test_tensor_learning_rate(name):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError, match="^Tensor lr must be 1-element$"):
            getattr(lib.optim, name)([lib.ones(2, 2, requires_grad=True)], lr=lib.tensor([0.1, 0.2]))
    if name in ("Adam", "AdamW"):
        for lib in (derivgen, torch):
            with pytest.raises(ValueError, match="^lr as a Tensor is not supported for capturable=False and "
                                                 "foreach=True$"):
                getattr(lib.optim, name)([lib.ones(2, 2, requires_grad=True)], lr=lib.tensor(0.1), foreach=True)
    if name not in ("LBFGS", "SparseAdam", "Muon"):  # those need a closure, sparse gradients, matrices
        ours = run(derivgen, name, {"lr": derivgen.tensor(0.01)}, "float64", steps=3)[0]
        theirs = run(torch, name, {"lr": torch.tensor(0.01)}, "float64", steps=3)[0]
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)


def test_step_counter_with_history_is_refused_in_differentiable_adam():
    for lib in (derivgen, torch):
        p = lib.ones(2, dtype=lib.float64, requires_grad=True).clone()
        opt = lib.optim.Adam([p], differentiable=True)
        opt.state[p]["step"] = lib.tensor(0.0, requires_grad=True)
        opt.state[p]["exp_avg"] = lib.zeros(2, dtype=lib.float64)
        opt.state[p]["exp_avg_sq"] = lib.zeros(2, dtype=lib.float64)
        p.grad = lib.ones(2, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="^`requires_grad` is not supported for `step` in differentiable mode$"):
            opt.step()


def meta_hyperparameters(lib, name, learned, fixed, steps=2):
    """Differentiable steps with the hyperparameters in ``learned`` given as 0-dim float64 tensors that
    require grad (``betas`` a pair of them): the final weights, ``w0``'s gradient and each learned tensor's."""
    rng = np.random.default_rng(1)
    w0 = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x, y = lib.tensor(rng.standard_normal((5, 3))), lib.tensor(rng.standard_normal((5, 2)))
    leaves, options = [], dict(fixed)
    for key, value in learned.items():
        tensors = tuple(lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in np.atleast_1d(value))
        leaves.extend(tensors)
        options[key] = tensors if isinstance(value, tuple) else tensors[0]
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **options)
    for _ in range(steps):
        q = p.clone()
        inner = ((x @ q - y) ** 2).sum() + (q ** 4).sum() * 0.1
        p.grad, = lib.autograd.grad(inner, q, create_graph=True)
        opt.step()
    ((x @ p - y).sin() ** 2).sum().backward()
    return p.detach().numpy(), w0.grad.numpy(), [t.grad.item() for t in leaves]


# what torch 2.13's single-tensor code accepts as tensors with history: SGD's weight_decay; Adam's and
# AdamW's weight_decay, betas and eps (beside lr, covered above)
LEARNED_CASES = [
    ("SGD", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("SGD", {"weight_decay": 0.1}, {"lr": 0.05, "nesterov": True, "momentum": 0.9}),
    ("SGD", {"weight_decay": 0.1}, {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("Adam", {"weight_decay": 0.1}, {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9)}, {}),
    ("Adam", {"betas": (0.8, 0.9)}, {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "eps": 1e-3}, {}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "eps": 1e-3}, {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.8, 0.9)}, {}),
    ("AdamW", {"betas": (0.7, 0.95)}, {"lr": 0.05, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,learned,fixed", LEARNED_CASES, ids=[f"{n}-{sorted(l)}-{f}" for n, l, f in LEARNED_CASES])
def test_hyperparameter_tensors_get_gradients_through_two_steps(name, learned, fixed):
    ours = meta_hyperparameters(derivgen, name, learned, fixed)
    theirs = meta_hyperparameters(torch, name, learned, fixed)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-11, atol=1e-14)
    assert min(abs(g) for g in theirs[2]) > 1e-5


# where torch's update passes the tensor as a Number argument (``alpha=``, ``value=``) it raises TypeError
REFUSED_CASES = [
    ("SGD", {"lr": 0.05, "dampening": 0.2}, {"momentum": 0.9}),
    ("Adagrad", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1}, {}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}, {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("ASGD", {"lr": 0.05, "weight_decay": 0.1}, {}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}, {}),
]


@pytest.mark.parametrize("name,learned,fixed", REFUSED_CASES, ids=[f"{n}-{sorted(l)}" for n, l, f in REFUSED_CASES])
def test_hyperparameter_tensors_torch_refuses_are_refused(name, learned, fixed):
    for lib in (torch, derivgen):
        with pytest.raises(TypeError):
            meta_hyperparameters(lib, name, learned, fixed)
