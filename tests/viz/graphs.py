"""The seed documents' example graphs (tests/api/test_seeds.py), built in-process against derivgen or
PyTorch, and a walk of a graph into a structure both libraries can be compared by."""

def node_walk(torch):
    x = torch.ones(3, requires_grad=True)
    return (x * x).sum(), {"x": x}


def split(torch):
    x = torch.arange(6.0, requires_grad=True)
    lo, hi = x.split(3)
    return (hi * 2).sum(), {"x": x}


def sequence(torch):
    x = torch.ones(3, requires_grad=True)
    a, b = x * 2, x * 3
    c = a + b
    return c.sum(), {"x": x}


def blog(torch):
    torch.manual_seed(6)
    x = torch.randn(4, 4, requires_grad=True)
    y = torch.randn(4, 4, requires_grad=True)
    return (x * y).sum(), {"x": x, "y": y}


def blog_unbind(torch):
    x = torch.randn(2, requires_grad=True)
    x1, x2 = x.unbind()
    return x1 + x2, {"x": x}


def so_unbind(torch):
    a, b = torch.randn(2, requires_grad=True).unbind()
    return a + b, {}


PROGRAMS = [node_walk, split, sequence, blog, blog_unbind, so_unbind]


def node_name(fn):
    name = fn.name()
    return "AccumulateGrad" if name.endswith("::AccumulateGrad") else name


def walk(var):
    """(nodes, edges) of the graph behind ``var``: nodes numbered in depth-first order from the root,
    ``nodes[i] = name`` (a leaf accumulator with its variable's shape), ``edges = {(from, to, slot)}``."""
    index, nodes, edges = {}, [], set()
    stack = [var.grad_fn]
    while stack:
        fn = stack.pop()
        if fn in index:
            continue
        index[fn] = len(nodes)
        label = node_name(fn)
        if hasattr(fn, "variable"):
            label += f" {tuple(fn.variable.shape)}"
        nodes.append(label)
        for nxt, _ in reversed(fn.next_functions):
            if nxt is not None:
                stack.append(nxt)
    for fn, i in index.items():
        for nxt, nr in fn.next_functions:
            if nxt is not None:
                edges.add((index[nxt], i, nr))
    return nodes, edges, index
