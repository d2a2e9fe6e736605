"""Three classes of crash or silent difference that differential fuzzing against PyTorch
found (issue "The PyTorch that the next programs use"), each against PyTorch: a gradient
path through a 0-dim result (numpy hands a 0-dim gradient over as a scalar), ``F.linear``
on inputs with no features, and ``copy_`` from a source of higher rank; and two the fuzz
test found later (an index error's order, var of a 0-dim tensor)."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

ZERO_DIM_PATHS = [
    "(x.max(dim=-1)[0] * 2)",
    "(x.max(dim=-1).values.expand(3) * x).sum()",
    "(x.sum().T * x).sum()",
    "(x.min(dim=0)[0] * x.sum()) ** 2",
    "(x.sum() * 3).unsqueeze(0).sum()",
    "(x.max() * x.mean()).exp()",
    "x[1] * x[2] * 0.5",
    "(x.sum().reshape(1, 1) * x).sum()",
]


@pytest.mark.filterwarnings("ignore:Tensor.T is deprecated on 0-D tensors")
@pytest.mark.parametrize("program", ZERO_DIM_PATHS)
def test_a_gradient_through_a_0_dim_result(torch, program):
    grads = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        out = eval(program, {"x": x})
        out.backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1], rel=1e-6)


@pytest.mark.parametrize("x_shape, w_shape", [
    ((0,), (3, 0)), ((2, 0), (3, 0)), ((5, 2, 0), (3, 0)), ((0, 4), (3, 4)), ((2, 0, 4), (3, 4)),
])
def test_linear_with_empty_inputs(torch, x_shape, w_shape):
    results = []
    for lib, functional in ((mg, F), (torch, torch.nn.functional)):
        x = lib.ones(*x_shape, requires_grad=True)
        w = lib.ones(*w_shape, requires_grad=True)
        b = lib.ones(w_shape[0], requires_grad=True)
        y = functional.linear(x, w, b)
        y.sum().backward()
        results.append((tuple(y.shape), y.sum().item(), tuple(x.grad.shape),
                        w.grad.sum().item(), b.grad.sum().item()))
    assert results[0] == results[1]


@pytest.mark.parametrize("target, source", [
    ((2, 4), (1, 2, 4)), ((4,), (1, 4)), ((2, 4), (3, 4)), ((2, 4), (4,)), ((2, 4), ()),
    ((2, 4), (2, 1)),
])
def test_copy_broadcasts_the_source_to_the_target_never_beyond(torch, target, source):
    outcomes = []
    for lib in (mg, torch):
        t = lib.zeros(*target)
        try:
            t.copy_(lib.full(source, 2.0))
            outcomes.append(("ok", t.tolist()))
        except RuntimeError as error:
            outcomes.append(("RuntimeError", str(error).split(":")[0]))
    assert outcomes[0][0] == outcomes[1][0], outcomes
    if outcomes[0][0] == "ok":
        assert outcomes[0] == outcomes[1]
    else:
        assert outcomes[1][1] in outcomes[0][1] or outcomes[0][1].startswith(outcomes[1][1])
        zeros = mg.zeros(*target)
        with pytest.raises(RuntimeError):
            zeros.copy_(mg.full(source, 1.0))
        assert zeros.tolist() == mg.zeros(*target).tolist(), "a refused copy_ changes nothing"


@pytest.mark.parametrize("key", [(0, slice(None, None, -1)), (None, 5, slice(None, None, -1)),
                                 (1, None, 0, slice(None, None, -1)),
                                 (slice(None), slice(None, None, -1))])
def test_an_integer_out_of_range_before_a_backward_slice_is_the_error(key, torch):
    """Found by the fuzz test: PyTorch applies an index one dim at a time, so x[0, ::-1] on
    an empty first dim is an IndexError, not the backward slice's ValueError."""
    errors = []
    for lib in (mg, torch):
        try:
            lib.zeros(2, 0, 3)[key] if len(key) > 2 else lib.zeros(0, 1)[key]
        except (IndexError, ValueError) as error:
            errors.append((type(error), str(error).split(" (tensor")[0]))
    assert len(errors) == 2 and errors[0] == errors[1]


def test_var_of_a_0_dim_tensor_with_a_dim_and_a_large_correction(torch):
    """Found by the fuzz test: PyTorch's backward takes its whole-tensor rule for a 0-dim
    input (inf or nan), where minigrad gave 2 / (1 - correction) * 0 = -0."""
    grads = []
    for lib in (mg, torch):
        x = lib.tensor(0.0, dtype=lib.float64, requires_grad=True)
        x.var(dim=-1, correction=2).sum().backward()
        grads.append(x.grad.item())
    assert np.isnan(grads[0]) and np.isnan(grads[1])
