"""``minigrad.cuda``: minigrad runs on the CPU only, so PyTorch's usual first line,
``device = "cuda" if torch.cuda.is_available() else "cpu"``, picks the CPU (chapter 10)."""

__all__ = ["is_available", "device_count"]


def is_available():
    """False: there is no GPU support in minigrad."""
    return False


def device_count():
    return 0
