"""Everyday PyTorch idioms give the same result with ``import minigrad as torch``: each case is
written once and run with both libraries."""

import numpy as np
import pytest

import minigrad as mg


def _transposed_then_viewed(lib):
    t = lib.arange(6.0).reshape(2, 3).t()
    return [t.is_contiguous(), t.contiguous().is_contiguous(), t.contiguous().view(6).tolist()]


def _bare_no_grad_decorator(lib):
    @lib.no_grad
    def triple(t):
        return t * 3
    out = triple(lib.ones(2, requires_grad=True))
    return [type(out).__name__, out.requires_grad, out.tolist()]


def _device_fallback(lib):
    return str(lib.device("cuda" if lib.cuda.is_available() else "cpu"))


def _collated_batch(lib):
    class Pairs(lib.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return lib.tensor([float(i)]), i, f"s{i}"
    batch = next(iter(lib.utils.data.DataLoader(Pairs(), batch_size=2)))
    return [type(batch).__name__, batch[0].tolist(), batch[1].tolist(), list(batch[2]),
            type(batch[2]).__name__]


def _state_dict_order_and_tied_weights(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("steps", lib.zeros(1))
            self.fc = lib.nn.Linear(2, 2)
            self.out = lib.nn.Linear(2, 2)
            self.out.weight = self.fc.weight  # tied
    return list(Net().state_dict())


def _int32_class_targets(lib):
    with pytest.raises(RuntimeError, match="Long"):
        lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0, 1], dtype=lib.int32))
    return True


def _assignment_grad_fn_names(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    names = []
    for key in (slice(1, 2), [0, 2]):
        y = x * 1
        y[key] = 0.0
        names.append(type(y.grad_fn).__name__)
    return names


def _legacy_type_names(lib):
    return [lib.ones(1).type().split(".")[1], lib.ones(1, dtype=lib.int64).type().split(".")[1],
            lib.ones(1, dtype=lib.float64).type().split(".")[1]]


def _numpy_keyword_names(lib):
    x = lib.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    return [x.sum(axis=1).tolist(), list(x.mean(1, keepdims=True).shape),
            x.max(axis=1).values.tolist(), x.argmax(axis=1).tolist(),
            lib.sum(x, axis=0).tolist(), x.softmax(axis=1).argmax(1).tolist()]


def _module_list(lib):
    class Tower(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
            self.layers.append(lib.nn.Linear(2, 1))

        def forward(self, x):
            for layer in self.layers[:-1]:
                x = layer(x).relu()
            return self.layers[-1](x)
    lib.manual_seed(0)
    tower = Tower()
    with lib.no_grad():
        for p in tower.parameters():
            p.fill_(0.5)
    out = tower(lib.ones(1, 2))
    return [len(tower.layers), [n for n, _ in tower.named_parameters()][:3],
            round(out.item(), 6), repr(tower.layers[1])]


def _module_list_repr(lib):
    nn = lib.nn
    return [repr(nn.ModuleList()), repr(nn.ModuleList(
        [nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(1, 1)),
         nn.Sequential(nn.Linear(1, 1)), nn.Linear(2, 2)]))]


def _binary_loss_node_names(lib):
    x = lib.tensor([0.5, -1.0], requires_grad=True)
    t = lib.tensor([1.0, 0.0])
    return [type(lib.nn.BCELoss()(x.sigmoid(), t).grad_fn).__name__,
            type(lib.nn.BCEWithLogitsLoss()(x, t).grad_fn).__name__]


def _relu_in_place(lib):
    x = lib.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    h = x * 2
    out = lib.nn.ReLU(inplace=True)(h)
    (out * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    data = lib.tensor([-1.0, 1.0])
    lib.nn.functional.relu(data, inplace=True)
    return [out is h, h.tolist(), type(h.grad_fn).__name__, x.grad.tolist(), data.tolist()]


IDIOMS = {f.__name__.strip("_"): f for f in (
    _relu_in_place,
    _binary_loss_node_names,
    _module_list, _module_list_repr,
    _numpy_keyword_names,
    _transposed_then_viewed, _bare_no_grad_decorator, _device_fallback, _collated_batch,
    _state_dict_order_and_tied_weights, _int32_class_targets, _assignment_grad_fn_names,
    _legacy_type_names)}


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_idiom_matches_pytorch(idiom, torch):
    assert IDIOMS[idiom](mg) == IDIOMS[idiom](torch)


def test_contiguous_copies_only_when_needed_and_keeps_the_graph():
    x = mg.ones(2, 3, requires_grad=True)
    assert (x * 1).contiguous() is not None and x.contiguous() is x
    y = (x * 2).t().contiguous()
    assert y.grad_fn.name() == "CloneBackward0"
    y.view(6).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("make", [
    "[lib.ones(2), lib.ones(2)]", "[lib.tensor(1.0), lib.tensor(2.0)]", "[lib.ones(1), lib.ones(1)]",
    "[[lib.ones(1, 1), 2.0], [3, lib.tensor(4)]]", "[lib.tensor(1), lib.tensor(2)]",
    "[lib.tensor(1.0, dtype=lib.float64), 2]", "(lib.ones(1), 2.5)", "[lib.tensor(True), False]",
    "[lib.tensor(2), 2.5]", "[[lib.tensor(2)], [lib.tensor(3)]]",
])
def test_tensor_of_a_list_holding_tensors_is_pytorchs(torch, make):
    """Each tensor in the list is one number (shape, dtype as PyTorch: a Python float is the
    default float32); a tensor of more than one number raises ValueError, as in PyTorch."""
    results = []
    for lib in (mg, torch):
        try:
            t = lib.tensor(eval(make, {"lib": lib}))
            results.append((tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist()))
        except ValueError as error:
            results.append(("ValueError", "one element" in str(error)))
    assert results[0] == results[1]
