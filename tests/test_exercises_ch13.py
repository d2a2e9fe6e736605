"""Chapter 13's exercise checks accept right answers and reject wrong, missing and odd ones,
each with a hint that does not give the solution away, and never raise; the prediction of
exercise 2 counts only when it is locked in before it is revealed."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.func import functional_call, grad, vmap
from minigrad.nn import functional as F
from minigrad.teach import predictions
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch13


@pytest.fixture(autouse=True)
def fresh_predictions():
    """Each test starts as a fresh kernel does: nothing locked in, nothing revealed."""
    predictions.reset_all()
    yield
    predictions.reset_all()


# ----------------------------------------------------------- exercise 2: predict, then run

def test_count_vjps_builds_the_jacobian_row_by_row_as_torch_does():
    def f(x):
        return (x[0] * x + x[1] ** 2).sin()
    value = np.array([0.3, -0.2, 0.5, 1.1])
    jac, calls = ch13.count_vjps(f, mg.tensor(value))
    want = torch.autograd.functional.jacobian(
        lambda t: (t[0] * t + t[1] ** 2).sin(), torch.tensor(value))
    assert calls == 4 and np.allclose(jac.numpy(), want.numpy(), rtol=1e-12)


def test_the_prediction_is_the_number_of_output_elements():
    answer, shown = ch13.VJP_COUNT.measure()
    assert answer == 200 and "200 VJPs" in shown and "(200, 3)" in shown
    assert "not jacrev's" not in shown
    assert ch13.VJP_COUNT.lock(200)
    assert ch13.VJP_COUNT.reveal()


@pytest.mark.parametrize("guess", [3, 1, 600])
def test_a_wrong_prediction_is_told_where_to_look(guess):
    assert ch13.VJP_COUNT.lock(guess)
    result = ch13.VJP_COUNT.reveal()
    assert not result and "rows" in result.message and "200" in result.message


def test_a_prediction_after_the_reveal_does_not_count():
    ch13.VJP_COUNT.reveal()
    result = ch13.VJP_COUNT.lock(200)
    assert not result and "shown already" in result.message


def test_a_computed_prediction_is_refused():
    result = ch13.VJP_COUNT.lock(mg.tensor(200.0))
    assert not result and "not a Tensor" in result.message
    assert not ch13.VJP_COUNT.lock(None)


# ----------------------------------------------------------- exercise 3: per-sample norms

def _grads_per_example(model, x, y, reduce=None):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of_one(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    return vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)


def right(model, x, y):
    grads = _grads_per_example(model, x, y)
    return sum(g.flatten(1).pow(2).sum(1) for g in grads.values()).sqrt()


def squared(model, x, y):
    grads = _grads_per_example(model, x, y)
    return sum(g.flatten(1).pow(2).sum(1) for g in grads.values())


def first_layer_only(model, x, y):
    grads = _grads_per_example(model, x, y)
    return grads["0.weight"].flatten(1).norm(dim=1)


def summed_first(model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}
    g = grad(lambda p: F.cross_entropy(functional_call(model, p, (x,)), y))(params)
    total = sum(v.pow(2).sum() for v in g.values()).sqrt()
    return vmap(lambda xi: total + 0 * xi.sum())(x)


def divided_by_batch(model, x, y):
    return vmap(lambda r: r)(right(model, x, y)) / len(x)


def with_a_loop(model, x, y):
    norms = []
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        norms.append(sum(p.grad.pow(2).sum() for p in model.parameters()).sqrt())
    model.zero_grad()
    return mg.stack(norms)


def loop_leaving_grads(model, x, y):
    norms = with_a_loop(model, x, y)
    F.cross_entropy(model(x), y).backward()
    return vmap(lambda r: r)(norms)


def test_the_notebooks_answer_passes_and_matches_torch():
    result = ch13.check_per_sample_norms(right)
    assert result, result.message
    model = ch13.tiny_model()
    x, y = ch13.tiny_batch()
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}

    def loss_of_one(p, xi, yi):
        out = torch.func.functional_call(tmodel, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    tg = torch.func.vmap(torch.func.grad(loss_of_one), in_dims=(None, 0, 0))(tparams, tx, ty)
    want = sum(g.flatten(1).pow(2).sum(1) for g in tg.values()).sqrt()
    assert np.allclose(right(model, x, y).numpy(), want.numpy(), rtol=1e-5)


@pytest.mark.parametrize("answer, said", [
    (squared, "squared norms"),
    (first_layer_only, "every parameter"),
    (summed_first, "summed or averaged over the batch"),
    (divided_by_batch, "divided by the batch size"),
    (with_a_loop, "does not use vmap"),
    (loop_leaving_grads, "touches no .grad"),
    (lambda model, x, y: None, "return a tensor"),
    (lambda model, x, y: vmap(lambda r: r)(right(model, x, y)[:2]), "expected"),
    (lambda model, x, y: 1 / 0, "ZeroDivisionError"),
])
def test_wrong_answers_are_named(answer, said):
    result = ch13.check_per_sample_norms(answer)
    assert not result and said in result.message, result.message


def test_missing_and_odd_answers():
    for missing in (None, MISSING, ...):
        assert "no answer yet" in ch13.check_per_sample_norms(missing).message
    assert "expected a function" in ch13.check_per_sample_norms(3).message


def test_the_check_leaves_the_random_stream_alone():
    state = mg.default_generator.get_state()
    ch13.check_per_sample_norms(right)
    assert mg.default_generator.get_state() == state


# ----------------------------------------------------------- exercise 1: a JVP rule

HYPOT = '''
class Hypot(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        r = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, r)
        ctx.save_for_forward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, grad_output):
        x, y, r = ctx.saved_tensors
        return grad_output * x / r, grad_output * y / r

    @staticmethod
    def jvp(ctx, x_tangent, y_tangent):
        x, y, r = ctx.saved_tensors
        return (x * x_tangent + y * y_tangent) / r
'''


def hypot(old=None, new=None):
    """The notebook's Hypot, or one with ``old`` replaced by ``new`` (one mistake)."""
    source = HYPOT if old is None else HYPOT.replace(old, new)
    assert old is None or old in HYPOT
    names = {"mg": mg}
    exec(source, names)
    return names["Hypot"]


def test_the_notebooks_hypot_passes_and_gives_torchs_tangents_and_gradients():
    Hypot = hypot()
    assert ch13.check_hypot(Hypot)
    import torch.autograd.forward_ad as tfw

    from minigrad.autograd import forward_ad as fw
    x, y = np.array([3.0, -1.0, 0.5]), np.array([4.0, 2.0, -1.5])
    tx, ty = np.array([0.1, 1.0, -2.0]), np.array([1.0, 0.0, 0.5])
    with fw.dual_level():
        out = Hypot.apply(fw.make_dual(mg.tensor(x), mg.tensor(tx)),
                          fw.make_dual(mg.tensor(y), mg.tensor(ty)))
        ours = fw.unpack_dual(out).tangent.numpy()
    with tfw.dual_level():
        out = torch.hypot(tfw.make_dual(torch.tensor(x), torch.tensor(tx)),
                          tfw.make_dual(torch.tensor(y), torch.tensor(ty)))
        theirs = tfw.unpack_dual(out).tangent.numpy()
    assert np.allclose(ours, theirs, rtol=1e-12)
    a, b = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    Hypot.apply(a, b).sum().backward()
    torch.hypot(ta, tb).sum().backward()
    assert np.allclose(a.grad.numpy(), ta.grad.numpy()) and np.allclose(b.grad.numpy(),
                                                                         tb.grad.numpy())


@pytest.mark.parametrize("old, new, said", [
    ("return (x * x_tangent + y * y_tangent) / r",
     "return x / r * x_tangent, y / r * y_tangent", "one tangent per output"),
    ("return (x * x_tangent + y * y_tangent) / r", "return x * x_tangent / r",
     "Only x's tangent counts"),
    ("return (x * x_tangent + y * y_tangent) / r", "return y * y_tangent / r",
     "Only y's tangent counts"),
    ("return (x * x_tangent + y * y_tangent) / r", "return x * x_tangent + y * y_tangent",
     "divide by"),
    ("return (x * x_tangent + y * y_tangent) / r", "return x / r + y / r",
     "without the tangents"),
    ("        ctx.save_for_forward(x, y, r)\n", "", "save_for_forward"),
    ("return grad_output * x / r, grad_output * y / r",
     "return grad_output * y / r, grad_output * x / r", "x.grad"),
    ("r = (x * x + y * y).sqrt()", "r = x * x + y * y", "forward gives"),
    ("return (x * x_tangent + y * y_tangent) / r", "return None", "jvp returned None"),
])
def test_wrong_hypots_are_named(old, new, said):
    result = ch13.check_hypot(hypot(old, new))
    assert not result and said in result.message, result.message


def test_hypot_without_jvp_and_odd_answers():
    source = HYPOT.split("    @staticmethod\n    def jvp")[0]
    names = {"mg": mg}
    exec(source, names)
    assert "no jvp yet" in ch13.check_hypot(names["Hypot"]).message
    assert "no answer yet" in ch13.check_hypot(None).message
    assert "expected a class" in ch13.check_hypot(lambda x, y: x).message
