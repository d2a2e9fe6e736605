"""Indexing against PyTorch: which dims a mixed index gives and in what order, gradients,
assignment, empty indices, the indices PyTorch refuses, and in-place changes through views.

PyTorch does not read an index as numpy does: an integer selects its dim first and never
counts as an advanced index, so ``x[0, :, [1, 0]]`` of a (2, 3, 4) tensor has shape (3, 2)
in PyTorch and (2, 3) in numpy. Every case here runs the same code with ``lib`` = minigrad
and ``lib`` = torch and compares the two.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

R = np.random.default_rng(2024)
SHAPE = (2, 3, 4)

# Index expressions on ``a``, a float64 tensor of shape (2, 3, 4) that requires grad.
GETITEM = [
    # basic: views
    "a[1]", "a[-1]", "a[1, 2]", "a[1, 2, 3]", "a[:, 1]", "a[..., 0]", "a[0, ..., 1]",
    "a[None]", "a[:, None]", "a[None, 0, :, 1]", "a[..., None]", "a[1:, ::2]",
    "a[lib.tensor(1)]", "a[lib.tensor(1), 2]", "a[-2:, -1]", "a[:]", "a[...]",
    # integer arrays (lists, tensors, negative positions, repeats)
    "a[[1, 0]]", "a[[1, 1, 0]]", "a[lib.tensor([1, 0, 1])]", "a[[-1, 0]]",
    "a[lib.tensor([[1, 0], [0, 0]])]", "a[:, [2, 0, 2]]", "a[..., [3, -1]]",
    "a[[0, 1], [2, 0]]", "a[[0, 1], :, [3, 0]]", "a[:, [0, 1], [3, 0]]",
    "a[[[0], [1]], [0, 2]]", "a[lib.tensor([1, 0], dtype=lib.int32)]",
    # ints with arrays: the int selects first, the arrays' dims go where PyTorch puts them
    "a[0, :, [1, 0]]", "a[0, :, [0, 1, 2]]", "a[1, [2, 0]]", "a[[1, 0], :, 0]",
    "a[[1, 0], 0, :]", "a[[1, 0], 0, [1, 2]]", "a[:, 0, [1, 2]]", "a[-1, :, [-1, 0]]",
    "a[0, ..., [1, 0]]", "a[None, 0, :, [1, 0]]", "a[0, None, :, [1, 0]]",
    "a[lib.tensor(0), :, [1, 0]]", "a[1, [[0, 1], [2, 2]], 1:3]", "a[[0, 1], None, 2]",
    "a[1:, 0, [3, 1]]", "a[0, [0, 2], None]", "a[0, [0, 2]][:, [1, 1, 3]]",
    # bool masks and Python bools
    "a[a > 0]", "a[:, (a > 0)[0]]", "a[..., (a > 0)[0, 0]]", "a[[0], ..., [1]]", "a[0][a[0] > 0]", "a[lib.tensor([True, False])]",
    "a[:, lib.tensor([True, False, True])]", "a[0, lib.tensor([True, False, True])]",
    "a[lib.tensor([True, False]), 1, [0, 3]]", "a[lib.tensor([True, True]), :, [0, 3]]",
    "a[True]", "a[False]", "a[True, 0, [1, 0]]", "a[0, True, [1, 0]]", "a[0, :, True]",
    "a[[0], :, True]", "a[lib.tensor(True)]", "a[[True, False]]",
    # empty
    "a[[]]", "a[[], :]", "a[:, []]", "a[0, []]", "a[a > 100]", "a[lib.tensor([], dtype=lib.int64)]",
    "a[:, lib.zeros(0, dtype=lib.int64), 1]",
    # a list read as a tuple (PyTorch's old numpy rule)
    "a[[0, slice(None), [1, 0]]]", "a[[lib.tensor(1), lib.tensor(2)]]",
]


def _grad_fn_name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _run_index(lib, expression, upstream):
    a = lib.tensor(R_DATA.copy(), dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the list-read-as-a-tuple deprecation
        out = eval(expression, {"lib": lib, "a": a})
    if out.numel():
        out.backward(lib.tensor(upstream))
    else:
        out.sum().backward()
    return out, a.grad


R_DATA = R.standard_normal(SHAPE)


@pytest.mark.parametrize("expression", GETITEM)
def test_getitem_matches_pytorch(expression, torch):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the list-read-as-a-tuple deprecation
        shape = tuple(eval(expression, {"lib": torch, "a": torch.tensor(R_DATA)}).shape)
    upstream = np.random.default_rng(len(expression)).standard_normal(shape)
    ours, our_grad = _run_index(mg, expression, upstream)
    theirs, their_grad = _run_index(torch, expression, upstream)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-12)
    assert _grad_fn_name(ours) == _grad_fn_name(theirs)


# ``x[key] = v`` on a non-leaf ``x`` (in the graph) with a value that requires grad.
SETITEM = [
    ("[1]", (3, 4)), ("[1, 2]", ()), ("[:, 1]", (2, 4)), ("[..., 0]", (1, 3)), ("[1:]", (4,)),
    ("[[1, 0]]", (2, 3, 4)), ("[[1, 0]]", (4,)), ("[0, :, [1, 0]]", (3, 2)),
    ("[0, :, [1, 0]]", (2,)), ("[[1, 0], :, 0]", (2, 3)), ("[:, [0, 2], [3, 1]]", (2, 2)),
    ("[[0, 1], :, [3, 0]]", (2, 3)), ("[1, [2, 0]]", (2, 4)), ("[None, 0, :, [1, 0]]", (1, 3, 2)),
    ("[x.detach() > 0]", ()), ("[lib.tensor([True, False])]", (3, 4)), ("[[]]", (0, 3, 4)),
    ("[[]]", ()), ("[0, []]", (4,)), ("[0]", (1, 3, 4)), ("[lib.tensor(1), :, [1, 0]]", (3, 2)),
]


def _run_setitem(lib, key, value_shape):
    a = lib.tensor(R_DATA.copy(), dtype=lib.float64, requires_grad=True)
    v = lib.tensor(np.arange(1.0, 1 + int(np.prod(value_shape))).reshape(value_shape),
                   dtype=lib.float64, requires_grad=True)
    x = a * 2
    exec(f"x{key} = v", {"lib": lib, "x": x, "v": v})
    (x * lib.tensor(np.arange(x.numel()).reshape(x.shape) % 7 - 3.0)).sum().backward()
    return x, a.grad, v.grad


@pytest.mark.parametrize("key, value_shape", SETITEM)
def test_setitem_matches_pytorch(key, value_shape, torch):
    ours = _run_setitem(mg, key, value_shape)
    theirs = _run_setitem(torch, key, value_shape)
    for mine, its in zip(ours, theirs):
        assert tuple(mine.shape) == tuple(its.shape)
        np.testing.assert_allclose(mine.detach().numpy(), its.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("statement", [
    "x[[1, 1, 0]] = lib.tensor([7.0, 8.0, 9.0]).reshape(3, 1, 1)",  # repeats: the last stays
    "x[0, :, [1, 0]] = lib.arange(6.0).reshape(3, 2)",
    "x[[1, 0], :, 0] = lib.arange(6.0).reshape(2, 3)",
    "x[x > 0] = 5",
    "x[x > 0] = lib.tensor(5, dtype=lib.int64)",                   # masked_fill: any dtype
    "x[1, 2] = lib.tensor(3, dtype=lib.int64)",                    # copy_: any dtype
    "x[[]] = 4.0",
    "x[:, []] = lib.zeros(2, 0, 4)",
    "x[True] = 2.0",
    "x[False] = 2.0",
])
def test_assignment_without_grad_matches_pytorch(statement, torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor(R_DATA.astype(np.float32))
        exec(statement, {"lib": lib, "x": x})
        results.append(x.numpy())
    np.testing.assert_array_equal(*results)


# ------------------------------------------------------------------ refused, as in PyTorch

@pytest.mark.parametrize("statement", [
    "a[::-1]", "a[:, ::-2]", "a[::0]", "a[1.5]", "a[lib.tensor([0.0])]", "a[5]", "a[:, -4]",
    "a[[2]]", "a[0, 0, 0, 0]", "a[lib.tensor([True, False, True])]",
    "a[:, lib.tensor([True, False])]", "a[lib.tensor([], dtype=lib.bool)]",
    "a[lib.tensor([True, True, False]), 0]", "a[False, [0, 1]]", "a[[0, 1], [0, 1, 2]]",
    "a.permute()", "a.permute(0, 1)", "a.permute(0, 0, 1)", "a.permute(0, 1, 3)",
    "a.expand(-1, 2, 3, 4)", "a.expand(3, 4)", "a.expand()", "a[0].expand(-1, -1, 4)",
    "lib.zeros(3).expand(-1, 3)",
])
def test_refused_with_pytorchs_exception_type(statement, torch):
    errors = []
    for lib in (mg, torch):
        a = lib.tensor(R_DATA.copy())
        with pytest.raises(Exception) as info:
            eval(statement, {"lib": lib, "a": a})
        errors.append(type(info.value))
    assert errors[0] is errors[1], f"minigrad raised {errors[0]}, PyTorch {errors[1]}"


@pytest.mark.parametrize("statement", [
    "x[::-1] = 0", "x[0, ::-1] = lib.zeros(3, 4)", "x[[0, 1], ::-1] = 0",
    "x[lib.tensor([True, False, True])] = 0", "x[[0, 5]] = 1",
    "x[[0]] = lib.tensor([1], dtype=lib.int64)",  # index_put wants the tensor's dtype
    "x[0] = lib.zeros(4, 3)",
])
def test_refused_assignment_changes_nothing(statement, torch):
    errors = []
    for lib in (mg, torch):
        x = lib.tensor(R_DATA.copy())
        with pytest.raises(Exception) as info:
            exec(statement, {"lib": lib, "x": x})
        errors.append(type(info.value))
        if lib is mg:  # PyTorch may have written part of x[[0, 5]] = 1 before it noticed
            np.testing.assert_array_equal(x.numpy(), R_DATA)
    assert errors[0] is errors[1], f"minigrad raised {errors[0]}, PyTorch {errors[1]}"


def test_refusals_say_what_is_wrong():
    x = mg.arange(6.0)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(TypeError, match="permute.*dims"):
        x.permute()
    with pytest.raises(RuntimeError, match="leading, non-existing dimension 0"):
        x.expand(-1, 6)
    with pytest.raises(IndexError, match=r"mask \[2\] at index 0 .* tensor \[6\] at index 0"):
        x[mg.tensor([True, False])]
    assert mg.tensor(2.0).T.shape == () and mg.ones(2, 3).T.shape == (3, 2)  # T still works


def test_a_list_read_as_a_tuple_warns_as_in_pytorch(torch):
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="non-tuple sequence"):
            lib.arange(6.0).reshape(2, 3)[[0, [1]]]


# ------------------------------------------------------------------ random indices

def _index_items(shape):
    """A strategy for index tuples into ``shape``: ints, slices (positive steps), None, at
    most one Ellipsis, int lists (with negative positions and repeats) and bool masks."""
    def for_dim(n):
        options = [st.integers(-n, n - 1),
                   st.builds(slice, st.integers(-n - 1, n + 1) | st.none(),
                             st.integers(-n - 1, n + 1) | st.none(), st.integers(1, 3) | st.none()),
                   st.lists(st.integers(-n, n - 1), min_size=0, max_size=3),
                   st.lists(st.booleans(), min_size=n, max_size=n).map(lambda m: ("mask", m))]
        return st.one_of(*options)

    @st.composite
    def items(draw):
        dims = draw(st.integers(0, len(shape)))
        out = [draw(for_dim(n)) for n in shape[:dims]]
        for _ in range(draw(st.integers(0, 2))):
            out.insert(draw(st.integers(0, len(out))), None)
        if draw(st.booleans()):
            out.insert(draw(st.integers(0, len(out))), Ellipsis)
        return out
    return items()


def _as_key(lib, items):
    key = []
    for item in items:
        if isinstance(item, tuple):
            key.append(lib.tensor(item[1], dtype=lib.bool))
        elif isinstance(item, list):
            key.append(lib.tensor(item, dtype=lib.int64))
        else:
            key.append(item)
    return tuple(key)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_indices_match_pytorch(torch, data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple))
    items = data.draw(_index_items(shape))
    values = np.arange(float(np.prod(shape))).reshape(shape)
    results = []
    for lib in (mg, torch):
        a = lib.tensor(values, requires_grad=True)
        try:
            out = a[_as_key(lib, items)]
        except Exception as error:  # the same refusal on both sides
            results.append(type(error))
            continue
        weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy()))
    ours, theirs = results
    if ours is IndexError and not isinstance(theirs, type) and theirs[0].size == 0:
        return  # PyTorch checks positions only while it fills the result: none if it is empty
    if isinstance(theirs, type) or isinstance(ours, type):
        assert ours is theirs
        return
    assert ours[0].shape == theirs[0].shape
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])

    assigned = []  # x[key] = v, recorded: x's values, then the gradients of a and v
    for lib in (mg, torch):
        a = lib.tensor(values, requires_grad=True)
        v = lib.tensor(-1.5, dtype=lib.float64, requires_grad=True)
        x = a * 1
        x[_as_key(lib, items)] = v
        (x * lib.tensor(np.arange(x.numel(), dtype=np.float64).reshape(shape))).sum().backward()
        assigned.append([x.detach().numpy(), a.grad.numpy(), v.grad.numpy()])
    for mine, its in zip(*assigned):
        np.testing.assert_array_equal(mine, its)


# ------------------------------------------------------------------ views changed in place

VIEW_UPDATES = [
    "t[0].fill_(7)", "t[1].zero_()", "t[1].add_(2)", "t[1:3].mul_(2)", "t[:, 0] += 1",
    "t[0][1] = 5", "t.T[0] += 3", "t[0, :].copy_(lib.tensor([4.0, 5.0, 6.0]))",
    "t[lib.tensor(1)] += lib.tensor([1.0, 2.0, 3.0])", "t[1:][0].div_(4)",
    "t.view(-1)[2] = 9", "t.reshape(3, 2)[0].sub_(1)", "t[[0, 1]] += 3",
    "t[t > 0.5].fill_(3)",  # advanced indexing copies: t stays as it was
    "t[0, 1].clamp_(max=-1)", "t.unsqueeze(0)[0, 1, 2] = -4", "t[0].uniform_(0, 0)",
]


@pytest.mark.parametrize("statement", VIEW_UPDATES)
def test_in_place_on_a_view_changes_the_base_as_in_pytorch(statement, torch):
    results = []
    for lib in (mg, torch):
        t = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        exec(statement, {"lib": lib, "t": t})
        results.append(t.numpy())
    np.testing.assert_array_equal(*results)


def test_one_element_of_a_1d_tensor_is_a_view():
    t = mg.arange(3.0)
    element = t[1]
    assert element.shape == () and np.shares_memory(element.numpy(), t.numpy())
    element.fill_(7)
    assert t.tolist() == [0.0, 7.0, 2.0]


def _manual_embedding_backward(lib):
    """The manual backprop exercise of a well-known lecture (makemore, part 4)."""
    gen = np.random.default_rng(5)
    Xb = lib.tensor(gen.integers(0, 27, (32, 3)))
    demb = lib.tensor(gen.standard_normal((32, 3, 10)))
    dC = lib.zeros(27, 10, dtype=lib.float64)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]
    dC_vectorised = lib.zeros(27, 10, dtype=lib.float64)
    dC_vectorised[Xb.view(-1)] += demb.view(-1, 10)  # repeats do not add up: index_put
    return dC.numpy(), dC_vectorised.numpy()


def test_the_manual_embedding_backward_matches_pytorch(torch):
    ours, theirs = _manual_embedding_backward(mg), _manual_embedding_backward(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert not np.allclose(ours[0], ours[1])  # the loop adds up repeats, the one-liner not


def test_repeated_indices_do_not_accumulate_with_plus_equals(torch):
    results = []
    for lib in (mg, torch):
        dC = lib.zeros(5, 3)
        ix = lib.tensor([1, 2, 1, 1])
        dC[ix] += lib.arange(12.0).reshape(4, 3)
        dC[ix, :] += lib.ones(4, 3)
        results.append(dC.numpy())
    np.testing.assert_array_equal(*results)


# An in-place change of a view made by indexing, on a tensor in the graph: recorded in the
# tensor it views (PyTorch's CopySlices), the view gets a new node (AsStridedBackward0).
VIEW_UPDATES_IN_THE_GRAPH = [
    "v = h[0]; v.mul_(3); y = (h * h).sum() + (v * 5).sum()",
    "h[:, 1] += e[:2]; y = (h * h).sum()",
    "h[1:][0].mul_(2); h[0][1:][0].clamp_(max=0.5); h[0, 2].relu_(); y = (h * h).sum()",
    "h[1][0] = e[1] * 4; h[0][1:].copy_(e[:2]); y = (h ** 2).sum()",
    "h[0].fill_(2.5); h[1, ::2].zero_(); y = (h * h).sum()",
    "h[0][1:] = e[1:]; h[0] += e; y = (h * h).sum()",
    "h[lib.tensor(1)].div_(e); y = (h * e).sum()",
    "v = h[1, 1:]; v.sub_(e[:2]); w = v[0]; w.mul_(e[2]); y = (v * v).sum() + h.sum()",
]


@pytest.mark.parametrize("statement", VIEW_UPDATES_IN_THE_GRAPH)
def test_in_place_on_a_view_in_the_graph_matches_pytorch(statement, torch):
    results = []
    for lib in (mg, torch):
        a = lib.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=lib.float64,
                       requires_grad=True)
        e = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        scope = {"lib": lib, "h": a * 2, "e": e}
        exec(statement, scope)
        scope["y"].backward()
        e_grad = None if e.grad is None else e.grad.numpy()
        results.append((scope["h"].detach().numpy(), a.grad.numpy(), e_grad,
                        scope["h"].grad_fn.name().split("::")[-1]))
    ours, theirs = results
    assert (ours[2] is None) == (theirs[2] is None)
    for mine, its in zip(ours[:3], theirs[:3]):
        if its is not None:
            np.testing.assert_allclose(mine, its, rtol=1e-12)
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("statement", [
    "w = h[0]; h[0].mul_(2); y = (w * w).sum()",   # w is older than the change of h[0]
    "w = h[:, 1]; h[1].add_(e); y = (w * w).sum() + h.sum()",
    "x = lib.zeros(2, 3); x[0] += e; y = (x * h).sum()",  # a tensor outside the graph
    "x = lib.zeros(2, 3); x[1][0] = e[1]; y = (x * h).sum()",
    "h.T[0].mul_(e[0]); y = (h * h).sum()", "h.view(6)[:3].mul_(e); y = (h * h).sum()",
])
def test_an_in_place_change_through_any_view_matches_pytorch(statement, torch):
    """PyTorch records a change through any view (CopySlices) and remakes the graph of the
    older views of the changed tensor: so does minigrad (tests/test_inplace_views.py has
    every view op)."""
    results = []
    for lib in (mg, torch):
        a = lib.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=lib.float64,
                       requires_grad=True)
        e = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        scope = {"lib": lib, "h": a * 2, "e": e}
        exec(statement, scope)
        scope["y"].backward()
        results.append([scope["h"].detach().numpy(), a.grad.numpy(),
                        None if e.grad is None else e.grad.numpy()])
    for mine, its in zip(*results):
        assert (mine is None) == (its is None)
        if its is not None:
            np.testing.assert_allclose(mine, its, rtol=1e-12)


@pytest.mark.parametrize("statement", [
    "a[0].mul_(2)", "a[0][1] = 5.0", "a[1:].zero_()",                   # a view of a leaf
    "h = a * 2\nwith lib.no_grad():\n    v = h[0]\nv.mul_(e)",        # a view made in no_grad
])
def test_in_place_on_a_view_pytorch_refuses_is_refused(statement, torch):
    """A view of a leaf that requires grad, or one made under no_grad: refused with
    PyTorch's message, and nothing changes."""
    a = mg.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    e = mg.tensor([0.5, -1.5, 2.0], requires_grad=True)
    scope = {"lib": mg, "a": a, "e": e}
    with pytest.raises(RuntimeError) as info:
        exec(statement, scope)
    assert a.tolist() == [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
    with pytest.raises(RuntimeError) as theirs:
        exec(statement, {"lib": torch, "a": torch.tensor(a.tolist(), requires_grad=True),
                         "e": torch.tensor(e.tolist(), requires_grad=True)})
    assert str(info.value) == str(theirs.value)


@pytest.mark.parametrize("statement", [
    "y = a[idx]",
    "y = a * 1; y[idx] = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)",
    "y = a[idx, None]",
])
def test_changing_a_saved_index_in_place_makes_backward_refuse(statement, torch):
    """Index arrays are saved for backward: a gradient sent to the new positions would be
    silently wrong, so both refuse."""
    for lib in (mg, torch):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        idx = lib.tensor([0, 1])
        scope = {"lib": lib, "a": a, "idx": idx}
        exec(statement, scope)
        idx[0] = 2
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            scope["y"].sum().backward()
        assert a.grad is None


def test_a_second_backward_through_an_index_needs_retain_graph(torch):
    for lib in (mg, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = a[[0, 0]].sum()
        y.backward()
        with pytest.raises(RuntimeError, match="retain_graph=True"):
            y.backward()
        z = a[[0, 0]].sum()
        z.backward(retain_graph=True)
        z.backward()
        assert a.grad.tolist() == [6.0, 0.0, 0.0]


@pytest.mark.parametrize("key", ["[[0, 1]]", "[:, [0, 1]]", "[0, :, [1, 2]]", "[[0, 1], :, [1, 2]]",
                                 "[:, [0, 1], [1, 2]]", "[x.detach() > 0]"])
def test_in_place_on_an_advanced_index_result_in_the_graph(key, torch):
    """An advanced index gives a new tensor, not a view (even where numpy's result is a view
    of a temporary of its own), so changing it in place is recorded as in PyTorch."""
    results = []
    for lib in (mg, torch):
        a = lib.tensor(R_DATA.copy(), requires_grad=True)
        x = a * 1
        y = eval(f"x{key}", {"x": x})
        y.mul_(3)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), a.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


@pytest.mark.parametrize("statement", [
    "x[[1, 0, 1]] += v[:, None, :]",       # repeats: index_put, the last one stays
    "x[:, [0, 2]] += v[:2]",
    "x[0, :, [1, 3]] *= v[:3, :2]",
    "x[[1, 0], :, 2] -= v[:2, :3]",
    "x[1][2] += v[0, 0]",                 # through a view of x: CopySlices
])
def test_augmented_assignment_in_the_graph_matches_pytorch(statement, torch):
    results = []
    for lib in (mg, torch):
        a = lib.tensor(R_DATA.copy(), requires_grad=True)
        v = lib.tensor(np.arange(1.0, 13.0).reshape(3, 4) / 7, dtype=lib.float64,
                       requires_grad=True)
        x = a * 1
        exec(statement, {"x": x, "v": v})
        (x * x).sum().backward()
        results.append((x.detach().numpy(), a.grad.numpy(), v.grad.numpy()))
    ours, theirs = results
    for mine, its in zip(ours, theirs):
        np.testing.assert_allclose(mine, its, rtol=1e-12)


# Random chains of in-place ops on views (and views of views) of a tensor in the graph.
_VIEW_OPS = ["v.mul_(e)", "v.add_(e * 2)", "v.fill_(1.5)", "v.zero_()", "v[...] = e * 3",
             "v.clamp_(max=0.3)", "v.relu_()", "v.sub_(v * 0.5)", "v += e", "v.div_(e + 1)"]


def _random_basic_key(rng, shape):
    key = []
    for n in shape[:rng.integers(1, len(shape) + 1)]:
        if rng.random() < 0.4:
            key.append(int(rng.integers(-n, n)))
        else:
            start = int(rng.integers(0, n))
            key.append(slice(start, int(rng.integers(start + 1, n + 1)),
                             [None, 1, 2][rng.integers(0, 3)]))
    if rng.random() < 0.15:
        key.insert(int(rng.integers(0, len(key) + 1)), None)
    return tuple(key)


def _view_program(seed):
    """A list of (view keys, op): each step takes a view (maybe of a view) of h, changes it."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, rng.integers(1, 4)))
    probe = np.zeros(shape)
    program = []
    for _ in range(rng.integers(1, 4)):
        keys = [_random_basic_key(rng, probe.shape)]
        if rng.random() < 0.4 and probe[keys[0]].ndim:
            keys.append(_random_basic_key(rng, probe[keys[0]].shape))
        program.append((keys, _VIEW_OPS[rng.integers(0, len(_VIEW_OPS))]))
    return shape, program


def _run_view_program(lib, data, program, grad=True):
    a = lib.tensor(data, requires_grad=grad)
    e = lib.tensor(0.7, dtype=lib.float64, requires_grad=grad)
    h = a * 2
    for keys, op in program:
        v = h
        for key in keys:
            v = v[key]
        exec(op, {"v": v, "e": e})
    loss = (h * h * lib.arange(float(h.numel())).reshape(h.shape)).sum()
    if not grad:
        return loss.item()
    loss.backward()
    return h.detach().numpy(), a.grad.numpy(), None if e.grad is None else e.grad.numpy()


@pytest.mark.parametrize("seed", range(80))
def test_random_in_place_changes_of_views_match_pytorch(seed, torch):
    """Where PyTorch refuses (an op of the chain saved values a later op changed), minigrad
    refuses too; elsewhere the values and gradients are PyTorch's."""
    shape, program = _view_program(seed)
    data = np.random.default_rng(seed).standard_normal(shape)
    try:
        theirs = _run_view_program(torch, data, program)
    except RuntimeError as error:  # a saved value changed since: minigrad refuses too
        assert "modified by an inplace operation" in str(error)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _run_view_program(mg, data, program)
        return
    ours = _run_view_program(mg, data, program)
    for mine, its in zip(ours, theirs):
        assert (mine is None) == (its is None)
        if its is not None:
            np.testing.assert_allclose(mine, its, rtol=1e-10, atol=1e-12)


LEAF_WRITES = {
    "a bad index into a leaf": "x = lib.zeros(2, 0, requires_grad=True); x[lib.tensor([1]), 0] = 1.0",
    "an empty leaf": "x = lib.zeros(0, requires_grad=True); x[0,] = 0",
    "a view of a leaf, bad index": "x = lib.zeros(0, 2, requires_grad=True).squeeze(0); "
                                   "x[lib.tensor([0]),] = 3",
    "a view of a leaf, bad int index": "x = lib.zeros(3, 3, 0, requires_grad=True)"
                                       ".permute(2, 0, 1); x[None, lib.tensor(0)] = 1.0",
    "squeeze that squeezes nothing": "x = lib.tensor(0.5, requires_grad=True).squeeze(0); "
                                     "x.copy_(lib.tensor(1.0))",
    "squeeze(-1) of a leaf": "x = lib.ones(2, 3, requires_grad=True).squeeze(-1); "
                             "x.masked_fill_(lib.tensor([[False], [False]]), 0.0)",
}


@pytest.mark.parametrize("statement", LEAF_WRITES.values(), ids=LEAF_WRITES.keys())
def test_writes_into_a_leaf_or_its_views_raise_what_pytorch_raises(statement, torch):
    errors = []
    for lib in (mg, torch):
        with pytest.raises(Exception) as info:
            exec(statement, {"lib": lib})
        errors.append(next(c for c in type(info.value).__mro__ if c.__module__ == "builtins"))
    assert errors[0] is errors[1]


@pytest.mark.parametrize("statement", [
    "x = lib.tensor([1, 2], dtype=lib.uint8); x[0] = -1",
    "x = lib.tensor([1, 2], dtype=lib.uint8); x[lib.tensor([True, False])] = -255",
    "x = lib.tensor([1, 2], dtype=lib.int8); x[1:] = 127",
    "x = lib.tensor([1, 2]); x[0] = 2.7",
    "x = lib.tensor([1.0, 2.0]); x[lib.tensor([True, False])] = lib.tensor([5.0], dtype=lib.float64)",
    "x = lib.zeros(2, 2); x[lib.tensor([[True, False], [False, False]])] = "
    "lib.tensor([7], dtype=lib.uint8)",
    "x = lib.zeros(2, 2); x[0, lib.tensor([True, False])] = lib.tensor([[7]], dtype=lib.int64)",
    "x = lib.zeros(2, 2); x[lib.tensor([True, False]), :] = lib.tensor([7.5], dtype=lib.float64)",
    "x = lib.tensor([1, 2]); x[lib.tensor([True, False])] = lib.tensor([5.9])",
])
def test_assigning_numbers_and_one_element_tensors_converts_them_as_pytorch(statement, torch):
    """Numbers into integer tensors wrap or refuse as fill_ does; a one-element tensor of
    another dtype assigned through one bool mask is converted like a number."""
    results = []
    for lib in (mg, torch):
        scope = {"lib": lib}
        exec(statement, scope)
        x = scope["x"]
        results.append((str(x.dtype).split(".")[-1], x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("statement", [
    "x = lib.tensor([1, 2], dtype=lib.uint8); x[0] = 300",
    "x = lib.tensor([1, 2], dtype=lib.uint8); x[0] = -256",
    "x = lib.tensor([1, 2]); x[0] = float('inf')",
    "x = lib.tensor([], dtype=lib.int64); x[::-1] = float('inf')",
    "x = lib.tensor([1, 2]); x[lib.tensor([True, False])] = lib.tensor([float('nan')])",
    "x = lib.zeros(2); x[lib.tensor([True, True])] = lib.tensor([5.0, 6.0], dtype=lib.float64)",
    "x = lib.zeros(2, 2); x[lib.tensor([True, False]), lib.tensor([True, False])] = "
    "lib.tensor([7.0], dtype=lib.float64)",
])
def test_assignments_pytorch_refuses_are_refused(statement, torch):
    errors = []
    for lib in (mg, torch):
        with pytest.raises(Exception) as info:
            exec(statement, {"lib": lib})
        errors.append(next(c for c in type(info.value).__mro__ if c.__module__ == "builtins"))
    assert errors[0] is errors[1]
