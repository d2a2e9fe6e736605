"""One set of checks for Tensor.backward, autograd.backward and autograd.grad: each mistake
raises the exception PyTorch raises, with one message whichever entry point was used."""

import pytest

import minigrad as mg
from parity import errors_of_both


def _x(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


MISTAKES = {
    "no_grad_method": lambda lib: lib.tensor(1.0).backward(),
    "no_grad_function": lambda lib: lib.autograd.backward(lib.tensor(1.0)),
    "no_grad_second": lambda lib: lib.autograd.backward([(_x(lib) * 2).sum(), lib.tensor(1.0)]),
    "no_grad_grad": lambda lib: lib.autograd.grad(lib.tensor(1.0), _x(lib)),
    "not_scalar_method": lambda lib: (_x(lib) * 2).backward(),
    "not_scalar_function": lambda lib: lib.autograd.backward(_x(lib) * 2),
    "not_scalar_grad": lambda lib: lib.autograd.grad(_x(lib) * 2, _x(lib)),
    "shape_method": lambda lib: (_x(lib) * 2).backward(lib.ones(3)),
    "shape_grad": lambda lib: (lambda x: lib.autograd.grad(x * 2, x, lib.ones(3)))(_x(lib)),
    "shape_0dim": lambda lib: (_x(lib) * 2).sum().backward(lib.ones(1)),
    "number_gradient": lambda lib: (_x(lib) * 2).backward([1.0, 1.0]),
    "number_grad_outputs": lambda lib: (lambda x: lib.autograd.grad((x * 2).sum(), x,
                                                                    [2.0]))(_x(lib)),
    "too_few_gradients": lambda lib: (lambda x: lib.autograd.backward(
        [(x * 2).sum(), (x * 3).sum()], [lib.ones(())]))(_x(lib)),
    "too_few_grad_outputs": lambda lib: (lambda x: lib.autograd.grad(
        [(x * 2).sum(), (x * 3).sum()], [x], [lib.ones(())]))(_x(lib)),
    "empty_inputs_backward": lambda lib: (_x(lib) * 2).sum().backward(inputs=[]),
    "empty_inputs_grad": lambda lib: lib.autograd.grad((_x(lib) * 2).sum(), []),
    "input_without_grad": lambda lib: lib.autograd.grad((_x(lib) * 2).sum(), lib.ones(2)),
    "unused_input": lambda lib: (lambda x: lib.autograd.grad(
        (x * 2).sum(), [x, lib.ones(2, requires_grad=True)]))(_x(lib)),
    "materialize_not_allowed": lambda lib: (lambda x: lib.autograd.grad(
        (x * 2).sum(), x, materialize_grads=True, allow_unused=False))(_x(lib)),
    "freed": lambda lib: (lambda z: (z.backward(), z.backward()))((_x(lib) * _x(lib)).sum()),
}

SAME_MESSAGE = {  # mistakes that reach the same check through different entry points
    "no_grad": ["no_grad_method", "no_grad_function", "no_grad_grad"],
    "not_scalar": ["not_scalar_method", "not_scalar_function", "not_scalar_grad"],
    "shape": ["shape_method", "shape_grad"],
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_exception_type_as_pytorch(torch, name):
    ours, theirs = errors_of_both(MISTAKES[name], torch)
    assert type(ours) is type(theirs), (ours, theirs)
    # PyTorch's own words come first (minigrad may add a hint after them)
    theirs_text = str(theirs).replace("torch.Size", "minigrad.Size").split("\n")[0]
    assert str(ours).startswith(theirs_text.rstrip(".")), (str(ours), theirs_text)


@pytest.mark.parametrize("group", list(SAME_MESSAGE))
def test_one_message_per_mistake(group):
    messages = set()
    for name in SAME_MESSAGE[group]:
        with pytest.raises(RuntimeError) as error:
            MISTAKES[name](mg)
        messages.add(str(error.value))
    assert len(messages) == 1, messages


def test_retain_graph_defaults_to_create_graph(torch):
    for lib in (mg, torch):
        x = _x(lib)
        y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        y.backward()  # the graph was kept: backward through it again works
        assert x.grad.tolist() == [3.0, 12.0] and g.requires_grad


def test_backward_into_inputs_only(torch):
    results = []
    for lib in (mg, torch):
        x, w = _x(lib), lib.tensor([3.0, 4.0], requires_grad=True)
        lib.autograd.backward((x * w).sum(), inputs=[w])
        results.append((x.grad, w.grad.tolist()))
    assert results[0][0] is None and results[1][0] is None
    assert results[0][1] == results[1][1]


def test_materialize_grads(torch):
    for lib in (mg, torch):
        x, y = _x(lib), lib.ones(2, requires_grad=True)
        gx, gy = lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        assert gx.tolist() == [2.0, 2.0] and gy.tolist() == [0.0, 0.0]


def test_gradient_edge(torch):
    x = _x(mg)
    assert mg.autograd.graph.get_gradient_edge(x).node is mg.graph.get_gradient_edge(x)[0]
    assert type(mg.autograd.graph.get_gradient_edge(x).node).__name__ == "AccumulateGrad"
    y = x * 2
    assert mg.autograd.graph.get_gradient_edge(y).node is y.grad_fn
    ours, theirs = errors_of_both(
        lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(2)), torch)
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_tensor_module_imports_no_op():
    """_tensor.py imports neither autograd nor any op (both build on it): import-linter's
    layers contract checks the whole package; this is the one rule read from the source."""
    import inspect
    import minigrad._tensor
    source = inspect.getsource(minigrad._tensor)
    assert "autograd" not in source.split('"""', 2)[2].split("class Tensor")[0]
    assert "from .ops" not in source and "import ops" not in source
