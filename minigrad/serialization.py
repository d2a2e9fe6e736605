"""``save`` and ``load``: state dicts to ``.npz`` files and back (chapter 10).

The file is a plain numpy ``.npz`` archive: one array per tensor, plus a JSON description
of the structure (dicts, lists, numbers, strings). It is read with ``allow_pickle=False``,
so loading a file never runs code from it: a pickle or any file that ``save`` did not
write is refused.
"""

import json
import zipfile

import numpy as np

from . import dtypes
from .tensor import Tensor, _wrap

__all__ = ["save", "load"]

_MARKER = "__minigrad__"
_FORMAT = "minigrad-npz"


def _encode(obj, arrays):
    if isinstance(obj, Tensor):
        key = f"t{len(arrays)}"
        arrays[key] = obj._data
        return {"tensor": key, "requires_grad": bool(obj.requires_grad)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"minigrad.save: dict keys must be str or int, got {type(k).__name__}")
            items.append([k, _encode(v, arrays)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        return {"list" if isinstance(obj, list) else "tuple": [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise TypeError(f"minigrad.save stores tensors, numbers, strings and dicts/lists of them "
                    f"(a state_dict), not {type(obj).__name__}")


def _decode(node, archive):
    if "tensor" in node:
        array = archive[node["tensor"]]
        dtypes.from_numpy(array.dtype)
        t = _wrap(np.array(array))
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "dict" in node:
        return {k: _decode(v, archive) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, archive) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, archive) for v in node["tuple"])
    return node["value"]


def save(obj, f):
    """Write ``obj`` (usually ``model.state_dict()``) to the path or file ``f``."""
    arrays = {}
    tree = _encode(obj, arrays)
    header = json.dumps({"format": _FORMAT, "version": 1, "tree": tree})
    arrays[_MARKER] = np.array(header)
    if hasattr(f, "write"):
        np.savez(f, **arrays)
    else:
        with open(f, "wb") as handle:  # a file object: numpy adds no ".npz" to the name
            np.savez(handle, **arrays)


def load(f, map_location=None, weights_only=True):
    """Read what ``save`` wrote. Anything else raises ``ValueError``; nothing is unpickled."""
    name = getattr(f, "name", f)
    refuse = (f"{name} is not a file written by minigrad.save: minigrad.load reads only "
              "minigrad's .npz files and never unpickles (a file from torch.save or pickle "
              "must be converted first)")
    try:
        archive = np.load(f, allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise  # the path is wrong, not the file's format: say so as Python and PyTorch do
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as error:
        raise ValueError(f"{refuse} ({error})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile) or _MARKER not in archive.files:
        raise ValueError(refuse)
    with archive:
        try:
            header = json.loads(str(archive[_MARKER]))
            if header.get("format") != _FORMAT:
                raise ValueError(refuse)
            return _decode(header["tree"], archive)
        except (KeyError, TypeError, json.JSONDecodeError) as error:
            raise ValueError(f"{name} is damaged: {error!r}") from None
