"""The code of a row's node on the compiled backward tape (derivgen/engine/tape.py).

The engine hands a chain of generated elementwise nodes on small same-shape float arrays to one Numba
call. Per row that needs two pieces, both printed here from what the row's fast path already does:

- the **step** (in the row's kernel module): one node of the tape over its arrays. It computes each
  input's gradient with the very one-element functions the node's ``_apply_fast`` kernels call, and takes
  the same branches on the row's numbers (``grad if alpha == 1 else grad * alpha``), so the tape gives
  the engine's results bit for bit. A gradient goes to a slot of the tape's gradient array: stored when
  it is the first for that slot, added to what is there otherwise (the engine's sum, in arrival order).
- the **gather** (a method of the node class): the node's saved arrays and numbers, checked as
  ``_apply_fast`` checks them (version, not released, no saved-tensor hooks) and of the run's shape and
  dtype, appended to the tape's lists; False when any is not, and the engine then runs the node itself.

A row is on the tape when its formulas are elementwise (it has one-element VJPs for fusion), every
saved tensor is a differentiable input or the result (no masks or conditions of another dtype), every
saved value is a number, and each formula's fast path is the gradient or a saved tensor passed through,
one kernel, or a choice between those on the row's numbers.
"""
import re
from dataclasses import dataclass, field

# numbers reach the tape as float64; an int beyond this would round there first
_EXACT_INT = 2 ** 53
_CONDITION_WORDS = {"and", "or", "not", "True", "False"}


@dataclass
class TapeModel:
    step_name: str                 # the step function in the row's kernel module
    saved: list                    # saved tensor names, in the order the gather appends them
    numbers: list                  # number names, in the order the gather appends them
    step_lines: list = field(default_factory=list)
    gather_lines: list = field(default_factory=list)


def build_tape(model):
    """The row's TapeModel, or None when the row is not on the tape."""
    if not model.fusion_vjps or not model.class_name:
        return None
    schema = model.entry.schema
    saved = []
    for s in model.saved_tensors:
        if not (s.is_output or s.name in model.diff_args):
            return None  # a mask or a condition: another dtype than the gradients
        saved.append(s)
    numbers = []
    for v in model.saved_values:
        arg = schema.arg(v.name)
        if v.tensor_list or arg is None or not arg.is_number:
            return None
        numbers.append(v.name)
    grads = {"grad"} | {f"grad_{r.name}" for r in schema.returns}
    values = {}
    for arg in model.diff_args:
        plan = model.tape_plans.get(arg)
        if plan is None or not _supported(plan, grads, {s.name for s in saved}, set(numbers)):
            return None
        values[arg] = plan
    tape = TapeModel(step_name=f"{model.py_name}_tape_step", saved=[s.name for s in saved], numbers=numbers)
    tape.step_lines = _step_lines(model, tape, values, grads)
    tape.gather_lines = _gather_lines(saved, numbers, len(model.diff_args), model.compact_output)
    return tape


def _supported(plan, grads, saved, numbers):
    kind = plan[0]
    if kind == "name":
        return plan[1] in grads or plan[1] in saved
    if kind == "kernel":
        spec = plan[1]
        return (not spec.returns_bool and all(a in grads or a in saved for a in spec.arrays)
                and all(s in numbers for s in spec.scalars))
    if kind == "branches":
        branches = plan[1]
        if branches[-1][0] is not None:
            return False  # no else: the fast path would fail on some numbers
        for cond, sub in branches:
            if cond is not None and not set(re.findall(r"[A-Za-z_]\w*", cond)) <= numbers | _CONDITION_WORDS:
                return False
            if not _supported(sub, grads, saved, numbers):
                return False
        return True
    return False


def _element(name, grads):
    return f"grad[_i]" if name in grads else f"{name}[_i]"


def _value(plan, grads):
    """The one-element expression of a plan without branches."""
    if plan[0] == "name":
        return _element(plan[1], grads)
    spec = plan[1]
    args = [_element(a, grads) for a in spec.arrays] + [f"_l({s}, _zero)" for s in spec.scalars]
    return f"{spec.name}_scalar({', '.join(args + ['_zero'])})"


def _write(plan, grads, pad):
    """Lines writing the plan's value into ``_out`` (stored, or added when ``_o & 1``)."""
    if plan[0] == "branches":
        lines = []
        for k, (cond, sub) in enumerate(plan[1]):
            lines.append(pad + ("else:" if cond is None else f"{'elif' if k else 'if'} {cond}:"))
            lines += _write(sub, grads, pad + "    ")
        return lines
    return [pad + "for _i in range(_out.shape[0]):",
            pad + f"    _v = {_value(plan, grads)}",
            pad + "    _out[_i] = _out[_i] + _v if _add else _v"]


def _step_lines(model, tape, values, grads):
    lines = ["grad = _grads[_row]"]
    lines += [f"{name} = _saved[_sp + {k}]" if k else f"{name} = _saved[_sp]" for k, name in enumerate(tape.saved)]
    lines += [f"{name} = _numbers[_q + {k}]" if k else f"{name} = _numbers[_q]" for k, name in enumerate(tape.numbers)]
    for k, arg in enumerate(model.diff_args):
        lines += [f"_o = _code[_pc + {1 + k}]  # {arg}",
                  "if _o >= 0:",
                  "    _out = _grads[_o >> 1]",
                  "    _add = _o & 1"]
        lines += _write(values[arg], grads, "    ")
    after = [f"_pc + {1 + len(model.diff_args)}"] + [f"{p} + {n}" if n else p for p, n in
                                                      (("_sp", len(tape.saved)), ("_q", len(tape.numbers)))]
    lines.append(f"return {', '.join(after)}")
    return lines


def _gather_lines(saved, numbers, n_inputs, compact_output=None):
    zeros = "(" + "0, " * n_inputs + ")"
    lines = [f"if node._next_nrs != {zeros.replace(', )', ',)') if n_inputs == 1 else zeros.replace(', )', ')')}:",
             "    return False  # a gradient for an output of a multi-output node other than the first"]
    for s in saved:
        n = s.name
        lines += [f"{n} = node._sv_{n}",
                  f"if {n} is None:",
                  f"    {n} = _blank  # not saved: no gradient needs it"]
        if s.is_output and n == compact_output:
            # kept compactly: the array itself, at version 0 (derivgen.core.node.saved_data)
            lines += [f"elif {n}.__class__ is np.ndarray:",
                      f"    if node._svv_{n}[0] != 0 or {n}.shape != _shape or {n}.dtype is not _dtype:",
                      "        return False"]
        if s.is_output:
            lines += [f"elif {n}.__class__ is _SavedVariable and {n}.unpack_hook is None and not {n}.released "
                      f"and {n}.vc[0] == {n}.version:"]
        else:
            code = f"node._svv_{n}"
            lines += [f"elif ({n}.__class__ is _Tensor or isinstance({n}, _Tensor)) and ({n}._vc[0] == {code} or ("
                      f"{n}._vc[0] == ~{code} and {n}.grad_fn is not None)):"]
        lines += [f"    {n} = {n}._array"]
        # (a saved output may still be deferred, a Pending: an input's _array is computed when read)
        lines += [f"    if {n}.__class__ is not np.ndarray or {n}.shape != _shape or {n}.dtype is not _dtype:"
                  if s.is_output else f"    if {n}.shape != _shape or {n}.dtype is not _dtype:",
                  "        return False",
                  "else:",
                  "    return False"]
    for n in numbers:
        lines += [f"{n} = node._v_{n}",
                  f"if {n}.__class__ is not float and {n}.__class__ is not bool and ({n}.__class__ is not int "
                  f"or not -{_EXACT_INT} <= {n} <= {_EXACT_INT}):",
                  "    return False  # (the tape's numbers are float64: ints it holds exactly)"]
    lines += [f"_saved.append({s.name})" for s in saved]
    lines += [f"_numbers.append({n})" for n in numbers]
    lines.append("if _release:")
    for s in saved:
        lines += [f"    if node._sv_{s.name} is not None:",
                  f"        node._sv_{s.name} = _RELEASED"]
    lines += ["    node._released = True",
              "return True"]
    return lines
