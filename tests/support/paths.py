"""Paths of the repository the tests run in."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(REPO, "formulas.yaml")
GENERATED = os.path.join(REPO, "generated")
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def seeds_dir():
    """The user's seed documents: ``DERIVGEN_SEEDS_DIR`` when set, else the copies in tests/fixtures/seeds."""
    return os.environ.get("DERIVGEN_SEEDS_DIR") or os.path.join(FIXTURES, "seeds")
