"""An optimizer step over a parameter whose memory is read-only (``from_numpy`` of a non-writable array):
torch writes into it (undefined behaviour); derivgen refuses before any parameter of the step moves."""
import warnings

import numpy as np
import pytest

import derivgen


@pytest.mark.parametrize("make", [lambda ps: derivgen.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: derivgen.optim.Adam(ps, lr=0.1)], ids=["SGD", "Adam"])
def test_step_refuses_read_only_parameter_and_moves_nothing(make):
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_numpy warns (once per process) of the read-only array
        frozen = derivgen.nn.Parameter(derivgen.from_numpy(a))
    free = derivgen.nn.Parameter(derivgen.ones(3))
    for p in (free, frozen):
        p.grad = derivgen.ones(3)
    opt = make([free, frozen])
    with pytest.raises(RuntimeError, match="memory is read-only .* cannot be modified in place"):
        opt.step()
    assert free.tolist() == [1.0, 1.0, 1.0] and a.tolist() == [1.0, 1.0, 1.0]
    assert opt.state_dict()["state"] == {}
