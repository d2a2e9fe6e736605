"""``default_collate`` and ``default_convert`` at PyTorch's path
``torch.utils.data._utils.collate``; they are defined in ``minigrad.utils.data.dataloader``."""

from ..dataloader import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
