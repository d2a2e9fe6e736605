"""Second derivatives (``create_graph=True``) through the nodes of in-place changes:
``fill_``, ``zero_``, ``copy_``, ``x[key] = v`` and an in-place op on a view, against
PyTorch."""

import numpy as np
import pytest

import minigrad as mg


def _changed(lib, name):
    """A function of x, v and s whose graph goes through the in-place change ``name``."""
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    s = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    h = x * x
    if name == "fill_":
        h2 = h * 1
        h2.fill_(2.0)
        y = (h2 * x).sum() + (h * h).sum()
    elif name == "zero_":
        h2 = h * 1
        h2.zero_()
        y = (h2 * x).sum() + (h ** 3).sum()
    elif name == "fill_ with a tensor":
        h2 = h * 1
        h2.fill_(v * v)
        y = (h2 * h2 * x).sum()
    elif name == "copy_":
        h2 = h * 1
        h2.copy_(s.repeat(2) * s.sum())
        y = (h2 * h2 * x).sum()
    elif name == "copy_ broadcast":
        h2 = x.view(2, 2) * 1
        h2.copy_(s * s)
        y = (h2 * h2).sum() * x.sum()
    elif name == "setitem basic":
        h[1:3] = s * s
        y = (h * h * x).sum()
    elif name == "setitem advanced":
        h[lib.tensor([3, 0])] = s * s * s
        y = (h * h * x).sum()
    elif name == "in place on a view":
        h[1:3].mul_(s * s)
        y = (h * h * x).sum()
    else:  # in place on a view of a view
        h2 = x.view(2, 2) * x.view(2, 2)
        h2[1][0:1].mul_(v * v)
        y = (h2 * h2).sum() * x.sum()
    return y, [x, v, s]


def _first_and_second(lib, name):
    y, inputs = _changed(lib, name)
    grads = lib.autograd.grad(y, inputs, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
    seconds = lib.autograd.grad(total, inputs, allow_unused=True)
    return [None if g is None else g.detach().numpy() for g in (*grads, *seconds)]


@pytest.mark.parametrize("name", ["fill_", "zero_", "fill_ with a tensor", "copy_",
                                  "copy_ broadcast", "setitem basic", "setitem advanced",
                                  "in place on a view", "in place on a view of a view"])
def test_second_derivatives_through_in_place_changes_match_pytorch(name, torch):
    ours, theirs = _first_and_second(mg, name), _first_and_second(torch, name)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9)
