"""What the op-function templates (``templates/wrappers.j2``, used by ``ops.py.j2``) need besides the row
models: the filters that turn table text into safe Python text, and the manifest of hand-written
forwards. The code itself is printed by the templates only."""
from . import manifest
from .literals import python_literal


def docstring_safe(text):
    """Table text placed inside a generated docstring: the table is untrusted, so backslashes and quotes
    are escaped and the text can never close the docstring (and become code)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def inplace_fn_name(schema):
    """The function of a row's in-place variant (``add__Tensor``, ``relu__default``)."""
    return f"{schema.base}__{schema.overload or 'default'}"


def install(env):
    """Give a jinja2 environment the filters and globals of ``wrappers.j2``."""
    env.filters["python_literal"] = python_literal
    env.filters["docstring_safe"] = docstring_safe
    env.filters["pyrepr"] = repr  # a Python literal of a name or a list of names
    env.globals["manifest"] = manifest.load  # called at render time: a user library extends it
