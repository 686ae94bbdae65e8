"""Forwards of myproj's non-elementwise ops: plain numpy functions of arrays, named in ops.yaml by
dotted path (``forward_fn: myproj.fwd:rownorm``)."""
import numpy as np


def rownorm(self):
    """The Euclidean norm of each row (over the last dimension)."""
    return np.sqrt(np.sum(self * self, axis=-1))
