"""``derivgen.utils``: torch's utilities (``derivgen.utils.data``)."""
from derivgen.utils import data  # noqa: F401
