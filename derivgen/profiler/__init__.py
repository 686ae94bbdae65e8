"""A subset of ``torch.profiler``: ``profile``, ``ProfilerActivity.CPU``, ``record_function``,
``key_averages().table(...)`` and ``export_chrome_trace(path)``.

Recorded: every generated op (``aten::<name>`` events, with the sequence number of the node it made),
every backward node the engine runs (``autograd::engine::evaluate_function: <Node>``, linked to its
forward op by sequence number with Chrome trace flow events), fused backward regions, Numba kernel
compilations and fused-kernel builds, and ``record_function`` ranges. When no profiler is active the
runtime pays one flag test per op and per ``backward()`` (``derivgen.core.observe``).
"""
from derivgen.profiler.profile import ProfilerActivity, profile, record_function  # noqa: F401
from derivgen.profiler.table import EventList, FunctionEventAvg  # noqa: F401

__all__ = ["ProfilerActivity", "profile", "record_function"]
