"""``derivgen.Generator``: a seedable random-number generator with torch's methods (``manual_seed``,
``seed``, ``initial_seed``, ``get_state``, ``set_state``), over numpy's PCG64 bit generator.

The streams differ from torch's (torch uses a Mersenne Twister and its own transforms): the same seed
gives reproducible numbers in derivgen, not torch's numbers. ``default_generator`` serves every
random function called without ``generator=``.
"""
import os
import threading

import numpy as np

_MASK64 = (1 << 64) - 1


def _fresh_seed():
    """64 bits of OS entropy (what numpy's SeedSequence draws, without importing numpy.random)."""
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    def __init__(self, device="cpu"):
        from derivgen.core.device import device as _device
        self.device = _device(device)
        if self.device.type != "cpu":
            from derivgen.core.device import check_device
            check_device(self.device)
        self._initial = _fresh_seed()
        self._rng = None

    @property
    def _np(self):
        # made on the first draw: numpy.random costs a noticeable part of ``import derivgen``, and a
        # program that draws no random number need not import it
        if self._rng is None:
            self._rng = np.random.default_rng(self._initial)
        return self._rng

    @_np.setter
    def _np(self, rng):
        self._rng = rng

    def manual_seed(self, seed):
        """Seed the generator; returns it (as torch does)."""
        seed = int(seed)
        if seed < 0:
            seed &= _MASK64  # torch accepts negative seeds as their 64-bit two's complement
        self._initial = seed
        self._np = np.random.default_rng(seed)
        return self

    def seed(self):
        """Seed from fresh OS entropy; returns the new seed."""
        self.manual_seed(_fresh_seed())
        return self._initial

    def initial_seed(self):
        return self._initial

    def get_state(self):
        """The state as an int64 Tensor (the PCG64 state and increment as 64-bit words, then the
        buffered-uint32 flag and value); only meaningful to ``set_state`` of a derivgen Generator."""
        from derivgen.core.tensor import Tensor
        s = self._np.bit_generator.state
        words = [s["state"]["state"] >> 64, s["state"]["state"] & _MASK64, s["state"]["inc"] >> 64,
                 s["state"]["inc"] & _MASK64, s["has_uint32"], s["uinteger"], self._initial]
        return Tensor._make(np.array(words, dtype=np.uint64).view(np.int64))

    def set_state(self, new_state):
        from derivgen.core.tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state._array.dtype != np.int64 or new_state._array.shape != (7,):
            raise RuntimeError("Generator.set_state: expected the int64 Tensor of 7 words that get_state returns")
        w = [int(x) for x in new_state._array.view(np.uint64)]
        bg = np.random.PCG64()
        bg.state = {"bit_generator": "PCG64", "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
                    "has_uint32": w[4], "uinteger": w[5]}
        self._np = np.random.Generator(bg)
        self._initial = w[6]
        return self

    def __repr__(self):
        return f"<derivgen._C.Generator object at {hex(id(self))}>"


default_generator = Generator()


class _DrawGuard(threading.local):
    check = None  # called before every random draw on this thread while set (vmap's randomness mode)


_draw_guard = _DrawGuard()


def set_draw_guard(check):
    """Install ``check`` (or None) to be called before every random draw on this thread; returns the
    previous one. The vmap layer uses it to enforce its ``randomness`` mode."""
    previous = _draw_guard.check
    _draw_guard.check = check
    return previous


def numpy_generator(generator=None):
    """The numpy Generator to draw from: ``generator``'s (a derivgen Generator or a numpy Generator),
    else the default generator's."""
    check = _draw_guard.check
    if check is not None:
        check()
    if generator is None:
        return default_generator._np
    if isinstance(generator, Generator):
        return generator._np
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a derivgen.Generator, not {type(generator).__name__}")


def manual_seed(seed):
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
