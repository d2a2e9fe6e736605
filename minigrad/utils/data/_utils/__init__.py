"""``minigrad.utils.data._utils``: the path of PyTorch's ``torch.utils.data._utils``, which
programs import ``default_collate`` from (``from torch.utils.data._utils.collate import
default_collate``)."""

from . import collate

__all__ = ["collate"]
