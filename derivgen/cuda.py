"""``derivgen.cuda``: what a CPU-only build of torch answers (derivgen computes on the CPU only)."""


def is_available():
    return False


def device_count():
    return 0


def _lazy_init():
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    _lazy_init()


def manual_seed(seed):
    """Seeding CUDA without CUDA is silently ignored, as in torch."""


def manual_seed_all(seed):
    """Seeding CUDA without CUDA is silently ignored, as in torch."""


def synchronize(device=None):
    _lazy_init()
