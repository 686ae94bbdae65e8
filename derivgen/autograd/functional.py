"""``derivgen.autograd.functional``: vjp, jvp, jacobian, hessian, hvp and vhp, as in
``torch.autograd.functional``. ``jvp`` runs forward mode (torch differentiates a vjp twice instead, the
"double backward trick"); ``hvp`` is forward over reverse (the JVP of the gradient), ``vhp`` and
``jacobian`` reverse mode.

The functions work on detached copies of the inputs (the caller's graph and ``.grad`` are untouched);
results are detached unless ``create_graph=True``. A Tensor ``inputs`` gives Tensor results, a tuple
gives tuples.
"""
import numpy as np

from derivgen.core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from derivgen.core.node import gradient_edge
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.engine.api import grad as _grad
from derivgen.ops.factories import ones_like, zeros_like
from derivgen.autograd.transforms import vjp as _vjp
from derivgen.batching.vmap import vmap as _vmap

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name=None, fn_name=None):
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else (inp,)
    is_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                                f"but the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the given {arg_name} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))  # keeps the link to the caller's graph
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {list(el_other.shape)} but got "
                               f"{list(el_v.shape)}.")


def _prepare_v(v, like, is_like_tuple, name, create_graph, what):
    """``v`` as a tuple checked against ``like`` (the outputs for vjp, the inputs otherwise); None is
    allowed only when ``like`` is one single-element Tensor (torch's message names ``what`` that is)."""
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, like, is_like_tuple)
    elif len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {what} a single Tensor with a single element.")
    return v


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    if input_type not in ["outputs", "grad_inputs", "jacobian", "hessian"]:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should ensure "
                                   "that your function is thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            if input_type == "jacobian":
                raise RuntimeError(f"While computing the hessian, found that the jacobian of the user-provided "
                                   f"function with respect to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs (this would be "
                                   "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = [], []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(new_outputs, inputs, new_grad_outputs, allow_unused=True, create_graph=create_graph,
                         retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i} in the "
                                       "grad_outputs when using the double backward trick to compute forward mode "
                                       "gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent of entry {i} in the "
                                   "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                                   "double backward trick to replace forward mode AD.")
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _zeros_requiring_grad(refs):
    out = []
    for r in refs:
        z = Tensor._make(np.zeros(r._array.shape, r._array.dtype))
        z.requires_grad_(True)
        out.append(z)
    return tuple(out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``. ``v`` may be None only when ``func`` returns a single element."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp", create_graph, "the user-provided function returns")
    return _final_vjp(outputs, is_outputs_tuple, outputs, inputs, inputs, v, is_inputs_tuple, create_graph,
                      strict, "back")


def _final_vjp(outputs, is_outputs_tuple, roots, wrt, zeros_like, v, is_inputs_tuple, create_graph, strict, stage):
    """The last vector-Jacobian product of vjp/vhp/hvp (with a graph only if asked for), unused inputs
    filled with zeros like ``zeros_like``, and torch's packing of the results."""
    enable = True if create_graph else is_grad_enabled()
    with set_grad_enabled(enable):
        grad_res = _autograd_grad(roots, wrt, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, zeros_like, strict, create_graph, stage)
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by forward mode (dual tensors). With ``create_graph=True`` the tangents are
    computed with differentiable ops, so the result has a graph to ``inputs`` (and to ``v`` when it
    requires grad); ``strict=True`` raises torch's errors for an output or input the other does not
    depend on (torch computes the same product by differentiating a vjp twice)."""
    from derivgen.autograd import forward_ad as fwAD
    need_graph = create_graph or strict
    with set_grad_enabled(True if need_graph else is_grad_enabled()):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph, "the input to the user-provided function is")
        if v is None:  # allowed for one single-element input: the tangent 1
            v = tuple(ones_like(x) for x in inputs)
        if not create_graph:
            v = tuple(Tensor._make(t._array) for t in v)
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=need_graph)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, v))
            outputs = func(*duals)
            is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
            if strict:
                _check_requires_grad(outputs, "outputs", strict=True)
                _check_reached(outputs, inputs)
            pairs = [fwAD.unpack_dual(o) for o in outputs]
            outs = tuple(p.primal for p in pairs)
            jvp_ = []
            for i, (p, o) in enumerate(zip(pairs, outputs)):
                t = p.tangent
                if t is None:
                    t = zeros_like(o)
                elif strict and create_graph and not t.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                jvp_.append(t)
    outs = _grad_postprocess(outs, create_graph)
    jvp_ = _grad_postprocess(tuple(jvp_), create_graph)
    return _tuple_postprocess(outs, is_outputs_tuple), _tuple_postprocess(jvp_, is_outputs_tuple)


def _check_reached(outputs, inputs):
    """torch's strict check that every input reaches an output: a walk of the graph from the outputs."""
    seen, stack = set(), [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in getattr(node, "_next", ()) if n is not None)
    for i, inp in enumerate(inputs):
        node = gradient_edge(inp)[0]
        if node is None or id(node) not in seen:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")


def _stack_rows(rows, shape, create_graph):
    """Rows (Tensors) stacked on a new leading dim and viewed as ``shape``."""
    if create_graph and any(r.requires_grad for r in rows):
        return aten.cat([r.reshape(1, *r.shape) for r in rows], 0).reshape(*shape)
    return Tensor._make(np.stack([r._array for r in rows]).reshape(shape))


def _check_strict_vectorize(strict, vectorize):
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j a Tensor of shape
    ``output_i.shape + input_j.shape`` (nested in tuples like the outputs and inputs)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    _check_strict_vectorize(strict, vectorize)
    if vectorize and not create_graph:
        return _vectorized_jacobian(func, inputs, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        jac = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in inputs)
            n = out.numel()
            for j in range(n):
                onehot = np.zeros(n, out._array.dtype)
                onehot[j] = 1
                vj = _autograd_grad((out,), inputs, (Tensor._make(onehot.reshape(out._array.shape)),),
                                    retain_graph=True, create_graph=create_graph)
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                               f"{i}. This is not allowed in strict mode when create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{el_idx}. This is not allowed in strict mode.")
                        jac_i_el.append(Tensor._make(np.zeros(inp_el._array.shape, inp_el._array.dtype)))
            jac += (tuple(_stack_rows(jac_i_el, tuple(out.shape) + tuple(inputs[el_idx].shape), create_graph)
                          if jac_i_el else Tensor._make(np.zeros(tuple(out.shape) + tuple(inputs[el_idx].shape),
                                                                 inputs[el_idx]._array.dtype))
                          for el_idx, jac_i_el in enumerate(jac_i)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _vectorized_jacobian(func, inputs, strict):
    """``vectorize=True``: every row of each output's Jacobian at once, as torch, by vmap of the
    vector-Jacobian product over the one-hot cotangents. Under vmap the forward itself runs batched (one
    forward and one backward pass per output, whatever the output's size)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        outputs = func(*[t.detach().requires_grad_(True) for t in inputs])
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
    if strict:
        _check_requires_grad(outputs, "outputs", strict=strict)
    jac = []
    for i, out in enumerate(outputs):
        n = out.numel()
        basis = Tensor._make(np.eye(n, dtype=out._array.dtype).reshape((n,) + tuple(out.shape)))

        def row(e, i=i):
            _, vjp_fn = _vjp(lambda *xs: _as_tuple(func(*xs), "outputs", "jacobian")[1][i], *inputs)
            return vjp_fn(e)
        rows = _vmap(row)(basis)
        jac.append(tuple(r.reshape(tuple(out.shape) + tuple(inp.shape)) for r, inp in zip(rows, inputs)))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def _jacfwd(func, inputs, strict, vectorize):
    """The Jacobian by forward mode: one dual call per element of the inputs (a one-hot tangent over all of
    them), each output's tangent giving a column. torch computes the same columns in one vmapped call,
    which is why it accepts only ``vectorize=True`` here; so does this. The Jacobian has the output's dtype."""
    from derivgen.autograd import forward_ad as fwAD
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
                           "supported together (yet). Please either set `strict=False` or "
                           "`strategy=\"reverse-mode\"`.")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                  "implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns = []  # per input: per element: the output tangents (None where an output has none)
    outputs = is_outputs_tuple = None
    for j, x in enumerate(inputs):
        cols = []
        for k in range(x.numel()):
            with fwAD.dual_level():
                duals = []
                for jj, y in enumerate(inputs):
                    tangent = np.zeros(y._array.size, y._array.dtype)
                    if jj == j:
                        tangent[k] = 1
                    duals.append(fwAD.make_dual(Tensor._make(y._array), Tensor._make(tangent.reshape(y._array.shape))))
                out = func(*duals)
                is_outputs_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
                outputs = tuple(Tensor._make(fwAD.unpack_dual(o).primal._array) for o in outs)
                cols.append([None if fwAD.unpack_dual(o).tangent is None else fwAD.unpack_dual(o).tangent._array
                             for o in outs])
        columns.append(cols)
    if outputs is None:  # every input is empty: call once for the outputs' shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
    jac = tuple(tuple(Tensor._make(_assemble(out, x, [c[i] for c in columns[j]]))
                      for j, x in enumerate(inputs)) for i, out in enumerate(outputs))
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _assemble(out, x, cols):
    """``out.shape + x.shape`` from one tangent of ``out`` per element of ``x`` (None: zeros)."""
    arr = np.zeros((out._array.size, x._array.size), out._array.dtype)
    for k, c in enumerate(cols):
        if c is not None:
            arr[:, k] = np.asarray(c).reshape(-1)
    return arr.reshape(tuple(out.shape) + tuple(x.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its gradient (shape ``input.shape * 2``)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.reshape(())

    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    _check_strict_vectorize(strict, vectorize)

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # forward over reverse: the dual inputs must require grad for the inner (reverse) Jacobian
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    # The inner Jacobian builds a graph with create_graph=True; derivgen's vmap does not batch a backward
    # pass through a graph built inside it, so the reverse-mode outer Jacobian loops over rows (the same
    # values as torch's vectorized one). The forward-mode strategy keeps vectorize, which it requires.
    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize and outer_jacobian_strategy == "forward-mode", strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, name, create_graph, "the input to the user-provided function is")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_function_grad(func, inputs, v, create_graph, strict, "vhp")
    return _final_vjp(outputs, False, jac, inputs, inputs, v, is_inputs_tuple, create_graph, strict, "double_back")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func``, forward over reverse: the gradient is computed with
    a graph inside a dual level whose inputs carry ``v``, so its tangent is ``H v`` (one gradient pass
    with tangents, where torch differentiates a vjp twice; ``H`` is symmetric, so this is also ``v^T H``)."""
    from derivgen.autograd import forward_ad as fwAD
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, "hvp", create_graph, "the input to the user-provided function is")
        if not create_graph:
            v = tuple(Tensor._make(t._array) for t in v)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, v))
            outputs = func(*duals)
            is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "hvp")
            _check_requires_grad(outputs, "outputs", strict=strict)
            if is_outputs_tuple or not isinstance(outputs[0], Tensor):
                raise RuntimeError("The function given to hvp should return a single Tensor")
            if outputs[0].numel() != 1:
                raise RuntimeError("The Tensor returned by the function given to hvp should contain a single element")
            jac = _autograd_grad(outputs, inputs, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict=strict)
            res = []
            for i, (g, x) in enumerate(zip(jac, inputs)):
                t = None if g is None else fwAD.unpack_dual(g).tangent
                if t is None:
                    t = zeros_like(x)
                elif strict and create_graph and not t.requires_grad:
                    raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                res.append(t)
            outputs = tuple(fwAD.unpack_dual(o).primal for o in outputs)
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(tuple(res), create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(res, is_inputs_tuple)
