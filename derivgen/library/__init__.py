"""User op libraries at run time: ``load_library`` registers a library built by ``derivgen library
build`` (its ops under ``derivgen.ops.<namespace>``, and as Tensor methods when its table says
``methods: true``); ``op`` compiles a one-row library from a decorator, into the user cache directory.

Building (the generator: parsing, proofs, code) runs in ``derivgen library build``, never in this
process: the runtime does not import the generator.
"""
from derivgen.library.load import LibraryError, load_library, loaded_libraries  # noqa: F401
from derivgen.library.decorator import op  # noqa: F401
