"""The checks generated from the op registry (``tests/opinfo``), and its meta-tests.

For each entry and dtype: forward value and dtype, first derivatives (random upstream
gradient), second derivatives where the op supports them, the in-place and the out= forms,
all against PyTorch. The meta-tests: every ``Op`` class of minigrad has an entry (or is a
declared base class), and each entry's call really puts a node of its class in the graph.
"""

import numpy as np
import opinfo
import pytest

import minigrad as mg

# the meta-test must see the Op classes that nn and nn.functional define
import minigrad.nn
import minigrad.nn.functional
from minigrad.ops import Op

CHECKS = ("forward", "grad", "gradgrad", "inplace", "out")
# forward: the value and dtype alone (integer dtypes, and ops PyTorch cannot differentiate);
# grad: the value, then the first derivatives for a random gradient of the output;
# gradgrad: first derivatives under create_graph, then a Hessian-vector product;
# inplace: the in-place form on clones of the inputs: its value and first derivatives;
# out: the out= form: the value, out itself returned, and the error when grad is needed.


def _params():
    params = []
    for entry in opinfo.entries():
        for dtype in entry.dtypes:
            for check in CHECKS:
                if check in ("grad", "gradgrad") and dtype == "int64":
                    continue
                if check in ("grad", "gradgrad", "inplace") and not entry.backward:
                    continue
                if check == "forward" and dtype != "int64" and entry.backward:
                    continue  # the grad check compares the forward value first
                if check == "gradgrad" and not entry.double:
                    continue
                if check in ("inplace", "out") and getattr(entry, check) is None:
                    continue
                marks = ()
                reason = (entry.xfail.get(check) or entry.xfail.get(f"{check}-{dtype}")
                          or entry.lacks(check))
                if reason:
                    marks = (pytest.mark.xfail(strict=True, reason=reason),)
                params.append(pytest.param(entry, dtype, check, marks=marks,
                                           id=f"{entry.id}-{dtype}-{check}"))
    return params


def _tensors(lib, entry, arrays, requires_grad=True):
    wanted = opinfo.wants_grad(entry, arrays)
    return [lib.tensor(a, requires_grad=bool(requires_grad and w)) for a, w in zip(arrays, wanted)]


def _np(t):
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's lazy zeros (abs'')
        return np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""))
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, dtype, entry, what):
    """ours and theirs hold the same values (and dtype and shape). A derivative that is
    None on one side must be all zeros on the other: PyTorch gives zeros or None for an
    input its graph reaches only through ops of slope 0, depending on how it is linked."""
    tol = entry.tolerance(dtype)
    if ours is None or theirs is None:
        other = _np(theirs if ours is None else ours)
        assert other is None or not other.any(), (
            f"{what}: minigrad {ours}, PyTorch {theirs}")
        return
    a, b = _np(ours), _np(theirs)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} in minigrad, {b.dtype} in PyTorch"
    assert a.shape == b.shape, f"{what}: shape {a.shape} in minigrad, {b.shape} in PyTorch"
    np.testing.assert_allclose(a, b, rtol=tol[0], atol=tol[1], equal_nan=True, err_msg=what)


def _upstream(out, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(tuple(out.shape)).astype(_np(out).dtype)


def _firsts(lib, entry, arrays, create_graph, inplace=False):
    inputs = _tensors(lib, entry, arrays)
    if inplace:
        clones = [t.clone() for t in inputs]
        out = entry.inplace(lib, *clones)
        assert out is clones[0], f"{lib.__name__}: the in-place form returns another tensor"
    else:
        out = entry.call(lib, *inputs)
    targets = [t for t in inputs if t.requires_grad]
    v = _upstream(out, 1)
    firsts = lib.autograd.grad(out, targets, grad_outputs=lib.tensor(v),
                               create_graph=create_graph, allow_unused=True)
    return inputs, out, targets, list(firsts)


def check_forward(torch, entry, dtype):
    arrays = opinfo.make_inputs(entry, dtype)
    ours = entry.call(mg, *_tensors(mg, entry, arrays, requires_grad=dtype != "int64"))
    theirs = entry.call(torch, *_tensors(torch, entry, arrays, requires_grad=dtype != "int64"))
    _same(ours, theirs, dtype, entry, "forward")


def check_grad(torch, entry, dtype, inplace=False):
    arrays = opinfo.make_inputs(entry, dtype)
    _, ours, _, g_ours = _firsts(mg, entry, arrays, False, inplace)
    _, theirs, _, g_theirs = _firsts(torch, entry, arrays, False, inplace)
    _same(ours, theirs, dtype, entry, "forward")
    for k, (a, b) in enumerate(zip(g_ours, g_theirs)):
        _same(a, b, dtype, entry, f"first derivative of input {k}")


def check_gradgrad(torch, entry, dtype):
    arrays = opinfo.make_inputs(entry, dtype)
    results = []
    for lib in (mg, torch):
        _, _, targets, firsts = _firsts(lib, entry, arrays, True)
        rng = np.random.default_rng(2)
        total = None
        for g, t in zip(firsts, targets):
            v = rng.standard_normal(tuple(t.shape)).astype(_np(t).dtype)
            if g is not None:
                term = (g * lib.tensor(v)).sum()
                total = term if total is None else total + term
        if total is None or not total.requires_grad:
            seconds = [None] * len(targets)
        else:
            seconds = lib.autograd.grad(total, targets, allow_unused=True)
        results.append((firsts, seconds))
    (f_ours, s_ours), (f_theirs, s_theirs) = results
    for k, (a, b) in enumerate(zip(f_ours, f_theirs)):
        _same(a, b, dtype, entry, f"first derivative (create_graph) of input {k}")
    for k, (a, b) in enumerate(zip(s_ours, s_theirs)):
        _same(a, b, dtype, entry, f"second derivative of input {k}")


def check_inplace(torch, entry, dtype):
    if dtype == "int64":
        arrays = opinfo.make_inputs(entry, dtype)
        res = [entry.inplace(lib, *_tensors(lib, entry, arrays, False)) for lib in (mg, torch)]
        _same(res[0], res[1], dtype, entry, "in-place result")
        return
    check_grad(torch, entry, dtype, inplace=True)


def check_out(torch, entry, dtype):
    arrays = opinfo.make_inputs(entry, dtype)
    results = []
    for lib in (mg, torch):
        inputs = _tensors(lib, entry, arrays, requires_grad=False)
        expected = entry.call(lib, *inputs)
        out = lib.zeros(tuple(expected.shape), dtype=expected.dtype)
        got = entry.out(lib, *inputs, out=out)
        assert got is out, f"{lib.__name__}: the out= form does not return out"
        results.append(out)
    _same(results[0], results[1], dtype, entry, "out=")
    if dtype != "int64" and any(opinfo.wants_grad(entry, arrays)):
        errors = []
        for lib, like in zip((mg, torch), results):  # out= and requires_grad: an error in both
            inputs = _tensors(lib, entry, arrays)
            out = lib.zeros(tuple(like.shape), dtype=like.dtype)
            with pytest.raises(Exception) as caught:
                entry.out(lib, *inputs, out=out)
            errors.append(caught.value)
        assert type(errors[0]) is type(errors[1]), (errors[0], errors[1])


@pytest.mark.parametrize("entry, dtype, check", _params())
def test_op(torch, entry, dtype, check):
    globals()[f"check_{check}"](torch, entry, dtype)


# ------------------------------------------------------------------------- meta-tests

def _op_classes():
    """Every Op class of minigrad (not of the tests), by name: {name: [classes]}, as they
    stand after importing minigrad (once, when this module is imported). Classes made
    later, while ops run (einsum's and var_mean's nodes renamed as PyTorch's), are
    subclasses of classes that have entries, and would make the test depend on order."""
    return _AT_IMPORT


def _walk_op_classes():
    seen, todo = set(), [Op]
    while todo:
        for cls in todo.pop().__subclasses__():
            if cls.__module__.split(".")[0] == "minigrad" and cls not in seen:
                seen.add(cls)
                todo.append(cls)
    named = {}
    for cls in seen:
        named.setdefault(cls.__name__, []).append(cls)
    return named


_AT_IMPORT = _walk_op_classes()


def test_every_op_class_has_an_entry():
    classes = _op_classes()
    missing = sorted(n for n in classes if n not in opinfo.REGISTRY and n not in opinfo.BASES)
    assert not missing, (f"{len(missing)} Op classes have no entry in tests/opinfo: "
                         f"{', '.join(missing)}. Add one per class (opinfo.op(name, call, ...)) "
                         "in the family's module, or opinfo.base(name, reason) for a base class "
                         "that is never a node itself.")


def test_every_declared_base_is_a_base():
    classes = _op_classes()
    for name in opinfo.BASES:
        assert name in classes, f"{name} is declared a base class but minigrad has no such Op"
        assert any(c.__subclasses__() for c in classes[name]), (
            f"{name} is declared a base class but has no subclass: give it an entry instead")


def test_no_entry_for_a_class_minigrad_does_not_have():
    stale = sorted(set(opinfo.REGISTRY) - set(_op_classes()))
    assert not stale, f"entries for Op classes minigrad no longer has: {stale}"


@pytest.mark.parametrize("entry", opinfo.entries(), ids=lambda e: e.id)
def test_the_entry_exercises_its_op(entry):
    dtype = "float64" if "float64" in entry.dtypes else entry.dtypes[0]
    arrays = opinfo.make_inputs(entry, dtype)
    out = entry.call(mg, *_tensors(mg, entry, arrays))
    names = opinfo.node_names(out)
    assert entry.name in names, (f"entry {entry.id} claims {entry.name}, but its graph has only "
                                 f"{sorted(names)}")
    if (entry.inplace is not None and dtype != "int64" and not entry.lacks("inplace")
            and "inplace" not in entry.xfail):
        inputs = _tensors(mg, entry, arrays)
        names = opinfo.node_names(entry.inplace(mg, *[t.clone() for t in inputs]))
        assert len(names) > 1, f"the in-place form of {entry.id} records nothing: {names}"


# ------------------------------------------------- corner values catch a wrong formula

def _hardswish(wrong_at_minus_3):
    """hardswish written from outside as an Op, its slope right, or wrong at exactly -3."""

    class HardswishBackward0(Op):  # x relu6(x + 3) / 6
        def forward(self, a):
            self.save_for_backward(a)
            return a * np.clip(a + 3, 0, 6) / 6

        def backward(self, grad, a):  # PyTorch's: 0 up to -3 included, 1 from 3 on
            inside = (a >= -3) if wrong_at_minus_3 else (a > -3)
            return grad * np.where(a >= 3, 1.0, np.where(inside, a / 3 + 0.5, 0.0))

    return lambda x: HardswishBackward0.run((x,))


HARDSWISH = {"call": lambda lib, x: lib.nn.functional.hardswish(x), "dtypes": ("float64",),
             "double": False}


@pytest.mark.parametrize("wrong", [False, True])
def test_hardswish_corners_catch_a_formula_wrong_at_minus_3(torch, monkeypatch, wrong):
    """The bug issue 25 tells of: hardswish's slope wrong at exactly x = -3 passed every
    table. An entry with its corners (-3 and 3) catches it; a random sample alone does not."""
    monkeypatch.setattr(mg.nn.functional, "hardswish", _hardswish(wrong), raising=False)
    with_corners = opinfo.OpInfo("HardswishBackward0", corners=(-3.0, 3.0), **HARDSWISH)
    random_only = opinfo.OpInfo("HardswishBackward0", domain=(-5.0, 5.0), **HARDSWISH)
    check_grad(torch, random_only, "float64")  # passes, right or wrong: -3 is never drawn
    if wrong:
        with pytest.raises(AssertionError, match="first derivative of input 0"):
            check_grad(torch, with_corners, "float64")
    else:
        check_grad(torch, with_corners, "float64")


def test_a_registry_entry_catches_hardtanh_wrong_at_its_bounds(torch, monkeypatch):
    """Break a real op (slope 1 at the bounds too, where PyTorch's is 0): its registry entry
    fails, at the corner values; the entry passes again once the patch is undone."""
    [entry] = [e for e in opinfo.REGISTRY["HardtanhBackward0"] if not e.tag]
    [cls] = _op_classes()["HardtanhBackward0"]

    def inclusive(self, grad, a):
        return grad * ((a >= self.low) & (a <= self.high))

    with monkeypatch.context() as patch:
        patch.setattr(cls, "backward", inclusive)
        with pytest.raises(AssertionError, match="first derivative of input 0"):
            check_grad(torch, entry, "float64")
    check_grad(torch, entry, "float64")


@pytest.mark.parametrize("entry", [e for e in opinfo.entries() if e.torch_node],
                         ids=lambda e: e.id)
def test_pytorch_names_the_node_alike(torch, entry):
    """The same call in PyTorch has a node of the same name (minigrad's nodes are named
    like PyTorch's), or of the name the entry gives as ``torch_node``."""
    dtype = "float64" if "float64" in entry.dtypes else entry.dtypes[0]
    arrays = opinfo.make_inputs(entry, dtype)
    names = opinfo.node_names(entry.call(torch, *_tensors(torch, entry, arrays)))
    assert entry.torch_node in names, (f"PyTorch's graph for {entry.id} has no "
                                       f"{entry.torch_node}: {sorted(names)}")
