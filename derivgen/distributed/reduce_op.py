"""``ReduceOp``: the reductions the collectives accept, with torch's names."""
import enum


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self):
        return f"<{self.__class__.__name__}.{self.name}: {list(ReduceOp).index(self)}>"


def mpi_op(MPI, op):
    """The MPI reduction that implements ``op`` (AVG is a SUM divided afterwards)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a derivgen.distributed.ReduceOp, got {type(op).__name__}")
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]
