"""``derivgen.save`` / ``derivgen.load``: tensors, state dicts and nested containers, in a safe format.

The file is a zip archive holding ``derivgen/structure.json`` (the object tree: dicts with their key
types and order, lists, tuples, numbers, strings, None, dtypes, devices, and references to tensors)
and one ``derivgen/tensors/<n>.npy`` per distinct tensor, written and read by numpy with
``allow_pickle=False``. Loading never unpickles anything, so a file cannot run code; ``weights_only``
is accepted for torch's signature and changes nothing. torch's own ``.pt`` files (pickles) are not
read: loading one raises a ``RuntimeError`` that says so.

A tensor saved twice in one object is loaded as one tensor; ``requires_grad`` is kept; views are saved
as their values (their storage sharing with other tensors is not kept, unlike torch).
"""
import collections
import io
import json
import math
import os
import zipfile

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.device import check_device, device
from derivgen.core.tensor import Tensor

_FORMAT = "derivgen.save"
_VERSION = 1
_STRUCTURE = "derivgen/structure.json"
_ALLOWED = _dt.NUMPY_DTYPES
_DICT_TYPES = {"dict": dict, "OrderedDict": collections.OrderedDict, "Counter": collections.Counter}


class _Writer:
    def __init__(self):
        self.arrays = []
        self._index = {}

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, _dt.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, device):
            return {"device": str(obj)}
        if isinstance(obj, dict):
            # OrderedDict and Counter come back as themselves; any other dict (defaultdict...) as a dict
            kind = type(obj).__name__ if type(obj) in _DICT_TYPES.values() else "dict"
            return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if type(obj) in (list, tuple):
            return {type(obj).__name__: [self.encode(v) for v in obj]}
        raise TypeError(f"derivgen.save: cannot save an object of type {type(obj).__name__} (it saves tensors, "
                        "dtypes, devices, numbers, strings, None, and dicts, lists and tuples of them)")

    def _tensor(self, t):
        key = id(t)
        if key not in self._index:
            self._index[key] = len(self.arrays)
            self.arrays.append(np.array(t.detach()._array, order="C", copy=True))  # 0-dim stays 0-dim
        return {"tensor": self._index[key], "requires_grad": bool(t.requires_grad)}


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` to ``f`` (a path or a writable binary file object) in derivgen's safe format."""
    writer = _Writer()
    structure = {"format": _FORMAT, "version": _VERSION, "root": writer.encode(obj)}
    path_like = isinstance(f, (str, os.PathLike))
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_STRUCTURE, json.dumps(structure, allow_nan=False))
        for i, arr in enumerate(writer.arrays):
            buffer = io.BytesIO()
            np.save(buffer, arr, allow_pickle=False)
            archive.writestr(f"derivgen/tensors/{i}.npy", buffer.getvalue())
    if not path_like and hasattr(f, "flush"):
        f.flush()


class _Reader:
    def __init__(self, archive, name):
        self.archive = archive
        self.name = name
        self._tensors = {}

    def fail(self, why):
        raise RuntimeError(f"derivgen.load: {self.name} is not a valid derivgen.save file: {why}")

    def decode(self, node):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, dict) and len(node) in (1, 2):
            kind = next(iter(node))
            value = node[kind]
            if kind == "tensor":
                return self._tensor(value, node.get("requires_grad", False))
            if len(node) != 1:
                self.fail(f"unexpected entry {sorted(node)}")
            if kind == "float" and value in ("nan", "inf", "-inf"):
                return float(value)
            if kind == "dtype" and isinstance(getattr(_dt, str(value), None), _dt.dtype):
                return getattr(_dt, value)
            if kind == "device":
                return device(value)
            if kind in ("list", "tuple") and isinstance(value, list):
                items = [self.decode(v) for v in value]
                return items if kind == "list" else tuple(items)
            if kind in _DICT_TYPES and isinstance(value, list):
                out = _DICT_TYPES[kind]()
                for pair in value:
                    if not (isinstance(pair, list) and len(pair) == 2):
                        self.fail("a dict entry is not a key and a value")
                    key = self.decode(pair[0])
                    try:
                        out[key] = self.decode(pair[1])
                    except TypeError:
                        self.fail("a dict key is not hashable")
                return out
        self.fail(f"unexpected entry {str(node)[:80]}")

    def _tensor(self, index, requires_grad):
        if not isinstance(index, int) or isinstance(index, bool):
            self.fail("a tensor reference is not a number")
        if index not in self._tensors:
            try:
                raw = self.archive.read(f"derivgen/tensors/{index}.npy")
            except KeyError:
                self.fail(f"tensor {index} is missing")
            try:
                arr = np.load(io.BytesIO(raw), allow_pickle=False)
            except ValueError as exc:
                self.fail(f"tensor {index} could not be read without unpickling ({exc})")
            if not isinstance(arr, np.ndarray) or arr.dtype not in _ALLOWED:
                self.fail(f"tensor {index} has an unsupported dtype")
            t = Tensor._make(arr)
            if requires_grad:
                t.requires_grad = True
            self._tensors[index] = t
        return self._tensors[index]


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` wrote, from a path or a readable binary file object. ``map_location`` may be
    None or the cpu (a CPU-only torch's error otherwise); ``weights_only`` is accepted and needs no
    effect: the format holds no code."""
    if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
        check_device(map_location)
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file object")
    try:
        archive = zipfile.ZipFile(f, "r")
    except zipfile.BadZipFile:
        raise RuntimeError(f"derivgen.load: {name} is not a derivgen.save file (derivgen reads only its own "
                           "zip format; torch's .pt files and other pickles are not read)") from None
    with archive:
        reader = _Reader(archive, name)
        try:
            structure = json.loads(archive.read(_STRUCTURE))
        except KeyError:
            raise RuntimeError(f"derivgen.load: {name} is not a derivgen.save file (no {_STRUCTURE}; torch's "
                               ".pt files are not read)") from None
        except ValueError:
            reader.fail("the structure is not valid JSON")
        if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
            reader.fail("it does not say it is a derivgen.save file")
        if structure.get("version") != _VERSION:
            reader.fail(f"format version {structure.get('version')!r} is not {_VERSION}")
        return reader.decode(structure.get("root"))
