"""Chrome trace (``chrome://tracing``, Perfetto) JSON as torch's ``export_chrome_trace`` writes it:
complete events (``ph: X``) in microseconds, and a flow (``ph: s`` at the forward op, ``ph: f`` at the
backward node, category ``fwdbwd``) for each sequence number seen on both sides."""
import os
import threading


def chrome_trace(events, base_ns):
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "ts": 0, "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in sorted({e.tid for e in events}):
        name = next((t.name for t in threading.enumerate() if t.ident == tid), "thread")
        trace.append({"ph": "M", "name": "thread_name", "ts": 0, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} ({name})"}})
    forward_by_seq = {}
    for e in events:
        if not e.is_backward and e.seq is not None and e.cat == "cpu_op":
            forward_by_seq.setdefault((e.tid, e.seq), e)
    linked = {}
    for e in events:
        # the flow ends on the engine's event of the node (torch: on the node's own event)
        if e.is_backward and e.seq is not None and not e.name.startswith("autograd::"):
            fwd = forward_by_seq.get((e.tid, e.seq)) or next(
                (f for (t, s), f in forward_by_seq.items() if s == e.seq), None)
            if fwd is not None and id(fwd) not in linked:
                linked[id(fwd)] = e
    flow_ids = {}
    for ext_id, e in enumerate(events, start=1):
        args = {"External id": ext_id}
        if e.seq is not None:
            args["Sequence number"] = e.seq
            args["Fwd thread id"] = 1 if e.is_backward else 0
        if e.input_shapes is not None:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        args.update(e.extra)
        ts = (e.start_ns - base_ns) / 1000.0
        trace.append({"ph": "X", "cat": e.cat, "name": e.name, "pid": pid, "tid": e.tid, "ts": ts,
                      "dur": e.duration_ns / 1000.0, "args": args})
        if id(e) in linked:
            flow_ids[id(linked[id(e)])] = fid = len(flow_ids) + 1
            trace.append({"ph": "s", "id": fid, "pid": pid, "tid": e.tid, "ts": ts, "cat": "fwdbwd",
                          "name": "fwdbwd"})
        elif id(e) in flow_ids:
            trace.append({"ph": "f", "id": flow_ids[id(e)], "pid": pid, "tid": e.tid, "ts": ts, "cat": "fwdbwd",
                          "name": "fwdbwd", "bp": "e"})
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace, "traceName": "derivgen"}
