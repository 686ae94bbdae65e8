"""``derivgen.utils``: torch's utilities (``derivgen.utils.data``, ``derivgen.utils.checkpoint``,
``derivgen.utils.hooks``)."""
from derivgen.utils import data  # noqa: F401
from derivgen.utils import checkpoint  # noqa: F401
from derivgen.utils import hooks  # noqa: F401
