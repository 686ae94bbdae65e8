"""The op registry: the table of ops that lower layers call without importing the library that
defines them.

The generated library (and any user op library) registers its functions here when it is imported:
each Python-facing op under its name (``aten.mul``) and each table row under its overload name
(``aten.mul_Tensor``), as ``torch.ops.aten`` names them. Code below the generated library that composes
ops (composites, backward helpers, in-place rules, the engine's differentiable reductions) calls
``aten.<name>``; a registered op is a plain instance attribute, so the lookup costs what any attribute
read costs.
"""


class OpNamespace:
    """A namespace of registered ops. ``register_all`` fills it; reading an op that was never
    registered raises an AttributeError that says which library to load."""

    def __init__(self, name):
        self.__dict__["_name"] = name

    def register_all(self, functions, override=False):
        """Register ``{name: function}``; re-registering a name with another function needs ``override``
        (a library that silently replaced a shipped op would change every program that uses it)."""
        for name, fn in functions.items():
            old = self.__dict__.get(name)
            if old is not None and old is not fn and not override:
                raise RuntimeError(f"op '{self._name}::{name}' is already registered; "
                                   f"pass override=True to replace it")
        self.__dict__.update(functions)

    def __contains__(self, name):
        return name in self.__dict__ and name != "_name"

    def __getattr__(self, name):
        raise AttributeError(f"op '{self.__dict__['_name']}::{name}' is not registered: import derivgen "
                             f"(it loads the generated library), or load the library that defines it")

    def __setattr__(self, name, value):
        raise AttributeError("ops are added with register_all(), not by assignment")

    def __repr__(self):
        return f"<op namespace '{self._name}' with {len(self.__dict__) - 1} ops>"


aten = OpNamespace("aten")
_namespaces = {"aten": aten}


def namespace(name):
    """The op namespace ``name`` (a user library's ops: ``namespace("myproj")``), created on first use."""
    ns = _namespaces.get(name)
    if ns is None:
        ns = _namespaces[name] = OpNamespace(name)
    return ns


def namespaces():
    """{name: OpNamespace} of every namespace created so far, ``aten`` included."""
    return dict(_namespaces)
