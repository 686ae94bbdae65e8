"""Graph nodes: the ``Node`` base every generated ``*Backward0`` class derives from, saved values,
the per-leaf ``AccumulateGrad`` and the per-thread sequence counter.

Gradients travel through the engine as raw numpy arrays on the fast path (``_apply_fast``) and as
Tensors when a graph of the backward is wanted (``_apply_graph``, ``create_graph=True``).
"""
import operator
import threading
import weakref
from typing import NamedTuple

import numpy as np

from derivgen.core import anomaly

from derivgen.core.saved_hooks import _tls as _saved_hooks_tls
from derivgen.core.device import CPU
from derivgen.core.dtypes import from_numpy_dtype
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.hooks import add_hook
from derivgen.core.pending import Pending
from derivgen.core.sizes import sum_to
from derivgen.core.tensor import Size, Tensor, shared_version

UINT64_MAX = 18446744073709551615

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.")

class _SequenceCounter(threading.local):
    def __init__(self):
        # each thread's counter, from 0: a one-element list, so that taking a number reads the
        # thread-local once and writes the list, not the thread-local (a write costs twice a read)
        self.cell = [0]


_tls = _SequenceCounter()


def next_sequence_nr():
    """Take one number from this thread's counter (starts at 0, only goes up)."""
    cell = _tls.cell
    n = cell[0]
    cell[0] = n + 1
    return n


def peek_sequence_nr():
    return _tls.cell[0]


def forward_op_name(node_name):
    """torch's ``Node::forward_op_name`` (used by the version-counter message since 2.13): the backward
    node's name without ``Backward<N>``, keeping a non-zero index (MulBackward0 -> Mul, AddBackward1 ->
    Add1); other names pass through."""
    import re
    m = re.fullmatch(r"(.*)Backward(\d+)", node_name)
    if m is None:
        return node_name
    return m.group(1) + ("" if m.group(2) == "0" else m.group(2))


class SavedVariable:
    """A tensor saved for backward: version-checked on unpack, released after its node runs.

    Inputs are kept as the Tensor object itself (so a saved leaf comes back as the same object);
    outputs are kept as their array plus version counter, because holding the output Tensor would make
    a reference cycle output -> node -> output.
    """
    __slots__ = ("tensor", "_array", "vc", "version", "output_nr", "is_output", "released", "packed", "unpack_hook",
                 "hook_meta", "saved_nonleaf",
                 # a saved output that is a view (an in-place op on a view saves it after the base's history
                 # was rewritten): a weak reference to the view's grad_fn then (torch's weak_grad_fn_), which
                 # the unpacked value rejoins instead of the op's own node, which only the base's CopySlices
                 # runs; left unset otherwise
                 "view_grad_fn",
                 # a saved output's forward-mode tangents (the output Tensor's ``_fw_grads``), set by
                 # derivgen.autograd.forward_ad after the op; left unset otherwise (no cost per save)
                 "fw_grads")

    def __init__(self, t, is_output=False):
        if t._inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created "
                               "in inference mode in computation tracked by autograd. To work around this, you can "
                               "make a clone to get a normal tensor and use it in autograd, or use "
                               "`torch.no_grad()` instead of `torch.inference_mode()`.")
        self.is_output = is_output
        self.released = False
        vc = self.vc = shared_version(t)
        self.version = vc[0]
        self.output_nr = t.output_nr
        # a saved non-leaf input detached in place afterwards cannot rejoin the graph (checked on unpack)
        self.saved_nonleaf = not is_output and t.grad_fn is not None
        if is_output and t._base is not None and t.grad_fn is not None:
            self.view_grad_fn = weakref.ref(t.grad_fn)
        hooks = _saved_hooks_tls.stack  # saved_hooks.current(), inlined: this runs for every saved tensor
        if hooks and not t._wrapped:  # torch never packs a wrapped Python number
            pack, unpack = hooks[-1]
            self._pack_with(t, pack, unpack)
            return
        self.unpack_hook = None
        self.packed = None
        if is_output:
            self.tensor = None
            self._array = t._pending if t._lazy else t._array  # a deferred output stays deferred
        else:
            self.tensor = t
            self._array = None

    @classmethod
    def of_input(cls, t, version_code):
        """The SavedVariable of an input a generated node keeps compactly (see ``saved_data``), made when
        something asks for the object itself (``_raw_saved_<name>``, an error message)."""
        sv = object.__new__(cls)
        sv.is_output = False
        sv.released = False
        sv.vc = shared_version(t)
        sv.saved_nonleaf = version_code < 0
        sv.version = ~version_code if version_code < 0 else version_code
        sv.output_nr = t.output_nr
        sv.unpack_hook = sv.packed = None
        sv.tensor = t
        sv._array = None
        return sv

    @classmethod
    def of_output(cls, data, vc):
        """The SavedVariable of a fresh output a generated node keeps compactly (its array ``data`` and
        version counter ``vc``, saved at version 0; see ``saved_data``), made when something asks for
        the object itself."""
        sv = object.__new__(cls)
        sv.is_output = True
        sv.released = False
        sv.vc = vc
        sv.saved_nonleaf = False
        sv.version = 0
        sv.output_nr = 0
        sv.unpack_hook = sv.packed = None
        sv.tensor = None
        sv._array = data
        return sv

    def _pack_with(self, t, pack, unpack):
        """Keep ``pack(t)`` instead of ``t``; ``unpack`` turns it back into a tensor on use."""
        # what torch's save_metadata keeps so the unpacked value rejoins the graph: the grad_fn of a
        # saved non-leaf input, or the accumulator of a saved leaf (outputs use the owning node)
        if self.is_output:
            self.hook_meta = None
        elif t.grad_fn is not None:
            self.hook_meta = (t.grad_fn, None, True)
        else:
            self.hook_meta = (None, grad_accumulator(t) if t._requires_grad else None, t._requires_grad)
        version = t._vc[0]
        from derivgen.core.grad_mode import no_grad
        with no_grad():  # as torch: a pack hook's own ops record nothing
            packed = pack(t)
        if t._vc[0] != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as input "
                               "to pack hook can not be modified by in-place operations as this can lead to "
                               "unexpected side-effects. Please open an issue if you need to perform in-place "
                               "operations on the input to a pack hook.")
        self.packed = packed
        self.unpack_hook = unpack
        self.tensor = self._array = None

    def register_hooks(self, pack_hook, unpack_hook):
        """torch's ``grad_fn._raw_saved_<name>.register_hooks``: from now on the value is kept as
        ``pack_hook(value)`` and read back through ``unpack_hook``."""
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("expected two callables (pack_hook, unpack_hook)")
        if self.tensor is not None:
            t = self.tensor
        else:
            from derivgen.core.tensor import Tensor
            data = self._array
            if data.__class__ is Pending:
                data = data.materialize()
            t = Tensor._make(data, None, self.output_nr, self.vc)
        self._pack_with(t, pack_hook, unpack_hook)

    def _output_grad_fn(self, node):
        """(grad_fn, output_nr) a saved output comes back with: its node's, or the view's (view_grad_fn)."""
        ref = getattr(self, "view_grad_fn", None)
        fn = ref() if ref is not None else None
        return (node, self.output_nr) if fn is None else (fn, 0)

    def _check(self, node):
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.saved_nonleaf and self.tensor is not None and self.tensor.grad_fn is None:
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                               "This is not supported, please use out-of-place `.detach()` instead")
        if self.vc[0] != self.version and self.unpack_hook is None:  # torch cannot track versions through hooks
            raise RuntimeError(self._version_message(node))

    def _version_message(self, node):
        t = self.tensor
        if t is not None:
            shape, legacy, producer, nr = t._array.shape, t.dtype._legacy, t.grad_fn, t.output_nr
        else:
            data = self._array if self._array is not None else None
            shape = data.shape if data is not None else ()
            legacy = from_numpy_dtype(data.dtype)._legacy if data is not None else "FloatTensor"
            producer, nr = node, self.output_nr
        sizes = "[" + ", ".join(str(s) for s in shape) + "]"
        msg = ("one of the variables needed for gradient computation has been modified by an inplace "
               f"operation: [derivgen.{legacy} {sizes}]")
        if producer is not None:
            msg += f", which is output {nr} of {forward_op_name(producer.name())},"
        msg += f" is at version {self.vc[0]}; expected version {self.version} instead."
        if anomaly._state.enabled:
            msg += (" Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                    "The variable in question was changed in there or anywhere later. Good luck!")
        else:
            msg += (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with derivgen.autograd.set_detect_anomaly(True, check_nan=False).")
        return msg

    def unpack_data(self, node):
        """The saved array, for the fast (numpy) backward path."""
        if self.released or (self.vc[0] != self.version and self.unpack_hook is None) or (
                self.saved_nonleaf and self.tensor is not None and self.tensor.grad_fn is None):
            self._check(node)
        if self.unpack_hook is not None:
            return self.unpack(node)._array
        if self.tensor is not None:
            return self.tensor._array
        d = self._array
        if d.__class__ is Pending:
            d = d.materialize()
        return d

    def unpack(self, node):
        """The saved value as a Tensor (what ``_saved_<name>`` returns and the graph path uses)."""
        self._check(node)
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)
            if not isinstance(t, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(t).__name__}")
            # as torch: the unpacked value keeps the version counter of what the hook returned (versions
            # cannot be tracked through hooks), and comes back as-is when it needs no place in the graph
            if self.is_output:
                return Tensor._make(t._array, *self._output_grad_fn(node), shared_version(t))
            grad_fn, acc, requires_grad = self.hook_meta
            if grad_fn is not None:
                return Tensor._make(t._array, grad_fn, self.output_nr, shared_version(t))
            if not requires_grad and not t._requires_grad and t.grad_fn is None:
                return t
            out = Tensor._make(t._array, None, 0, shared_version(t))
            out._requires_grad = requires_grad
            if acc is not None:
                out._acc = weakref.ref(acc)
            return out
        if self.tensor is not None:
            return self.tensor
        out = Tensor._make(self._array, *self._output_grad_fn(node), self.vc)
        fw_grads = getattr(self, "fw_grads", None)
        if fw_grads:  # forward over reverse: the graph path differentiates with the output's tangent
            out._fw_grads = fw_grads
        return out

    @property
    def data(self):
        """torch's ``SavedVariable.data``: the packed object when hooks are set; otherwise the saved input
        itself, or, for a saved output, a tensor over its data without history."""
        if self.unpack_hook is not None:
            return self.packed
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.tensor is not None:
            return self.tensor
        d = self._array
        if d.__class__ is Pending:
            d = d.materialize()
        return Tensor._make(d, None, 0, self.vc)

    def release(self):
        self.tensor = None
        self._array = None
        self.packed = None
        self.hook_meta = None
        self.released = True


def _released_marker():
    sv = object.__new__(SavedVariable)
    sv.tensor = sv._array = sv.packed = sv.unpack_hook = sv.hook_meta = None
    sv.vc, sv.version, sv.output_nr, sv.is_output, sv.released = [0], 0, 0, False, True
    sv.saved_nonleaf = False
    return sv


def saved_list(node, tensors):
    """A saved ``Tensor?[]`` (index's ``indices``): freed with the node's other saved values, so reading it
    after a backward without ``retain_graph`` raises the backward-twice error, as torch's saved lists do."""
    if node._released:
        raise RuntimeError(ERR_BACKWARD_TWICE)
    return tensors


# What ``Node._release_variables`` and the compiled tape's release put in place of a compactly saved
# value: unpacking it raises the backward-twice error, as a released SavedVariable does.
RELEASED = _released_marker()

_NEEDS = {True: (True,), False: (False,)}


# A node's ``out_meta`` when its one output has the (shape, dtype) of its first input (elementwise ops on
# inputs that agree, in-place ops): nothing to record per node.
LIKE_FIRST_INPUT = (None,)


class InputMetadata(NamedTuple):
    """What a node knows of one gradient it receives (torch's ``InputMetadata``)."""
    shape: tuple
    dtype: object
    device: object = CPU
    is_nested_tensor: bool = False
    is_cpp_nested_tensor: bool = False


class FormulaRow(tuple):
    """The table row a generated node class was compiled from: ``file``, ``line``, ``text`` (the row as
    written in the table) and ``origins`` (per formula: its input names and whether sympy derived it,
    proved it against the forward, or it is hand-written). ``str()`` is the text and ``file:line``."""
    __slots__ = ()

    def __new__(cls, file, line, text, origins=()):
        return tuple.__new__(cls, (file, line, text, origins))

    file = property(lambda self: self[0])
    line = property(lambda self: self[1])
    text = property(lambda self: self[2])
    origins = property(lambda self: self[3])

    @property
    def location(self):
        return f"{self[0]}:{self[1]}"

    def __str__(self):
        return f"{self[2]}\n({self.location})"

    def __repr__(self):
        return f"FormulaRow({self.location})"


class LoadedOnFirstUse:
    """A class attribute read from ``module.<name>`` the first time it is used, then stored on the class
    in its place. Generated nodes name their fusion spec with it, so that defining the node classes does
    not import every kernel module (see ``derivgen.generated.kernels``); after the first read the
    attribute is a plain class attribute again, as cheap to read as before."""

    def __init__(self, module, name):
        self._module = module
        self._name = name

    def __set_name__(self, owner, attr):
        self._owner = owner
        self._attr = attr

    def __get__(self, instance, owner=None):
        value = getattr(self._module, self._name)
        setattr(self._owner, self._attr, value)
        return value


class Node:
    """Base class of every backward node (generated ``*Backward<N>``, AccumulateGrad, GraphRoot).

    Subclasses implement ``_apply_fast(grads, needs)`` over numpy arrays and ``_apply_graph(grads, needs)``
    over Tensors; both return one entry per next edge (None where no gradient flows).
    """
    __slots__ = ("_next_fns", "_next_nrs", "_seq", "_in_meta", "_n_inputs", "_metadata", "_pre_hooks", "_post_hooks",
                 "_tensor_pre_hooks", "_retains_grad", "_released", "_out_meta", "__weakref__")

    # Names of SavedVariable slots, set by each generated class.
    _saved_tensor_slots = ()
    # The table row of a generated class (a FormulaRow); None for hand-written nodes.
    _formula_row = None
    # Elementwise nodes: per input, (one-element VJP, its array and number arguments); the engine may
    # then run a chain of such nodes as one kernel (derivgen/engine/fusion.py).
    _fusion = None
    # Bit i set: ``_apply_fast``'s output i is always a new array no one else holds (generated nodes
    # whose formula is one kernel call); the engine may write into it (see engine/execute.py).
    _fresh_outputs = 0
    # Generated elementwise nodes the compiled backward tape can run (derivgen/engine/tape.py): their kind
    # (derivgen/core/tape_kinds.py), and a ``_tape_gather`` method handing it their saved values.
    _tape_kind = None

    def _init_node(self, next_edges, in_meta, out_meta, seq=None):
        self._init_edges(tuple(e[0] for e in next_edges), tuple(e[1] for e in next_edges), in_meta, out_meta, seq)

    def _init_edges(self, next_fns, next_nrs, in_meta, out_meta, seq=None):
        # The edges are kept as two parallel tuples (the next nodes, their input numbers) rather than a
        # tuple of (node, nr) pairs: a pair holds a node, so the cyclic GC tracks it as long as the
        # graph lives and scans it in every full collection; a tuple of ints it stops tracking.
        # ``in_meta``: (shape, dtype) of each forward input, what each gradient this node returns is
        # reduced and cast to; ``out_meta``: the same of each forward output, the gradients it receives
        # (torch's input_metadata; None where unknown). Both hold tuples shared between nodes.
        self._next_fns = next_fns
        self._next_nrs = next_nrs
        self._in_meta = in_meta
        self._out_meta = out_meta
        self._n_inputs = len(out_meta)
        if seq is None:  # next_sequence_nr(), inlined: this runs for every node
            cell = _tls.cell
            seq = cell[0]
            cell[0] = seq + 1
        self._seq = seq
        self._metadata = None
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None
        self._retains_grad = None
        self._released = False
        if anomaly._state.enabled:
            anomaly.record_forward_trace(self)

    # ---- PyTorch's Node surface -------------------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple(zip(self._next_fns, self._next_nrs))

    @property
    def _next(self):
        """The edges as ``(node, input_nr)`` pairs (built on each read: the engine reads the parallel tuples)."""
        return tuple(zip(self._next_fns, self._next_nrs))

    @_next.setter
    def _next(self, edges):
        self._next_fns = tuple(e[0] for e in edges)
        self._next_nrs = tuple(e[1] for e in edges)

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self):
        return True

    def _sequence_nr(self):
        return self._seq

    def formula(self):
        """The table row this node's class was generated from (a ``FormulaRow``: ``text``, ``file``,
        ``line``, ``location`` as ``formulas.yaml:LINE``), or None for a hand-written node."""
        return self._formula_row

    def _set_sequence_nr(self, n):
        self._seq = int(n)

    @property
    def _input_metadata(self):
        """torch's ``_input_metadata``: per gradient this node receives (per forward output), its
        ``shape``, ``dtype`` and ``device``, or None where the node does not know them."""
        return tuple(None if m is None else InputMetadata(Size(m[0]), from_numpy_dtype(m[1]))
                     for m in self._gradient_meta())

    def _gradient_meta(self):
        """(shape, numpy dtype) of each gradient this node receives, or None where unknown."""
        out = self._out_meta
        if out is LIKE_FIRST_INPUT:
            return (self._in_meta[0],)
        return out

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs) -> tuple | None``, run after the node computes."""
        self._post_hooks, handle = add_hook(self._post_hooks, fn)
        return handle

    def register_prehook(self, fn):
        """``fn(grad_outputs) -> tuple | None``, run before the node computes."""
        self._pre_hooks, handle = add_hook(self._pre_hooks, fn)
        return handle

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def _release_variables(self):
        for slot in self._saved_tensor_slots:
            sv = getattr(self, slot)
            if sv is not None:
                if isinstance(sv, (Tensor, np.ndarray)):  # kept compactly
                    setattr(self, slot, RELEASED)
                elif isinstance(sv, list):
                    for s in sv:
                        s.release()
                else:
                    sv.release()
        self._released = True

    def _needs(self):
        """Which inputs want a gradient: those with an edge (torch's ``should_compute_output``)."""
        fns = self._next_fns
        if len(fns) == 1:
            return _NEEDS[fns[0] is not None]
        if len(fns) == 2:
            return (fns[0] is not None, fns[1] is not None)
        return tuple(f is not None for f in fns)

    def __call__(self, *grads, **kwargs):
        """Run this node by hand, as torch's ``grad_fn(*grads)``: no hooks, no shape reduction."""
        if kwargs:
            raise TypeError("keyword arguments are not supported")
        if len(grads) != self._n_inputs:
            raise TypeError(f"expected {self._n_inputs} arguments, got {len(grads)} instead")
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"argument {i} is not a Variable")
        needs = self._needs()
        if is_grad_enabled() and any(g is not None and g.requires_grad for g in grads):
            outs = self._apply_graph(list(grads), needs)
        else:
            outs = self._apply_fast([None if g is None else g._array for g in grads], needs)
            outs = [None if o is None else Tensor._make(o) for o in outs]
        if len(outs) == 1:
            return outs[0]
        return tuple(outs)


class AccumulateGrad(Node):
    """The one accumulator of a leaf: adds the incoming gradient into ``variable.grad``."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable
        self._init_node((), (), (None,), seq=UINT64_MAX)

    def name(self):
        return "derivgen::autograd::AccumulateGrad"

    def _gradient_meta(self):
        var = self.variable  # read when asked: ``.data`` may change it
        return ((var._array.shape, var._array.dtype),)

    def _apply_fast(self, grads, needs):
        g = grads[0]
        if g is not None:
            accumulate_into_leaf(self.variable, Tensor._make(g), fresh=False)
        return []

    def _apply_graph(self, grads, needs):
        g = grads[0]
        if g is not None:
            accumulate_into_leaf(self.variable, g, fresh=False, graph=True)
        return []

    def __call__(self, *grads, **kwargs):
        if kwargs:
            raise TypeError("keyword arguments are not supported")
        if len(grads) != 1:
            raise TypeError(f"expected 1 arguments, got {len(grads)} instead")
        if grads[0] is not None and not isinstance(grads[0], Tensor):
            raise TypeError("argument 0 is not a Variable")
        if grads[0] is not None:
            accumulate_into_leaf(self.variable, grads[0], fresh=False, graph=grads[0].requires_grad)
        return ()


_accumulate_lock = threading.RLock()


def accumulate_into_leaf(var, g, fresh, graph=False):
    """``var.grad += g`` with torch's rules: the first gradient becomes ``.grad`` (copied unless the
    engine made it fresh), later ones add in place, or out of place when building a graph. Serialised
    like torch's AccumulateGrad mutex: backward() calls in several threads may share a leaf."""
    with _accumulate_lock:
        _accumulate_into_leaf(var, g, fresh, graph)


def _accumulate_into_leaf(var, g, fresh, graph):
    if var.grad_fn is not None:
        raise RuntimeError("leaf variable has been moved into the graph interior")
    if not var.requires_grad:
        return
    data = g._array
    want = var._grad_np_dtype()  # the leaf's grad_dtype (None: keep the gradient's)
    if want is not None and data.dtype != want:
        data = data.astype(want)
    if data.shape != var._array.shape:
        data = sum_to(data, var._array.shape)
    old = var._grad
    if old is None:
        if graph and g._array is data and g.requires_grad:
            # torch's clone_obey_contract: a new tensor copy_-ed from the gradient (CopyBackwards in the graph)
            var._grad = Tensor._make(np.empty_like(data)).copy_(g)
        elif graph:
            var._grad = g if g._array is data else Tensor._make(data)
        else:
            var._grad = Tensor._make(data if fresh else data.copy())
    elif graph or old.requires_grad:
        var._grad = old + (g if g._array is data else Tensor._make(data))
    else:
        old._array += data
    hooks = var._post_acc_hooks
    if hooks:
        for fn in list(hooks.values()):
            if fn(var) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


class GraphRoot(Node):
    """Feeds the root gradients when backward starts from several tensors at once."""
    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        self.grads = grads
        self._init_node(tuple(edges), tuple(None for _ in edges), ())

    def name(self):
        return "GraphRoot"

    def _apply_fast(self, grads, needs):
        return list(self.grads)

    _apply_graph = _apply_fast


def grad_accumulator(t):
    """The AccumulateGrad of leaf ``t``, created on first use and shared while any graph holds it."""
    ref = t._acc
    if ref is not None:
        acc = ref()
        if acc is not None:
            return acc
    if not _OWN_REQUIRES_GRAD.__get__(t):
        return None  # a view that requires grad only through its base has no accumulator, as in torch
    acc = AccumulateGrad(t)
    if t._hooks is not None:
        acc._tensor_pre_hooks = {0: t._hooks}  # the leaf's hook dict, shared (torch reads it lazily)
    t._acc = weakref.ref(acc)
    return acc


_OWN_REQUIRES_GRAD = Tensor.__dict__["_requires_grad"]  # the slot itself, without a view subclass's property


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor goes: ``(node, output_nr)``; accepted wherever ``grad``/``backward``
    take a tensor as an output or an input."""
    node: object
    output_nr: int
    ownership_token: object = None


def gradient_edge(t):
    """The edge a gradient for ``t`` travels along: (grad_fn, output_nr), (AccumulateGrad, 0) or (None, 0);
    a GradientEdge is its own edge."""
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t.output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def rebase_history(t, grad_fn, output_nr=0):
    """Make ``t`` output ``output_nr`` of ``grad_fn`` after an in-place op (torch's ``rebase_history``):
    ``retain_grad`` moves to the new node; hooks registered before stay with the old one."""
    old = t.grad_fn
    retains = t._retains_grad
    if retains and old is not None and old._retains_grad is not None:
        old._retains_grad.pop(t.output_nr, None)
    t.grad_fn = grad_fn
    t.output_nr = output_nr
    if retains:
        t._retains_grad = False
        t.retain_grad()


# A generated node keeps a saved value without saved-tensor hooks compactly, in two slots instead of a
# SavedVariable (one object fewer per saved value that the cyclic GC tracks and walks in every full
# collection while the graph lives, and no object to build per op):
# - an input: ``_sv_<name>`` holds the input Tensor itself and ``_svv_<name>`` its version code, the
#   version at save time, bit-inverted (negative) when the input was a non-leaf (so that detaching it in
#   place afterwards is caught);
# - the fresh output of an op with one output: ``_sv_<name>`` holds its array (holding the Tensor would
#   make a cycle output -> node -> output) and ``_svv_<name>`` its version counter (a list shared with the
#   output Tensor), saved at version 0.
# ``_sv_<name>`` holds a SavedVariable instead for values saved under hooks, outputs of in-place or
# multi-output ops, deferred outputs, and once ``_raw_saved_<name>`` has been asked for.

def saved_input_code(t):
    """The version code kept in ``_svv_<name>`` for an input saved compactly."""
    return t._vc[0] if t.grad_fn is None else ~t._vc[0]


def compact_intact(t, code):
    """Whether an input saved compactly is still what was saved (same version, not detached in place)."""
    if code >= 0:
        return t._vc[0] == code
    return t._vc[0] == ~code and t.grad_fn is not None


def _expanded(sv, code):
    """The SavedVariable of a compactly saved value (``sv``: the input Tensor or the output's array)."""
    if sv.__class__ is np.ndarray:
        return SavedVariable.of_output(sv, code)
    return SavedVariable.of_input(sv, code)


def saved_data(node, sv, code):
    """The saved array, for the fast (numpy) backward path (``SavedVariable.unpack_data``)."""
    if sv.__class__ is SavedVariable:
        return sv.unpack_data(node)
    if sv is None:
        return None
    if sv.__class__ is np.ndarray:  # an output kept compactly
        if code[0] == 0:
            return sv
    elif compact_intact(sv, code):  # a Tensor, or a subclass of it
        return sv._array
    return _expanded(sv, code).unpack_data(node)  # raises the version/detach error


def unpack_saved(node, sv, code=None):
    """What ``_saved_<name>`` returns: the saved Tensor, None if it was not saved, or the
    backward-twice error once released."""
    if sv.__class__ is SavedVariable:
        return sv.unpack(node)
    if sv is None:
        return None
    if sv.__class__ is not np.ndarray and compact_intact(sv, code):  # a Tensor, or a subclass of it
        return sv
    return _expanded(sv, code).unpack(node)  # an output's Tensor, or the version/detach error


def raw_saved(node, name):
    """``_raw_saved_<name>``: the SavedVariable object, made (once) from a compactly saved value."""
    slot = "_sv_" + name
    sv = getattr(node, slot)
    if isinstance(sv, (Tensor, np.ndarray)):
        sv = _expanded(sv, getattr(node, "_svv_" + name))
        setattr(node, slot, sv)
    return sv


def saved_tensor_property(slot, code_slot=None):
    """A generated node's ``_saved_<name>`` for a saved tensor kept in ``slot`` (with its compact
    version code in ``code_slot``, where it has one). Read only by users inspecting a graph, so one shared
    getter serves every class instead of a method each."""
    if code_slot is None:
        return property(lambda node: unpack_saved(node, getattr(node, slot)))
    return property(lambda node: unpack_saved(node, getattr(node, slot), getattr(node, code_slot)))


def raw_saved_property(name):
    """A generated node's ``_raw_saved_<name>``: its SavedVariable (see ``raw_saved``)."""
    return property(lambda node: raw_saved(node, name))


def saved_value_property(slot):
    """A generated node's ``_saved_<name>`` for a saved number, size or option kept in ``slot``."""
    return property(operator.attrgetter(slot))


def saved_list_property(slot):
    """A generated node's ``_saved_<name>`` for a saved ``Tensor?[]`` kept in ``slot`` (see ``saved_list``)."""
    return property(lambda node: saved_list(node, getattr(node, slot)))


def zeros_like_output(node, slot, graph):
    """An undefined gradient of a multi-output node's output, materialised as zeros."""
    shape, dtype = node._out_meta[slot]
    z = np.zeros(shape, dtype)
    if graph:
        return Tensor._make(z)
    return z
