"""nn: Module registration, Linear, state dicts, printing, and every loss against PyTorch."""

import math
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

R = np.random.default_rng(5)


class LinearRegressionModel(nn.Module):
    def __init__(self):
        super(LinearRegressionModel, self).__init__()
        self.linear = nn.Linear(1, 1, bias=False)

    def forward(self, x):
        return self.linear(x)


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.out = nn.Linear(4, 2)
        self.scale = nn.Parameter(mg.ones(1))
        self.not_a_param = mg.zeros(2)

    def forward(self, x):
        return self.out(self.act(self.hidden(x))) * self.scale


def test_attributes_register_parameters_and_modules_in_order():
    m = TwoLayer()
    assert [n for n, _ in m.named_parameters()] == [
        "scale", "hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert [type(c).__name__ for c in m.children()] == ["Linear", "Tanh", "Linear"]
    assert len(list(m.modules())) == 4
    assert all(p.requires_grad and p.is_leaf for p in m.parameters())
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_shared_parameters_are_listed_once():
    layer = nn.Linear(2, 2)
    seq = nn.Sequential(layer, nn.ReLU(), layer)
    assert len(list(seq.parameters())) == 2


def test_linear_5_2_as_in_the_seeds():
    model = nn.Linear(5, 2)
    assert repr(model) == "Linear(in_features=5, out_features=2, bias=True)"
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [(2, 5), (2,)]
    assert nn.Linear(5, 2, bias=False).bias is None


def test_linear_initialisation_is_pytorchs():
    mg.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert w.dtype == np.float32 and np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform on [-bound, bound]: standard deviation bound / sqrt(3)
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)


def test_linear_matches_pytorch_on_every_input_rank(torch):
    for shape in [(5,), (4, 5), (2, 3, 5)]:
        for bias in (True, False):
            ours = nn.Linear(5, 3, bias=bias).double()
            theirs = torch.nn.Linear(5, 3, bias=bias).double()
            with torch.no_grad():
                theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
                if bias:
                    theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
            x = R.standard_normal(shape)
            up = R.standard_normal(shape[:-1] + (3,))
            xo = mg.tensor(x, requires_grad=True)
            xt = torch.tensor(x, requires_grad=True)
            out_o, out_t = ours(xo), theirs(xt)
            out_o.backward(mg.tensor(up))
            out_t.backward(torch.tensor(up))
            np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
            np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
            np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
            if bias:
                np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-12)


def test_linear_with_wrong_input_says_what_it_expected():
    with pytest.raises(RuntimeError, match="expects 5 input features"):
        nn.Linear(5, 2)(mg.ones(3, 4))
    with pytest.raises(RuntimeError, match="same dtype"):
        nn.Linear(5, 2)(mg.ones(3, 5, dtype=mg.float64))


def test_repr_matches_pytorch(torch):
    ours = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 2), nn.Tanh()),
                         nn.Flatten(), nn.Sigmoid(), nn.Dropout(0.2), nn.Softmax(dim=1))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(),
                                 torch.nn.Sequential(torch.nn.Linear(16, 2), torch.nn.Tanh()),
                                 torch.nn.Flatten(), torch.nn.Sigmoid(), torch.nn.Dropout(0.2),
                                 torch.nn.Softmax(dim=1))
    assert repr(ours) == repr(theirs)
    assert repr(nn.MSELoss()) == repr(torch.nn.MSELoss())
    p = nn.Parameter(mg.tensor([1.0, 2.0]))
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


def test_leaky_relu_and_regression_loss_reprs_match_pytorch(torch):
    def reprs(lib):
        nn = lib.nn
        return [repr(nn.Sequential(nn.Linear(2, 3), nn.LeakyReLU(), nn.LeakyReLU(0.2, inplace=True),
                                   nn.LeakyReLU(negative_slope=1e-3, inplace=False))),
                repr(nn.L1Loss()), repr(nn.SmoothL1Loss(beta=0.5)), repr(nn.HuberLoss(delta=2.0))]
    assert reprs(mg) == reprs(torch)


def _leaky_relu_in_place(lib):
    x = lib.tensor([-1.0, 0.0, 2.0, -3.0], requires_grad=True)
    h = x * 2
    out = lib.nn.LeakyReLU(0.1, inplace=True)(h)
    (out * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    data = lib.tensor([-1.0, 1.0])
    returned = lib.nn.functional.leaky_relu(data, 0.5, inplace=True)
    copy = lib.tensor([-1.0, 1.0])
    lib.nn.functional.leaky_relu(copy, 0.5)
    return [out is h, h.tolist(), type(h.grad_fn).__name__, x.grad.tolist(),
            returned is data, data.tolist(), copy.tolist()]


def test_leaky_relu_in_place_matches_pytorch(torch):
    assert _leaky_relu_in_place(mg) == _leaky_relu_in_place(torch)


def test_leaky_relu_in_place_refuses_what_pytorch_refuses(torch):
    for lib in (mg, torch):
        leaf = lib.tensor([-1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            lib.nn.functional.leaky_relu(leaf, inplace=True)
        assert leaf.tolist() == [-1.0, 2.0] and leaf.grad_fn is None
        # a negative slope in place: the forward pass works, backward refuses
        h = leaf * 1
        out = lib.nn.functional.leaky_relu(h, -0.5, inplace=True)
        assert out.tolist() == [0.5, 2.0]
        with pytest.raises(RuntimeError, match="negative slope"):
            out.sum().backward()
        assert leaf.grad is None


def test_zero_grad_train_eval_and_dtype():
    m = TwoLayer()
    m(mg.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert not m.eval().training and not m.hidden.training
    assert m.train().act.training
    weight = m.hidden.weight
    m.double()
    assert m.hidden.weight is weight and weight.dtype == mg.float64
    assert m(mg.randn(2, 3, dtype=mg.float64)).dtype == mg.float64


def test_state_dict_round_trip_and_strict_checks():
    a, b = TwoLayer(), TwoLayer()
    sd = a.state_dict()
    assert list(sd) == ["scale", "hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert not any(t.requires_grad for t in sd.values())
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        assert p.equal(q), n

    bad = OrderedDict(sd)
    bad["out.weight"] = mg.zeros(3, 4)
    before = [p.detach().numpy().copy() for p in b.parameters()]
    with pytest.raises(RuntimeError, match=r"size mismatch for out.weight.*\[3, 4\].*\[2, 4\]"):
        b.load_state_dict(bad)
    assert all(np.array_equal(x, p.detach().numpy()) for x, p in zip(before, b.parameters()))

    missing = OrderedDict(sd)
    del missing["scale"]
    missing["extra"] = mg.zeros(1)
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "extra"'):
        b.load_state_dict(missing)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "scale"'):
        b.load_state_dict(missing)
    result = b.load_state_dict(missing, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["extra"]


def test_parameters_need_init_first():
    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mg.ones(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Forgot()


def test_missing_forward_is_reported():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(mg.ones(1))


# ------------------------------------------------------------------------ losses vs PyTorch

def _loss_cases():
    logits = R.standard_normal((6, 4))
    idx = np.array([0, 3, 1, 1, 2, 0])
    probs = R.dirichlet(np.ones(4), size=6)
    kdim = R.standard_normal((3, 4, 5))
    kidx = R.integers(0, 4, (3, 5))
    image, image_idx = R.standard_normal((2, 4, 3, 2)), R.integers(0, 4, (2, 3, 2))
    volume, volume_idx = R.standard_normal((2, 4, 2, 2, 3)), R.integers(0, 4, (2, 2, 2, 3))
    ignored = np.where(idx == 1, -100, idx)
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    pred, target = R.standard_normal((5, 3)), R.standard_normal((5, 3))
    scores, labels = R.standard_normal((5, 3)) * 3, R.integers(0, 2, (5, 3)).astype(float)
    soft_labels = R.uniform(0, 1, (5, 3))
    class_weight, pos_weight = np.array([0.5, 2.0, 1.5]), np.array([3.0, 0.5, 1.0])
    tied = np.where(R.random((5, 3)) < 0.3, target, pred)  # some predictions exactly right
    element_weight = R.uniform(0.1, 2.0, (5, 3))
    cases = []
    for red in ("mean", "sum", "none"):
        cases += [
            (f"l1_{red}", lambda L, F, a, red=red: F.l1_loss(a, L.tensor(target), reduction=red),
             [pred]),
            (f"l1_ties_{red}", lambda L, F, a, red=red: F.l1_loss(a, L.tensor(target),
                                                                   reduction=red), [tied]),
            (f"l1_weight_{red}", lambda L, F, a, red=red: F.l1_loss(
                a, L.tensor(target), reduction=red, weight=L.tensor(element_weight)), [pred]),
            (f"l1_module_{red}", lambda L, F, a, b, red=red: L.nn.L1Loss(reduction=red)(a, b),
             [tied, target]),
            (f"smooth_l1_{red}", lambda L, F, a, red=red: F.smooth_l1_loss(
                a, L.tensor(target), reduction=red), [pred]),
            (f"smooth_l1_beta_{red}", lambda L, F, a, b, red=red: F.smooth_l1_loss(
                a, b, reduction=red, beta=0.4), [tied, target]),
            (f"smooth_l1_beta0_{red}", lambda L, F, a, red=red: F.smooth_l1_loss(
                a, L.tensor(target), reduction=red, beta=0.0), [tied]),
            (f"smooth_l1_module_{red}", lambda L, F, a, red=red: L.nn.SmoothL1Loss(
                reduction=red, beta=2.0)(a, L.tensor(target)), [pred]),
            (f"huber_{red}", lambda L, F, a, red=red: F.huber_loss(
                a, L.tensor(target), reduction=red), [pred]),
            (f"huber_delta_{red}", lambda L, F, a, b, red=red: F.huber_loss(
                a, b, reduction=red, delta=0.3), [tied, target]),
            (f"huber_weight_{red}", lambda L, F, a, red=red: F.huber_loss(
                a, L.tensor(target), reduction=red, delta=0.7, weight=L.tensor(element_weight)),
             [pred]),
            (f"huber_module_{red}", lambda L, F, a, red=red: L.nn.HuberLoss(
                reduction=red, delta=1.5)(a, L.tensor(target)), [pred]),
            (f"bce_{red}", lambda L, F, a, red=red: F.binary_cross_entropy(
                a.sigmoid(), L.tensor(labels), reduction=red), [scores]),
            (f"bce_weight_{red}", lambda L, F, a, red=red: F.binary_cross_entropy(
                a.sigmoid(), L.tensor(soft_labels), weight=L.tensor(class_weight), reduction=red),
             [scores]),
            (f"bce_logits_{red}", lambda L, F, a, red=red: F.binary_cross_entropy_with_logits(
                a, L.tensor(labels), reduction=red), [scores]),
            (f"bce_logits_weights_{red}", lambda L, F, a, red=red:
                F.binary_cross_entropy_with_logits(a, L.tensor(soft_labels),
                                                   weight=L.tensor(class_weight), reduction=red,
                                                   pos_weight=L.tensor(pos_weight)), [scores]),
            (f"mse_{red}", lambda L, F, a, red=red: F.mse_loss(a, L.tensor(target), reduction=red), [pred]),
            (f"ce_idx_{red}", lambda L, F, a, red=red: F.cross_entropy(a, L.tensor(idx), reduction=red), [logits]),
            (f"ce_idx_weight_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(idx), weight=L.tensor(weight), reduction=red), [logits]),
            (f"ce_ignore_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(np.where(idx == 1, -100, idx)), weight=L.tensor(weight), reduction=red), [logits]),
            (f"ce_probs_{red}", lambda L, F, a, red=red: F.cross_entropy(a, L.tensor(probs), reduction=red), [logits]),
            (f"ce_probs_weight_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(probs), weight=L.tensor(weight), reduction=red), [logits]),
            (f"ce_kdim_{red}", lambda L, F, a, red=red: F.cross_entropy(a, L.tensor(kidx), reduction=red), [kdim]),
            (f"ce_smooth_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(idx), weight=L.tensor(weight), label_smoothing=0.2, reduction=red), [logits]),
            (f"ce_smooth_probs_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(probs), label_smoothing=0.1, reduction=red), [logits]),
            (f"ce_image_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(image_idx), weight=L.tensor(weight), reduction=red), [image]),
            (f"ce_volume_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(volume_idx), reduction=red), [volume]),
            (f"ce_smooth_ignore_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(ignored), label_smoothing=0.3, reduction=red), [logits]),
            (f"ce_smooth_weight_ignore_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(ignored), weight=L.tensor(weight), label_smoothing=0.3,
                reduction=red), [logits]),
            (f"ce_smooth_kdim_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(kidx), label_smoothing=0.1, reduction=red), [kdim]),
            (f"ce_smooth_unbatched_{red}", lambda L, F, a, red=red: F.cross_entropy(
                a, L.tensor(2), label_smoothing=0.1, reduction=red), [logits[0]]),
            (f"nll_unbatched_weight_{red}", lambda L, F, a, red=red: F.nll_loss(
                a.log_softmax(0), L.tensor(3), weight=L.tensor(weight), reduction=red),
             [logits[0]]),
            (f"nll_{red}", lambda L, F, a, red=red: F.nll_loss(a.log_softmax(1), L.tensor(idx), reduction=red), [logits]),
            (f"ce_unbatched_{red}", lambda L, F, a, red=red: F.cross_entropy(a, L.tensor(2), reduction=red), [logits[0]]),
        ]
    cases += [
        ("seed_probs_1d", lambda L, F, a: L.nn.CrossEntropyLoss()(a, L.tensor([1.0, 2.0], dtype=L.float64)), [logits[0, :2]]),
        ("mse_target_grad", lambda L, F, a, b: F.mse_loss(a, b), [pred, target]),
        ("ce_probs_target_grad", lambda L, F, a, b: F.cross_entropy(a, b.softmax(1)), [logits, probs]),
        ("ce_huge_logits", lambda L, F, a: F.cross_entropy(a * 1000, L.tensor(idx)), [logits]),
        ("ce_huge_probs", lambda L, F, a: F.cross_entropy(a * 1000, L.tensor(probs)), [logits]),
        ("module_nll", lambda L, F, a: L.nn.NLLLoss(weight=L.tensor(weight))(
            L.nn.LogSoftmax(dim=1)(a), L.tensor(idx)), [logits]),
        ("bce_target_grad", lambda L, F, a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
         [scores, pred]),
        ("bce_logits_target_grad", lambda L, F, a, b: F.binary_cross_entropy_with_logits(
            a, b.sigmoid(), pos_weight=L.tensor(pos_weight)), [scores, pred]),
        ("bce_logits_huge", lambda L, F, a: F.binary_cross_entropy_with_logits(
            a * 1000, L.tensor(labels)), [scores]),
        ("bce_probabilities_at_0_and_1", lambda L, F, a: F.binary_cross_entropy(
            (a * 1000).sigmoid(), L.tensor(labels)), [scores]),
        ("module_bce", lambda L, F, a: L.nn.BCELoss()(L.nn.Sigmoid()(a), L.tensor(labels)),
         [scores]),
        ("module_bce_logits", lambda L, F, a: L.nn.BCEWithLogitsLoss(
            pos_weight=L.tensor(pos_weight))(a, L.tensor(labels)), [scores]),
        ("l1_float32_target", lambda L, F, a: F.l1_loss(a, L.tensor(target, dtype=L.float32)),
         [pred]),
        ("smooth_l1_float32_target", lambda L, F, a: F.smooth_l1_loss(
            a, L.tensor(target, dtype=L.float32), beta=0.5), [pred]),
        ("huber_after_leaky_relu", lambda L, F, a: F.huber_loss(
            L.nn.LeakyReLU(0.1)(a), L.tensor(target)), [pred]),
    ]
    return {name: (fn, inputs) for name, fn, inputs in cases}


LOSSES = _loss_cases()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_pytorch(name, torch):
    import torch.nn.functional as TF
    fn, inputs = LOSSES[name]
    results = []
    for lib, functional in ((mg, F), (torch, TF)):
        tensors = [lib.tensor(x, requires_grad=True) for x in inputs]
        loss = fn(lib, functional, *tensors)
        upstream = np.linspace(0.5, 1.5, int(np.prod(loss.shape))).reshape(tuple(loss.shape))
        node = type(loss.grad_fn).__name__
        loss.backward(lib.tensor(upstream))
        results.append((loss.detach().numpy(), [t.grad.numpy() for t in tensors], node))
    (ours, our_grads, our_node), (theirs, their_grads, their_node) = results
    assert our_node == their_node  # the loss's last node is named as in PyTorch
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-12)


def test_seed_cross_entropy_gradient_rows_are_opposite():
    mg.manual_seed(0)
    model = nn.Linear(5, 2)
    out = model(mg.randn(5))
    nn.CrossEntropyLoss()(out, mg.tensor([1.0, 2.0])).backward()
    w = model.weight.grad.numpy()
    np.testing.assert_allclose(w[0], -w[1], rtol=1e-5, atol=1e-6)
    b = model.bias.grad.numpy()
    assert b[0] == pytest.approx(-b[1], rel=1e-5)


def test_loss_errors_are_clear():
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(mg.randn(2, 3), mg.tensor([0, 7]))
    with pytest.raises(RuntimeError, match="Long"):
        F.nll_loss(mg.randn(2, 3), mg.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="average")
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(mg.randn(3, 1), mg.randn(3))


def test_grad_fn_names_match_pytorch(torch):
    import torch.nn.functional as TF
    names = []
    for lib, functional in ((mg, F), (torch, TF)):
        lin = lib.nn.Linear(5, 2)
        no_bias = lib.nn.Linear(5, 2, bias=False)
        logits = lib.randn(3, 4, requires_grad=True)
        probs = lib.tensor(np.full((3, 4), 0.25), dtype=lib.float32)
        names.append([
            lin(lib.randn(5)).grad_fn.name(),
            lin(lib.randn(3, 5)).grad_fn.name(),
            lin(lib.randn(2, 3, 5)).grad_fn.name(),
            no_bias(lib.randn(3, 5)).grad_fn.name(),
            functional.cross_entropy(logits, lib.tensor([0, 1, 2])).grad_fn.name(),
            functional.cross_entropy(logits, probs).grad_fn.name(),
            functional.cross_entropy(logits, probs, reduction="sum").grad_fn.name(),
            functional.mse_loss(logits, probs).grad_fn.name(),
        ])
    assert names[0] == names[1]


def test_linear_graph_has_pytorchs_shape(torch):
    """AddmmBackward0's inputs are (bias, input, TBackward0 -> weight), as in PyTorch."""
    def shape(fn, depth=0):
        if fn is None or depth > 3:
            return None
        return (type(fn).__name__.replace("torch::autograd::", ""),
                tuple(shape(n, depth + 1) for n, _ in fn.next_functions))
    results = []
    for lib in (mg, torch):
        lin, no_bias = lib.nn.Linear(3, 2), lib.nn.Linear(3, 2, bias=False)
        x = lib.randn(4, 3, requires_grad=True)
        results.append([shape(lin(x).grad_fn), shape(lin(lib.randn(4, 3)).grad_fn),
                        shape(no_bias(x).grad_fn), shape(lin(lib.randn(3)).grad_fn)])
    assert results[0] == results[1]
