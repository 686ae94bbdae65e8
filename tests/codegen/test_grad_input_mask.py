"""``grad_input_mask`` in a formula (torch's name) is the node's ``needs``: which differentiable inputs
want a gradient. It is never a saved value, and a helper given it skips the gradients nobody asked for."""
import os

import numpy as np

import derivgen
from derivgen.codegen.render import render_all
from tests.support.paths import REPO


def _node_source(files, class_name):
    text = files["nodes/convolution.py"]
    start = text.index(f"class {class_name}(_Node):")
    end = text.find("\nclass ", start + 1)
    return text[start:end]


def test_grad_input_mask_is_needs_and_not_saved():
    src = _node_source(render_all(os.path.join(REPO, "formulas.yaml")), "ConvolutionBackward0")
    assert src.count("grad_input_mask = needs") == 2  # the fast and the graph path
    assert "_v_grad_input_mask" not in src and "_sv_grad_input_mask" not in src


def test_convolution_skips_the_input_gradient_nobody_needs(monkeypatch):
    from derivgen.ops.formula_fns import conv

    def refuse(*args, **kwargs):
        raise AssertionError("the input gradient was computed although the input does not require grad")
    x = derivgen.from_numpy(np.random.default_rng(0).standard_normal((2, 1, 6, 6)))
    w = derivgen.ones(3, 1, 3, 3, dtype=derivgen.float64, requires_grad=True)
    y = derivgen.nn.functional.conv2d(x, w)
    monkeypatch.setattr(conv, "conv_input_grad", refuse)
    y.sum().backward()
    assert x.grad is None
    assert np.allclose(w.grad.numpy()[0, 0], [[x.numpy()[:, 0, i:i + 4, j:j + 4].sum() for j in range(3)]
                                              for i in range(3)])
