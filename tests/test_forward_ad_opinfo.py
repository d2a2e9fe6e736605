"""Forward mode for every entry of the op registry (``tests/opinfo``) against PyTorch: inside
a dual level, each float input the entry differentiates carries a random (seeded) tangent;
the output's tangent must be PyTorch's (values, dtype, shape), with nothing recording
(``arrays``: the JVP rules on arrays) and with the inputs requiring grad (``tensors``: the
rules on Tensors, recorded), and for the in-place form where the entry has one. An op
PyTorch has no forward-mode formula for raises its NotImplementedError in both.

The meta-test: every Op class has a JVP rule (``jvp`` next to its ``backward``) or is
listed in ``NO_RULE`` with the reason it needs none.
"""

import numpy as np
import opinfo
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as mfw
import minigrad.nn
import minigrad.nn.functional  # (the Op classes nn defines)
from minigrad.ops import Op

# Op classes without a jvp of their own, and why none is needed.
NO_RULE = {
    # in-place nodes: Op.__init__ makes them, never Op.run; the in-place method itself
    # updates the tangent (tensor_inplace.py)
    "FillBackward0": "an in-place node: fill_ updates the tangent itself",
    "ZeroBackward0": "an in-place node: zero_ updates the tangent itself",
    "FillBackward2": "an in-place node: fill_ updates the tangent itself",
    "FillBackward3": "an in-place node: fill_ updates the tangent itself",
    "CopyBackwards": "an in-place node: copy_ updates the tangent itself",
    "ViewCopySlices": "an in-place node: the change through a view updates the tangent",
    "IndexPutBackward0": "an in-place node (x[key] = v)",
    "CopySlices": "an in-place node (x[key] = v)",
}

# The shared rules whose names read as rules (tangents.py): any other jvp is the class's own.
_BASE_JVP = Op.jvp


def _walk_op_classes():
    seen, todo = set(), [Op]
    while todo:
        for cls in todo.pop().__subclasses__():
            if cls.__module__.split(".")[0] == "minigrad" and cls not in seen:
                seen.add(cls)
                todo.append(cls)
    return seen


def test_every_op_class_has_a_jvp_rule_or_a_reason():
    missing = sorted({c.__name__ for c in _walk_op_classes()
                      if c.jvp is _BASE_JVP and c.__name__ not in NO_RULE
                      and c.__name__ not in opinfo.BASES})
    assert not missing, (f"{len(missing)} Op classes have no jvp: {', '.join(missing)}. Write "
                         "one next to backward (ops/op.py, 'Rules of a JVP') or list the class "
                         "in NO_RULE with the reason")
    stale = sorted(n for n in NO_RULE
                   if not any(c.__name__ == n for c in _walk_op_classes()))
    assert not stale, f"NO_RULE lists classes minigrad does not have: {stale}"


def _cases():
    params = []
    for entry in opinfo.entries():
        if not entry.backward:
            continue
        dtype = "float64" if "float64" in entry.dtypes else entry.dtypes[0]
        if dtype == "int64":
            continue
        for mode in ("arrays", "tensors", "inplace"):
            if mode == "inplace" and (entry.inplace is None or entry.lacks("inplace")):
                continue
            reason = entry.xfail.get("inplace") if mode == "inplace" else None
            marks = (pytest.mark.xfail(strict=True, reason=reason),) if reason else ()
            params.append(pytest.param(entry, dtype, mode, marks=marks, id=f"{entry.id}-{mode}"))
    return params


def _np(t):
    if getattr(t, "_is_zerotensor", lambda: False)():
        return np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""))
    return np.asarray(t.detach().numpy())


def _run(lib, fw, entry, arrays, tangents, mode):
    """The output's (primal, tangent), or the exception the call raised."""
    wanted = opinfo.wants_grad(entry, arrays)
    requires = mode != "arrays"
    with fw.dual_level():
        inputs = []
        for a, t, w in zip(arrays, tangents, wanted):
            x = lib.tensor(a, requires_grad=bool(w and requires and mode != "inplace"))
            inputs.append(fw.make_dual(x, lib.tensor(t)) if w else x)
        try:
            if mode == "inplace":
                clones = [x.clone() for x in inputs]
                out = entry.inplace(lib, *clones)
            else:
                out = entry.call(lib, *inputs)
        except NotImplementedError as e:
            return e
        primal, tangent = fw.unpack_dual(out)
        return _np(primal), None if tangent is None else _np(tangent)


@pytest.mark.parametrize("entry, dtype, mode", _cases())
def test_tangent_as_pytorch(torch, entry, dtype, mode):
    import torch.autograd.forward_ad as tfw

    arrays = opinfo.make_inputs(entry, dtype)
    rng = np.random.default_rng(3)
    tangents = [rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f" else None
                for a in arrays]
    try:
        theirs = _run(torch, tfw, entry, arrays, tangents, mode)
    except RuntimeError as e:
        if mode == "arrays" and "does not require grad" in str(e):
            pytest.skip("the entry's call is a first derivative: its inputs must require grad")
        raise
    ours = _run(mg, mfw, entry, arrays, tangents, mode)
    if isinstance(theirs, Exception):
        assert isinstance(ours, NotImplementedError), (
            f"PyTorch has no forward-mode formula here ({theirs}); minigrad gave {ours}")
        return
    assert not isinstance(ours, Exception), f"minigrad raised {ours!r}; PyTorch: {theirs}"
    rtol, atol = entry.tolerance(dtype)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=atol, equal_nan=True)
    t, tt = ours[1], theirs[1]
    if tt is None or t is None:  # no tangent on one side: zeros (or none) on the other
        other = tt if t is None else t
        assert other is None or not other.any(), f"tangent: minigrad {t}, PyTorch {tt}"
        return
    assert t.dtype == tt.dtype, f"tangent dtype {t.dtype} in minigrad, {tt.dtype} in PyTorch"
    assert t.shape == tt.shape, f"tangent shape {t.shape} in minigrad, {tt.shape} in PyTorch"
    np.testing.assert_allclose(t, tt, rtol=rtol, atol=atol, equal_nan=True,
                               err_msg="tangent")
