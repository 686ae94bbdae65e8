"""An input a generated node saves without saved-tensor hooks is kept as the Tensor and its version (no
SavedVariable object until one is asked for): the checks on use must stay torch's."""
import re

import numpy as np
import pytest


def _leaf(torch):
    return torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)


def test_raw_saved_input_is_the_same_object_each_time_and_takes_hooks(torch):
    x = _leaf(torch)
    y = x.sin()
    raw = y.grad_fn._raw_saved_self
    assert raw is y.grad_fn._raw_saved_self
    seen = []
    raw.register_hooks(lambda t: seen.append("pack") or t * 2, lambda t: seen.append("unpack") or t)
    y.sum().backward()
    assert seen == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.detach().numpy(), np.cos(2 * np.array([0.5, 1.0, 2.0])))


def test_saved_input_comes_back_as_the_same_tensor(torch):
    x = _leaf(torch)
    h = x * 2
    y = h.sin()
    assert y.grad_fn._saved_self is h
    assert (x * h).grad_fn._saved_other is h


def test_saved_leaf_modified_in_place_raises_torchs_version_error(torch):
    x = _leaf(torch)
    a = x.clone()
    y = a.sin()
    with torch.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match=re.escape("is at version 1; expected version 0 instead")):
        y.sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("is at version 1; expected version 0 instead")):
        y.grad_fn._saved_self


def test_saved_non_leaf_detached_in_place_raises(torch):
    x = _leaf(torch)
    a = x * 2
    y = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="has been detached in-place"):
        y.sum().backward()


def test_saved_input_is_released_after_backward(torch):
    x = _leaf(torch)
    y = (x * 2).sin()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
