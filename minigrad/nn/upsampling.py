"""Resizing: ``F.interpolate`` (``F.upsample``), ``nn.Upsample``, ``nn.UpsamplingNearest2d``
and ``nn.UpsamplingBilinear2d``, as in ``torch.nn`` (the decoders, U-Nets and GAN generators
of the course's "next programs"): PyTorch's checks of sizes, scales and modes, then the op
(``minigrad.ops.upsampling``: one weight matrix per resized side). Modes: 'nearest',
'nearest-exact', 'linear' (signals), 'bilinear' (images) and 'area' (adaptive average
pooling)."""

import math
import warnings

from ..ops.upsampling import NODES, weight_matrix
from ._arguments import expect_tensor
from .module import Module
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


def _per_side(value, dims, what, spatial):
    """``value`` (a number or one per side) as a list of ``dims`` values; ``what``: 'size'
    or 'scale_factor', for PyTorch's message."""
    if isinstance(value, (list, tuple)):
        if len(value) != dims:
            scale = what == "scale_factor"
            form = ("scale_factor in (s1, s2, ...,sK)" if scale
                    else "output size in (o1, o2, ...,oK)")
            raise ValueError(
                f"Input and {'scale_factor' if scale else 'output'} must have the same number "
                f"of spatial dimensions, but got input with spatial dimensions of {spatial} "
                f"and {'scale_factor of shape' if scale else 'output size of'} {tuple(value)}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                f"{form} format.")
        return list(value)
    return [value] * dims


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """``input`` (N, C, L) or (N, C, H, W) resized to ``size`` or by ``scale_factor`` (one
    of the two): 'nearest' copies the nearest earlier input (PyTorch's floor rule),
    'nearest-exact' the input nearest each output's centre, 'linear'/'bilinear' weigh the
    two neighbours by distance (``align_corners=True``: the corner pixels' centres stay
    aligned), 'area' averages (adaptive average pooling)."""
    expect_tensor("interpolate", "input", 1, input)
    dims = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if align_corners is None:
        align_corners = False
    scales = None
    if size is not None:
        sizes = [int(s) for s in _per_side(size, dims, "size", spatial)]
    else:
        factors = [float(f) for f in _per_side(scale_factor, dims, "scale_factor", spatial)]
        sizes = [math.floor(float(n) * f) for n, f in zip(spatial, factors)]
        if not recompute_scale_factor:  # the scales PyTorch's kernels use: 1 / factor
            scales = [1.0 / f if f > 0 else None for f in factors]
    if antialias:
        raise NotImplementedError("antialias=True: minigrad resizes without an antialiasing "
                                  "filter; leave antialias=False (or use PyTorch)")
    wanted = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
    if wanted is not None and wanted != dims:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{wanted + 2}D input")
    known = mode in ("nearest", "nearest-exact", "area", "linear", "bilinear")
    if dims not in (1, 2) or not known:
        if dims in (1, 2) and mode in ("bicubic", "trilinear", "lanczos"):
            raise NotImplementedError(f"mode={mode!r}: minigrad interpolates with 'nearest', "
                                      "'nearest-exact', 'linear', 'bilinear' and 'area'")
        if dims == 3 and mode in MODES.split(" | "):
            raise NotImplementedError(f"mode={mode!r} of a 5D input (volumes): minigrad "
                                      "resizes signals (3D) and images (4D) only")
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {MODES} (got {mode})")
    if min(sizes) <= 0:
        names = ["W"] if dims == 1 else ["H", "W"]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{a}: {n}" for a, n in zip(names, spatial)) + ") output ("
            + ", ".join(f"{a}: {n}" for a, n in zip(names, sizes)) + ")")
    if mode == "area":
        pool = adaptive_avg_pool1d if dims == 1 else adaptive_avg_pool2d
        return pool(input, sizes[0] if dims == 1 else tuple(sizes))
    dtype = input._data.dtype
    matrices = tuple(weight_matrix(mode, n, out, align_corners,
                                   None if scales is None else scales[i], dtype)
                     for i, (n, out) in enumerate(zip(spatial, sizes)))
    return NODES[(mode, dims)].run((input,), input._data, matrices=matrices)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """The old name of ``interpolate`` (PyTorch warns that it is deprecated)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


class Upsample(Module):
    """``F.interpolate`` as a layer: ``nn.Upsample(scale_factor=2, mode='nearest')``."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``nn.Upsample(mode='nearest')`` for images (PyTorch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``nn.Upsample(mode='bilinear', align_corners=True)`` (PyTorch's older name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


