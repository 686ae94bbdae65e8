"""The ops layer's manifest (``derivgen/ops/manifest.yaml``): which helper functions backward formulas
may call and which rows have a hand-written forward. Read as data, so the generator never imports the
runtime it generates code for."""
import contextlib
import functools
import os
from dataclasses import dataclass, field, replace

import yaml

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops", "manifest.yaml")


@dataclass(frozen=True)
class Manifest:
    tensor_helpers: frozenset
    meta_helpers: frozenset
    forwards: frozenset
    pending_forwards: frozenset
    # forwards whose result is always a new array (a gradient ending in one is owned by the engine)
    new_array_forwards: frozenset = frozenset()
    # a user library's own forwards and helpers: {name: code naming it in the generated modules}
    user_forwards: dict = field(default_factory=dict)
    user_helpers: dict = field(default_factory=dict)        # array versions
    user_graph_helpers: dict = field(default_factory=dict)  # Tensor versions (or a stub that raises)
    namespace: str = "aten"                                  # the op namespace profiler records name

    def forward_code(self, py_name):
        """Code naming the numpy forward of the row ``py_name`` in generated modules."""
        return self.user_forwards.get(py_name) or f"_fw.{py_name}"

    def helper_code(self, name, graph=False):
        """Code naming a backward helper: its array version, or with ``graph`` its Tensor version."""
        user = self.user_graph_helpers if graph else self.user_helpers
        if name in user:
            return user[name]
        return f"_fns.{name}_graph" if graph else f"_fns.{name}"

    def has_forward(self, py_name):
        return py_name in self.forwards

    def forward_accepts_pending(self, py_name):
        return py_name in self.pending_forwards

    def forward_returns_new_array(self, py_name):
        return py_name in self.new_array_forwards and py_name not in self.user_forwards


_extension = []


@contextlib.contextmanager
def extended(forwards, helpers, graph_helpers, namespace):
    """While building a user library: the shipped manifest plus the library's own forwards and helpers
    (each ``{name: code}``) and its op namespace, as ``load()`` returns it."""
    base = load()
    _extension.append(replace(base, tensor_helpers=base.tensor_helpers | frozenset(helpers),
                              forwards=base.forwards | frozenset(forwards), user_forwards=dict(forwards),
                              user_helpers=dict(helpers), user_graph_helpers=dict(graph_helpers),
                              namespace=namespace))
    try:
        yield _extension[-1]
    finally:
        _extension.pop()


def load(path=PATH):
    if _extension and path == PATH:
        return _extension[-1]
    return _load(path)


@functools.lru_cache(maxsize=None)
def _load(path=PATH):
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    helpers, forwards = data["helpers"], data["forwards"]
    pending = frozenset(forwards.get("accepts_pending") or ())
    return Manifest(tensor_helpers=frozenset(helpers.get("tensor") or ()),
                    meta_helpers=frozenset(helpers.get("meta") or ()),
                    forwards=frozenset(forwards.get("plain") or ()) | pending,
                    pending_forwards=pending,
                    new_array_forwards=frozenset(forwards.get("new_arrays") or ()))
