"""Every identifier the generated modules use for themselves, in one place.

Table rows contribute names to generated code (op functions, row functions, node classes, kernel
modules and kernels, parameters, outputs). ``derivgen.codegen.names`` refuses a row whose names would
shadow one of these, or a builtin the generated code calls, so a table can never make generated code
call its own function where the generator meant ``len`` or ``_k``. ``tests/table/test_identifiers.py``
parses the rendered modules and fails when a template or wrapper starts using a name missing here.
"""
import keyword

# Module-level names bound by the templates (imports, helpers, tables) of ops.py, the node modules,
# kernels/__init__.py and each kernel module.
MODULE_NAMES = frozenset({
    # ops.py
    "_b", "_fw", "_grad_mode", "_check_inplace", "_commit_inplace", "_inplace_target",
    "_commit_view_inplace", "_check_inplace_view",
    "_write_inplace", "_record_view", "_set_inplace_history", "_Saved", "_grad_accumulator", "_rebase_history",
    "_Tensor", "_needs_grad", "_k", "_value", "_meta", "_out_meta",
    "_meta1", "_meta2", "_outs_meta", "_cmeta", "_LIKE_FIRST_INPUT", "_fn", "_nr", "_fn_opt", "_nr_opt", "_meta_opt",
    "_NR1", "_NR2",
    "FUNCTIONS", "METHODS", "_registry", "_observe", "_translate", "_original_self",
    "_record_multi_output_views", "_check_view_meta", "_saved_hooks_tls", "_saved_hooks", "_bump_version", "_shared_version",
    "_return_type", "_ndarray", "_new_tensor", "_n",
    # nodes.py and each node module
    "math", "np", "_fns", "_RELEASED", "_Node", "_unpack_saved", "_saved_data", "_zeros_like_output", "_ops", "_FormulaRow", "_saved_list",
    "_saved_tensor_property", "_raw_saved_property", "_saved_value_property", "_saved_list_property",
    "_LoadedOnFirstUse", "_SavedVariable", "_tape_step_kind",
    # kernel modules
    "prange", "ElementwiseOp", "_elem", "_exp", "_l", "_log", "_max", "_min", "_pow", "_sign", "_tanh", "kernel",
    "kernel_parallel", "scalar", "_lit", "_maximum", "_minimum", "_power", "_sign_of",
    "_attach_dtype_rules",
    # kernels/__init__.py and nodes/__init__.py (modules loaded on first use)
    "_importlib", "_MODULE_OF", "_MODULES", "__getattr__", "__dir__",
    # the package
    "kernels", "nodes", "ops",
})

# Parameters and locals of generated functions and methods (op wrappers, node methods, kernels).
# (Comprehension variables and kernel parameters are left out: a comprehension has its own scope, and
# kernels rename a parameter that clashes with their own names, see lower.py.)
FUNCTION_LOCALS = frozenset({"result", "grad_fn", "outputs", "node", "grads", "needs", "grad", "_exc", "_m", "_vc", "_c", "_c0", "_c1"})

# Builtins the code of ops.py calls at module level or in its functions: an op function of that name
# would replace it for the whole module.
MODULE_BUILTINS = frozenset({"Exception", "enumerate", "len", "tuple", "type"})

# Builtins the generated functions and methods call (ops.py and the nodes): a parameter or local of that
# name would hide it. (``abs``, ``max`` and ``min``, which torch uses as argument names, are called
# only in kernels, and a kernel renames such a parameter where it calls the builtin: see lower.py.)
FUNCTION_BUILTINS = MODULE_BUILTINS | frozenset({"all", "any", "bool", "float", "int", "isinstance", "list", "property",
                                                  "range",
                                                  # kernels/__init__.py's loading of modules on first use
                                                  "AttributeError", "frozenset", "getattr", "globals", "set",
                                                  "__name__"})

# File names the package itself uses: a row's kernel or node module may not be called like one of them
# (compared case-insensitively, as on a case-insensitive file system).
PACKAGE_FILES = frozenset({"__init__", "nodes", "ops", "kernels", "__pycache__"})

KEYWORDS = frozenset(keyword.kwlist)


def why_reserved(name, *, module_level):
    """The reason ``name`` may not be used by a row, or None. ``module_level``: the name is bound at
    module level (op and row functions, classes); otherwise it is a parameter or a local."""
    if name in KEYWORDS:
        return "is a Python keyword"
    if name.startswith("__") and name.endswith("__"):
        return "is a '__dunder__' name (reserved by Python)"
    if name in (MODULE_BUILTINS if module_level else FUNCTION_BUILTINS):
        return "shadows the builtin of that name, which the generated code uses"
    if module_level and name in MODULE_NAMES:
        return "is a name the generated modules use for themselves"
    if not module_level and name in FUNCTION_LOCALS | MODULE_NAMES:
        return "is a name the generated functions use for themselves"
    return None
