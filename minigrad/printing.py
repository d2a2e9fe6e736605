"""Print tensors exactly as PyTorch does: ``tensor([12.])``, ``tensor(3., grad_fn=<SumBackward0>)``.

PyTorch's rules (``torch/_tensor_str.py``): four decimals; whole numbers printed as ``12.``;
scientific notation when the magnitudes span more than 1000x, exceed 1e8, or go below 1e-4;
every element padded to one width; lines wrapped at 80 characters; more than 1000 elements
summarized with ``...``. Used by ``Tensor.__repr__`` (chapter 2).
"""

import math

import numpy as np

from . import dtypes

# The options ``set_printoptions`` changes (PyTorch's defaults). SCI_MODE None: decide by
# the values, as described above; True or False: always or never scientific notation.
PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE = None

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Change how tensors print, as ``torch.set_printoptions``: ``precision`` digits after
    the point, summarize (``...``) tensors of more than ``threshold`` elements showing
    ``edgeitems`` at each end, wrap lines at ``linewidth`` characters, ``sci_mode``
    True/False to force scientific notation on or off (None: automatic). ``profile``
    'default', 'short' or 'full' sets the first four at once
    (``set_printoptions(profile="default")`` restores the defaults)."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None and profile in _PROFILES:
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


class _Formatter:
    """Chooses one number format and one width for all the elements that are shown."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        low, high = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = (high / low > 1000.0 or high > 1.0e8) if SCI_MODE is None \
                else SCI_MODE
            if not self.sci_mode:
                for value in finite.tolist():
                    self.max_width = max(self.max_width, len(f"{value:.0f}") + 1)
                return
        else:
            self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4) \
                if SCI_MODE is None else SCI_MODE
        fmt = f"{{:.{PRECISION}{'e' if self.sci_mode else 'f'}}}"
        for value in finite.tolist():
            self.max_width = max(self.max_width, len(fmt.format(value)))

    def format(self, value):
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(values):
    """The elements that will be shown when a big tensor is summarized."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        rows = list(range(EDGEITEMS)) + list(range(values.shape[0] - EDGEITEMS, values.shape[0]))
    else:
        rows = range(values.shape[0])
    if values.ndim == 1:
        return values[list(rows)]
    return np.stack([_summarized(values[i]) for i in rows])


def _vector(values, indent, summarize, formatter):
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (formatter.max_width + 2))))
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        texts = ([formatter.format(v) for v in values[:EDGEITEMS].tolist()] + [" ..."]
                 + [formatter.format(v) for v in values[-EDGEITEMS:].tolist()])
    else:
        texts = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, formatter):
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    n = values.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        parts = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(EDGEITEMS)]
                 + ["..."]
                 + [_nested(values[i], indent + 1, summarize, formatter)
                    for i in range(n - EDGEITEMS, n)])
    else:
        parts = [_nested(values[i], indent + 1, summarize, formatter) for i in range(n)]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_values(values, indent):
    """The bracketed numbers of an array, as PyTorch lays them out."""
    if values.size == 0:
        return "[]"
    if values.dtype == np.float16:
        values = values.astype(np.float32)
    summarize = values.size > THRESHOLD
    formatter = _Formatter(_summarized(values) if summarize else values)
    return _nested(values, indent, summarize, formatter)


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(values, requires_grad=False, grad_fn=None):
    """``tensor(...)`` for an array, with the dtype/grad suffixes PyTorch adds."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dtype = dtypes.from_numpy(values.dtype)
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not dtypes.float32:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if dtype not in (dtypes.float32, dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dtype}")
        body = format_values(values, indent)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
