"""Autograd semantics as PyTorch defines them: accumulation, leaves, retain_graph, no_grad,
and errors that say what to do and change nothing."""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import minigrad as mg


def seed_example():
    x = mg.tensor([2.0], requires_grad=True)
    y = x * x
    z = y * 3
    return x, y, z


def test_gradients_accumulate_12_24_then_zero():
    x, _, z = seed_example()
    z.backward(retain_graph=True)
    assert x.grad.tolist() == [12.0]
    z.backward(retain_graph=True)
    assert x.grad.tolist() == [24.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0]
    z.backward()
    assert x.grad.tolist() == [12.0]


def test_accumulation_is_in_place_like_pytorch():
    x, _, z = seed_example()
    z.backward(retain_graph=True)
    first = x.grad
    z.backward()
    assert first is x.grad and first.tolist() == [24.0]


def test_second_backward_without_retain_graph_raises_and_changes_nothing():
    x, _, z = seed_example()
    z.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        z.backward()
    assert x.grad.tolist() == [12.0]


def test_a_freed_graph_is_detected_before_any_leaf_changes():
    a = mg.tensor([1.0], requires_grad=True)
    b = mg.tensor([3.0], requires_grad=True)
    loss = a * 2 + b * b  # a's path saves nothing, b's path saves b
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    assert a.grad.tolist() == [2.0] and b.grad.tolist() == [6.0]


def test_a_graph_that_saved_nothing_can_run_again():
    x = mg.tensor([1.0], requires_grad=True)
    y = x + 1
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0]


def test_leaves_and_non_leaves():
    x, y, z = seed_example()
    c = mg.tensor([1.0])
    assert x.is_leaf and c.is_leaf and not y.is_leaf
    assert x.grad_fn is None and y.grad_fn.name() == "MulBackward0"
    assert y.requires_grad and not c.requires_grad and not (c * 2).requires_grad
    z.backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None
    assert c.grad is None


def test_retain_grad_keeps_a_non_leaf_gradient():
    x, y, z = seed_example()
    y.retain_grad()
    z.backward()
    assert y.retains_grad and y.grad.tolist() == [3.0]
    assert x.grad.tolist() == [12.0]


def test_next_functions_walk_back_to_the_leaves():
    x, y, z = seed_example()
    (mul_y, _), (none, _) = z.grad_fn.next_functions
    assert mul_y is y.grad_fn and none is None
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    assert y.grad_fn.next_functions[1][0] is acc  # one accumulator per leaf


def test_non_scalar_backward_needs_a_gradient():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    assert x.grad is None
    y.backward(mg.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_gradient_of_the_wrong_shape_is_refused():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(mg.ones(3))
    assert x.grad is None


def test_backward_on_a_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0]).sum().backward()


def test_in_place_update_of_a_leaf_is_refused_unless_no_grad():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    for update in (lambda: w.add_(1), lambda: w.mul_(2), lambda: w.zero_(),
                   lambda: w.fill_(3), lambda: w.copy_(mg.zeros(2)), lambda: w.__isub__(1)):
        with pytest.raises(RuntimeError, match="no_grad"):
            update()
        assert w.tolist() == [1.0, 2.0] and w.is_leaf
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w[0] = 5.0
    with mg.no_grad():
        w -= 0.5
        w[1] = 7.0
    assert w.tolist() == [0.5, 7.0] and w.is_leaf and w.requires_grad


def test_hand_written_descent_as_in_the_seeds():
    w = mg.tensor([1.0], requires_grad=True)
    for _ in range(3):
        loss = ((w * 3 - 6) ** 2).sum()
        loss.backward()
        with mg.no_grad():
            w -= 0.01 * w.grad
        w.grad.zero_()
    expected = 1.0
    for _ in range(3):
        expected -= 0.01 * 2 * (3 * expected - 6) * 3
    assert w.item() == pytest.approx(expected, rel=1e-6)


def test_in_place_on_a_non_leaf_is_recorded(torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y += x * x
        y *= 3
        y.sum().backward()
        results.append((y.detach().numpy().tolist(), x.grad.numpy().tolist(), y.grad_fn.name()))
    assert results[0] == results[1]


def test_in_place_on_a_result_changes_its_memory_like_pytorch(torch):
    """Views of a result see an in-place change of it, and the gradient of an in-place op
    that needs the old values (mul_ by a tensor that requires grad) uses the old values."""
    results = []
    for lib in (mg, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = a * 1
        v = h.view(3)
        h.mul_(w)
        h.add_(1)
        (h * h).sum().backward()
        results.append((v.tolist(), a.grad.tolist(), w.grad.tolist(), h.grad_fn.name()))
    assert results[0] == results[1]


def test_in_place_on_a_view_in_the_graph_is_recorded_and_on_a_view_of_a_leaf_refused(torch):
    """A change through any view of a tensor in the graph is recorded (CopySlices), as in
    PyTorch (tests/test_inplace_views.py has every view op); a view of a leaf that requires
    grad is refused as in PyTorch, and nothing changes."""
    grads = []
    for lib in (mg, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = a * 1
        h.view(3, 1).add_(1)
        h.T.clamp_(0, 2.5)
        h.view(3)[:2].mul_(3)
        (h * h).sum().backward()
        grads.append((h.tolist(), a.grad.tolist()))
    assert grads[0] == grads[1]
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        a[:2].add_(1)
    assert a.tolist() == [1.0, 2.0, 3.0]
    h = a * 1
    with mg.no_grad():  # nothing to record: views share memory as in numpy and PyTorch
        h[:2].mul_(0)
    assert h.tolist() == [0.0, 0.0, 3.0]


def test_a_view_taken_before_an_in_place_change_sends_its_gradient_through_it(torch):
    """PyTorch remakes an older view's graph after its base changed in place: the view,
    used afterwards, sends its gradient through the change; so does minigrad."""
    for view in (lambda h: h.view(3), lambda h: h[1:], lambda h: h.unsqueeze(0).t(),
                 lambda h: h.expand(2, 3)):
        grads = []
        for lib in (mg, torch):
            a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            h = a * 1
            v = view(h)
            h.mul_(2)
            (v * v).sum().backward()
            grads.append(a.grad.tolist())
        assert grads[0] == grads[1]


def test_in_place_shape_errors_are_runtime_errors_that_name_the_shapes():
    w = mg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match .* \(2\)"):
        w -= mg.ones(2)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        w += mg.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"shape \[2\] to x\[0\], which has shape \[3\]"):
        mg.zeros(2, 3)[0] = mg.ones(2)
    assert w.tolist() == [1.0, 2.0, 3.0]


def test_setitem_on_a_non_leaf_is_recorded(torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = lib.tensor([5.0], requires_grad=True)
        y = x * 1
        y[1:2] = v * 2
        (y * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        results.append((y.tolist(), x.grad.tolist(), v.grad.tolist()))
    assert results[0] == results[1]


def test_requires_grad_on_integers_is_refused():
    with pytest.raises(RuntimeError, match="floating point"):
        mg.tensor([1, 2], requires_grad=True)
    t = mg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="float"):
        t.requires_grad_()
    assert not t.requires_grad
    assert mg.tensor([1, 2]).float().requires_grad_().requires_grad


def test_requires_grad_can_only_change_on_leaves():
    y = mg.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad = False
    assert y.requires_grad


def test_no_grad_as_context_and_decorator():
    x = mg.tensor([1.0], requires_grad=True)
    with mg.no_grad():
        assert not (x * 2).requires_grad
        with mg.enable_grad():
            assert (x * 2).requires_grad
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()

    @mg.no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad and mg.is_grad_enabled()
    with mg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_no_grad_restores_mode_after_an_exception():
    with pytest.raises(ValueError):
        with mg.no_grad():
            raise ValueError
    assert mg.is_grad_enabled()


def test_detach_and_data_share_memory_outside_the_graph():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 10.0
    assert x.tolist() == [10.0, 2.0]
    x.data.mul_(2)
    assert x.tolist() == [20.0, 4.0] and x.requires_grad
    x.data = mg.tensor([1.0, 1.0])
    assert x.tolist() == [1.0, 1.0] and x.requires_grad


def test_the_old_data_update_idiom_still_works():
    p = mg.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    p.data -= 0.5 * p.grad.data
    assert p.tolist() == [0.0, 0.0] and p.is_leaf


def test_shape_errors_name_both_shapes():
    with pytest.raises(RuntimeError, match=r"2x3 and 4x5"):
        mg.ones(2, 3) @ mg.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"\[2, 3\] and \[2, 4\]"):
        mg.ones(2, 3) + mg.ones(2, 4)
    with pytest.raises(RuntimeError, match=r"\[3\] and \[4\]"):
        mg.ones(3, requires_grad=True) * mg.ones(4)


def test_errors_leave_inputs_unchanged():
    a = mg.ones(3, requires_grad=True)
    b = mg.ones(4)
    with pytest.raises(RuntimeError):
        a + b
    with pytest.raises(RuntimeError):
        b += mg.ones(2, 4)
    assert b.tolist() == [1.0] * 4 and a.grad is None


def test_cuda_is_refused_with_a_hint():
    with pytest.raises(RuntimeError, match="CPU"):
        mg.ones(2).to("cuda")
    with pytest.raises(RuntimeError, match="CPU"):
        mg.zeros(2, device="cuda")
    t = mg.ones(2)
    assert t.to("cpu") is t and t.to(mg.float64).dtype == mg.float64


def test_dtypes_follow_pytorch(torch):
    cases = [([1.0, 2.0], None), ([1, 2], None), ([True], None), (np.array([1.0]), None),
             ([1, 2], "float64")]
    for data, dtype in cases:
        ours = mg.tensor(data, dtype=getattr(mg, dtype) if dtype else None).dtype.name
        theirs = str(torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None).dtype)
        assert "torch." + ours == theirs
    pairs = [
        (lambda lib: lib.tensor([1, 2]) * 2.5),
        (lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4])),
        (lambda lib: lib.tensor([1.0], dtype=lib.float32) + lib.tensor([1.0], dtype=lib.float64)),
        (lambda lib: lib.tensor([1.0], dtype=lib.float32) * lib.tensor(2.0, dtype=lib.float64)),
        (lambda lib: lib.tensor([1, 2]) * lib.tensor(2.0, dtype=lib.float64)),
        (lambda lib: lib.tensor([True]) + 1),
        (lambda lib: lib.tensor([1, 2]).sum()),
        (lambda lib: lib.arange(5)),
        (lambda lib: lib.arange(0, 1, 0.25)),
        (lambda lib: lib.full((2,), 3)),
        (lambda lib: lib.zeros(2, dtype=lib.int64) + lib.ones(2)),
    ]
    for make in pairs:
        ours, theirs = make(mg), make(torch)
        assert "torch." + ours.dtype.name == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_mean_of_integers_is_refused():
    with pytest.raises(RuntimeError, match="floating"):
        mg.tensor([1, 2]).mean()


def test_from_numpy_shares_memory_and_keeps_dtype():
    a = np.array([1.0, 2.0])
    t = mg.from_numpy(a)
    assert t.dtype == mg.float64
    a[0] = 5.0
    assert t[0].item() == 5.0
    assert mg.tensor(a).dtype == mg.float64


def test_seeded_draws_repeat():
    mg.manual_seed(3)
    a = mg.randn(4)
    mg.manual_seed(3)
    assert mg.randn(4).equal(a)
    g = mg.Generator().manual_seed(3)
    assert mg.rand(3, generator=g).dtype == mg.float32
    assert sorted(mg.randperm(5, generator=g).tolist()) == [0, 1, 2, 3, 4]
    assert mg.randint(0, 3, (20,)).max().item() < 3


def test_a_100000_op_chain_runs_backward_without_recursion():
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_graphs_hold_no_reference_cycles():
    """With the garbage collector off, only reference counting frees graphs: 1,000 forward
    and backward rounds must leave memory flat."""
    w = mg.randn(64, 64, requires_grad=True)
    x = mg.randn(32, 64)

    def round_trip():
        h = (x @ w).tanh()
        loss = (h * h).mean()
        loss.backward()

    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            round_trip()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            round_trip()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    finally:
        gc.enable()
    assert after - before < 64 * 1024, f"memory grew by {after - before} bytes"


def test_graph_nodes_free_saved_arrays_after_backward():
    x = mg.randn(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    assert node.is_freed
    z = x.exp()
    z.sum().backward(retain_graph=True)
    assert not z.grad_fn.is_freed


def test_variable_is_the_old_name_of_tensor():
    v = mg.autograd.Variable(mg.tensor([1.0]), requires_grad=True)
    assert isinstance(v, mg.Tensor) and v.requires_grad
    assert isinstance(mg.tensor([1.0]), mg.autograd.Variable)


def test_numpy_of_a_tensor_that_requires_grad_is_refused():
    x = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


def test_boolean_of_many_values_is_ambiguous():
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(mg.tensor([1.0, 2.0]))
    assert bool(mg.tensor([3.0]) > 2)


def test_backward_with_inputs_only_fills_those(torch):
    x = mg.tensor([1.0], requires_grad=True)
    y = mg.tensor([2.0], requires_grad=True)
    (x * y).sum().backward(inputs=[x])
    assert x.grad.tolist() == [2.0] and y.grad is None


def test_warnings_are_not_raised_for_ordinary_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, _, z = seed_example()
        z.backward()
        assert x.grad is not None


def test_index_helpers_match_pytorch(torch):
    results = []
    for lib in (mg, torch):
        t = lib.tensor([[0, 1], [2, 0]])
        results.append((t.nonzero().tolist(), [x.tolist() for x in lib.where(t > 0)],
                        lib.tensor([1, 1, 3]).bincount().tolist(),
                        lib.tensor([3, 1, 3]).unique().tolist(),
                        lib.outer(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])).tolist(),
                        abs(lib.tensor([-2.0])).tolist()))
    assert results[0] == results[1]


def test_split_and_chunk_match_pytorch(torch):
    results = []
    for lib in (mg, torch):
        x = lib.tensor(np.arange(10.0), requires_grad=True)
        pieces = x.split(4)
        weights = [1.0, 2.0, 3.0]
        sum(p.sum() * w for p, w in zip(pieces, weights)).backward()
        chunks = lib.arange(7).chunk(3)
        sized = lib.arange(6).reshape(2, 3).split([1, 2], dim=1)
        results.append(([p.tolist() for p in pieces], x.grad.tolist(),
                        [c.tolist() for c in chunks], [s.tolist() for s in sized]))
    assert results[0] == results[1]


def test_operands_that_are_not_tensors_or_numbers_are_refused_like_pytorch(torch):
    for lib in (mg, torch):
        t = lib.tensor([1.0, 2.0])
        for other in ([1, 2], (1, 2), t.max(dim=0, keepdim=True)):
            with pytest.raises(TypeError):
                t - other
    with pytest.raises(TypeError, match=r"\.values"):
        mg.tensor([1.0, 2.0]) - mg.tensor([1.0, 2.0]).max(dim=0, keepdim=True)


# ------------------------------------------------------------------ arrays saved, then changed

def _changed_after_saving(lib, case):
    """Build a small graph, change something in place, backward: the error text, or None."""
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = lib.tensor([4.0, 5.0, 6.0])
    if case == "data a node saved":
        loss = (w * x).sum()
        x.add_(1)
    elif case == "a view of it":
        loss = (w * x).sum()
        x.view(3, 1)[0, 0] = 9.0
    elif case == "an op's own output":
        y = w.exp()
        loss = y.sum()
        with lib.no_grad():
            y.mul_(2)
    elif case == "a parameter, by optimizer.step()":
        loss = (w * w).sum()
        loss.backward(retain_graph=True)
        lib.optim.SGD([w], lr=0.1).step()
    elif case == "data nothing saved":
        loss = (w + x).sum()
        x.add_(1)
    elif case == "data changed before the forward pass":
        x.add_(1)
        loss = (w * x).sum()
    elif case == "an unrelated tensor":
        loss = (w * x).sum()
        lib.tensor([0.0]).add_(1)
    elif case == "a result in the graph, with grad on":
        b = w * 2
        loss = (b * b).sum()
        b.mul_(3)
    elif case == "an op's output, with grad on":
        s = w.sigmoid()
        s.mul_(2)
        loss = s.sum()
    elif case == "a result, through setitem":
        h = w * 1
        loss = (h * h).sum()
        h[0] = 5.0
    elif case == "a result nothing saved, with grad on":
        h = w * 1
        loss = (h + x).sum()
        h.add_(1)
    before = None if w.grad is None else w.grad.clone()
    try:
        loss.backward()
    except RuntimeError as error:
        assert (w.grad is None) if before is None else bool((w.grad == before).all())
        return str(error)
    return None


CHANGED_CASES = ["data a node saved", "a view of it", "an op's own output",
                 "a parameter, by optimizer.step()", "data nothing saved",
                 "data changed before the forward pass", "an unrelated tensor",
                 "a result in the graph, with grad on", "an op's output, with grad on",
                 "a result, through setitem", "a result nothing saved, with grad on"]


@pytest.mark.parametrize("case", CHANGED_CASES)
def test_backward_refuses_arrays_changed_in_place_after_saving_like_pytorch(case, torch):
    ours, theirs = _changed_after_saving(mg, case), _changed_after_saving(torch, case)
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        assert "modified by an inplace operation" in ours and "clone()" in ours


def test_a_custom_function_whose_saved_tensor_was_changed_refuses_too():
    class Square(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    out = Square.apply(x).sum()
    with mg.no_grad():
        x.mul_(3)
    with pytest.raises(RuntimeError, match="SquareBackward saved it in the forward pass"):
        out.backward()
    assert x.grad is None


def test_a_change_is_still_noticed_after_dead_arrays_were_forgotten():
    """Tensors come and go between the forward pass and the change: a saved tensor changed
    in place afterwards must still make backward refuse, through itself or through a view."""
    for change in (lambda x: x.mul_(2), lambda x: x[1:].zero_(), lambda x: x.view(2, 2).add_(1)):
        for _ in range(100):
            mg.zeros(3).add_(1)  # other tensors changed in between
        w = mg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        x = mg.tensor([1.0, 2.0, 3.0, 4.0])
        loss = (w * x).sum()
        change(x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
        assert w.grad is None


def test_a_change_through_a_view_of_an_array_on_a_foreign_buffer_is_noticed():
    """np.frombuffer's array has the buffer as base, and its views the array: all of them
    share one version counter."""
    x = mg.from_numpy(np.frombuffer(bytearray(16), dtype=np.float32))
    w = mg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    loss = (w * x).sum()
    x[1:].add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
