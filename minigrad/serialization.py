"""``save`` and ``load``: state dicts to ``.npz`` files and back (chapter 10).

The file is a plain numpy ``.npz`` archive: one array per tensor, plus a JSON description
of the structure (dicts, lists, numbers, strings). It is read with ``allow_pickle=False``,
so loading a file never runs code from it: a pickle or any file that ``save`` did not
write is refused.
"""

import functools
import json
import math
import os
import tokenize
import zipfile
import zlib

import numpy as np

from . import dtypes
from ._tensor import Tensor, wrap

__all__ = ["save", "load", "MAX_BYTES", "MAX_DEPTH"]

_MARKER = "__minigrad__"
_FORMAT = "minigrad-npz"

MAX_BYTES = 2 * 1024 ** 3  # what load may inflate by default (see load)
MAX_DEPTH = 100  # how deeply dicts and lists may nest in what save writes and load reads


def _encode(obj, arrays, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError(f"minigrad.save: the object is nested more than {MAX_DEPTH} levels "
                         "deep (or contains itself); minigrad.load would refuse it")
    if isinstance(obj, Tensor):
        key = f"t{len(arrays)}"
        arrays[key] = obj._data
        return {"tensor": key, "requires_grad": bool(obj.requires_grad)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"minigrad.save: dict keys must be str or int, got "
                                f"{type(k).__name__}")
            items.append([k, _encode(v, arrays, depth + 1)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        return {"list" if isinstance(obj, list) else "tuple":
                [_encode(v, arrays, depth + 1) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise TypeError(f"minigrad.save stores tensors, numbers, strings and dicts/lists of them "
                    f"(a state_dict), not {type(obj).__name__}")


def _decode(node, arrays, depth=0):
    """The object that ``node`` (from the JSON description) stands for; ``arrays`` gives
    the array of a tensor member by name."""
    if depth > MAX_DEPTH:
        raise ValueError(f"its structure is nested more than {MAX_DEPTH} levels deep")
    if not isinstance(node, dict):
        raise ValueError(f"an entry of its structure is a {type(node).__name__}, not a dict")
    if "tensor" in node:
        t = wrap(arrays(node["tensor"]))
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "dict" in node:
        return {k: _decode(v, arrays, depth + 1) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, arrays, depth + 1) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, arrays, depth + 1) for v in node["tuple"])
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


def load(f, map_location=None, weights_only=True, *, max_bytes=MAX_BYTES):
    """Read what ``save`` wrote. Anything else raises ``ValueError``; nothing is unpickled.

    ``max_bytes`` caps the memory that loading may take: the sizes the archive declares
    for its members are added up before anything is inflated, and a file that declares
    more is refused (a small compressed file can expand to gigabytes). The default, 2 GiB,
    is far above any model of this course and below the memory of a laptop; pass a larger
    ``max_bytes`` for a bigger checkpoint that you trust (None: no limit). A damaged or
    malformed file (a bad
    member, a description that is not a dict or is nested more than ``MAX_DEPTH`` levels,
    an array that declares more data than it holds) raises ``ValueError`` saying what is
    wrong. ``map_location`` and ``weights_only`` are accepted for PyTorch's sake: tensors
    are always on the CPU, and only data is ever loaded.
    """
    name = (os.fspath(f) if isinstance(f, (str, os.PathLike))
            else getattr(f, "name", "the given file"))
    refuse = (f"{name} is not a file written by minigrad.save: minigrad.load reads only "
              "minigrad's .npz files and never unpickles (a file from torch.save or pickle "
              "must be converted first)")
    try:
        archive = zipfile.ZipFile(f)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise  # the path is wrong, not the file's format: say so as Python and PyTorch do
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise ValueError(f"{refuse} ({error})") from None
    with archive:
        members = {info.filename: info for info in archive.infolist()}
        if _MARKER + ".npy" not in members:
            raise ValueError(refuse)
        _check_total_size(name, members.values(), max_bytes)
        try:
            header = json.loads(str(_read_member(archive, members[_MARKER + ".npy"])))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise _NotOurs(refuse)
            arrays = functools.partial(_read_tensor, archive, members)
            return _decode(header["tree"], arrays)
        except _NotOurs as error:
            raise ValueError(str(error)) from None
        except ValueError as error:
            raise ValueError(f"{name} is damaged: {error}") from None
        except (KeyError, TypeError, RecursionError, EOFError, zipfile.BadZipFile, zlib.error,
                NotImplementedError, SyntaxError, tokenize.TokenError) as error:
            # numpy's parser of an array header can raise SyntaxError and TokenError
            raise ValueError(f"{name} is damaged: {type(error).__name__}: {error}") from None


class _NotOurs(ValueError):
    """A readable archive whose description is not minigrad's."""


def _check_total_size(name, members, max_bytes):
    """Refuse, before inflating anything, an archive whose members declare more than
    ``max_bytes`` in all. (zipfile never inflates a member beyond its declared size.)"""
    total = sum(info.file_size for info in members)
    if max_bytes is not None and total > max_bytes:
        raise ValueError(f"{name} declares {total:,} bytes of data, more than "
                         f"max_bytes={max_bytes:,}: it may be a compressed file made to fill "
                         "memory. If you trust it, load it with a larger limit: "
                         f"minigrad.load(path, max_bytes={total})")


def _read_tensor(archive, members, key):
    """The array of tensor member ``key``, with a dtype minigrad has."""
    info = members.get(f"{key}.npy") if isinstance(key, str) else None
    if info is None or key == _MARKER:
        raise ValueError(f"its structure names a tensor {key!r} that the archive lacks")
    array = _read_member(archive, info)
    try:
        dtypes.from_numpy(array.dtype)
    except TypeError as error:
        raise ValueError(f"tensor {key!r}: {error}") from None
    return array


def _read_member(archive, info):
    """One ``.npy`` member as an array, its header checked first: the data it declares must
    fit in the member's declared size, so a forged shape cannot make numpy allocate more
    than the archive holds."""
    with archive.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"member {info.filename} is in .npy format {version}, which "
                             "minigrad.save never writes")
        shape, _, dtype = read_header(fp)
        if dtype.hasobject:
            raise ValueError(f"member {info.filename} holds Python objects, which would "
                             "need unpickling")
        declared = math.prod(shape) * dtype.itemsize
        if declared > info.file_size:
            raise ValueError(f"member {info.filename} declares an array of shape {shape} "
                             f"({declared:,} bytes) but holds only {info.file_size:,} bytes")
    with archive.open(info) as fp:
        return np.lib.format.read_array(fp, allow_pickle=False)
