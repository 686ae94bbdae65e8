"""PyTorch's autograd suite runs with float64 as the default dtype; do the same for both libraries and
restore the previous default afterwards.

``@pytest.mark.derivgen_gap("reason")`` marks a ported test that passes on PyTorch and does not yet pass on
derivgen: the derivgen run is a strict xfail (it fails the suite once the gap is closed, so the mark is
removed), the PyTorch run is unaffected. README.md lists every such gap."""
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "derivgen_gap(reason): known derivgen gap; strict xfail on derivgen only")


def pytest_collection_modifyitems(items):
    for item in items:
        mark = item.get_closest_marker("derivgen_gap")
        if mark is None or getattr(item, "callspec", None) is None:
            continue
        if item.callspec.params.get("torch") == "derivgen":
            item.add_marker(pytest.mark.xfail(reason=mark.args[0], strict=True))


@pytest.fixture(autouse=True)
def _double_default(torch):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)
