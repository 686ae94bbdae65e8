"""The generated ops module for runtime code that composes ops (composites, indexing, backward
helpers, ``nn.functional``). It cannot be imported at module level there, because the generated
package imports the runtime first; so it is imported on first use and then kept (an import statement
costs about a microsecond even when the module is loaded, and these helpers run on every call)."""

_MODULE = []


def ops():
    if not _MODULE:
        from derivgen.generated import ops as module
        _MODULE.append(module)
    return _MODULE[0]
