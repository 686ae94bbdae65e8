"""Convolution, pooling and normalisation at PyTorch parity: values, gradients, node names and
``next_functions`` (tests/support/parity.py) in float32 and float64, second derivatives against torch,
numeric gradgradchecks of the table rows' samples, the running statistics after train steps, and
torch's errors for bad shapes and arguments."""
import re

import numpy as np
import pytest

import derivgen
from tests.support.parity import Case, E, I, compare_case, compare_double_backward, torch
from tests.support.samples import row_function, samples_for

if torch is None:  # pragma: no cover
    pytest.skip("SKIPPED LOUDLY: PyTorch (the oracle of the parity tests) is not installed; install the CPU "
                "wheel to run tests/parity/test_parity_conv_pool_norm.py", allow_module_level=True)

NOGRAD = dict(grad=False)

CONV = [
    ("conv2d", lambda T, F, x, w, b: F.conv2d(x, w, b), [I(2, 3, 7, 6), I(4, 3, 3, 3), I(4)]),
    ("conv2d-no-bias", lambda T, F, x, w: F.conv2d(x, w), [I(2, 3, 7, 6), I(4, 3, 3, 2)]),
    ("conv2d-stride-pad-dil", lambda T, F, x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
     [I(2, 3, 9, 8), I(4, 3, 3, 3), I(4)]),
    ("conv2d-groups", lambda T, F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
     [I(2, 4, 7, 7), I(6, 2, 3, 3), I(6)]),
    ("conv2d-depthwise", lambda T, F, x, w: F.conv2d(x, w, padding=1, groups=3), [I(2, 3, 5, 5), I(3, 1, 3, 3)]),
    ("conv2d-unbatched", lambda T, F, x, w, b: F.conv2d(x, w, b), [I(3, 6, 6), I(2, 3, 3, 3), I(2)]),
    ("conv2d-input-only", lambda T, F, x, w: F.conv2d(x, w, padding=1), [I(2, 3, 5, 5), I(4, 3, 3, 3, **NOGRAD)]),
    ("conv2d-weight-only", lambda T, F, x, w: F.conv2d(x, w), [I(2, 3, 5, 5, **NOGRAD), I(4, 3, 3, 3)]),
    ("conv2d-same-odd", lambda T, F, x, w: F.conv2d(x, w, padding="same"), [I(2, 3, 6, 5), I(4, 3, 3, 3)]),
    ("conv2d-same-even", lambda T, F, x, w: F.conv2d(x, w, padding="same", dilation=(1, 1)),
     [I(1, 3, 6, 5), I(2, 3, 2, 3)]),
    ("conv2d-valid", lambda T, F, x, w: F.conv2d(x, w, padding="valid"), [I(1, 3, 6, 5), I(2, 3, 2, 3)]),
    # unit stride: output rows under 16 take the wide input-gradient layout, longer ones the plain col2im
    ("conv2d-wide-groups-pad", lambda T, F, x, w: F.conv2d(x, w, padding=(1, 2), groups=2),
     [I(2, 4, 6, 7), I(4, 2, 3, 2)]),
    ("conv2d-long-rows", lambda T, F, x, w: F.conv2d(x, w, padding=(1, 2)), [I(2, 2, 5, 22), I(3, 2, 3, 5)]),
    ("conv1d", lambda T, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), [I(2, 3, 11), I(4, 3, 3), I(4)]),
    ("conv1d-groups-unbatched", lambda T, F, x, w: F.conv1d(x, w, groups=2), [I(4, 9), I(2, 2, 3)]),
    ("conv_transpose2d", lambda T, F, x, w, b: F.conv_transpose2d(x, w, b), [I(2, 4, 4, 5), I(4, 3, 3, 3), I(3)]),
    ("conv_transpose2d-all", lambda T, F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                                                      groups=2, dilation=1),
     [I(2, 4, 4, 3), I(4, 2, 3, 3), I(4)]),
    ("conv_transpose2d-dilation", lambda T, F, x, w: F.conv_transpose2d(x, w, stride=(1, 2), dilation=2,
                                                                         output_padding=(1, 0)),
     [I(1, 2, 3, 4), I(2, 3, 2, 3)]),
    ("conv_transpose2d-unbatched", lambda T, F, x, w: F.conv_transpose2d(x, w, stride=2), [I(2, 3, 3), I(2, 2, 3, 3)]),
    ("conv_transpose1d", lambda T, F, x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
     [I(2, 2, 4), I(2, 3, 3), I(3)]),
    ("conv-chain", lambda T, F, x, w1, w2: F.conv2d(F.relu(F.conv2d(x, w1, padding=1)), w2, stride=2),
     [I(2, 2, 6, 6), I(3, 2, 3, 3), I(2, 3, 2, 2)]),
]

def _distinct(*shape, seed=0):
    """Values 0.1 apart in random order: no ties inside a pooling window (a tie is a kink)."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n) * 0.1 - n * 0.05
    return E(vals.reshape(shape).tolist())


POOL = [
    ("max_pool2d", lambda T, F, x: F.max_pool2d(x, 2), [_distinct(2, 3, 6, 8)]),
    ("max_pool2d-indices", lambda T, F, x: F.max_pool2d(x, 2, return_indices=True), [_distinct(2, 3, 6, 8)]),
    ("max_pool2d-all", lambda T, F, x: F.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2),
                                                   ceil_mode=True, return_indices=True), [_distinct(2, 2, 9, 8)]),
    ("max_pool2d-overlap", lambda T, F, x: F.max_pool2d(x, 3, stride=1), [_distinct(1, 2, 5, 5)]),
    ("max_pool2d-unbatched", lambda T, F, x: F.max_pool2d(x, 2, ceil_mode=True), [_distinct(3, 5, 5)]),
    ("max_pool1d", lambda T, F, x: F.max_pool1d(x, 3, stride=2, padding=1), [_distinct(2, 3, 9)]),
    ("max_pool1d-indices", lambda T, F, x: F.max_pool1d(x, 2, return_indices=True), [_distinct(3, 8)]),
    ("avg_pool2d", lambda T, F, x: F.avg_pool2d(x, 2), [I(2, 3, 6, 8)]),
    ("avg_pool2d-pad", lambda T, F, x: F.avg_pool2d(x, 3, stride=2, padding=1), [I(2, 3, 7, 6)]),
    ("avg_pool2d-pad-uncounted", lambda T, F, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
     [I(2, 3, 7, 6)]),
    ("avg_pool2d-ceil", lambda T, F, x: F.avg_pool2d(x, (3, 2), stride=2, padding=(1, 0), ceil_mode=True),
     [I(2, 2, 8, 7)]),
    ("avg_pool2d-ceil-uncounted", lambda T, F, x: F.avg_pool2d(x, 3, 2, 1, True, False), [I(2, 2, 8, 7)]),
    ("avg_pool2d-divisor", lambda T, F, x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5), [I(2, 5, 6)]),
    ("adaptive_avg_pool2d", lambda T, F, x: F.adaptive_avg_pool2d(x, (3, 4)), [I(2, 3, 7, 9)]),
    ("adaptive_avg_pool2d-int", lambda T, F, x: F.adaptive_avg_pool2d(x, 5), [I(2, 3, 7, 6)]),
    ("adaptive_avg_pool2d-up", lambda T, F, x: F.adaptive_avg_pool2d(x, (4, 2)), [I(3, 3, 2)]),
    ("adaptive_avg_pool2d-none", lambda T, F, x: F.adaptive_avg_pool2d(x, (None, 2)), [I(2, 3, 4, 5)]),
    ("adaptive_avg_pool2d-1", lambda T, F, x: F.adaptive_avg_pool2d(x, 1), [I(2, 3, 4, 5)]),
]

POS = dict(kind="pos", grad=False)
NORM = [
    ("batch_norm-train", lambda T, F, x, w, b, rm, rv: (F.batch_norm(x, rm, rv, w, b, training=True), rm, rv),
     [I(4, 3, 5, 5), I(3), I(3), I(3, grad=False), I(3, **POS)]),
    ("batch_norm-train-momentum", lambda T, F, x, rm, rv: (F.batch_norm(x, rm, rv, training=True, momentum=0.3,
                                                                        eps=1e-3), rm, rv),
     [I(5, 2, 3), I(2, grad=False), I(2, **POS)]),
    ("batch_norm-train-1d", lambda T, F, x, w: F.batch_norm(x, None, None, w, training=True), [I(6, 4), I(4)]),
    ("batch_norm-eval", lambda T, F, x, w, b, rm, rv: (F.batch_norm(x, rm, rv, w, b), rm, rv),
     [I(4, 3, 5, 5), I(3), I(3), I(3, grad=False), I(3, **POS)]),
    ("batch_norm-eval-no-affine", lambda T, F, x, rm, rv: F.batch_norm(x, rm, rv, training=False),
     [I(4, 3, 2), I(3, grad=False), I(3, **POS)]),
    ("group_norm", lambda T, F, x, w, b: F.group_norm(x, 2, w, b), [I(2, 4, 3, 3), I(4), I(4)]),
    ("group_norm-no-affine", lambda T, F, x: F.group_norm(x, 3, eps=1e-3), [I(3, 6, 5)]),
    ("group_norm-weight-only", lambda T, F, x, w: F.group_norm(x, 1, w), [I(2, 4, 3), I(4)]),
    ("instance_norm", lambda T, F, x, w, b: F.instance_norm(x, weight=w, bias=b), [I(2, 3, 4, 4), I(3), I(3)]),
    ("instance_norm-running", lambda T, F, x, rm, rv: (F.instance_norm(x, rm, rv), rm, rv),
     [I(2, 3, 5), I(3, grad=False), I(3, **POS)]),
    ("instance_norm-eval", lambda T, F, x, rm, rv: F.instance_norm(x, rm, rv, use_input_stats=False),
     [I(2, 3, 5), I(3, grad=False), I(3, **POS)]),
]

LENET = [
    ("lenet-features", lambda T, F, x, w1, b1, w2, b2: F.max_pool2d(F.relu(F.conv2d(
        F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2), w2, b2)), 2),
     [I(2, 1, 28, 28, grad=False), I(6, 1, 5, 5), I(6), I(16, 6, 5, 5), I(16)]),
    ("bn-conv-gn", lambda T, F, x, w, g: F.group_norm(F.conv2d(F.batch_norm(x, None, None, training=True), w,
                                                                padding=1), 2, g),
     [I(3, 2, 5, 5), I(4, 2, 3, 3), I(4)]),
]

ALL = [Case(i, f, list(inp)) for i, f, inp in CONV + POOL + NORM + LENET]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_parity(case, dtype):
    problems = compare_case(case, dtype)
    assert not problems, f"{case.id} ({dtype}):\n  " + "\n  ".join(problems)


_NO_SECOND = {"max_pool2d-indices", "max_pool2d-all", "max_pool1d-indices"}  # integer outputs: weighed the same
DOUBLE = [c for c in ALL if c.id not in _NO_SECOND and not c.id.startswith("lenet")]


@pytest.mark.parametrize("case", DOUBLE, ids=lambda c: c.id)
def test_double_backward(case):
    problems = compare_double_backward(case, "float64")
    assert not problems, f"{case.id}:\n  " + "\n  ".join(problems)


ROWS = ("convolution", "max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d", "native_batch_norm",
        "native_group_norm")


@pytest.mark.parametrize("name", ROWS)
def test_gradgradcheck_row_samples(name):
    """Numeric second derivatives (float64) of every registered sample of the row, through the graph
    versions of the backward helpers."""
    from derivgen.table import load_table
    from tests.support.paths import TABLE
    (entry,) = [e for e in load_table(TABLE) if e.name == name]
    fn = row_function(entry)
    samples = samples_for(entry, derivgen.float64)
    assert samples
    for s in samples:
        args, kwargs, leaves = s.leaves(requires_grad=True)
        positions = [i for i, a in enumerate(args) if any(a is leaf for leaf in leaves)]

        def first_output(*xs, args=args, positions=positions, kwargs=kwargs):
            full = list(args)
            for p, x in zip(positions, xs):
                full[p] = x
            out = fn(*full, **kwargs)
            return out[0] if isinstance(out, tuple) else out
        assert derivgen.autograd.gradgradcheck(first_output, tuple(leaves)), (name, s)


# ---- running statistics over several steps -----------------------------------------------------------------

def test_running_stats_over_train_steps_then_eval(torch):
    """Three train steps update the running statistics (unbiased variance, momentum 0.2) as written
    out in numpy; an eval step then normalises with them and its weight gradient follows."""
    F = torch.nn.functional
    rng = np.random.default_rng(3)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    exp_rm, exp_rv = np.zeros(3), np.ones(3)
    w = torch.ones(3, dtype=torch.float64, requires_grad=True)
    for _ in range(3):
        a = rng.standard_normal((4, 3, 2, 2))
        F.batch_norm(torch.from_numpy(a), rm, rv, w, None, training=True, momentum=0.2)
        exp_rm = 0.8 * exp_rm + 0.2 * a.mean(axis=(0, 2, 3))
        exp_rv = 0.8 * exp_rv + 0.2 * a.var(axis=(0, 2, 3), ddof=1)
    assert np.allclose(rm.numpy(), exp_rm, rtol=1e-12) and np.allclose(rv.numpy(), exp_rv, rtol=1e-12)
    a = rng.standard_normal((2, 3, 2, 2))
    y = F.batch_norm(torch.from_numpy(a), rm, rv, w, training=False)
    y.sum().backward()
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    xhat = (a - exp_rm[None, :, None, None]) / np.sqrt(exp_rv[None, :, None, None] + 1e-5)
    assert np.allclose(y.detach().numpy(), xhat, rtol=1e-10)
    assert np.allclose(w.grad.numpy(), xhat.sum(axis=(0, 2, 3)), rtol=1e-10)
    assert np.allclose(rm.numpy(), exp_rm, rtol=1e-12)  # eval leaves them as they were


def test_eval_statistics_are_empty_and_train_statistics_per_channel(torch):
    x = torch.ones(2, 3, 2, 2) * torch.arange(3.0).view(1, 3, 1, 1)
    _, mean, invstd = torch.native_batch_norm(x, None, None, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5)
    assert list(mean.shape) == [0] and list(invstd.shape) == [0]
    _, mean, invstd = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    assert mean.tolist() == [0.0, 1.0, 2.0] and list(invstd.shape) == [3]
    out, mean, rstd = torch.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5)
    assert list(mean.shape) == [2, 3] and list(rstd.shape) == [2, 3] and list(out.shape) == [2, 3, 2, 2]


# ---- errors ------------------------------------------------------------------------------------------------

def _raises(kind, pattern, fn):
    with pytest.raises(kind) as info:
        fn()
    assert re.fullmatch(pattern, str(info.value)), str(info.value)


ERRORS = [
    ("conv2d-rank", RuntimeError, r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
     r"size: \[4, 8\]", lambda T, F: F.conv2d(T.randn(4, 8), T.randn(3, 4, 3, 3))),
    ("conv1d-rank", RuntimeError, r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input of "
     r"size: \[2, 4, 8, 8\]", lambda T, F: F.conv1d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3))),
    ("conv-weight-rank", RuntimeError, r"Expected 3-dimensional input for 3-dimensional weight \[3, 4, 3\], but got "
     r"4-dimensional input of size \[2, 4, 8, 8\] instead", lambda T, F: T.convolution(
         T.randn(2, 4, 8, 8), T.randn(3, 4, 3), None, [1], [0], [1], False, [0], 1)),
    ("conv-groups-weight", RuntimeError, r"Given groups=2, expected weight to be divisible by 2 at dimension 0, but "
     r"got weight of size \[\[3, 2, 3, 3\]\] instead",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 2, 3, 3), groups=2)),
    ("conv-channels", RuntimeError, r"Given groups=2, weight of size \[4, 3, 3, 3\], expected input\[2, 4, 8, 8\] to "
     r"have 6 channels, but got 4 channels instead",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(4, 3, 3, 3), groups=2)),
    ("conv-kernel-too-big", RuntimeError, r"Calculated padded input size per channel: \(8 x 8\). Kernel size: "
     r"\(9 x 9\). Kernel size can't be greater than actual input size",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 9, 9))),
    ("conv-bias", RuntimeError, r"Given weight of size \[3, 4, 3, 3\], expected bias to be 1-dimensional with 3 "
     r"elements, but got bias of size \[4\] instead",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3), T.randn(4))),
    ("conv-stride", RuntimeError, r"non-positive stride is not supported",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3), stride=0)),
    ("conv-padding", RuntimeError, r"negative padding is not supported",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3), padding=-1)),
    ("conv-dtype", RuntimeError, r"Input type \((torch|derivgen).FloatTensor\) and weight type "
     r"\((torch|derivgen).DoubleTensor\) should be the same( or input should be a MKLDNN tensor and weight is a "
     r"dense tensor)?", lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3).double())),
    ("conv-padding-string", RuntimeError, r"Invalid padding string: 'foo'",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3), padding="foo")),
    ("conv-same-strided", RuntimeError, r"padding='same' is not supported for strided convolutions",
     lambda T, F: F.conv2d(T.randn(2, 4, 8, 8), T.randn(3, 4, 3, 3), padding="same", stride=2)),
    ("convT-output-padding", RuntimeError, r"output padding must be smaller than either stride or dilation, but got "
     r"output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 "
     r"dilation_width: 1", lambda T, F: F.conv_transpose2d(T.randn(2, 4, 8, 8), T.randn(4, 3, 3, 3), stride=2,
                                                           output_padding=2)),
    ("convT-channels", RuntimeError, r"Given transposed=1, weight of size \[3, 3, 3, 3\], expected input"
     r"\[2, 4, 8, 8\] to have 3 channels, but got 4 channels instead",
     lambda T, F: F.conv_transpose2d(T.randn(2, 4, 8, 8), T.randn(3, 3, 3, 3))),
    ("maxpool-pad", RuntimeError, r"pad should be at most half of effective kernel size, but got pad=2, "
     r"kernel_size=3 and dilation=1", lambda T, F: F.max_pool2d(T.randn(2, 4, 8, 8), 3, padding=2)),
    ("maxpool-too-small", RuntimeError, r"Given input size: \(4x8x8\). Calculated output size: \(4x0x0\). Output "
     r"size is too small", lambda T, F: F.max_pool2d(T.randn(2, 4, 8, 8), 9)),
    ("maxpool-rank", RuntimeError, r"non-empty 3D or 4D \(batch mode\) tensor expected for input",
     lambda T, F: F.max_pool2d(T.randn(8), 2)),
    ("maxpool-stride", RuntimeError, r"stride should not be zero", lambda T, F: F.max_pool2d(T.randn(1, 2, 4, 4), 2, 0)),
    ("maxpool-kernel", RuntimeError, r"max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
     lambda T, F: F.max_pool2d(T.randn(1, 2, 4, 4), (2, 2, 2))),
    ("maxpool1d-rank", RuntimeError, r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch "
     r"size for input, but got:\[8\]", lambda T, F: F.max_pool1d(T.randn(8), 2)),
    ("maxpool1d-size", RuntimeError, r"max_pool1d\(\) Invalid computed output size: 0",
     lambda T, F: F.max_pool1d(T.randn(2, 3, 8), 9)),
    ("avgpool-pad", RuntimeError, r"pad should be at most half of effective kernel size, but got pad=2, "
     r"kernel_size=3 and dilation=1", lambda T, F: F.avg_pool2d(T.randn(2, 4, 8, 8), 3, padding=2)),
    ("avgpool-divisor", RuntimeError, r"divisor must be not zero",
     lambda T, F: F.avg_pool2d(T.randn(2, 4, 8, 8), 2, divisor_override=0)),
    ("adaptive-rank", RuntimeError, r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[8\]",
     lambda T, F: F.adaptive_avg_pool2d(T.randn(8), 2)),
    ("adaptive-size", RuntimeError, r"adaptive_avg_pool2d: output_size must be 2",
     lambda T, F: F.adaptive_avg_pool2d(T.randn(2, 3, 4, 4), (2, 2, 2))),
    ("bn-running-size", RuntimeError, r"running_mean should contain 4 elements not 3",
     lambda T, F: F.batch_norm(T.randn(2, 4, 3), T.zeros(3), T.ones(3))),
    ("bn-eval-no-stats", RuntimeError, r"running_mean must be defined in evaluation mode",
     lambda T, F: F.batch_norm(T.randn(2, 4, 3), None, None)),
    ("bn-one-value", ValueError, r"Expected more than 1 value per channel when training, got input size "
     r"(torch|derivgen).Size\(\[1, 4\]\)", lambda T, F: F.batch_norm(T.randn(1, 4), None, None, training=True)),
    ("gn-groups", RuntimeError, r"Expected number of channels in input to be divisible by num_groups, but got input "
     r"of shape \[2, 4, 8, 8\] and num_groups=3", lambda T, F: F.group_norm(T.randn(2, 4, 8, 8), 3)),
    ("gn-weight", RuntimeError, r"Expected weight to be a vector of size equal to the number of channels in input, "
     r"but got weight of shape \[3\] and input of shape \[2, 4, 8, 8\]",
     lambda T, F: F.group_norm(T.randn(2, 4, 8, 8), 2, T.ones(3))),
    ("gn-one-value", ValueError, r"Expected more than 1 value per channel when training, got input size \[1, 4\]",
     lambda T, F: F.group_norm(T.randn(1, 4), 4)),
    ("in-one-value", ValueError, r"Expected more than 1 spatial element when training, got input size "
     r"(torch|derivgen).Size\(\[2, 3, 1\]\)", lambda T, F: F.instance_norm(T.randn(2, 3, 1))),
]


@pytest.mark.parametrize("err", ERRORS, ids=lambda e: e[0])
def test_errors(torch, err):
    _, kind, pattern, fn = err
    _raises(kind, pattern, lambda: fn(torch, torch.nn.functional))


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_conv_input_grad_non_finite_weight(bad):
    """A non-finite weight spreads inf/NaN into exactly the input positions it touches, as in torch (the
    wide input-gradient layout would also touch its zero columns, so it is not taken then)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 8))
    w = rng.standard_normal((4, 3, 3, 3))
    w[1, 2, 0, 2] = bad
    grads = []
    for T in (derivgen, torch):
        xt = T.from_numpy(x.copy()).requires_grad_()
        T.nn.functional.conv2d(xt, T.from_numpy(w.copy()), padding=1).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
