"""PyTorch's autograd suite runs with float64 as the default dtype; do the same for both libraries and
restore the previous default afterwards."""
import pytest


@pytest.fixture(autouse=True)
def _double_default(torch):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)
