"""Seeded random numbers: ``manual_seed`` and ``Generator`` as in PyTorch (chapter 5).

minigrad draws with numpy's PCG64, so a seed gives the same numbers on every machine and
every run (not the numbers PyTorch would draw: the two libraries use different streams).
"""

import numpy as np

__all__ = ["Generator", "default_generator", "manual_seed", "initial_seed", "seed"]


class Generator:
    """A source of random numbers with its own seed: ``Generator().manual_seed(0)``."""

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"minigrad runs on the CPU only: cannot make a Generator on "
                               f"'{device}'")
        self._seed = 67280421310721  # PyTorch's default seed
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        """Restart the stream from ``seed``; returns the generator, as in PyTorch."""
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Reseed from the operating system's entropy and return the new seed."""
        new = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(new)
        return new

    def get_state(self):
        """The generator's state (restore it with ``set_state``)."""
        return dict(self._rng.bit_generator.state)

    def set_state(self, state):
        self._rng.bit_generator.state = state
        return self

    @property
    def device(self):
        return "cpu"

    def __repr__(self):
        return "<minigrad.Generator>"


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator, so every later random draw is reproducible."""
    return default_generator.manual_seed(seed)


def initial_seed():
    return default_generator.initial_seed()


def seed():
    return default_generator.seed()


def numpy_rng(generator=None):
    """The numpy generator behind ``generator`` (the default one when None)."""
    return (generator if generator is not None else default_generator)._rng
