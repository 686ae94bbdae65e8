"""Pictures of autograd graphs: ``make_dot`` (torchviz's function, same look), the execution-order
recorder it can number nodes with, and ``render`` (SVG/PNG through Graphviz, DOT text without it)."""
from derivgen.viz.dot import make_dot  # noqa: F401
from derivgen.viz.record import ExecutionRecord, record_execution  # noqa: F401
from derivgen.viz.render import GraphvizMissing, render  # noqa: F401

__all__ = ["make_dot", "record_execution", "ExecutionRecord", "render", "GraphvizMissing"]
