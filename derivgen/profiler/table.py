"""``key_averages()``: events grouped by name (and input shapes), with self and total CPU time, printed
as torch's profiler table."""
from collections import defaultdict

NAME_WIDTH = 55
COL_WIDTH = 12
SHAPES_WIDTH = 28
SORT_KEYS = {"self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "self_cpu_time"}


def _self_times(events):
    """Each event's duration less its direct children's (events on the same thread nested in it)."""
    by_tid = defaultdict(list)
    for e in events:
        by_tid[e.tid].append(e)
    self_ns = {}
    for evs in by_tid.values():
        stack = []
        for e in sorted(evs, key=lambda e: (e.start_ns, -e.end_ns)):
            while stack and stack[-1].end_ns <= e.start_ns:
                stack.pop()
            self_ns[id(e)] = e.duration_ns
            if stack and e.end_ns <= stack[-1].end_ns:
                self_ns[id(stack[-1])] -= e.duration_ns
            stack.append(e)
    return self_ns


class FunctionEventAvg:
    """One row of ``key_averages()``: times in microseconds, as torch's."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self):
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt_time(self.self_cpu_time_total)} "
                f"cpu_time={_fmt_time(self.cpu_time_total)} count={self.count}>")


class EventList(list):
    """The rows of ``key_averages()``; ``table()`` prints them."""

    def __init__(self, rows, self_total_us, with_shapes):
        super().__init__(rows)
        self.self_cpu_time_total = self_total_us
        self._with_shapes = with_shapes

    def table(self, sort_by=None, row_limit=100, max_name_column_width=NAME_WIDTH, header=None, top_level_events_only=False):
        rows = list(self)
        if sort_by is not None:
            if sort_by not in SORT_KEYS:
                raise ValueError(f"sort_by must be one of {sorted(SORT_KEYS)}, got {sort_by!r}")
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        return _build_table(rows, self.self_cpu_time_total, self._with_shapes, max_name_column_width)

    def __str__(self):
        return self.table()


def key_averages(events, group_by_input_shape=False):
    self_ns = _self_times(events)
    groups = {}
    total_self = 0.0
    for e in events:
        shapes = str(e.input_shapes if e.input_shapes is not None else []) if group_by_input_shape else None
        key = (e.name, shapes)
        row = groups.get(key)
        if row is None:
            row = groups[key] = FunctionEventAvg(e.name, shapes)
        row.count += 1
        row.cpu_time_total += e.duration_ns / 1000.0
        s = self_ns[id(e)] / 1000.0
        row.self_cpu_time_total += s
        total_self += s
    return EventList(groups.values(), total_self, group_by_input_shape)


def _fmt_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_pct(part, total):
    return f"{(part / total * 100.0 if total else 0.0):.2f}%"


def _build_table(rows, self_total, with_shapes, name_width):
    name_width = min(max([len(r.key) for r in rows] + [4]) + 4, name_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [COL_WIDTH] * 6
    if with_shapes:
        headers.append("Input Shapes")
        widths.append(SHAPES_WIDTH)
    sep = "".join("-" * w + "  " for w in widths)

    def line(cells):
        return "".join(str(c).rjust(w) + "  " for c, w in zip(cells, widths))

    out = [sep, line(headers), sep]
    for r in rows:
        name = r.key if len(r.key) <= name_width else r.key[:name_width - 3] + "..."
        cells = [name, _fmt_pct(r.self_cpu_time_total, self_total), _fmt_time(r.self_cpu_time_total),
                 _fmt_pct(r.cpu_time_total, self_total), _fmt_time(r.cpu_time_total), _fmt_time(r.cpu_time), r.count]
        if with_shapes:
            shapes = r.input_shapes or "[]"
            cells.append(shapes if len(shapes) <= SHAPES_WIDTH else shapes[:SHAPES_WIDTH - 3] + "...")
        out.append(line(cells))
    out.append(sep)
    out.append(f"Self CPU time total: {_fmt_time(self_total)}")
    return "\n".join(out) + "\n"
