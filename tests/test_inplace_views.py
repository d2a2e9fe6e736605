"""In-place changes through views, against PyTorch (issue 28; chapter 5's views and chapter
4's in-place rules).

Every view op the package has, times several in-place ops: the changed values, the
gradients of every input (the tensor viewed, the right-hand side, a view taken before the
change and used after it), and the names of the nodes PyTorch puts in the graph
(``CopySlices`` on the tensor that owns the memory, ``AsStridedBackward0`` on its views).
Then the changes PyTorch refuses, with its exception types and messages.
"""

import sys

import numpy as np
import pytest

import minigrad as mg

# name -> the view of a (3, 4) tensor ``h``
VIEWS = {
    "h[1]": lambda h: h[1],
    "h[ix] (a 0-dim index)": lambda h: h[_index(h)],
    "h[:, 1:3]": lambda h: h[:, 1:3],
    "h[1, 2]": lambda h: h[1, 2],
    "h[::2, ::3]": lambda h: h[::2, ::3],
    "h[None, 1]": lambda h: h[None, 1],
    "h[..., 0]": lambda h: h[..., 0],
    "select(1, 2)": lambda h: h.select(1, 2),
    "narrow(1, 1, 2)": lambda h: h.narrow(1, 1, 2),
    "reshape(2, 6)": lambda h: h.reshape(2, 6),
    "view(12)": lambda h: h.view(12),
    "view(-1)[3:9]": lambda h: h.view(-1)[3:9],
    "flatten()": lambda h: h.flatten(),
    ".T": lambda h: h.T,
    "t()": lambda h: h.t(),
    "transpose(0, 1)": lambda h: h.transpose(0, 1),
    "permute(1, 0)": lambda h: h.permute(1, 0),
    "mT": lambda h: h.mT,
    "movedim(0, 1)": lambda h: h.movedim(0, 1),
    "unsqueeze(1)": lambda h: h.unsqueeze(1),
    "unsqueeze(0).squeeze(0)": lambda h: h.unsqueeze(0).squeeze(0),
    "squeeze() of [:1]": lambda h: h[:1].squeeze(),
    "diagonal()": lambda h: h.diagonal(),
    "diagonal(1)": lambda h: h.diagonal(1),
    "expand(3, 4)": lambda h: h.expand(3, 4),
    "view_as": lambda h: h.view_as(h),
    "T[1:, :2] (a view of a view)": lambda h: h.T[1:, :2],
    "view(2, 6).T[::2]": lambda h: h.view(2, 6).T[::2],
}


def _index(h):
    """A 0-dim integer tensor picked out of another tensor (``dC[ix]``, issue 28)."""
    lib = mg if isinstance(h, mg.Tensor) else sys.modules["torch"]
    return lib.tensor([2, 1])[0]


# name -> the change of the view ``v``, with ``e`` (a tensor of v's shape, requires grad)
CHANGES = {
    "mul_(2)": lambda v, e: v.mul_(2),
    "add_(e)": lambda v, e: v.add_(e),
    "+= e": lambda v, e: v.__iadd__(e),
    "mul_(e)": lambda v, e: v.mul_(e),
    "mul_(v)": lambda v, e: v.mul_(v),
    "div_(e)": lambda v, e: v.div_(e),
    "sub_(e, alpha=2)": lambda v, e: v.sub_(e, alpha=2),
    "zero_()": lambda v, e: v.zero_(),
    "fill_(1.5)": lambda v, e: v.fill_(1.5),
    "copy_(e)": lambda v, e: v.copy_(e),
    "clamp_(-1, 1)": lambda v, e: v.clamp_(-1, 1),
    "relu_()": lambda v, e: v.relu_(),
    "exp_()": lambda v, e: v.exp_(),
    "v[...] = e": lambda v, e: v.__setitem__(..., e),
    "masked_fill_": lambda v, e: v.masked_fill_(e > 0, 3.0),
    "addcmul_(e, e)": lambda v, e: v.addcmul_(e, e, value=0.5),
}


def _run(lib, view, change, base_in_graph=True, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((3, 4))
    a = lib.tensor(data, requires_grad=True)
    if base_in_graph:
        h = a * 2
    else:
        h = lib.tensor(data * 2)
    w = h[:, 1]  # an earlier view, used after the change
    v = view(h)
    e = lib.tensor(rng.standard_normal(tuple(v.shape)) + 0.5, requires_grad=True)
    out = change(v, e)
    assert out is v or out is None
    y = (h * h * lib.tensor(rng.standard_normal((3, 4)))).sum() + (w * w).sum() + (v ** 3).sum()
    y.backward()
    names = (h.grad_fn.name(), v.grad_fn.name(), w.grad_fn.name())
    return {"h": h.detach().numpy().copy(), "a.grad": a.grad.numpy() if a.grad is not None
            else None, "e.grad": None if e.grad is None else e.grad.numpy(),
            "names": names}


def _outcome(lib, *args, **kwargs):
    """``_run``'s result, or the error it raised: where PyTorch refuses (a saved value was
    changed: ``v.mul_(v)`` saves ``v``, then changes it), minigrad must refuse alike."""
    try:
        return _run(lib, *args, **kwargs)
    except RuntimeError as error:
        return {"error": str(error).split(":")[0]}


def _compare(ours, theirs):
    assert ("error" in ours) == ("error" in theirs), (ours.get("error"), theirs.get("error"))
    if "error" in theirs:
        assert ours["error"] == theirs["error"]
        return
    for key in ("h", "a.grad", "e.grad"):
        mine, its = ours[key], theirs[key]
        if its is None or mine is None:  # a gradient PyTorch leaves out is 0 in minigrad
            other = its if mine is None else mine
            assert other is None or not np.asarray(other).any(), key
            continue
        assert mine.dtype == its.dtype, key
        np.testing.assert_allclose(mine, its, rtol=1e-10, atol=1e-12, err_msg=key)
    assert [n.split("::")[-1] for n in ours["names"]] == \
        [n.split("::")[-1] for n in theirs["names"]]


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_a_change_through_a_view_matches_pytorch(torch, view, change):
    _compare(_outcome(mg, view, change), _outcome(torch, view, change))


@pytest.mark.parametrize("change", ["add_(e)", "copy_(e)", "v[...] = e", "mul_(e)"])
@pytest.mark.parametrize("view", ["h[1]", ".T", "view(-1)[3:9]", "diagonal()", "h[ix] (a 0-dim index)"])
def test_a_change_through_a_view_of_a_tensor_outside_the_graph_matches_pytorch(torch, view,
                                                                                change):
    """The tensor viewed does not require grad: the change puts it (and its views) in the
    graph, as in PyTorch."""
    v, c = VIEWS[view], CHANGES[change]
    _compare(_outcome(mg, v, c, base_in_graph=False), _outcome(torch, v, c, base_in_graph=False))


def test_dc_ix_plus_equals_demb_is_recorded_as_pytorch_records_it(torch):
    """The program of issue 28 (makemore's manual backprop): ``dC[ix] += demb[k, j]`` with
    ``ix`` a 0-dim integer tensor picked from another tensor."""
    results = []
    for lib in (mg, torch):
        gen = np.random.default_rng(3)
        C = lib.tensor(gen.standard_normal((5, 2)), requires_grad=True)
        X = lib.tensor([[1, 3, 0], [4, 4, 2]])
        demb = lib.tensor(gen.standard_normal((2, 3, 2)), requires_grad=True)
        dC = C * 0
        for k in range(X.shape[0]):
            for j in range(X.shape[1]):
                ix = X[k, j]
                dC[ix] += demb[k, j]
        (dC * dC).sum().backward()
        results.append((dC.detach().numpy(), C.grad.numpy(), demb.grad.numpy(),
                        dC.grad_fn.name().split("::")[-1]))
    for mine, its in zip(*results):
        if isinstance(its, str):
            assert mine == its
        else:
            np.testing.assert_allclose(mine, its, rtol=1e-12)


def test_a_chain_of_changes_through_several_views_matches_pytorch(torch):
    """Several views of one tensor, each changed in turn, each used before and after."""
    results = []
    for lib in (mg, torch):
        rng = np.random.default_rng(7)
        a = lib.tensor(rng.standard_normal((4, 4)), requires_grad=True)
        e = lib.tensor(rng.standard_normal(4), requires_grad=True)
        h = a * 3
        row, col, diag, flat = h[1], h[:, 2], h.diagonal(), h.view(16)
        y = (row * 2).sum() + col.sum()
        row.mul_(e)
        z = (col * 3).sum()
        diag.add_(row)
        flat[::3].clamp_(-0.5, 0.5)
        col.copy_(e.exp())
        loss = y + z + (h ** 2).sum() + (row * diag).sum() + flat.sum()
        loss.backward()
        results.append((h.detach().numpy(), a.grad.numpy(), e.grad.numpy()))
    for mine, its in zip(*results):
        np.testing.assert_allclose(mine, its, rtol=1e-10, atol=1e-12)


def test_second_derivatives_through_a_change_of_a_view_match_pytorch(torch):
    results = []
    for lib in (mg, torch):
        rng = np.random.default_rng(5)
        a = lib.tensor(rng.standard_normal((3, 3)), requires_grad=True)
        e = lib.tensor(rng.standard_normal(3), requires_grad=True)
        h = a * a
        h.T[1].mul_(e)
        h.diagonal().add_(e * e)
        y = (h ** 3).sum()
        ga, ge = lib.autograd.grad(y, (a, e), create_graph=True)
        second = lib.autograd.grad((ga * ga).sum() + (ge ** 3).sum(), (a, e))
        results.append([ga.detach().numpy(), ge.detach().numpy()]
                       + [g.numpy() for g in second])
    for mine, its in zip(*results):
        np.testing.assert_allclose(mine, its, rtol=1e-9, atol=1e-12)


def _random_program(lib, picks, seed):
    views, changes = list(VIEWS.values()), list(CHANGES.values())
    gen = np.random.default_rng(100 + seed)
    a = lib.tensor(gen.standard_normal((3, 4)), requires_grad=True)
    h = a.sin()
    total, made = 0, []
    for i, j in picks:
        v = views[i](h)
        e = lib.tensor(gen.standard_normal(tuple(v.shape)) + 0.5, requires_grad=True)
        total = total + (v * 3).sum()  # (saves nothing that changes later)
        changes[j](v, e)
        total = total + (v * 2).sum()
        made.append(v)
    for k, v in enumerate(made):  # each view, used after every change
        total = total + v.sum() * (k + 1)
    try:
        (total + (h ** 2).sum()).backward()
    except RuntimeError as error:  # a saved value changed by a later change: both refuse
        return str(error).split(":")[0]
    return h.detach().numpy(), a.grad.numpy()


def test_random_programs_of_views_and_changes_match_pytorch(torch):
    """A seeded loop: random chains of view ops, random changes, random right-hand sides,
    and views used before and after each change."""
    ran = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        picks = [(int(rng.integers(len(VIEWS))), int(rng.integers(len(CHANGES))))
                 for _ in range(3)]
        ours, theirs = _random_program(mg, picks, seed), _random_program(torch, picks, seed)
        if isinstance(theirs, str):
            assert ours == theirs, picks
            continue
        ran += 1
        for mine, its in zip(ours, theirs):
            np.testing.assert_allclose(mine, its, rtol=1e-10, atol=1e-12, err_msg=str(picks))
    assert ran >= 30  # most programs run to the end (the test compares gradients)


# ----------------------------------------------------------------- what PyTorch refuses

REFUSED = {
    "a view of a leaf": "a = lib.ones(3, 4, requires_grad=True); a.T.mul_(2)",
    "a view of a view of a leaf": "a = lib.ones(3, 4, requires_grad=True); a[1][2:].zero_()",
    "a reshape of a leaf": "a = lib.ones(3, 4, requires_grad=True); a.view(12).add_(1)",
    "a view made in no_grad": ("h = lib.ones(3, 4, requires_grad=True) * 1\n"
                               "with lib.no_grad():\n    v = h[0]\nv.add_(e)"),
    "a view of one made in no_grad": ("h = lib.ones(3, 4) \nwith lib.no_grad():\n"
                                      "    v = h[0]\nv[1:].copy_(e[1:])"),
    "unbind": "h = lib.ones(3, 4, requires_grad=True) * 1; h.unbind(0)[1].mul_(2)",
    "unbind of a tensor outside the graph": "h = lib.ones(4, 4); h.unbind(1)[0].copy_(e)",
    "split": "h = lib.ones(4, 4, requires_grad=True) * 1; h.split(2)[1].mul_(2)",
    "split with sizes": "h = lib.ones(4, 4, requires_grad=True) * 1; h.split([1, 3], 1)[0].zero_()",
    "chunk": "h = lib.ones(4, 4, requires_grad=True) * 1; h.chunk(2)[0].add_(e)",
    "expand (one element seen twice)": "h = lib.ones(4, requires_grad=True) * 1; "
                                       "h.expand(3, 4).mul_(2)",
    "expand of a tensor outside the graph": "h = lib.ones(4); h.expand(3, 4).add_(e)",
    "fill_ of an expanded view with a tensor": "h = lib.ones(4); h.expand(3, 4).fill_(e[0])",
    "backward through zero_ of an expanded view": "h = lib.ones(4, requires_grad=True) * 1; "
                                                   "v = h.expand(3, 4); v.zero_(); "
                                                   "h = h.detach() + 1; v.sum().backward()",
}


@pytest.mark.parametrize("statement", REFUSED.values(), ids=REFUSED.keys())
def test_a_change_pytorch_refuses_raises_its_error(torch, statement):
    errors = []
    for lib in (mg, torch):
        scope = {"lib": lib, "e": lib.ones(4, requires_grad=True)}
        with pytest.raises(Exception) as info:
            exec(statement, scope)
        errors.append(info.value)
        if "h" in scope:  # nothing changed
            assert (scope["h"].detach().numpy() == 1).all()
    assert type(errors[0]) is type(errors[1])
    ours, theirs = str(errors[0]), str(errors[1])
    assert ours.split(". ")[0].split(" (")[0] == theirs.split(". ")[0].split(" (")[0], (ours, theirs)


@pytest.mark.parametrize("statement", [
    "h = lib.ones(3, 4, requires_grad=True) * 1; h.unbind(0)[1].mul_(2)",
    "h = lib.ones(4, 4, requires_grad=True) * 1; h.split(2)[1].zero_()",
    "h = lib.ones(3, 4, requires_grad=True); h.T.mul_(2); h[0].zero_()",
])
def test_the_same_changes_under_no_grad_are_made_and_not_recorded(torch, statement):
    results = []
    for lib in (mg, torch):
        scope = {"lib": lib}
        with lib.no_grad():
            exec(statement, scope)
        results.append((scope["h"].detach().numpy(), scope["h"].grad_fn is None))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def test_the_views_of_a_tensor_are_forgotten_once_they_are_gone():
    """The views a recorded change must remake are held weakly: a weight viewed at every
    step keeps a short list."""
    h = mg.ones(3, 4) * 1
    for _ in range(1000):
        h[0].sum()
        h.T.sum()
    kept = h._version_counter.views
    assert kept is not None and len(kept) < 64
    live = [r() for r in kept if r() is not None]
    assert live == []
