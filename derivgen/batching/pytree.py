"""The nested Python containers (tuple, list, dict, namedtuple) that torch.func's transforms accept as
inputs and outputs, flattened to leaves and rebuilt, with torch's ``TreeSpec`` text in messages."""


class TreeSpec:
    __slots__ = ("type", "context", "children")

    def __init__(self, type_, context, children):
        self.type = type_
        self.context = context
        self.children = children

    @property
    def num_leaves(self):
        return 1 if self.type is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def _repr(self, indent):
        if self.type is None:
            return "*"
        pad = "  " * (indent + 1)
        parts = [c._repr(indent + 1) for c in self.children]
        body = (",\n" + pad).join(parts)
        name = self.type.__name__
        return f"TreeSpec({name}, {self.context}, [{body}])"

    def __repr__(self):
        return self._repr(0)


_LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order and the structure that ``tree_unflatten`` rebuilds."""
    if isinstance(tree, (list, tuple)) and not _is_namedtuple(tree):
        leaves, specs = [], []
        for x in tree:
            lv, sp = tree_flatten(x)
            leaves += lv
            specs.append(sp)
        return leaves, TreeSpec(type(tree) if type(tree) in (list, tuple) else tuple, None, specs)
    if _is_namedtuple(tree):
        leaves, specs = [], []
        for x in tree:
            lv, sp = tree_flatten(x)
            leaves += lv
            specs.append(sp)
        return leaves, TreeSpec(type(tree), None, specs)
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, specs = [], []
        for k in keys:
            lv, sp = tree_flatten(tree[k])
            leaves += lv
            specs.append(sp)
        return leaves, TreeSpec(type(tree), keys, specs)  # dict, or a subclass (OrderedDict) rebuilt as such
    return [tree], _LEAF


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp.type is None:
            return next(it)
        children = [build(c) for c in sp.children]
        if issubclass(sp.type, dict):
            return sp.type(zip(sp.context, children))
        if sp.type is list:
            return children
        if sp.type is tuple:
            return tuple(children)
        return sp.type(*children)  # a namedtuple
    return build(spec)


def broadcast_to_and_flatten(prefix, spec):
    """``prefix`` (an int/None, or a tree whose structure is a prefix of ``spec``) with each of its leaves
    repeated over the subtree of ``spec`` it covers, flattened; None when the structures disagree."""
    if spec.type is None:
        return None if isinstance(prefix, (list, tuple, dict)) else [prefix]
    if not isinstance(prefix, (list, tuple, dict)):
        return [prefix] * spec.num_leaves
    if issubclass(spec.type, dict):
        if not isinstance(prefix, dict) or set(prefix) != set(spec.context):
            return None
        children = [prefix[k] for k in spec.context]
    else:
        if isinstance(prefix, dict) or len(prefix) != len(spec.children):
            return None
        if (spec.type is list) != isinstance(prefix, list):
            return None
        children = list(prefix)
    out = []
    for p, c in zip(children, spec.children):
        sub = broadcast_to_and_flatten(p, c)
        if sub is None:
            return None
        out += sub
    return out
