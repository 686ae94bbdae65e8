"""Containers against torch: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (indexing,
slicing, mutation, registration names, printed forms)."""
from collections import OrderedDict

import pytest

from tests.support.nn_parity import same_text


def test_sequential(torch):
    nn = torch.nn
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and isinstance(seq[1], nn.ReLU)
    sub = seq[1:]
    assert type(sub) is nn.Sequential and len(sub) == 2 and sub[1] is seq[2]
    assert [n for n, _ in sub.named_children()] == ["1", "2"]  # a slice keeps the keys
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    seq.append(nn.Sigmoid())
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert tuple(seq(torch.ones(4, 2)).shape) == (4, 1)
    with pytest.raises(IndexError, match="index 4 is out of range"):
        seq[4]
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    seq[0] = nn.Tanh()
    assert isinstance(seq[0], nn.Tanh)
    named = nn.Sequential(OrderedDict([("enc", nn.Linear(2, 2)), ("act", nn.GELU())]))
    assert list(named.state_dict()) == ["enc.weight", "enc.bias"] and named.act is named[1]
    assert repr(named) == ("Sequential(\n  (enc): Linear(in_features=2, out_features=2, bias=True)\n"
                           "  (act): GELU(approximate='none')\n)")


def test_module_list(torch):
    nn = torch.nn
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(0, nn.Identity())
    assert len(layers) == 6 and isinstance(layers[0], nn.Identity) and isinstance(layers[-1], nn.Tanh)
    assert [n for n, _ in layers.named_parameters()][:2] == ["1.weight", "1.bias"]
    assert type(layers[1:3]) is nn.ModuleList and len(layers[1:3]) == 2
    with pytest.raises(IndexError, match="index 6 is out of range"):
        layers[6]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)
    assert repr(layers) == ("ModuleList(\n  (0): Identity()\n  (1-3): 3 x Linear(in_features=2, out_features=2, "
                            "bias=True)\n  (4): ReLU()\n  (5): Tanh()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    with pytest.raises(NotImplementedError):
        layers(1)


def test_module_dict(torch):
    nn = torch.nn
    d = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.ReLU()})
    d["c"] = nn.Tanh()
    assert list(d.keys()) == ["b", "a", "c"] and "a" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(d.pop("a"), nn.ReLU) and list(d) == ["b", "c"]
    d.update([("e", nn.Sigmoid())])
    assert [k for k, _ in d.items()] == ["b", "c", "e"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        d.update([("x",)])
    assert repr(d) == ("ModuleDict(\n  (b): Linear(in_features=1, out_features=1, bias=True)\n  (c): Tanh()\n"
                       "  (e): Sigmoid()\n)")


def test_parameter_list_and_dict(torch):
    nn = torch.nn
    pl = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.zeros(3, 2, dtype=torch.float64)])
    assert isinstance(pl[1], nn.Parameter) and pl[1].requires_grad  # a tensor is wrapped
    pl.append(nn.Parameter(torch.ones(1)))
    assert len(pl) == 3 and [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert same_text(repr(pl)) == ("ParameterList(\n"
                                   "    (0): Parameter containing: [torch.float32 of size 2]\n"
                                   "    (1): Parameter containing: [torch.float64 of size 3x2]\n"
                                   "    (2): Parameter containing: [torch.float32 of size 1]\n)")
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    pd = nn.ParameterDict({"w": nn.Parameter(torch.ones(2)), "b": torch.zeros(1)})
    assert list(pd.keys()) == ["b", "w"] and isinstance(pd["b"], nn.Parameter)  # a plain dict is sorted
    assert [n for n, _ in pd.named_parameters()] == ["b", "w"]
    pd["z"] = torch.ones(2, 2)
    assert "z" in pd and len(pd) == 3 and list(pd.state_dict()) == ["b", "w", "z"]
    del pd["w"]
    assert list(pd) == ["b", "z"]
    assert same_text(repr(pd)) == ("ParameterDict(\n"
                                   "    (b): Parameter containing: [torch.FloatTensor of size 1]\n"
                                   "    (z): Parameter containing: [torch.FloatTensor of size 2x2]\n)")
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a string"):
        pd[1]


def test_container_in_model_state_dict(torch):
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(2, 2), nn.ReLU()) for _ in range(2)])
            self.extra = nn.ParameterList([nn.Parameter(torch.ones(1))])

    m = Model()
    assert list(m.state_dict()) == ["blocks.0.0.weight", "blocks.0.0.bias", "blocks.1.0.weight",
                                    "blocks.1.0.bias", "extra.0"]
