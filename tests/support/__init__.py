"""Helpers shared by the test suite: sample inputs for every table row, the numeric gradient checker,
the PyTorch parity harness, repository paths and a fresh-interpreter runner."""
