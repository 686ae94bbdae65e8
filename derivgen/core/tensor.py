"""The Tensor: a numpy array plus autograd metadata (grad_fn, output_nr, version counter, hooks).

Differentiable ops are not defined here: the generated bindings (``generated/ops.py``) install them as
methods and operators when ``derivgen`` is imported.
"""
import warnings

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.kernels.promotion import combine, promote_types  # noqa: F401  (promote_types: core's API)
from derivgen.core.device import CPU as _CPU
from derivgen.core.device import strided as _strided
from derivgen.core.device import check_device
from derivgen.core.grad_mode import _state as _grad_mode_state
from derivgen.core.grad_mode import inference_contexts as _inference_contexts
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.hooks import add_hook
from derivgen.core.meta import shared_contiguous_meta
from derivgen.core.pending import LIVE_REFS as _LIVE_PENDING
from derivgen.core.pending import Pending
from derivgen.core.pending import flush as flush_pending
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor_str import tensor_repr
from derivgen.core.scalars import wrapped_int


_UNSET = object()
_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


# A tensor's version counter is a one-element list, shared by the tensor and its views and aliases
# (``detach``, a Parameter made from a tensor, a saved tensor's unpacked copy). A new tensor starts with
# the one immutable FRESH_VERSION instead (``t._vc[0]`` reads 0 either way) and gets a list of its own
# when it is first bumped or shared: most op outputs are never written in place or viewed, and each such
# list would be one more object per op for the cyclic GC to track until the graph is freed.
FRESH_VERSION = (0,)


def bump_version(t):
    """Count one in-place change of ``t`` (seen by every tensor that shares its version counter)."""
    vc = t._vc
    if vc is FRESH_VERSION:
        t._vc = [1]
    else:
        vc[0] += 1


def shared_version(t):
    """``t``'s version counter as the list another tensor may share (made on first use)."""
    vc = t._vc
    if vc is FRESH_VERSION:
        vc = t._vc = [0]
    return vc


def _undeletable_attribute(self):
    # torch refuses to delete a Tensor's autograd attributes; property deleters say so. (A ``__delattr__``
    # would too, but it routes every attribute store through a Python-level lookup: slot stores on the
    # per-op path become five times slower.)
    raise RuntimeError("can't delete this attribute of a Tensor")


class Tensor:
    __slots__ = ("_array", "_requires_grad", "grad_fn", "output_nr", "_grad", "_vc", "_acc", "_hooks",
                 "_retains_grad", "_post_acc_hooks", "_base", "_wrapped", "_inference", "_inference_requires_grad",
                 "__weakref__",
                 # forward-mode tangents {level: Tensor}; left unset (no cost per op) until
                 # derivgen.autograd.forward_ad gives the tensor one, so read it with getattr(t, "_fw_grads", None)
                 "_fw_grads",
                 # the dtype AccumulateGrad casts gradients to (None: none); unset means the tensor's own dtype
                 "_grad_dtype",
                 # the ContiguousMeta of _array while it is _cmeta_of (derivgen.core.meta), or None
                 "_cmeta", "_cmeta_of",
                 # left unset unless derivgen.ops.view_meta registers views: a view's entry (how it was made),
                 # and on the tensor owning the memory its live views
                 "_view", "_live_views")
    _lazy = False  # LazyTensor: the value is a deferred elementwise expression (see fusion.py)
    # torch's: NumPy's operators defer to the Tensor's reflected ones, so that ``np.float32(2) * x`` is a
    # Tensor (with its history), not the array of ``x`` times two
    __array_priority__ = 1000

    def __dir__(self):
        # an unset slot is not an attribute: dir() lists only names that hasattr() finds, as torch's does
        unset = {n for n in Tensor.__slots__ if not hasattr(self, n)}
        return [n for n in super().__dir__() if n not in unset]

    def __init__(self, *args, device=None):
        # torch's legacy constructor: Tensor(), Tensor(*sizes), Tensor(data), Tensor(tensor), of the default dtype
        check_device(device)
        self._init(legacy_new_array(_dt.get_default_dtype(), args))

    def _init(self, data, grad_fn=None, output_nr=0, vc=None):
        """Every slot's first value (``_make`` is the fast constructor every op uses)."""
        self._array = data
        self._requires_grad = False
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self._grad = None
        self._vc = vc if vc is not None else FRESH_VERSION
        self._acc = None
        self._hooks = None
        self._retains_grad = False
        self._post_acc_hooks = None
        self._base = None
        self._wrapped = False
        self._inference = _grad_mode_state.inference  # made under inference_mode: an inference tensor
        self._cmeta = self._cmeta_of = None

    # _make: make_tensor (below), a static method: every op's result is made there

    # ---- autograd attributes -----------------------------------------------------------------
    @property
    def requires_grad(self):
        # a view also requires grad when its base does, with or without a grad_fn of its own (torch's
        # differentiable views; a view of an inference tensor is not one). The grad_fn slot is read raw: a
        # view made in no_grad mode may refuse a grad_fn read (derivgen.ops.view_meta).
        return _GRAD_FN_SLOT.__get__(self) is not None or self._requires_grad or (
            self._base is not None and not self._inference and self._base.requires_grad) or (
            self._inference and getattr(self, "_inference_requires_grad", False))

    @requires_grad.setter
    def requires_grad(self, flag):
        if self.grad_fn is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self._inference:
            # torch's inference tensors carry no autograd key: ops whose inputs are all inference tensors
            # record nothing, so the flag is reported but does not make ops build a graph
            self._inference_requires_grad = bool(flag)
            return
        self._requires_grad = bool(flag)

    def is_inference(self):
        """Whether this tensor was made under ``inference_mode`` (or is a view of such a tensor)."""
        return self._inference

    requires_grad = requires_grad.deleter(_undeletable_attribute)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._array.shape != self._array.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the same "
                                   "size")
            want = getattr(self, "_grad_dtype", _UNSET)
            if want is _UNSET:
                want = self.dtype
            if want is not None and value.dtype is not want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dt.type_meta_name(value._array.dtype)}' to a tensor "
                    f"with grad_dtype '{want._scalar_type}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None  # ``del t.grad`` clears the gradient, as in torch

    @property
    def grad_dtype(self):
        """The dtype AccumulateGrad casts incoming gradients to, and ``.grad`` must have; None: any, no cast."""
        if _GRAD_FN_SLOT.__get__(self) is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return getattr(self, "_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, d):
        if _GRAD_FN_SLOT.__get__(self) is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if d is not None and not isinstance(d, _dt.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(d).__name__}")
        grad = self._grad
        if d is not None and grad is not None and grad.dtype is not d:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{d._scalar_type}' because there is already a gradient with "
                f"dtype '{_dt.type_meta_name(grad._array.dtype)}'. Please clear the gradient (.grad = None) before "
                "changing grad_dtype, or ensure the new grad_dtype matches the existing gradient's dtype.")
        self._grad_dtype = d

    def _grad_np_dtype(self):
        """The numpy dtype gradients of this leaf are cast to, or None for no cast."""
        d = getattr(self, "_grad_dtype", _UNSET)
        if d is _UNSET:
            return self._array.dtype
        return _dt.to_numpy_dtype(d)

    @property
    def _grad_fn(self):
        return self.grad_fn

    _grad_fn = _grad_fn.deleter(_undeletable_attribute)

    @property
    def _backward_hooks(self):
        return self._hooks

    _backward_hooks = _backward_hooks.deleter(_undeletable_attribute)

    @property
    def _version(self):
        return self._vc[0]

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        # torch's retains_grad hook: one per (grad_fn, output_nr) slot, holding the tensor weakly
        import weakref
        fn = self.grad_fn
        if fn._retains_grad is None:
            fn._retains_grad = {}
        fn._retains_grad[self.output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook):
        """``hook(grad) -> Tensor | None``; runs when the gradient for this tensor is computed. A
        non-leaf's hooks are tensor pre-hooks of its grad_fn (slot ``output_nr``); a leaf's are read by
        its AccumulateGrad (slot 0), which shares the tensor's hook dict."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is not None:
            if fn._tensor_pre_hooks is None:
                fn._tensor_pre_hooks = {}
            # the hook dict of this output slot (after an in-place op, the new node's: hooks registered
            # before it stay with the old node and see the gradient of the old value, as in torch)
            self._hooks = fn._tensor_pre_hooks.get(self.output_nr)
        self._hooks, handle = add_hook(self._hooks, hook)
        if fn is not None:
            fn._tensor_pre_hooks[self.output_nr] = self._hooks
        else:
            acc = self._acc() if self._acc is not None else None
            if acc is not None:
                acc._tensor_pre_hooks = {0: self._hooks}
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        self._post_acc_hooks, handle = add_hook(self._post_acc_hooks, hook)
        return handle

    def detach(self):
        t = Tensor._make(self._array, vc=shared_version(self))
        return t

    @property
    def data(self):
        """torch's ``.data``: a Tensor sharing this one's values, with no history and its own version
        counter (so in-place writes through it are invisible to autograd's version checks)."""
        return Tensor._make(self._array)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and value._array.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        replace_array(self, value._array)

    data = data.deleter(_undeletable_attribute)

    def detach_(self):
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self.output_nr = 0
        self._requires_grad = False
        return self

    # ---- metadata ------------------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._array.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[wrap_dim(dim, self._array.ndim)]

    @property
    def dtype(self):
        return _dt.from_numpy_dtype(self._array.dtype)

    def dim(self):
        return self._array.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._array.ndim

    def numel(self):
        return int(self._array.size)

    nelement = numel

    def element_size(self):
        return self._array.itemsize

    def stride(self, dim=None):
        st = tuple(s // self._array.itemsize for s in self._array.strides)
        return st if dim is None else st[dim]

    def is_contiguous(self):
        return bool(self._array.flags.c_contiguous)

    def storage_offset(self):
        """Elements from the start of the memory this tensor shares (its ``_base``'s, the root's) to its first."""
        if self._base is None:
            return 0
        start = self._base._array.__array_interface__["data"][0]
        return (self._array.__array_interface__["data"][0] - start) // self._array.itemsize

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def device(self):
        return _CPU

    @property
    def is_cuda(self):
        return False

    # where and how the data lives, as a CPU-only torch answers: strided, on the CPU, never sparse,
    # quantized, meta, MKL-DNN or nested, never pinned
    is_cpu = True
    is_sparse = is_quantized = is_meta = is_mkldnn = is_nested = False

    @property
    def layout(self):
        return _strided

    @property
    def nbytes(self):
        return int(self._array.nbytes)

    @property
    def itemsize(self):
        return self._array.itemsize

    def get_device(self):
        return -1

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def cuda(self, device=None, non_blocking=False):
        check_device("cuda")

    # ---- conversions ---------------------------------------------------------------------------
    def numpy(self):
        if _LIVE_PENDING:
            # the caller may write through the array: deferred values must read their inputs first
            flush_pending()
        if self.requires_grad and is_grad_enabled():  # torch allows it under no_grad
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        # a new array over the same memory, as torch's: the caller may reshape it in place, the tensor's
        # own array (whose shape derivgen.core.meta caches) never changes shape
        return self._array.view()

    def data_ptr(self):
        """The address of the first element (torch's ``data_ptr``)."""
        return self._array.__array_interface__["data"][0]

    def tolist(self):
        return self._array.tolist()

    def item(self):
        a = self._array
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        return a.item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._array.reshape(-1)[0])

    def __array__(self, dtype=None, copy=None):
        return self._array.view() if dtype is None else self._array.astype(dtype)

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    __hash__ = object.__hash__

    def __repr__(self):
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._array.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce__(self):
        return (_rebuild, (self._array, self.requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.")
        t = Tensor._make(self._array.copy())
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._array.copy())
        memo[id(self)] = t
        return t

    def type(self, dtype=None, non_blocking=False):
        """The legacy type name (``'derivgen.FloatTensor'``) or, given a dtype, a legacy type name or a legacy
        tensor class (``derivgen.DoubleTensor``, ``derivgen.Tensor``), this tensor as that type (itself when it
        already is)."""
        if dtype is None:
            return f"derivgen.{self.dtype._legacy}"
        target = _type_target(dtype)
        return self if target is self.dtype else self.to(target)

    def float(self):
        if self._array.dtype is _FLOAT32:
            return self  # as ``to``: nothing to convert (a model's ``x.float()`` on float input)
        return self.to(_dt.float32)

    def double(self):
        if self._array.dtype is _FLOAT64:
            return self
        return self.to(_dt.float64)

    def half(self):
        return self.to(_dt.float16)  # refused: derivgen has no half-precision tensors

    def bfloat16(self):
        return self.to(_dt.bfloat16)

    def long(self):
        return self.to(_dt.int64)

    def int(self):
        return self.to(_dt.int32)

    def short(self):
        return self.to(_dt.int16)

    def char(self):
        return self.to(_dt.int8)

    def byte(self):
        return self.to(_dt.uint8)

    def bool(self):
        return self.to(_dt.bool_)

    def cpu(self):
        return self



_GRAD_FN_SLOT = Tensor.__dict__["grad_fn"]  # the slot itself, without a view subclass's checking property
_RAW_DATA = Tensor.__dict__["_array"]  # the slot itself, without LazyTensor's computing property
Tensor.__module__ = "derivgen"  # the class prints as <class 'derivgen.Tensor'>, as torch's is torch.Tensor


class LazyTensor(Tensor):
    """A Tensor whose value is deferred (a ``Pending`` elementwise expression, see fusion.py).

    Everything that reads ``._array`` gets the computed array; the tensor then turns into a plain Tensor.
    Shape and dtype are known without computing. Autograd metadata is a Tensor's like any other.
    """
    __slots__ = ()
    _lazy = True

    @property
    def _array(self):
        p = _RAW_DATA.__get__(self)
        if p.__class__ is Pending:
            p = p.materialize()
            _RAW_DATA.__set__(self, p)
            self.__class__ = Tensor
        return p

    @_array.setter
    def _array(self, value):
        _RAW_DATA.__set__(self, value)
        if value.__class__ is not Pending:
            self.__class__ = Tensor

    @property
    def _pending(self):
        """The raw value: the Pending (or its array once computed), never triggering the computation."""
        return _RAW_DATA.__get__(self)

    @property
    def shape(self):
        return Size(self._pending.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._pending.shape)
        shape = self._pending.shape
        return shape[wrap_dim(dim, len(shape))]

    @property
    def dtype(self):
        return _dt.from_numpy_dtype(self._pending.dtype)

    def dim(self):
        return len(self._pending.shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._pending.shape)

    def numel(self):
        return int(self._pending.size)

    nelement = numel


def make_tensor(data, grad_fn=None, output_nr=0, vc=None, cmeta=None):
    """A Tensor over ``data`` (a LazyTensor over a Pending), output ``output_nr`` of ``grad_fn``, with
    version counter ``vc`` (the shared fresh one by default). ``cmeta``: the ContiguousMeta of ``data``
    when the caller knows it (an elementwise op's result is like its inputs), ignored for a Pending.
    A plain function, as ``Tensor._make`` too: a class method read from the class builds a bound
    method on every call."""
    if data.__class__ is not Pending:
        t = object.__new__(Tensor)
        if cmeta is None:
            t._cmeta = t._cmeta_of = None
        else:
            t._cmeta = cmeta
            t._cmeta_of = data
    else:
        t = object.__new__(LazyTensor)
        t._cmeta = t._cmeta_of = None
    # _init's body, inlined: every op's result is made here, so one call less per op counts
    t._array = data
    t._requires_grad = False
    t.grad_fn = grad_fn
    t.output_nr = output_nr
    t._grad = None
    t._vc = vc if vc is not None else FRESH_VERSION
    t._acc = None
    t._hooks = None
    t._retains_grad = False
    t._post_acc_hooks = None
    t._base = None
    t._wrapped = False
    # made under inference_mode: an inference tensor (the thread-local is read only while one is open)
    t._inference = _inference_contexts[0] != 0 and _grad_mode_state.inference
    return t


Tensor._make = staticmethod(make_tensor)


def replace_array(t, data):
    """Make ``data`` the array of ``t`` (a shape-changing in-place op, ``.data =``, ``set_``): drops the
    cached ContiguousMeta, so that it does not keep the old array alive."""
    t._array = data
    t._cmeta = t._cmeta_of = None


class Size(tuple):
    """``tensor.shape``: a tuple that prints as ``derivgen.Size([2, 3])``."""

    def __repr__(self):
        return f"derivgen.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    # slices, concatenations and repeats of a Size are Sizes, as in torch
    def __getitem__(self, index):
        out = tuple.__getitem__(self, index)
        return Size(out) if isinstance(index, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__


def _rebuild(data, requires_grad):
    t = Tensor._make(data)
    t._requires_grad = requires_grad
    return t


def _infer_dtype(data):
    """torch.tensor's dtype inference: Python floats -> default dtype, ints -> int64, bools -> bool."""
    if isinstance(data, np.ndarray):
        if data.dtype == np.float16:  # torch would keep float16, which derivgen does not have
            raise _dt.unsupported_dtype(_dt.float16)
        return None
    if isinstance(data, Tensor):
        return data._array.dtype
    flat = _first_scalar(data)
    if isinstance(flat, (bool, np.bool_)):
        return np.bool_
    if isinstance(flat, (int, np.integer)):
        return _all_int_dtype(data)
    return _dt.get_default_dtype().np


def _first_scalar(data):
    while isinstance(data, (list, tuple)):
        if not data:
            return 0.0
        data = data[0]
    if isinstance(data, Tensor):
        return data.item() if data.numel() == 1 else 0.0
    return data


def _all_int_dtype(data):
    arr = np.asarray(data)
    if arr.dtype.kind in "iu":
        return np.int64
    if arr.dtype.kind == "b":
        return np.bool_
    return _dt.get_default_dtype().np


def _type_target(spec):
    """The dtype ``Tensor.type`` converts to: a dtype, a legacy type name, or a class with a ``dtype``
    (``Tensor`` itself stands for the default dtype, as torch's ``torch.Tensor``)."""
    if isinstance(spec, _dt.dtype):
        return spec
    if isinstance(spec, str):
        return _dt.from_legacy_name(spec)
    if isinstance(spec, type):
        if issubclass(spec, Tensor):
            return _dt.get_default_dtype()
        if isinstance(getattr(spec, "dtype", None), _dt.dtype):
            return spec.dtype
    raise TypeError("dtype must be a type, str, or dtype object")


def legacy_new_array(dtype, args):
    """The array of torch's legacy constructors (``torch.Tensor(...)``, ``torch.FloatTensor(...)``): no
    arguments give an empty 1-d array; integers (or one Size) a new uninitialised array of that shape; a
    Tensor itself (it must have ``dtype``); anything else the data, converted to ``dtype``."""
    np_dtype = _dt.to_numpy_dtype(dtype)
    if not args:
        return np.empty((0,), np_dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, Size):
        args = tuple(first)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in args):
        return np.empty(tuple(int(a) for a in args), np_dtype)
    if len(args) > 1:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    if isinstance(first, Tensor):
        if first._array.dtype != np_dtype:
            raise TypeError(f"expected {dtype._legacy[:-len('Tensor')]} (got {first.dtype._legacy[:-len('Tensor')]})")
        return first._array
    if isinstance(first, str):
        raise TypeError("new(): invalid data type 'str'")
    return np.array(first, dtype=np_dtype)


def result_dtype(*operands):
    """PyTorch's type promotion: tensors with dims beat 0-dim tensors beat wrapped Python numbers,
    except that a lower-priority operand of a higher category (bool < int < float) still lifts the
    result to its category (``int_tensor * 2.5`` is float32, ``float32_tensor * 2.5`` stays float32)."""
    groups = [None, None, None]
    only_wrapped = None  # a wrapped number alone (a saved one in a create_graph formula) keeps its dtype
    for op in operands:
        if op is None:
            continue
        if isinstance(op, Tensor):
            d = op._array.dtype
            if op._wrapped:
                g = 2
                only_wrapped = d if only_wrapped is None else promote_types(only_wrapped, d)
                if d.kind == "f":
                    d = _dt.get_default_dtype().np
            else:
                g = 1 if op._array.ndim == 0 else 0
        else:
            d = op.dtype
            g = 1 if op.ndim == 0 else 0
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    if groups[0] is None and groups[1] is None and only_wrapped is not None:
        return only_wrapped
    return combine(groups[0], combine(groups[1], groups[2]))


def python_number(v):
    """The Python number torch's argument parser reads from a number argument: a NumPy scalar's value,
    a NumPy bool read as a float (as torch does: ``int_tensor * np.bool_(True)`` is a float tensor and
    ``alpha=np.bool_(True)`` is not a Boolean alpha)."""
    if isinstance(v, np.generic):
        return float(v) if isinstance(v, np.bool_) else v.item()
    return v


def wrap_scalar(value):
    """A Python number given where a Tensor is expected becomes a 0-dim 'wrapped number' tensor (with its
    ContiguousMeta, which the elementwise fast paths read next)."""
    if value.__class__ is float:
        arr = np.array(value)  # float64
    elif isinstance(value, bool):
        arr = np.asarray(value, dtype=np.bool_)
    elif isinstance(value, int):
        arr = np.asarray(wrapped_int(value), dtype=np.int64)
    else:
        arr = np.asarray(value, dtype=np.float64)
    t = make_tensor(arr, cmeta=shared_contiguous_meta((), arr.dtype, 1))
    t._wrapped = True
    return t


def any_requires_grad(*tensors):
    if not is_grad_enabled():
        return False
    for t in tensors:
        if t is not None and (t.grad_fn is not None or t._requires_grad):
            return True
    return False
