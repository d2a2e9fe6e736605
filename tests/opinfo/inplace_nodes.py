"""Registry entries of the nodes only in-place changes make (``minigrad/derivatives.py``):
fill_, zero_, copy_, ``t[key] = value`` and in-place ops on views (CopySlices)."""

from . import base, op


def changed(change):
    """A call that clones x (a non-leaf may change in place) and applies ``change``."""
    def call(lib, x, *rest):
        y = x.clone()
        change(lib, y, *rest)
        return y
    return call


def _set_slice(lib, y, v):
    y[1:] = v


def _set_indexed(lib, y, v):
    y[lib.tensor([2, 0])] = v


def _mul_view(lib, y):
    y[1].mul_(2)


def _fill_row(lib, y):
    y[0].fill_(1.5)


op("CopySlices", changed(_set_slice), args=((3, 4), (4,)))
op("ViewCopySlices", changed(_fill_row), tag="fill_view", torch_node="CopySlices")
op("IndexPutBackward0", changed(_set_indexed), args=((3, 4), (2, 1)))
op("ViewCopySlices", changed(_mul_view), torch_node="CopySlices")
base("FillBackward0", "the base of FillBackward2 (fill_) and ZeroBackward0 (zero_)")
op("FillBackward2", changed(lambda lib, y: y.fill_(2.5)))
op("FillBackward3", changed(lambda lib, y, v: y.fill_(v)), args=((3, 4), ()))
op("ZeroBackward0", changed(lambda lib, y: y.zero_()))
op("CopyBackwards", changed(lambda lib, y, s: y.copy_(s)), args=((3, 4), (4,)))
