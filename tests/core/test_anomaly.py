"""Anomaly detection: a failing or NaN-producing backward names its node and shows the traceback of the
forward call that created it (and, in double backward, of the node whose backward created it)."""
import re
import warnings

import pytest


@pytest.fixture(autouse=True)
def _anomaly_off_afterwards():
    yield
    import derivgen
    derivgen.autograd.set_detect_anomaly(False)


def _x(torch, values=(0.0, 1.0, 4.0)):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=True)


def _bad_function(torch):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")
    return Bad


def _messages(records):
    return [str(r.message) for r in records]


def test_detect_anomaly_names_the_node_and_its_forward_traceback(torch):
    Bad = _bad_function(torch)
    x = _x(torch)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = Bad.apply(x).exp()  # FORWARD-LINE-MARKER
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    msgs = _messages(rec)
    assert any(m.startswith("Anomaly Detection has been enabled. This mode will increase the runtime") for m in msgs)
    err = [m for m in msgs if m.startswith("Error detected in BadBackward. Traceback of forward call that caused "
                                           "the error:\n")]
    assert len(err) == 1
    assert "test_anomaly.py" in err[0] and "FORWARD-LINE-MARKER" in err[0]


def test_nan_check_names_the_node(torch):
    x = _x(torch)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = x.sqrt() * 0  # d sqrt(x)/dx at 0 is inf; inf * 0 is nan
            with pytest.raises(RuntimeError, match=re.escape("Function 'SqrtBackward0' returned nan values in its 0th "
                                                             "output.")):
                y.sum().backward()
    assert any(m.startswith("Error detected in SqrtBackward0. Traceback of forward call that caused the error:")
               and "x.sqrt() * 0" in m for m in _messages(rec))


def test_check_nan_false_and_anomaly_off_let_nan_through(torch):
    import numpy as np
    x = _x(torch)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.detach().numpy()[0])
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no anomaly warnings either
        (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.detach().numpy()[0])


def test_double_backward_shows_the_parent_node(torch):
    Bad = _bad_function(torch)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return Bad.apply(g * x)  # BACKWARD-LINE-MARKER

    x = _x(torch)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = Square.apply(x)  # PARENT-FORWARD-MARKER
            g, = torch.autograd.grad(y.sum(), x, create_graph=True)
            assert g.grad_fn.metadata["parent_"] is y.grad_fn
            with pytest.raises(ValueError, match="boom in backward"):
                g.sum().backward()
    msgs = _messages(rec)
    err = [m for m in msgs if m.startswith("Error detected in BadBackward.")]
    assert len(err) == 1 and "BACKWARD-LINE-MARKER" in err[0]
    parent = [m for m in msgs if m.startswith("\n\nPrevious calculation was induced by SquareBackward. Traceback of "
                                              "forward call that induced the previous calculation:\n")]
    assert len(parent) == 1 and "PARENT-FORWARD-MARKER" in parent[0]


def test_node_created_outside_anomaly_mode_has_no_traceback(torch):
    Bad = _bad_function(torch)
    x = _x(torch)
    y = Bad.apply(x)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        torch.autograd.set_detect_anomaly(True)
        try:
            with pytest.raises(ValueError):
                y.sum().backward()
        finally:
            torch.autograd.set_detect_anomaly(False)
    assert any(m.startswith("Error detected in BadBackward. No forward pass information available. Enable detect "
                            "anomaly during forward pass for more information.") for m in _messages(rec))


def test_set_detect_anomaly_switch_and_context_manager(torch):
    assert not torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True)
    assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
    torch.autograd.set_detect_anomaly(False)
    assert not torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.is_anomaly_enabled() and not torch.is_anomaly_check_nan_enabled()
    assert not torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly():
            assert torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()


def test_version_error_hint_in_anomaly_mode(torch):
    x = _x(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            b = x.sigmoid()
            b.mul_(2)
            with pytest.raises(RuntimeError, match=re.escape("which is output 0 of Sigmoid, is at version 1; expected "
                                                             "version 0 instead. Hint: the backtrace further above "
                                                             "shows the operation that failed to compute its gradient. "
                                                             "The variable in question was changed in there or "
                                                             "anywhere later. Good luck!")):
                b.sum().backward()
    b = x.sigmoid()
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"Hint: enable anomaly detection to find the operation that failed to "
                                           r"compute its gradient, with \w+\.autograd\.set_detect_anomaly\(True, "
                                           r"check_nan=False\)\."):
        b.sum().backward()
