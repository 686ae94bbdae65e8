"""derivgen.profiler: torch.profiler's table and Chrome trace for forward ops, backward nodes (linked to
their forward op by sequence number), record_function ranges and compilations; nothing recorded and
nothing left switched on outside the block."""
import json
import textwrap

import pytest

import derivgen
from derivgen.profiler import ProfilerActivity, profile, record_function
from tests.support.runner import run_python

ENGINE = "autograd::engine::evaluate_function: "


def _program(torch, prof_mod):
    x = torch.ones(3, requires_grad=True)
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], record_shapes=True) as prof:
        with prof_mod.record_function("model"):
            y = (x * x).sin().sum()
        y.backward()
    return prof, y


def _trace(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as fh:
        return json.load(fh)


def test_chrome_trace_events_sequence_numbers_and_flows(tmp_path):
    prof, y = _program(derivgen, derivgen.profiler)
    trace = _trace(prof, tmp_path)
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in events]
    for want in ("model", "aten::mul", "aten::sin", "aten::sum", ENGINE + "SumBackward0", ENGINE + "SinBackward0",
                 ENGINE + "MulBackward0", ENGINE + "derivgen::autograd::AccumulateGrad"):
        assert want in names
    seq = {e["name"]: e["args"].get("Sequence number") for e in events}
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert seq["aten::mul"] == seq[ENGINE + "MulBackward0"] == mul._sequence_nr()
    assert seq["aten::sum"] == seq["SumBackward0"] == y.grad_fn._sequence_nr()
    assert seq[ENGINE + "derivgen::autograd::AccumulateGrad"] is None
    # each forward op that made a node starts a flow that ends at that node's backward event
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert set(starts) == set(ends) and len(starts) == 3
    for fid, s in starts.items():
        fwd = next(e for e in events if e["ts"] == s["ts"] and e["cat"] == "cpu_op" and e["name"].startswith("aten::"))
        bwd = next(e for e in events if e["ts"] == ends[fid]["ts"] and e["name"].endswith("Backward0")
                   and not e["name"].startswith("autograd::"))
        assert fwd["args"]["Sequence number"] == bwd["args"]["Sequence number"]
        assert ends[fid]["bp"] == "e" and s["cat"] == ends[fid]["cat"] == "fwdbwd"
    mul_ev = next(e for e in events if e["name"] == "aten::mul")
    assert mul_ev["args"]["Input Dims"] == [[3], [3]]
    # the forward ops lie inside the user's range
    model = next(e for e in events if e["name"] == "model")
    assert model["ts"] <= mul_ev["ts"] and mul_ev["ts"] + mul_ev["dur"] <= model["ts"] + model["dur"]


def test_torch_trace_has_the_same_backward_links(tmp_path):
    torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed; cannot compare traces")
    import torch.profiler as tp
    prof, _ = _program(torch, tp)
    trace = _trace(prof, tmp_path)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    names = {e["name"] for e in events}
    for want in ("model", "aten::mul", "aten::sin", "aten::sum", ENGINE + "SumBackward0", ENGINE + "MulBackward0"):
        assert want in names
    assert len([e for e in trace["traceEvents"] if e.get("ph") == "s" and e.get("cat") == "fwdbwd"]) == 3


def test_key_averages_table_lists_the_ops():
    prof, _ = _program(derivgen, derivgen.profiler)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=100)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[-1].startswith("Self CPU time total: ")
    rows = {line.split()[0]: line.split() for line in lines[3:-2] if not line.strip().startswith("autograd")}
    for op in ("aten::mul", "aten::sin", "aten::sum", "model", "MulBackward0", "SinBackward0", "SumBackward0"):
        assert op in rows and rows[op][-1] == "1"
    # sorted by self time, descending
    avgs = prof.key_averages()
    self_times = [r.self_cpu_time_total for r in sorted(avgs, key=lambda r: -r.self_cpu_time_total)]
    first = lines[3].split()[0]
    assert next(r for r in avgs if r.key == first).self_cpu_time_total == self_times[0]
    assert len(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=2).splitlines()) == 3 + 2 + 2
    shapes = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in shapes and "[[3], [3]]" in shapes


def test_table_has_torchs_columns(torch):
    """The same program's table, from derivgen and from torch, has the same header and rows for the ops."""
    prof_mod = derivgen.profiler if torch is derivgen else __import__("torch.profiler").profiler
    prof, _ = _program(torch, prof_mod)
    lines = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=100).splitlines()
    lines = [ln for ln in lines if not ln.startswith(("STAGE:", "USDT:"))]
    assert [c.strip() for c in lines[1].split("  ") if c.strip()] == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    names = {ln.split()[0] for ln in lines[3:-2]}
    assert {"aten::mul", "aten::sin", "aten::sum", "model", "SumBackward0", "MulBackward0"} <= names


def test_sort_key_is_checked():
    prof, _ = _program(derivgen, derivgen.profiler)
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nonsense")


def test_nothing_recorded_outside_the_block():
    from derivgen.core import observe
    x = derivgen.ones(3, requires_grad=True)
    with profile() as prof:
        pass
    assert not observe.ACTIVE
    (x * 2).sum().backward()
    with record_function("outside"):
        x.exp()
    assert prof.events == []


def test_only_cpu_activity():
    with pytest.raises(ValueError, match="CPU"):
        profile(activities=["CUDA"])
    assert ProfilerActivity.CPU.value == "CPU"


def test_profile_memory_warns_that_it_records_nothing():
    with pytest.warns(UserWarning, match="memory"):
        profile(profile_memory=True)


def test_with_stack_records_the_callers_line():
    x = derivgen.ones(3, requires_grad=True)
    with profile(with_stack=True) as prof:
        x.exp()
    ev = next(e for e in prof.events if e.name == "aten::exp")
    assert ev.stack and "test_profiler.py" in ev.stack[0]


def test_record_function_as_decorator():
    @record_function("step")
    def step(x):
        return x * 2
    with profile() as prof:
        step(derivgen.ones(2))
    names = [e.name for e in prof.events_list()]
    assert names.index("step") < names.index("aten::mul")


def test_fused_region_and_kernel_builds_are_events(tmp_path):
    """A new fused chain (empty fused-kernel directory) is built and compiled while profiling: the build
    and the fused backward region appear as events."""
    code = textwrap.dedent(f"""
        import json
        import derivgen as torch
        from derivgen.engine import fusion
        from derivgen.config import settings
        from derivgen.profiler import profile
        assert settings.fusion_enabled
        x = torch.ones(settings.fusion_threshold, dtype=torch.float64, requires_grad=True)
        with profile() as prof:
            y = (x * x).sin().exp().sum()
            y.backward()
        prof.export_chrome_trace({str(tmp_path / 't.json')!r})
        events = json.load(open({str(tmp_path / 't.json')!r}))["traceEvents"]
        for e in events:
            if e["ph"] == "X" and (e["cat"] == "compile" or "Fused nodes" in e["args"]):
                print(e["name"], e["args"].get("Fused nodes"))
    """)
    # a fresh kernel cache too: kernels are cached by their source's content, so a fused module written
    # again into a new directory would load what an earlier run compiled
    proc = run_python(code, env={"DERIVGEN_FUSION_DIR": str(tmp_path / "fused"),
                                 "DERIVGEN_CACHE_DIR": str(tmp_path / "cache")}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert any(line.startswith("derivgen::build_fused_kernel: derivgen_fused_") for line in out.splitlines()), out
    assert f"{ENGINE}ExpBackward0 ['SinBackward0', 'MulBackward0']" in out
