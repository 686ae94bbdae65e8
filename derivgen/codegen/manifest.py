"""The ops layer's manifest (``derivgen/ops/manifest.yaml``): which helper functions backward formulas
may call and which rows have a hand-written forward. Read as data, so the generator never imports the
runtime it generates code for."""
import functools
import os
from dataclasses import dataclass

import yaml

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops", "manifest.yaml")


@dataclass(frozen=True)
class Manifest:
    tensor_helpers: frozenset
    meta_helpers: frozenset
    forwards: frozenset
    pending_forwards: frozenset

    def has_forward(self, py_name):
        return py_name in self.forwards

    def forward_accepts_pending(self, py_name):
        return py_name in self.pending_forwards


@functools.lru_cache(maxsize=None)
def load(path=PATH):
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    helpers, forwards = data["helpers"], data["forwards"]
    pending = frozenset(forwards.get("accepts_pending") or ())
    return Manifest(tensor_helpers=frozenset(helpers.get("tensor") or ()),
                    meta_helpers=frozenset(helpers.get("meta") or ()),
                    forwards=frozenset(forwards.get("plain") or ()) | pending,
                    pending_forwards=pending)
