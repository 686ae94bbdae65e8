"""``derivgen.backends.mps``: Apple's Metal back end, never available in derivgen."""


def is_available():
    return False


def is_built():
    return False
