"""Every generated node class: looking each name up in ``derivgen.generated.nodes`` loads its module
(node modules are imported on first use, so ``vars(nodes)`` holds only those loaded so far)."""
from derivgen.core.node import Node
from derivgen.generated import nodes


def all_node_classes():
    found = [getattr(nodes, name) for name in dir(nodes)]
    return [c for c in found if isinstance(c, type) and issubclass(c, Node) and c is not Node]
