"""``minigrad.accelerator``: PyTorch's device-agnostic ``torch.accelerator``, as it answers on
a machine without a GPU (minigrad runs on the CPU only), so that the first lines of newer
tutorials, ``device = torch.accelerator.current_accelerator() if
torch.accelerator.is_available() else "cpu"``, pick the CPU (chapter 10, with ``cuda``)."""

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "synchronize"]

_NONE = ("Cannot access accelerator device when none is available: minigrad runs on the "
         "CPU only (check minigrad.accelerator.is_available() first)")


def is_available():
    """False: minigrad has no accelerator."""
    return False


def current_accelerator(check_available=False):
    """None: there is no accelerator (PyTorch's answer on a CPU-only machine)."""
    return None


def device_count():
    return 0


def current_device_index():
    """PyTorch's RuntimeError: there is no accelerator device to name."""
    raise RuntimeError(_NONE)


def synchronize(device=None):
    """PyTorch's RuntimeError: there is no accelerator to wait for."""
    raise RuntimeError(_NONE)
