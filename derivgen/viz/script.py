"""``derivgen graph``: run a script and draw the graph of one of its tensors.

The tensor is the script's module-level ``__graph__``, or the one ``--var NAME`` names, or ``--expr``:
a path into the script's namespace (``outputs[1]``, ``model.loss``, ``results["y"]``) read with
attribute and item lookups only; nothing of it is evaluated as code."""
import argparse
import ast
import os
import runpy
import sys

from derivgen.core.tensor import Tensor
from derivgen.ops.factories import ones_like
from derivgen.viz.dot import make_dot
from derivgen.viz.record import record_execution
from derivgen.viz.render import render


class PathError(ValueError):
    pass


def resolve(expr, namespace):
    """The value ``expr`` names in ``namespace``: names, ``.attr``, ``[constant]`` only."""
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError as exc:
        raise PathError(f"--expr {expr!r} is not an expression: {exc.msg}") from None

    def walk(node):
        if isinstance(node, ast.Name):
            if node.id not in namespace:
                raise PathError(f"--expr {expr!r}: the script defines no name {node.id!r}")
            return namespace[node.id]
        if isinstance(node, ast.Attribute):
            return getattr(walk(node.value), node.attr)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            return walk(node.value)[node.slice.value]
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.UnaryOp)
                and isinstance(node.slice.op, ast.USub) and isinstance(node.slice.operand, ast.Constant)):
            return walk(node.value)[-node.slice.operand.value]
        raise PathError(f"--expr {expr!r}: only names, attributes and constant indices are allowed "
                        f"(found {type(node).__name__})")
    return walk(tree)


def main(argv=None):
    p = argparse.ArgumentParser(prog="derivgen graph", description="draw the autograd graph of a script's tensor")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("--out", default="graph.svg", help="output file: .svg, .png, .pdf, or .dot for the source")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--var", help="the module-level name of the tensor to draw (default: __graph__)")
    which.add_argument("--expr", help="a path to the tensor in the script's namespace, e.g. 'outs[0]'")
    p.add_argument("--show-attrs", action="store_true", help="list each node's saved values")
    p.add_argument("--show-saved", action="store_true", help="draw saved tensors")
    p.add_argument("--plain", action="store_true", help="torchviz's labels only (no sequence numbers, slots)")
    p.add_argument("--backward", action="store_true",
                   help="run backward(retain_graph=True) on the tensor and number the nodes in the order they ran")
    args = p.parse_args(argv)

    sys.argv = [args.script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    namespace = runpy.run_path(args.script, run_name="__main__")
    try:
        if args.expr:
            var = resolve(args.expr, namespace)
        else:
            name = args.var or "__graph__"
            if name not in namespace:
                how = f"--var {name}" if args.var else "__graph__ (assign the tensor to __graph__, or pass --var/--expr)"
                raise PathError(f"{args.script} defines no {how}")
            var = namespace[name]
    except (PathError, AttributeError, LookupError, TypeError) as exc:
        print(f"derivgen graph: error: {exc}", file=sys.stderr)
        return 2
    tensors = var if isinstance(var, (tuple, list)) else (var,)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        print(f"derivgen graph: error: the value to draw is a {type(var).__name__}, not a Tensor", file=sys.stderr)
        return 2
    execution = None
    if args.backward:
        with record_execution() as execution:
            for t in tensors:
                if t.grad_fn is not None:
                    t.backward(None if t.dim() == 0 else ones_like(t), retain_graph=True)
    dot = make_dot(var, show_attrs=args.show_attrs, show_saved=args.show_saved, annotate=not args.plain,
                   execution=execution)
    path, message = render(dot, args.out)
    if message:
        print(f"derivgen graph: {message}", file=sys.stderr)
    else:
        print(f"derivgen graph: wrote {path}")
    return 0
