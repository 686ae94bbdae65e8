"""Stage 1 of the pipeline: read ``formulas.yaml`` and validate it into ``Entry`` objects."""
from .errors import TableError
from .loader import load_table
from .schema import Argument, Return, Schema, parse_schema

__all__ = ["TableError", "load_table", "Argument", "Return", "Schema", "parse_schema"]
