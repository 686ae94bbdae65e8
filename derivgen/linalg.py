"""``derivgen.linalg``: torch.linalg's functions that derivgen has (``derivgen/ops/linalg.py``): ``norm``,
``vector_norm``, ``matrix_norm`` ('fro'), ``inv``, ``inv_ex``, ``det``, ``matrix_power``, ``vecdot``, and
``LinAlgError``."""
from derivgen.ops.linalg import (LinAlgError, det, inv, inv_ex, matrix_norm, matrix_power, norm, vecdot,  # noqa: F401
                                 vector_norm)

__all__ = ["LinAlgError", "det", "inv", "inv_ex", "matrix_norm", "matrix_power", "norm", "vecdot", "vector_norm"]
