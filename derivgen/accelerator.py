"""``derivgen.accelerator``: torch.accelerator's answers on a machine without one (derivgen runs on the
CPU only): no accelerator is available, none is current, there are none to count."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
