"""derivgen.save / derivgen.load: round trips of tensors, state dicts and nested containers through
paths and file objects, and the refusal of files that would need unpickling (nothing in them runs)."""
import collections
import io
import json
import math
import os
import pickle
import zipfile

import numpy as np
import pytest

import derivgen


def _roundtrip(obj, tmp_path=None):
    if tmp_path is None:
        buffer = io.BytesIO()
        derivgen.save(obj, buffer)
        buffer.seek(0)
        return derivgen.load(buffer, weights_only=True)
    path = tmp_path / "obj.dg"
    derivgen.save(obj, path)
    return derivgen.load(str(path))


@pytest.mark.parametrize("to_path", [False, True])
def test_tensors_of_every_dtype(tmp_path, to_path):
    tensors = [derivgen.tensor([[1.5, -2.0], [3.25, 4.0]]), derivgen.tensor([1.0, 2.0], dtype=derivgen.float64),
               derivgen.tensor([1, 2, 3]), derivgen.tensor([1, 2], dtype=derivgen.int32),
               derivgen.tensor([True, False]), derivgen.tensor(3.5), derivgen.zeros(0, 3)]
    for t in tensors:
        back = _roundtrip(t, tmp_path if to_path else None)
        assert isinstance(back, derivgen.Tensor)
        assert back.dtype == t.dtype and back.shape == t.shape and derivgen.equal(back, t)


def test_requires_grad_views_and_sharing():
    w = derivgen.randn(3, 4, requires_grad=True)
    view = w.detach()[:, 1:3].t()  # a non-contiguous view is saved as its values
    back = _roundtrip({"w": w, "again": w, "view": view})
    assert back["w"].requires_grad and back["w"].is_leaf and back["w"].grad_fn is None
    assert back["again"] is back["w"]  # one tensor saved twice is one tensor loaded
    assert derivgen.equal(back["view"], view) and not back["view"].requires_grad


def test_module_free_nested_state_dict():
    state = collections.OrderedDict([
        ("layer.weight", derivgen.randn(2, 3, dtype=derivgen.float64)),
        ("meta", {"epoch": 7, "lr": 0.125, "betas": (0.9, 0.999), "names": ["a", "b"], "none": None,
                  "flags": [True, False], 3: "int key", (1, 2): "tuple key", "inf": math.inf,
                  "nan": math.nan, "dtype": derivgen.float32, "device": derivgen.device("cpu")}),
        ("history", [derivgen.tensor([1.0]), (derivgen.tensor([2]), {"deep": [derivgen.tensor(3.0)]})]),
        ("counts", collections.Counter({2: 1, 5: 2})),
    ])
    back = _roundtrip(state)
    assert type(back) is collections.OrderedDict and list(back) == list(state)
    assert derivgen.equal(back["layer.weight"], state["layer.weight"])
    meta = back["meta"]
    assert list(meta) == list(state["meta"])
    assert meta["epoch"] == 7 and type(meta["epoch"]) is int and meta["lr"] == 0.125
    assert meta["betas"] == (0.9, 0.999) and type(meta["betas"]) is tuple and meta["names"] == ["a", "b"]
    assert meta["none"] is None and meta["flags"] == [True, False] and meta[3] == "int key"
    assert meta[(1, 2)] == "tuple key" and meta["inf"] == math.inf and math.isnan(meta["nan"])
    assert meta["dtype"] is derivgen.float32 and meta["device"] == derivgen.device("cpu")
    h = back["history"]
    assert h[0].tolist() == [1.0] and h[1][0].tolist() == [2] and h[1][1]["deep"][0].item() == 3.0
    assert type(h[1]) is tuple and back["counts"] == collections.Counter({2: 1, 5: 2})
    assert type(back["counts"]) is collections.Counter


def test_optimizer_state_dict_resumes_after_a_round_trip():
    def steps(opt, p, n):
        for _ in range(n):
            opt.zero_grad()
            (p * p * p).sum().backward()
            opt.step()
    p = derivgen.tensor([0.5, -1.0, 2.0], dtype=derivgen.float64, requires_grad=True)
    opt = derivgen.optim.Adam([p], lr=0.1, amsgrad=True)
    steps(opt, p, 3)
    saved = _roundtrip({"param": p, "optim": opt.state_dict()})
    q = saved["param"]
    resumed = derivgen.optim.Adam([q], lr=0.1, amsgrad=True)
    resumed.load_state_dict(saved["optim"])
    steps(opt, p, 3)
    steps(resumed, q, 3)
    assert derivgen.equal(p.detach(), q.detach())


def test_unsupported_objects_are_refused():
    with pytest.raises(TypeError, match="derivgen.save: cannot save an object of type object"):
        derivgen.save({"x": object()}, io.BytesIO())
    with pytest.raises(TypeError, match="cannot save an object of type ndarray"):
        derivgen.save(np.ones(2), io.BytesIO())


class _Payload:
    """Unpickling this would create the marker file: the tests check that it never exists."""
    marker = None

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _malicious_pickle(marker):
    _Payload.marker = str(marker)
    return pickle.dumps({"weights": _Payload()})


def test_a_pickle_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    path.write_bytes(_malicious_pickle(marker))
    with pytest.raises(RuntimeError, match="is not a derivgen.save file .*torch's .pt files and other pickles are "
                                           "not read"):
        derivgen.load(path, weights_only=False)
    assert not marker.exists()


def test_a_torch_style_zip_with_a_pickle_inside_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", _malicious_pickle(marker))
    with pytest.raises(RuntimeError, match="not a derivgen.save file .*no derivgen/structure.json"):
        derivgen.load(path)
    assert not marker.exists()


def test_an_object_array_inside_is_refused_and_never_run(tmp_path):
    """A .npy of dtype object holds a pickle: numpy refuses it with allow_pickle=False."""
    marker = tmp_path / "pwned"
    _Payload.marker = str(marker)
    npy = io.BytesIO()
    np.save(npy, np.array([_Payload()], dtype=object), allow_pickle=True)
    assert not marker.exists()
    path = tmp_path / "evil.dg"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("derivgen/structure.json",
                   json.dumps({"format": "derivgen.save", "version": 1, "root": {"tensor": 0}}))
        z.writestr("derivgen/tensors/0.npy", npy.getvalue())
    with pytest.raises(RuntimeError, match="tensor 0 could not be read without unpickling"):
        derivgen.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("root,why", [
    ({"tensor": 4}, "tensor 4 is missing"),
    ({"eval": "__import__('os')"}, "unexpected entry"),
    ({"dict": [[{"list": []}, 1]]}, "a dict key is not hashable"),
    ({"dtype": "__class__"}, "unexpected entry"),
])
def test_malformed_structures_are_refused(tmp_path, root, why):
    path = tmp_path / "bad.dg"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("derivgen/structure.json", json.dumps({"format": "derivgen.save", "version": 1, "root": root}))
    with pytest.raises(RuntimeError, match=why):
        derivgen.load(path)


def test_map_location_and_docstring():
    buffer = io.BytesIO()
    derivgen.save(derivgen.ones(2), buffer)
    buffer.seek(0)
    assert derivgen.load(buffer, map_location="cpu").tolist() == [1.0, 1.0]
    buffer.seek(0)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        derivgen.load(buffer, map_location="cuda")
    doc = " ".join(derivgen.serialization.__doc__.split())
    assert "allow_pickle=False" in doc and "torch's own ``.pt`` files (pickles) are not read" in doc


def test_file_written_is_a_plain_zip_of_json_and_npy(tmp_path):
    path = tmp_path / "x.dg"
    derivgen.save({"a": derivgen.ones(2)}, path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["derivgen/structure.json", "derivgen/tensors/0.npy"]
        structure = json.loads(z.read("derivgen/structure.json"))
    assert structure["format"] == "derivgen.save" and os.path.getsize(path) > 0
