"""Stages 3-4 of the pipeline: lower sympy formulas to code and render ``generated/`` with jinja2."""
