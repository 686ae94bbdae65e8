"""The events a profile records: one ``Event`` per op, backward node, user range or compilation."""
import os
import threading
import time
import traceback
from dataclasses import dataclass, field

def _library_dirs():
    """derivgen's own folders (the package and the generated package, installed from generated/)."""
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    try:
        import derivgen.generated as generated
        dirs.append(os.path.dirname(os.path.abspath(generated.__file__)))
    except ImportError:
        pass
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = _library_dirs()

ENGINE_PREFIX = "autograd::engine::evaluate_function: "


@dataclass
class Event:
    name: str
    cat: str                  # "cpu_op", "user_annotation", "compile"
    start_ns: int
    end_ns: int = 0
    tid: int = 0
    seq: int = None           # the node's sequence number (forward op: of the node it created)
    is_backward: bool = False
    input_shapes: list = None
    stack: list = None
    extra: dict = field(default_factory=dict)

    @property
    def duration_ns(self):
        return self.end_ns - self.start_ns


def now_ns():
    return time.perf_counter_ns()


def shapes_of(values):
    """Input shapes as torch's ``record_shapes`` lists them: a list per argument ([] for non-tensors)."""
    out = []
    for v in values:
        shape = getattr(v, "shape", None)
        out.append(list(shape) if shape is not None and not isinstance(v, (list, tuple)) else [])
    return out


def user_stack():
    """The caller's frames outside derivgen, innermost first, as ``file(line): function``."""
    frames = traceback.extract_stack()[:-1]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_LIBRARY_DIRS)]


def node_sequence_nr(node):
    """A backward node's sequence number as torch's trace shows it: none for the leaf accumulator."""
    from derivgen.core.node import UINT64_MAX
    seq = node._sequence_nr()
    return None if seq == UINT64_MAX else seq


def created_node(result, seq_before):
    """The node an op created (its first output's grad_fn, if made during the op), for the op's
    sequence number."""
    first = result[0] if isinstance(result, (tuple, list)) and result else result
    fn = getattr(first, "grad_fn", None)
    if fn is not None and fn._sequence_nr() >= seq_before:
        return fn
    return None


def thread_id():
    return threading.get_ident()
