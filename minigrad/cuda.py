"""``minigrad.cuda``: minigrad runs on the CPU only, so PyTorch's usual first line,
``device = "cuda" if torch.cuda.is_available() else "cpu"``, picks the CPU (chapter 10)."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available():
    """False: there is no GPU support in minigrad."""
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Nothing to seed without a GPU (PyTorch, too, ignores it then): the CPU's numbers come
    from ``minigrad.manual_seed``."""


def manual_seed_all(seed):
    """Nothing to seed without a GPU, as ``manual_seed``."""
