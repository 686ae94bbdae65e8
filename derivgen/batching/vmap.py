"""``vmap``: torch.func's vectorizing map. The function runs once, on BatchedTensors of a new level
(``derivgen.batching``), and each op runs once for the whole batch through its batching rule."""
import functools

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.batching import BatchedTensor, add_batch_dim, remove_batch_dim, vmap_level
from derivgen.ops import composites
from derivgen.batching.pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten

_RANDOMNESS = ("error", "different", "same")


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for leaf in tree_flatten(out_dims)[0]:
        if not isinstance(leaf, int) and leaf is not None:
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                             f"a python collection of ints representing where in the outputs the vmapped dimension "
                             f"should appear.")


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         f"to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             f"in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _flat_out_dims(outputs, out_dims, func):
    flat_out, spec = tree_flatten(outputs)

    def incompatible():
        return ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                          f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                          f"outputs has structure {spec}.")
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            raise incompatible()
    else:
        flat_dims = broadcast_to_and_flatten(out_dims, spec)
        if flat_dims is None:
            raise incompatible()
    return flat_out, flat_dims, spec


def _unwrap_output(name, out, level, size, out_dim):
    if out_dim is None:
        if isinstance(out, BatchedTensor) and out._level == level:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return out
    if not isinstance(out, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. Did you mean "
                         f"to set out_dims= to None for output?")
    return remove_batch_dim(out, level, size, out_dim)


def _run(func, flat_args, flat_in_dims, spec, size, out_dims, kwargs, randomness):
    with vmap_level(size, randomness) as level:
        batched = [add_batch_dim(a, d, level) if d is not None else a for a, d in zip(flat_args, flat_in_dims)]
        outputs = func(*tree_unflatten(batched, spec), **kwargs)
        flat_out, flat_dims, out_spec = _flat_out_dims(outputs, out_dims, func)
        name = _get_name(func)
        unwrapped = [_unwrap_output(name, o, level, size, d) for o, d in zip(flat_out, flat_dims)]
    return unwrapped, flat_dims, out_spec


def _chunks(flat_args, flat_in_dims, size, chunk_size):
    starts = range(0, size, chunk_size)
    for start in starts:
        length = min(chunk_size, size - start)
        yield [composites.narrow(a, d, start, length) if d is not None else a for a, d in zip(flat_args, flat_in_dims)]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: ``func`` mapped over dimension ``in_dims`` of its inputs, the results stacked along
    ``out_dims``; ``chunk_size`` runs the batch in chunks of that many examples."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(out_dims, func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is None or chunk_size >= size:
            outs, _, out_spec = _run(func, flat_args, flat_in_dims, spec, size, out_dims, kwargs, randomness)
            return tree_unflatten(outs, out_spec)
        parts = []
        for chunk in _chunks(flat_args, flat_in_dims, size, chunk_size):
            n = next(a.size(d) for a, d in zip(chunk, flat_in_dims) if d is not None)
            parts.append(_run(func, chunk, flat_in_dims, spec, n, out_dims, kwargs, randomness))
        _, flat_dims, out_spec = parts[0]
        joined = []
        for i, d in enumerate(flat_dims):
            pieces = [p[0][i] for p in parts]
            joined.append(pieces[0] if d is None else aten.cat(pieces, d))
        return tree_unflatten(joined, out_spec)
    return wrapped
