"""Every node knows the (shape, dtype) of each gradient it receives, i.e. of each of its forward outputs
(torch's ``Node._input_metadata``), for every row of the table: recorded from the result, or, for an
elementwise row whose inputs agree, taken from its inputs' metadata (codegen's ``out_like_inputs``).
Checked on every sample of every row, in float32 and float64, and through each in-place variant."""
import os

import numpy as np
import pytest

import derivgen
from derivgen.table import load_table
from tests.support.gradcheck import flat_outputs
from tests.support.paths import REPO
from tests.support.samples import missing_message, row_function, samples_for, suits_inplace

DIFF_ROWS = [e for e in load_table(os.path.join(REPO, "formulas.yaml")) if e.formulas]
INPLACE_ROWS = [e for e in DIFF_ROWS if e.inplace]


def _check_outputs(outputs):
    checked = 0
    for o in outputs:
        node = o.grad_fn
        if node is None:
            continue
        assert node._gradient_meta()[o.output_nr] == (o._array.shape, o._array.dtype), \
            (type(node).__name__, o.output_nr, node._gradient_meta(), o._array.shape, o._array.dtype)
        checked += 1
    return checked


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("entry", DIFF_ROWS, ids=lambda e: e.name)
def test_row_node_knows_its_outputs(entry, dtype):
    samples = samples_for(entry, getattr(derivgen, dtype))
    assert samples, missing_message(entry)
    fn = row_function(entry)
    checked = 0
    for s in samples:
        args, kwargs, leaves = s.leaves(requires_grad=True)
        if leaves:
            try:
                outputs = fn(*args, **kwargs)
            except RuntimeError as e:
                if "expected dtype" in str(e):
                    continue  # a mixed-dtype sample torch refuses too (lerp's `end`)
                raise
            checked += _check_outputs(flat_outputs(outputs))
    assert checked, f"no sample of '{entry.name}' made a node"


@pytest.mark.parametrize("entry", INPLACE_ROWS, ids=lambda e: e.name)
def test_inplace_node_knows_the_written_tensor(entry):
    from derivgen.generated import ops
    fn = getattr(ops, f"{entry.schema.base}__{entry.schema.overload or 'default'}")
    checked = 0
    for s in samples_for(entry, derivgen.float64):
        if not suits_inplace(entry, s):
            continue
        args, kwargs, _ = s.leaves(requires_grad=True)
        c = ops.clone(args[0])
        checked += _check_outputs([fn(c, *args[1:], **kwargs)])
    assert checked, f"no sample of '{entry.name}' suits its in-place variant"


def test_mixed_dtypes_and_wrapped_numbers():
    f32 = derivgen.ones(3, requires_grad=True)
    f64 = derivgen.ones((), dtype=derivgen.float64, requires_grad=True)
    z32 = derivgen.ones((), requires_grad=True)
    for out in (f32 * f64, f64 * f32, z32 * 2.5, z32 * f64, f32 + 1, f32.pow(2.0),
                derivgen.where(f32 > 0, z32, f64), f32 * derivgen.ones(2, 1)):
        assert _check_outputs([out]) == 1
