"""The backward engine (minigrad/graph.py) and the fast paths of issue 8: each shortcut must
give what the plain rule gives."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import graph


def kahn_order(root):
    """The reference order: Kahn's algorithm, running the newest ready node first."""
    waiting, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for nxt in node.inputs:
            if nxt is not None:
                waiting[nxt] = waiting.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    ready, order = [root], []
    while ready:
        node = max(ready, key=lambda n: n.seq)
        ready.remove(node)
        order.append(node)
        for nxt in node.inputs:
            if nxt is not None:
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    ready.append(nxt)
    return order


# Each step combines one or two earlier values (picked by index), so graphs branch and join.
OPS = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: (a - b).tanh(),
       lambda a, b: a.exp() / (b * b + 1), lambda a, b: a.sigmoid()]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10**6), st.integers(0, 10**6)),
                min_size=1, max_size=25),
       st.integers(1, 3))
def test_newest_first_is_kahns_order(steps, n_leaves):
    values = [mg.tensor(0.3 * (i + 1), requires_grad=True) for i in range(n_leaves)]
    sum(values[1:], values[0]).backward()  # an earlier graph: the leaves' nodes are older now
    values.append(mg.tensor(2.0))  # a constant: no node
    for op, i, j in steps:
        values.append(OPS[op](values[i % len(values)], values[j % len(values)]))
    out = sum(values[n_leaves + 1:], values[0])
    order = graph.execution_order([out.grad_fn])
    assert order == kahn_order(out.grad_fn)
    position = {node: k for k, node in enumerate(order)}
    for node in order:  # every node runs before the nodes it sends gradients to
        assert all(position[nxt] > position[node] for nxt in node.inputs if nxt is not None)


def test_a_weight_used_transposed_gets_a_gradient_laid_out_like_itself():
    layer = mg.nn.Linear(5, 3)
    layer(mg.randn(4, 5)).sum().backward()
    assert layer.weight.grad._data.flags.c_contiguous
    no_bias = mg.nn.Linear(5, 3, bias=False)
    x = mg.randn(4, 5)
    no_bias(x).sum().backward()
    assert no_bias.weight.grad._data.flags.c_contiguous
    np.testing.assert_allclose(no_bias.weight.grad.numpy(), np.ones((4, 3)).T @ x.numpy(),
                               rtol=1e-6)


# ------------------------------------------------------------------ gradients kept uncopied

def shares(a, b):
    return np.shares_memory(a.grad.numpy(), b if isinstance(b, np.ndarray) else b.grad.numpy())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10**6), st.integers(0, 10**6)),
                max_size=12),
       st.integers(1, 3), st.booleans())
def test_no_two_gradients_share_memory(steps, n_leaves, retain):
    leaves = [mg.tensor([0.3 * (i + 1), -0.2], requires_grad=True) for i in range(n_leaves)]
    values = list(leaves)
    for op, i, j in steps:
        values.append(OPS[op](values[i % len(values)], values[j % len(values)]))
        if retain:
            values[-1].retain_grad()
    out = sum(values[1:], values[0])
    given_grad = np.array([1.0, 2.0], dtype=np.float32)
    out.backward(mg.from_numpy(given_grad))
    with_grad = [t for t in values if (t.is_leaf or retain) and t.grad is not None]
    for k, a in enumerate(with_grad):
        assert not shares(a, given_grad)
        for b in with_grad[k + 1:]:
            assert not shares(a, b)
    before = [t.grad.numpy().copy() for t in with_grad]
    given_grad[:] = 100.0  # the caller's array is theirs: changing it changes no .grad
    assert all(np.array_equal(t.grad.numpy(), b, equal_nan=True)  # exp may overflow: nan
               for t, b in zip(with_grad, before))


def test_a_sum_passes_one_array_to_both_leaves_and_each_gets_its_own():
    a = mg.tensor([[1.0, 2.0]], requires_grad=True)
    b = mg.tensor([[3.0], [4.0]], requires_grad=True)
    ((a + b.T) * 2.0).sum().backward()  # AddBackward0 hands one array on, to b via .T
    assert not shares(a, b)
    a.grad += 1
    assert b.grad.tolist() == [[2.0], [2.0]]


def test_a_custom_function_returning_its_saved_tensor_does_not_lend_it_to_grad():
    class LeakySaved(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return y  # a wrong derivative on purpose: the array belongs to y

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    out = LeakySaved.apply(x)
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert not np.shares_memory(x.grad.numpy(), out.detach().numpy())
    x.grad.zero_()
    assert out.tolist() == [2.0, 4.0]


# ------------------------------------------------------------------ fast paths, same numbers

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 40), st.integers(0, 10**6))
def test_the_fast_row_max_is_numpys_max(rows, cols, seed):
    from minigrad.ops.softmax import max_keepdim as _max_keepdim
    a = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    if rows > 1:
        a[0, 0], a[1, -1] = np.nan, np.inf  # NaN wins, as in numpy's max
    for dim in (0, 1) if rows else (1,):  # a max over no rows at all raises in numpy too
        np.testing.assert_array_equal(_max_keepdim(a, dim), a.max(axis=dim, keepdims=True))


def test_nll_fast_path_and_full_path_agree():
    logp = mg.randn(6, 4).log_softmax(1)
    labels = mg.tensor([0, 3, 1, 1, 2, 0])
    for reduction in ("mean", "sum", "none"):
        fast = mg.nn.functional.nll_loss(logp, labels, reduction=reduction)
        full = mg.nn.functional.nll_loss(logp, labels, reduction=reduction, ignore_index=99)
        np.testing.assert_allclose(fast.numpy(), full.numpy(), rtol=1e-6)


def test_out_of_range_labels_are_reported_by_the_full_check():
    logp = mg.randn(2, 3).log_softmax(1)
    for bad in (3, -1):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            mg.nn.functional.nll_loss(logp, mg.tensor([0, bad]))


@pytest.mark.parametrize("n_in, n_hidden, n_classes, batch", [
    (2, 16, 2, 32), (8, 12, 10, 5), (5, 7, 40, 9),  # 40 classes: numpy's own row max
])
def test_training_steps_match_pytorch_with_every_fast_path(n_in, n_hidden, n_classes, batch,
                                                           torch):
    """Linear (weight gradient layout), cross-entropy (row max, nll fast path), .grad kept
    uncopied and then accumulated into (two backward passes per step): 10 steps as PyTorch."""
    rng = np.random.default_rng(n_classes)
    weights = [rng.standard_normal(s) * 0.5 for s in
               ((n_hidden, n_in), (n_hidden,), (n_classes, n_hidden), (n_classes,))]
    x = rng.standard_normal((2, batch, n_in))
    y = rng.integers(0, n_classes, (2, batch))

    def run(lib):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_classes))
        model = model.double()
        with lib.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(lib.tensor(w))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(10):
            opt.zero_grad()
            for half in range(2):  # the second backward adds into the first's .grad
                loss = nn.functional.cross_entropy(model(lib.tensor(x[half])), lib.tensor(y[half]))
                loss.backward()
                losses.append(loss.item())
            opt.step()
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    (mg_losses, mg_params), (torch_losses, torch_params) = run(mg), run(torch)
    np.testing.assert_allclose(mg_losses, torch_losses, rtol=1e-10)
    for ours, theirs in zip(mg_params, torch_params):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", ["relu", "exp", "sigmoid", "tanh"])
def test_an_input_nothing_saved_is_freed_after_forward(op):
    """relu, exp, sigmoid and tanh save their output, not their input (as in PyTorch): the
    hidden layer's pre-activation is freed once forward moves on, so a network holds one
    array per layer between forward and backward, not two."""
    import weakref
    x = mg.randn(8, 4)
    w = mg.randn(3, 4, requires_grad=True)
    pre = mg.nn.functional.linear(x, w)
    freed = weakref.ref(pre._data)
    out = getattr(pre, op)()
    del pre
    assert freed() is None, f"{op} keeps its input's memory alive"
    out.sum().backward()
    assert w.grad.shape == (3, 4)


def test_an_input_a_product_saved_is_kept_until_backward():
    """A product saves both operands: the saved one stays alive until backward frees the
    graph."""
    import weakref
    x = mg.randn(8, 4)
    w = mg.randn(4, 3, requires_grad=True)
    h = x * 1
    kept = weakref.ref(h._data)
    out = h @ w
    del h
    assert kept() is not None
    out.sum().backward()
    assert kept() is None
