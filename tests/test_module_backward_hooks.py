"""``Module.register_full_backward_hook`` and ``register_full_backward_pre_hook`` against
PyTorch: what each hook sees, in which order, what a returned value replaces, the errors."""

import warnings

import numpy as np
import pytest
import torch

import minigrad


class Floats:
    """A gradient in a log: equal to another within float32 rounding."""

    def __init__(self, g):
        self.values = g.detach().numpy().astype(np.float64)

    def __eq__(self, other):
        return (isinstance(other, Floats) and self.values.shape == other.values.shape
                and np.allclose(self.values, other.values, rtol=1e-5, atol=1e-6))

    def __repr__(self):
        return f"Floats({self.values.round(5).tolist()})"


def floats(g):
    return None if g is None else Floats(g)


def weights(lib, model):
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            values = np.sin(np.arange(p.numel()) + i).reshape(tuple(p.shape)) / 2
            p.copy_(lib.tensor(values, dtype=lib.float32))


def mlp(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    weights(lib, model)
    return model


def x_input(lib, requires_grad=True):
    return lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32,
                      requires_grad=requires_grad)


def both(program):
    """The program's log on PyTorch and on minigrad, with warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program(torch), program(minigrad)


def hooks_see_and_replace(lib):
    log = []
    model = mlp(lib)

    def hook(module, grad_input, grad_output):
        log.append(("hook", [floats(g) for g in grad_input], [floats(g) for g in grad_output]))

    def pre(module, grad_output):
        log.append(("pre", [floats(g) for g in grad_output]))
        return (grad_output[0] * 2,)

    model[0].register_full_backward_hook(hook)
    model[2].register_full_backward_pre_hook(pre)
    model[1].register_full_backward_hook(lambda module, gi, go: (gi[0] * 3,))
    x = x_input(lib)
    out = model(x)
    log.append(out.grad_fn.name())
    out.sum().backward()
    log += [floats(x.grad), floats(model[0].weight.grad), floats(model[2].bias.grad)]
    return log


def no_input_requires_grad(lib):
    log = []
    model = mlp(lib)
    model[0].register_full_backward_hook(
        lambda module, gi, go: log.append((gi, [floats(g) for g in go])))
    model(x_input(lib, requires_grad=False)).sum().backward()
    log.append(floats(model[0].weight.grad))
    return log


def order_prepend_and_remove(lib):
    log = []
    model = lib.nn.Linear(3, 2)
    weights(lib, model)
    first = model.register_full_backward_hook(lambda m, gi, go: log.append("first"))
    model.register_full_backward_hook(lambda m, gi, go: log.append("second"))
    model.register_full_backward_hook(lambda m, gi, go: log.append("prepended"), prepend=True)
    model.register_full_backward_pre_hook(lambda m, go: log.append("pre"))
    model(x_input(lib)).sum().backward()
    first.remove()
    model(x_input(lib)).sum().backward()
    return log


class TwoOutputs:
    """A module with a non-tensor argument and two outputs, one of them unused."""

    @staticmethod
    def make(lib):
        class Split(lib.nn.Module):
            def forward(self, x, scale, y):
                return x * scale, (x * y).sum(dim=1)
        return Split()


def tuple_outputs_and_non_tensor_arguments(lib):
    log = []
    module = TwoOutputs.make(lib)
    module.register_full_backward_hook(
        lambda m, gi, go: log.append(([floats(g) for g in gi], [floats(g) for g in go])))
    x = x_input(lib)
    y = lib.tensor(np.ones((2, 3)), dtype=lib.float32)
    a, b = module(x, 2.0, y)
    a.sum().backward()
    log.append(floats(x.grad))
    return log


@pytest.mark.parametrize("program", [hooks_see_and_replace, no_input_requires_grad,
                                     order_prepend_and_remove,
                                     tuple_outputs_and_non_tensor_arguments])
def test_backward_hooks_match_pytorch(program):
    expected, got = both(program)
    assert got == expected


def test_a_hook_firing_without_input_grads_warns_as_pytorch_does():
    model = minigrad.nn.Linear(3, 2)
    model.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        model(x_input(minigrad, requires_grad=False)).sum().backward()


@pytest.mark.parametrize("lib", [torch, minigrad])
@pytest.mark.parametrize("kind", ["hook", "pre"])
def test_a_wrong_number_of_gradients_returned_raises(lib, kind):
    model = lib.nn.Linear(3, 2)
    if kind == "hook":
        model.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    else:
        model.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_"):
        model(x_input(lib)).sum().backward()


def test_named_parameters_and_buffers_keep_duplicates_when_asked():
    def names(lib):
        layer = lib.nn.Linear(2, 2)
        model = lib.nn.Sequential(layer, layer)
        model.register_buffer("b", lib.zeros(1))
        model.register_buffer("c", model.b)
        return ([n for n, _ in model.named_parameters()],
                [n for n, _ in model.named_parameters(remove_duplicate=False)],
                [n for n, _ in model.named_buffers()],
                [n for n, _ in model.named_buffers(remove_duplicate=False)])
    assert names(minigrad) == names(torch)


def test_a_deep_copied_handle_removes_from_the_copy_only():
    import copy

    def counts(lib):
        layer = lib.nn.Linear(2, 2)
        handle = layer.register_forward_hook(lambda *a: None)
        alone = copy.deepcopy(handle)
        alone.remove()
        copied_layer, copied_handle = copy.deepcopy((layer, handle))
        copied_handle.remove()
        return len(layer._forward_hooks), len(copied_layer._forward_hooks)
    assert counts(minigrad) == counts(torch)
