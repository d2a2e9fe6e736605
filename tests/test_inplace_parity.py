"""In-place ops on 0-dim results against PyTorch.

Reductions (``x.sum()``), arithmetic with Python numbers (``t * 1``) and indexing (``x[0]``)
give 0-dim tensors, and code changes them in place all the time: ``correct += (pred ==
labels).sum()``, ``loss_sum.zero_()``, ``optimizer.step()`` on a scalar parameter. Each
source below is crossed with each in-place method; the two libraries run the same code and
must agree on the values, the dtype, the returned object, the node name, the gradients of
the leaf and, where PyTorch refuses (``int_tensor += 1.5``), on the exception type and on
the tensor being left as it was.
"""

import numpy as np
import pytest

import minigrad as mg


def _leaf(lib, values, grad):
    return lib.tensor(values, requires_grad=grad)


# name -> (function of (lib, leaf) giving a 0-dim tensor, leaf values, can require grad)
SOURCES = {
    "sum": (lambda lib, x: x.sum(), [1.0, 2.0, 3.0], True),
    "mean": (lambda lib, x: x.mean(), [1.0, 2.0, 4.5], True),
    "max": (lambda lib, x: x.max(), [1.0, 5.0, 3.0], True),
    "min": (lambda lib, x: x.min(), [1.0, -5.0, 3.0], True),
    "prod": (lambda lib, x: x.prod(), [1.0, -2.0, 3.0], True),
    "times_one": (lambda lib, x: x * 1, 2.0, True),
    "plus_float": (lambda lib, x: x + 0.5, 2.0, True),
    "number_minus": (lambda lib, x: 1 - x, 2.0, True),
    "divided": (lambda lib, x: x / 4, 3.0, True),
    "squared": (lambda lib, x: x ** 2, 3.0, True),
    "negated": (lambda lib, x: -x, 2.0, True),
    "exp": (lambda lib, x: x.exp(), 0.5, True),  # these four save their result
    "sigmoid": (lambda lib, x: x.sigmoid(), 0.5, True),
    "tanh": (lambda lib, x: x.tanh(), -0.5, True),
    "sqrt": (lambda lib, x: x.sqrt(), 2.0, True),
    "std": (lambda lib, x: x.std(), [1.0, 2.0, 3.0], True),
    "dot": (lambda lib, x: x @ lib.tensor([3.0, -1.0]), [1.0, 2.0], True),
    "mse_loss": (lambda lib, x: lib.nn.functional.mse_loss(x, lib.zeros(2)), [1.0, 2.0], True),
    "index": (lambda lib, x: x[0], [1.5, 2.0], False),
    "int_sum": (lambda lib, x: x.sum(), [1, 2, 3], False),
    "correct_count": (lambda lib, x: (x == lib.tensor([1, 2, 4])).sum(), [1, 2, 3], False),
    "int_times_two": (lambda lib, x: x * 2, 3, False),
    "argmax": (lambda lib, x: x.argmax(), [1.0, 3.0, 2.0], False),
    "equal": (lambda lib, x: x == 2, 2.0, False),
    "int_divided": (lambda lib, x: x / 2, 3, False),
}

# name -> function of (lib, t) that changes t in place and returns what the method returns
METHODS = {
    "zero_": lambda lib, t: t.zero_(),
    "fill_": lambda lib, t: t.fill_(1.5),
    "fill_int": lambda lib, t: t.fill_(7),
    "fill_tensor": lambda lib, t: t.fill_(lib.tensor(4.0)),
    "add_": lambda lib, t: t.add_(1),
    "add_float": lambda lib, t: t.add_(1.5),
    "add_tensor_alpha": lambda lib, t: t.add_(lib.tensor(2.0), alpha=3),
    "sub_": lambda lib, t: t.sub_(1),
    "mul_": lambda lib, t: t.mul_(3),
    "mul_float": lambda lib, t: t.mul_(0.5),
    "div_": lambda lib, t: t.div_(2),
    "div_tensor": lambda lib, t: t.div_(lib.tensor(4.0)),
    "iadd": lambda lib, t: t.__iadd__(1),
    "iadd_float": lambda lib, t: t.__iadd__(1.5),
    "iadd_int_tensor": lambda lib, t: t.__iadd__(lib.tensor(2)),
    "isub": lambda lib, t: t.__isub__(lib.tensor(0.25)),
    "imul": lambda lib, t: t.__imul__(2),
    "itruediv": lambda lib, t: t.__itruediv__(2),
    "clamp_": lambda lib, t: t.clamp_(0, 1),
    "clamp_min": lambda lib, t: t.clamp_(min=2.5),
    "relu_": lambda lib, t: t.relu_(),
    "copy_": lambda lib, t: t.copy_(lib.tensor(7.25)),
    "copy_int": lambda lib, t: t.copy_(lib.tensor(7)),
    "masked_fill_": lambda lib, t: t.masked_fill_(lib.tensor(True), 5.0),
    "masked_fill_false": lambda lib, t: t.masked_fill_(lib.tensor(False), 5.0),
    "addcmul_": lambda lib, t: t.addcmul_(lib.tensor(2.0), lib.tensor(3.0), value=0.5),
    "addcdiv_": lambda lib, t: t.addcdiv_(lib.tensor(2.0), lib.tensor(4.0)),
    "leaky_relu_": lambda lib, t: lib.nn.functional.leaky_relu(t, 0.1, inplace=True),
}

CASES = [(source, method, grad) for source, (_, _, can_grad) in SOURCES.items()
         for grad in ((False, True) if can_grad else (False,)) for method in METHODS]


def _dtype(t):
    return str(t.dtype).split(".")[-1]


def _numbers(values):
    """Values to compare: rounded (tanh and std differ in the last bit between numpy and
    PyTorch), as text so that nan equals nan."""
    return repr(np.round(np.asarray(values, dtype=float), 5).tolist())


def _state(t):
    return (_numbers(t.tolist()), _dtype(t), tuple(t.shape))


def _node_name(node):
    """PyTorch names some nodes with a namespace (torch::autograd::CopyBackwards)."""
    return node.name().rsplit("::", 1)[-1]


def _run(lib, source, method, grad):
    """What happens, step by step, until the end or the first exception."""
    make, values, _ = SOURCES[source]
    x = _leaf(lib, values, grad)
    t = make(lib, x)
    seen = [("made", _state(t))]
    try:
        returned = METHODS[method](lib, t)
        seen.append(("changed", _state(t), returned is t,
                     _node_name(t.grad_fn) if t.grad_fn is not None else None))
        if grad:
            (t * 2).backward()
            seen.append(("grad", _numbers(x.grad.tolist()) if x.grad is not None else None))
    except Exception as error:  # the type is compared with PyTorch's, and t must be unchanged
        seen.append(("raised", type(error).__name__, _state(t)))
    return seen


@pytest.mark.parametrize("source,method,grad", CASES,
                         ids=[f"{s}-{m}{'-grad' if g else ''}" for s, m, g in CASES])
def test_in_place_on_a_0_dim_result_matches_pytorch(source, method, grad, torch):
    ours, theirs = _run(mg, source, method, grad), _run(torch, source, method, grad)
    assert ours == theirs


def test_in_place_on_a_0_dim_result_gives_an_array_that_numpy_changes():
    """The storage of a 0-dim result is a 0-dim ndarray, never a numpy scalar."""
    x = mg.tensor([1.0, 2.0])
    for t in (x.sum(), x.mean(), x.max(), mg.tensor(2.0) * 1, x @ x, (x == 1).sum()):
        assert type(t._data) is np.ndarray and t._data.shape == ()


# (dtype, in-place change, operand): PyTorch's rule is that a tensor holds a result of its own
# kind or a lower one (float32 += float64, uint8 += int64 wrap around) but never a higher one
# (int += 1.5, int /= 2, bool += 1 raise and leave the tensor as it was).
DTYPE_RULES = [
    ("int64", "iadd", 1.5), ("int64", "iadd", 2), ("int64", "iadd", "float32"),
    ("int64", "imul", 2), ("int64", "itruediv", 2), ("int64", "div_", "int64"),
    ("int64", "sub_", 5), ("bool", "iadd", 1), ("bool", "iadd", True),
    ("bool", "add_", "int64"), ("bool", "mul_", "bool"), ("uint8", "iadd", "int64"),
    ("uint8", "sub_", 5), ("int32", "iadd", "int64"), ("float32", "iadd", "float64"),
    ("float32", "imul", "int64"), ("float32", "itruediv", "bool"), ("float64", "iadd", 1),
    ("int64", "clamp_", 2.5), ("int64", "clamp_", 2), ("bool", "clamp_", 0),
    ("int64", "fill_", 1.7), ("bool", "fill_", 5), ("int64", "copy_", "float32"),
    ("bool", "copy_", "float32"), ("int64", "relu_", None), ("bool", "relu_", None),
    ("int64", "masked_fill_", 2.5), ("float32", "zero_", None), ("int64", "zero_", None),
]


def _apply_rule(lib, dtype, change, operand):
    t = lib.tensor([3, 0, 200, 1], dtype=getattr(lib, dtype))
    if isinstance(operand, str):
        operand = lib.tensor([2.7, 0.0, 100.0, 1.0]).to(getattr(lib, operand))
    args = {"clamp_": lambda: (operand,), "relu_": tuple, "zero_": tuple,
            "masked_fill_": lambda: (lib.tensor([True, False, True, False]), operand)}
    try:
        returned = getattr(t, f"__{change}__" if change[0] == "i" else change)(
            *args.get(change, lambda: (operand,))())
        return "changed", returned is t, _state(t)
    except Exception as error:
        return "raised", type(error).__name__, _state(t)


@pytest.mark.parametrize("dtype,change,operand", DTYPE_RULES,
                         ids=[f"{d}-{c}-{o}" for d, c, o in DTYPE_RULES])
def test_in_place_keeps_the_dtype_or_refuses_like_pytorch(dtype, change, operand, torch):
    assert _apply_rule(mg, dtype, change, operand) == _apply_rule(torch, dtype, change, operand)


def _count_correct(lib):
    """The evaluation loop of every tutorial: count the right answers, print the accuracy."""
    predicted, labels = lib.tensor([1, 0, 2, 2]), lib.tensor([1, 1, 2, 0])
    correct, correct_tensor, correct_items, total = 0, lib.tensor(0), 0, 0
    for _ in range(3):
        correct += (predicted == labels).sum()
        correct_tensor += (predicted == labels).sum()
        correct_items += (predicted == labels).sum().item()
        total += labels.size(0)
    seen = [_state(correct), _state(correct_tensor), correct.item(), correct_items,
            _state(100 * correct / total), _state(100. * correct_tensor / total),
            (100 * correct / total).item()]
    running_loss = lib.tensor(0.0)
    for loss in (lib.tensor(0.5), lib.tensor(0.25)):
        running_loss += loss
    seen.append(_state(running_loss / 2))
    return seen


def test_counting_correct_answers_matches_pytorch(torch):
    assert _count_correct(mg) == _count_correct(torch)


def _copy_into_a_result(lib, dtype):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([[5.0], [6.0]], dtype=getattr(lib, dtype), requires_grad=True)
    t = a * lib.ones(2, 3)
    t.copy_(b)
    (t * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    return (t.tolist(), _node_name(t.grad_fn), a.grad.tolist(), b.grad.tolist(),
            _dtype(b.grad))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_copy_into_a_result_gives_its_inputs_a_zero_gradient(dtype, torch):
    """``t.copy_(b)``: t's old values (and so ``a``) get gradient 0, not None; ``b`` gets the
    gradient summed over the dims it was broadcast along, in its own dtype."""
    ours = _copy_into_a_result(mg, dtype)
    assert ours == _copy_into_a_result(torch, dtype)
    assert ours[2] == [0.0, 0.0, 0.0]


def _fill_with_a_tensor(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    v = lib.tensor(4.0, dtype=lib.float64, requires_grad=True)
    t = (a * 1).fill_(v)
    (t * lib.tensor([2.0, 3.0])).sum().backward()
    return t.tolist(), _node_name(t.grad_fn), a.grad.tolist(), v.grad.item(), _dtype(v.grad)


def test_fill_with_a_0_dim_tensor_gives_it_the_gradient(torch):
    assert _fill_with_a_tensor(mg) == _fill_with_a_tensor(torch)


def _train_after_replacing_data(lib):
    """``p.data = ...`` between steps, as older tutorials do (and vector_to_parameters)."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    lin.weight.data = lib.ones(2, 3)
    lin.bias.data = lib.tensor([0.5, -0.5])
    opt = lib.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    x = lib.tensor([[1.0, 2.0, 3.0]])
    for _ in range(2):
        opt.zero_grad()
        lin(x).pow(2).sum().backward()
        opt.step()
        lin.weight.data = lin.weight.data * 0.5
    scalar = lib.nn.Parameter(lib.tensor(2.0))
    scalar.data = lib.tensor(3.0) * 1  # a 0-dim result as the new storage
    (scalar * scalar).backward()
    with lib.no_grad():
        scalar -= 0.25 * scalar.grad
    return [_numbers(lin.weight.tolist()), _numbers(lin.bias.tolist()),
            _numbers(lin.weight.grad.tolist()), _state(scalar), _state(scalar.grad)]


def test_training_after_replacing_data_matches_pytorch(torch):
    assert _train_after_replacing_data(mg) == _train_after_replacing_data(torch)


def _replace_data(lib, case):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    try:
        if case == "another shape":
            w.data = lib.tensor([10.0, 20.0])
        elif case == "another float dtype":
            w.data = lib.tensor([10.0, 20.0, 30.0], dtype=lib.float64)
        elif case == "shared memory":
            new = lib.tensor([10.0, 20.0, 30.0])
            w.data = new
            new.add_(1)
        elif case == "integers":
            w.data = lib.tensor([1, 2, 3])
        elif case == "a list":
            w.data = [1.0, 2.0, 3.0]
        elif case == "another shape once .grad exists":
            (w * w).sum().backward()
            w.data = lib.tensor([10.0, 20.0])
        (w * w).sum().backward()
        return _state(w), _state(w.grad), w.is_leaf, w.requires_grad
    except Exception as error:
        return type(error).__name__, _state(w)


@pytest.mark.parametrize("case", ["another shape", "another float dtype", "shared memory",
                                  "integers", "a list", "another shape once .grad exists"])
def test_replacing_data_then_forward_and_backward_matches_pytorch(case, torch):
    assert _replace_data(mg, case) == _replace_data(torch, case)


def test_replacing_data_under_a_recorded_graph_refuses_its_backward():
    """PyTorch's saved leaf sees the new values; minigrad saved the old array, so it refuses
    (as after an in-place change) instead of giving a gradient of the old values."""
    w = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    w.data = mg.tensor([10.0, 20.0, 30.0])
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*x\.data = "):
        loss.backward()
    assert w.grad is None
    (w * w).sum().backward()  # a forward pass after the change is fine
    assert w.grad.tolist() == [20.0, 40.0, 60.0]


def _assign_into_a_0_dim_result(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = lib.tensor(4.0, requires_grad=True)
    t = x.sum()
    t[...] = v * 2
    (t * 3).backward()
    return _state(t), _numbers(x.grad.tolist()), _numbers(v.grad.tolist())


def test_assigning_into_a_0_dim_result_then_backward_matches_pytorch(torch):
    """The gradient that reaches the assignment is 0-dim (a numpy scalar on numpy's side)."""
    assert _assign_into_a_0_dim_result(mg) == _assign_into_a_0_dim_result(torch)


VIEW_FILLS = {
    "zero_ on a slice": lambda h, v, s: h[:2].zero_(),
    "zero_ on an element": lambda h, v, s: h[0].zero_(),
    "fill_ with a number": lambda h, v, s: h[1].fill_(3.),
    "fill_ with a 0-dim tensor": lambda h, v, s: h[1:3].fill_(v),
    "copy_": lambda h, v, s: h[2:].copy_(s),
    "copy_ broadcast": lambda h, v, s: h[1:3].copy_(v),
}


@pytest.mark.parametrize("op", VIEW_FILLS.values(), ids=VIEW_FILLS.keys())
def test_fill_zero_copy_on_a_view_in_the_graph_match_pytorch(op, torch):
    """zero_, fill_ and copy_ on a view of a tensor in the graph go through the base's
    CopySlices: the overwritten part gets no gradient, the source tensor gets it."""
    def run(lib):
        x = lib.tensor([1., 2., 3., 4.], requires_grad=True)
        v = lib.tensor(5., requires_grad=True)
        s = lib.tensor([7., 8.], requires_grad=True)
        h = x * 2
        op(h, v, s)
        (h * lib.tensor([1., 2., 3., 4.])).sum().backward()
        grads = [t.grad.tolist() if t.grad is not None else None for t in (x, v, s)]
        return grads, h.tolist(), h.grad_fn.name().split("::")[-1]
    assert run(mg) == run(torch)


def _set_first(t, value):
    t[0] = value
    return t


# each: (lib, h) -> the tensor to backpropagate from
SAVED_OUTPUT_CHANGED = {
    "relu_ twice": lambda lib, h: h.relu_().relu_(),
    "relu_ then add_": lambda lib, h: h.relu_().add_(1),
    "relu_ then x[0] = 1": lambda lib, h: _set_first(h.relu_(), 1.0),
    "relu_ then mul_ of a 0-dim result": lambda lib, h: h.sum().relu_().mul_(2),
}


@pytest.mark.parametrize("change", SAVED_OUTPUT_CHANGED.values(), ids=SAVED_OUTPUT_CHANGED.keys())
def test_changing_the_output_an_in_place_op_saved_refuses_backward(change, torch):
    """relu_ keeps its result for backward: changing the tensor again afterwards makes
    backward refuse, in both libraries."""
    for lib in (mg, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        t = change(lib, x * 1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            t.sum().backward()


def test_relu_in_place_once_still_backpropagates(torch):
    grads = []
    for lib in (mg, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x * 3).relu_().sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


WRITES_INTO_INTEGERS = {
    "copy_": lambda lib, x, v: x.copy_(v),
    "x[0] = v": lambda lib, x, v: x.__setitem__(0, v),
}


@pytest.mark.parametrize("write", WRITES_INTO_INTEGERS.values(), ids=WRITES_INTO_INTEGERS.keys())
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_writing_a_value_that_requires_grad_into_an_integer_tensor_is_not_recorded(
        write, dtype, torch):
    results = []
    for lib in (mg, torch):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        write(lib, x, lib.tensor(1.5, requires_grad=True))
        results.append((x.tolist(), x.requires_grad, x.grad_fn is None))
    assert results[0] == results[1]


@pytest.mark.parametrize("write", ["x.fill_(v)", "x[...] = v", "x[x == 0] = v",
                                   "x.masked_fill_(x == 0, v)"])
def test_minigrad_never_records_a_write_into_an_integer_tensor(write, torch):
    """A deliberate difference: PyTorch records these (its integer tensor then requires
    grad, which it refuses everywhere else); minigrad writes the value and records nothing.
    The values are PyTorch's."""
    values = []
    for lib in (mg, torch):
        x = lib.zeros(2, dtype=lib.int64)
        exec(write, {"x": x, "v": lib.tensor(1.5, requires_grad=True)})
        values.append(x.tolist())
        if lib is mg:
            assert not x.requires_grad and x.grad_fn is None
    assert values[0] == values[1]


def test_replacing_data_refuses_a_graph_that_saved_a_cast_of_the_old_array():
    """A float32 tensor times a float64 one: the op saved a float64 copy of the old values,
    which no longer stand for the tensor once ``w.data = ...`` gave it other memory."""
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    y = mg.tensor([3.0, 4.0], dtype=mg.float64, requires_grad=True)
    loss = (w * y).sum()
    w.data = mg.tensor([5.0, 6.0])
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*x\.data = "):
        loss.backward()
    assert y.grad is None
