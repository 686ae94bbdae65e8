"""Writing a graph to a file: SVG/PNG/PDF through Graphviz's ``dot`` program when it is installed,
else the DOT source, with a message saying how to install Graphviz."""
import os
import shutil


class GraphvizMissing(RuntimeWarning):
    pass


MISSING_MESSAGE = ("the Graphviz 'dot' program is not installed, so {want} could not be drawn; wrote the "
                   "DOT source to {path} instead (install Graphviz: apt-get install graphviz, brew install "
                   "graphviz, or https://graphviz.org/download/)")


def have_dot():
    return shutil.which("dot") is not None


def render(dot, path):
    """Write graph ``dot`` (a ``graphviz.Digraph``) to ``path``; its suffix picks the format (.svg, .png,
    .pdf, .dot/.gv for the source). Returns (the path written, a message or None): without Graphviz the
    DOT source goes to ``path`` with ``.dot`` appended and the message says so."""
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "svg"
    if fmt in ("dot", "gv"):
        with open(path, "w") as fh:
            fh.write(dot.source)
        return path, None
    if not have_dot():
        fallback = path + ".dot"
        with open(fallback, "w") as fh:
            fh.write(dot.source)
        return fallback, MISSING_MESSAGE.format(want=path, path=fallback)
    data = dot.pipe(format=fmt)
    with open(path, "wb") as fh:
        fh.write(data)
    return path, None
