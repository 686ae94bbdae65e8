"""Draw the pictures of the user guide (docs/images/*.svg) with derivgen.viz.

    python docs/make_images.py              # rewrite docs/images/
    python docs/make_images.py --out DIR    # write elsewhere (the test compares with docs/images/)
    python docs/make_images.py --dot        # write the DOT source instead (no Graphviz needed)

Node names in DOT are object addresses; they are renumbered (n1, n2, ... in order of appearance) so the
pictures do not change from run to run. Run in a fresh interpreter: sequence numbers start at 0."""
import argparse
import os
import re
import sys

import derivgen as torch
from derivgen.config import settings
from derivgen.viz import make_dot, record_execution, render

HERE = os.path.dirname(os.path.abspath(__file__))


def node_walk():
    """getting-started.md: the README's first program."""
    x = torch.ones(3, requires_grad=True)
    y = (x * x).sum()
    return make_dot(y, params={"x": x})


def split_slots():
    """getting-started.md: one node with two outputs; the edge labels are the slots."""
    x = torch.arange(6.0, requires_grad=True)
    lo, hi = x.split(3)
    y = (lo * hi).sum()
    return make_dot(y, params={"x": x})


def mlp_saved():
    """debugging.md: a small layer with named parameters, saved values listed and drawn, after backward."""
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    x = torch.randn(2, 4)
    loss = torch.tanh(x @ w + b).pow(2).mean()
    loss.backward()
    return make_dot(loss, params={"w": w, "b": b}, show_attrs=True, show_saved=True)


def execution_order():
    """engine.md: the order the engine ran the nodes (highest sequence number first)."""
    x = torch.ones(3, requires_grad=True)
    a, b = x * 2, x * 3
    y = (a + b).sum()
    with record_execution() as rec:
        y.backward()
    return make_dot(y, params={"x": x}, execution=rec)


def fused_region():
    """debugging.md: a chain of elementwise nodes the engine ran as one kernel."""
    if not settings.fusion_enabled:
        raise SystemExit("make_images: fusion is switched off (DERIVGEN_FUSION=0); cannot draw fused.svg")
    x = torch.ones(settings.fusion_threshold, dtype=torch.float64, requires_grad=True)
    y = (x.sin() * x).exp().sum()
    with record_execution() as rec:
        y.backward()
    return make_dot(y, params={"x": x}, execution=rec)


IMAGES = {"node-walk": node_walk, "split-slots": split_slots, "saved-released": mlp_saved,
          "execution-order": execution_order, "fused": fused_region}


def stable_source(dot):
    """The DOT source with object addresses renumbered n1, n2, ... in order of appearance."""
    names = {}

    def rename(m):
        return names.setdefault(m.group(0), f"n{len(names) + 1}")
    return re.sub(r"(?<![\w.])\d{9,}(?:_saved_\w+(?:\[\d+\])?)?(?![\w.])", rename, dot.source)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(HERE, "images"))
    p.add_argument("--dot", action="store_true", help="write .dot sources instead of SVG")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    from graphviz import Source
    for name, build in IMAGES.items():
        source = stable_source(build())
        path = os.path.join(args.out, name + (".dot" if args.dot else ".svg"))
        written, message = render(Source(source), path)
        if message:
            print(f"make_images: {message}", file=sys.stderr)
            return 1
        print(f"make_images: wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
