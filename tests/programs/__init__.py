"""A corpus of small real PyTorch programs, run on PyTorch and on derivgen."""
