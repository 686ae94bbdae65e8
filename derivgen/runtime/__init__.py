"""derivgen runtime: tensors, graph nodes and the backward engine.

The runtime never imports sympy or jinja2: those belong to the generator.
"""
