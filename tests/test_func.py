"""``minigrad.func`` against ``torch.func``: values, shapes, dtypes, nesting, pytrees and the
errors of misuse; and PyTorch's tutorials "Per-sample gradients" and "Jacobians, Hessians,
hvp, vhp, and more" with the import changed (sizes made small)."""

from functools import partial

import numpy as np
import pytest
import torch
import torch.func as tf

import minigrad as mg
import minigrad.func as mf

RNG = np.random.default_rng(7)


def _pair(shape, dtype="float64", requires_grad=False):
    values = RNG.standard_normal(shape).astype(dtype)
    return (mg.tensor(values, requires_grad=requires_grad),
            torch.tensor(values, requires_grad=requires_grad))


def _same(ours, theirs, rtol=1e-7, atol=1e-9):
    """Same pytree structure, and leaf by leaf the same shape, dtype and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                                   atol=atol)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k], rtol, atol)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b, rtol, atol)
    else:
        assert ours == theirs


def _f(lib, x, y):
    return (x.sin() * y + x * x).sum()


# ----------------------------------------------------------------------------- grad

def test_grad_argnums_int_tuple_negative_and_unused_inputs():
    x, tx = _pair((3,))
    y, ty = _pair((3,))
    for argnums in (0, 1, (0, 1), (1, 0), -1):
        _same(mf.grad(partial(_f, mg), argnums=argnums)(x, y),
              tf.grad(partial(_f, torch), argnums=argnums)(tx, ty))
    _same(mf.grad(lambda a, b: (a * 2).sum(), argnums=1)(x, y),
          tf.grad(lambda a, b: (a * 2).sum(), argnums=1)(tx, ty))  # zeros


def test_grad_and_value_and_has_aux():
    x, tx = _pair((4,), "float32")
    _same(mf.grad_and_value(lambda a: (a ** 3).sum())(x),
          tf.grad_and_value(lambda a: (a ** 3).sum())(tx), rtol=1e-6)
    _same(mf.grad(lambda a: ((a ** 2).sum(), {"mean": a.mean()}), has_aux=True)(x),
          tf.grad(lambda a: ((a ** 2).sum(), {"mean": a.mean()}), has_aux=True)(tx), rtol=1e-6)
    _same(mf.grad_and_value(lambda a: ((a ** 2).sum(), a * 3), has_aux=True)(x),
          tf.grad_and_value(lambda a: ((a ** 2).sum(), a * 3), has_aux=True)(tx), rtol=1e-6)


def test_grad_over_pytrees_of_parameters():
    w, tw = _pair((2, 3))
    b, tb = _pair((2,))
    x, tx = _pair((3,))

    def loss(lib, params, inputs):
        return ((params["w"] @ inputs[0] + params["b"]).tanh() ** 2).sum()

    _same(mf.grad(partial(loss, mg))({"w": w, "b": b}, [x]),
          tf.grad(partial(loss, torch))({"w": tw, "b": tb}, [tx]))
    _same(mf.grad(partial(loss, mg), argnums=(0, 1))({"w": w, "b": b}, [x]),
          tf.grad(partial(loss, torch), argnums=(0, 1))({"w": tw, "b": tb}, [tx]))


def test_grad_of_grad_and_the_graph_of_the_result():
    x, tx = _pair(())
    _same(mf.grad(mf.grad(lambda a: a.sin() * a ** 3))(x),
          tf.grad(tf.grad(lambda a: a.sin() * a ** 3))(tx))
    _same(mf.grad(mf.grad(mf.grad(lambda a: a.exp() * a)))(x),
          tf.grad(tf.grad(tf.grad(lambda a: a.exp() * a)))(tx))
    # no history outside: a plain result; an input or a closure that requires grad: a graph
    assert not mf.grad(lambda a: a * a)(x).requires_grad
    w = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)
    tw = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    g = mf.grad(lambda a: a * w * a)(x)
    tg = tf.grad(lambda a: a * tw * a)(tx)
    assert g.requires_grad and tg.requires_grad
    (gw,) = mg.autograd.grad(g, w)
    (tgw,) = torch.autograd.grad(tg, tw)
    _same(gw, tgw)
    xr, txr = mg.tensor(1.5, requires_grad=True), torch.tensor(1.5, requires_grad=True)
    g, tg = mf.grad(lambda a: a ** 3)(xr), tf.grad(lambda a: a ** 3)(txr)
    g.backward()
    tg.backward()
    _same(xr.grad, txr.grad)
    with mg.no_grad():
        assert not mf.grad(lambda a: a ** 3)(xr).requires_grad


def test_grad_misuse_raises_torchs_errors():
    x, tx = _pair((3,))
    cases = [
        (lambda g: g(lambda a: a * 2)(x), lambda g: g(lambda a: a * 2)(tx), "scalar Tensor"),
        (lambda g: g(lambda a: 3.0)(x), lambda g: g(lambda a: 3.0)(tx), "return a Tensor"),
        (lambda g: g(lambda a: a.sum(), argnums=1)(x),
         lambda g: g(lambda a: a.sum(), argnums=1)(tx), "only 1 positional"),
        (lambda g: g(lambda a: a.sum(), argnums=())(x),
         lambda g: g(lambda a: a.sum(), argnums=())(tx), "non-empty"),
        (lambda g: g(lambda a: a.sum(), argnums=(0, 0))(x, x),
         lambda g: g(lambda a: a.sum(), argnums=(0, 0))(tx, tx), "unique"),
        (lambda g: g(lambda a: a.sum(), argnums="0")(x),
         lambda g: g(lambda a: a.sum(), argnums="0")(tx), "must be int"),
        (lambda g: g(lambda a: a.sum(), has_aux=True)(x),
         lambda g: g(lambda a: a.sum(), has_aux=True)(tx), "should be a tuple"),
        (lambda g: g(lambda a: (a.sum(), 1), has_aux=True)(x),
         lambda g: g(lambda a: (a.sum(), 1), has_aux=True)(tx), "Expected tensors"),
        (lambda g: g(lambda a: a.sum())(mg.arange(3)),
         lambda g: g(lambda a: a.sum())(torch.arange(3)), "floating point"),
        (lambda g: g(lambda a: a * 1.0)(2.0), lambda g: g(lambda a: a * 1.0)(2.0),
         "must be Tensor"),
    ]
    for ours, theirs, words in cases:
        with pytest.raises(Exception) as expected:
            theirs(tf.grad)
        with pytest.raises(expected.type, match=words):
            ours(mf.grad)
        assert words in str(expected.value)


# ----------------------------------------------------------------------------- vjp, jvp

def test_vjp_with_pytree_outputs_called_twice_and_has_aux():
    x, tx = _pair((3,))
    v, tv = _pair((3,))
    out, fn = mf.vjp(lambda a: (a.exp(), {"s": (a * a).sum()}), x)
    tout, tfn = tf.vjp(lambda a: (a.exp(), {"s": (a * a).sum()}), tx)
    _same(out, tout)
    cot = (v, {"s": mg.tensor(2.0, dtype=mg.float64)})
    tcot = (tv, {"s": torch.tensor(2.0, dtype=torch.float64)})
    _same(fn(cot), tfn(tcot))
    _same(fn(cot), tfn(tcot))  # again: the graph is kept
    out, fn, aux = mf.vjp(lambda a, b: (a * b, a.sum()), x, x, has_aux=True)
    tout, tfn, taux = tf.vjp(lambda a, b: (a * b, a.sum()), tx, tx, has_aux=True)
    _same((out, fn(v), aux), (tout, tfn(tv), taux))


def test_vjp_misuse():
    x, tx = _pair((3,))
    _, fn = mf.vjp(lambda a: (a, a * 2), x)
    _, tfn = tf.vjp(lambda a: (a, a * 2), tx)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        tfn(tx)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        fn(x)
    with pytest.raises(RuntimeError):
        tfn((tx, torch.ones(2, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match="shape"):
        fn((x, mg.ones(2, dtype=mg.float64)))
    for lib, transforms, value in ((torch, tf, tx), (mg, mf, x)):
        with pytest.raises(RuntimeError, match="return only tensors"):
            transforms.vjp(lambda a: 3, value)


def test_jvp_matches_forward_mode_values():
    x, tx = _pair((4,))
    y, ty = _pair((4,))
    t1, tt1 = _pair((4,))
    t2, tt2 = _pair((4,))

    def f(a, b):
        return {"p": a.sin() * b, "q": (a * b).sum() + b.exp().sum()}

    _same(mf.jvp(f, (x, y), (t1, t2)), tf.jvp(f, (tx, ty), (tt1, tt2)))
    _same(mf.jvp(lambda a: (a * 3, a.sum()), (x,), (t1,), has_aux=True),
          tf.jvp(lambda a: (a * 3, a.sum()), (tx,), (tt1,), has_aux=True))
    _same(mf.jvp(lambda a: a * 0 + 1, (x,), (t1,)),  # a constant in the end
          tf.jvp(lambda a: a * 0 + 1, (tx,), (tt1,)))


def test_jvp_misuse():
    x, tx = _pair((3,))
    cases = [
        (lambda j, v: j(lambda a: a, v, (v,)), "Expected primals to be a tuple"),
        (lambda j, v: j(lambda a: a, (v,), v), "same python structure"),
        (lambda j, v: j(lambda a: a, (v,), (v, v)), "same python structure"),
        (lambda j, v: j(lambda: v, (), ()), "at least one Tensor"),
        (lambda j, v: j(lambda a: 3, (v,), (v,)), "return only tensors"),
        (lambda j, v: j(lambda a: a, (v,), (v[:2],)), "different size"),
    ]
    for call, words in cases:
        with pytest.raises(RuntimeError, match=words):
            call(tf.jvp, tx)
        with pytest.raises(RuntimeError, match=words):
            call(mf.jvp, x)


# ----------------------------------------------------------------------------- jacobians

def _predict(lib, weight, bias, x):
    return (x @ weight.T + bias).tanh()


def test_jacrev_and_jacfwd_over_argnums_and_pytrees():
    w, tw = _pair((3, 4))
    b, tb = _pair((3,))
    x, tx = _pair((4,))
    for jac_ours, jac_theirs in ((mf.jacrev, tf.jacrev), (mf.jacfwd, tf.jacfwd)):
        for argnums in (2, 0, (0, 1)):
            _same(jac_ours(partial(_predict, mg), argnums=argnums)(w, b, x),
                  jac_theirs(partial(_predict, torch), argnums=argnums)(tw, tb, tx))
        _same(jac_ours(lambda d: {"y": d["a"] * 2, "z": d["a"].sum()})({"a": x}),
              jac_theirs(lambda d: {"y": d["a"] * 2, "z": d["a"].sum()})({"a": tx}))
        _same(jac_ours(lambda a: (a.exp(), a.sum()), has_aux=True)(x),
              jac_theirs(lambda a: (a.exp(), a.sum()), has_aux=True)(tx))


def test_hessians_agree_every_way_and_float32_stays_float32():
    x, tx = _pair((3,), "float32")

    def f(a):
        return (a.sin() * a ** 2).sum()

    expected = tf.hessian(f)(tx)
    for ours in (mf.hessian(f)(x), mf.jacfwd(mf.jacrev(f))(x), mf.jacrev(mf.jacrev(f))(x),
                 mf.jacfwd(mf.jacfwd(f))(x), mf.jacrev(mf.jacfwd(f))(x)):
        _same(ours, expected, rtol=1e-5, atol=1e-6)


def test_jacobian_errors():
    x, tx = _pair((3,))
    with pytest.raises(ValueError, match="chunk_size"):
        tf.jacrev(lambda a: a, chunk_size=0)(tx)
    with pytest.raises(ValueError, match="chunk_size"):
        mf.jacrev(lambda a: a, chunk_size=0)(x)
    for jac in (mf.jacrev, mf.jacfwd):
        with pytest.raises(RuntimeError, match="only 1 positional inputs"):
            jac(lambda a: a, argnums=1)(x)
    with pytest.raises(RuntimeError, match="randomness"):
        mf.jacfwd(lambda a: a, randomness="sometimes")


# ----------------------------------------------------------------------------- vmap

def test_vmap_in_dims_out_dims_and_kwargs():
    a, ta = _pair((2, 3, 4))
    b, tb = _pair((4, 3))
    c, tc = _pair((4,))

    def f(x, y, scale=1.0):
        return {"dot": (x * y).sum() * scale, "outer": x[:, None] * y[None, :]}

    p, tp = _pair((3, 4))
    q, tq = _pair((3, 4))
    _same(mf.vmap(f, in_dims=(1, 1))(p, q), tf.vmap(f, in_dims=(1, 1))(tp, tq))
    r, tr = _pair((3,))
    _same(mf.vmap(f, in_dims=(0, None))(b, r, scale=2.0),
          tf.vmap(f, in_dims=(0, None))(tb, tr, scale=2.0))
    _same(mf.vmap(lambda x, y: x[:, None] * y, in_dims=(0, None), out_dims=1)(b, r),
          tf.vmap(lambda x, y: x[:, None] * y, in_dims=(0, None), out_dims=1)(tb, tr))
    _same(mf.vmap(lambda x: (x * 2, x.sum()), in_dims=-1, out_dims=(0, -1))(a),
          tf.vmap(lambda x: (x * 2, x.sum()), in_dims=-1, out_dims=(0, -1))(ta))
    _same(mf.vmap(lambda d: d["u"] * d["v"], in_dims=({"u": 0, "v": None},))({"u": b, "v": r}),
          tf.vmap(lambda d: d["u"] * d["v"], in_dims=({"u": 0, "v": None},))({"u": tb, "v": tr}))
    _same(mf.vmap(mf.vmap(lambda x: x.exp().sum()))(a),
          tf.vmap(tf.vmap(lambda x: x.exp().sum()))(ta))
    _same(mf.vmap(lambda x: mg.ones(2, dtype=mg.float64))(c),  # unbatched output: expanded
          tf.vmap(lambda x: torch.ones(2, dtype=torch.float64))(tc))
    _same(mf.vmap(lambda x: x * 2)(mg.ones(0, 2)), tf.vmap(lambda x: x * 2)(torch.ones(0, 2)))


def test_vmap_misuse_raises_torchs_errors():
    x, tx = _pair((2,))
    y, ty = _pair((3,))
    cases = [
        (lambda v, a, b: v(lambda p, q: p.sum() + q.sum())(a, b), "same size"),
        (lambda v, a, b: v(lambda p, q: p, in_dims=(0,))(a, a), "not compatible"),
        (lambda v, a, b: v(lambda p: p, in_dims=None)(a), "expected `in_dims`"),
        (lambda v, a, b: v(lambda p: p, in_dims=(None,))(a), "at least one Tensor"),
        (lambda v, a, b: v(lambda p: p, in_dims=1)(a), "dimensionality 1"),
        (lambda v, a, b: v(lambda p: 3)(a), "must only return Tensors"),
        (lambda v, a, b: v(lambda p: p)(3.0), "non-Tensor"),
        (lambda v, a, b: v(lambda p: p, chunk_size=0)(a), "chunk_size"),
        (lambda v, a, b: v(lambda p: (p, p), out_dims=(0,))(a), "not compatible"),
        (lambda v, a, b: v(lambda p: p * 2, out_dims=None)(b), "out_dim is None"),
    ]
    for call, words in cases:
        with pytest.raises(ValueError, match=words):
            call(tf.vmap, tx, ty)
        with pytest.raises(ValueError, match=words):
            call(mf.vmap, x, y)
    with pytest.raises(IndexError):
        tf.vmap(lambda p: p, out_dims=2)(tx)
    with pytest.raises(IndexError):
        mf.vmap(lambda p: p, out_dims=2)(x)


def test_vmap_randomness():
    x = mg.ones(3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tf.vmap(lambda p: p + torch.rand(()))(torch.ones(3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        mf.vmap(lambda p: p + mg.rand(()))(x)
    with pytest.raises(RuntimeError, match="Only allowed values"):
        mf.vmap(lambda p: p, randomness="sometimes")
    same = mf.vmap(lambda p: p + mg.rand(()), randomness="same")(x)
    different = mf.vmap(lambda p: p + mg.rand(()), randomness="different")(x)
    assert len(set(same.tolist())) == 1
    assert len(set(different.tolist())) == 3


def test_per_sample_gradients_vmap_of_grad_match_a_loop_in_torch():
    w, tw = _pair((3, 5))
    xs, txs = _pair((6, 5))
    ys, tys = _pair((6, 3))

    def loss(lib, weight, x, y):
        return ((x @ weight.T).tanh() - y).pow(2).mean()

    ours = mf.vmap(mf.grad(partial(loss, mg)), in_dims=(None, 0, 0))(w, xs, ys)
    theirs = tf.vmap(tf.grad(partial(loss, torch)), in_dims=(None, 0, 0))(tw, txs, tys)
    _same(ours, theirs)
    loop = torch.stack([torch.autograd.grad(loss(torch, tw.requires_grad_(), txs[i], tys[i]),
                                            tw)[0] for i in range(6)])
    _same(ours, loop)


# ----------------------------------------------------------------------------- functional_call

def test_functional_call_swaps_and_restores_even_on_error():
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
    model = mg.nn.Sequential(mg.nn.Linear(3, 2), mg.nn.Tanh(), mg.nn.Linear(2, 1))
    model.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                           tmodel.state_dict().items()})
    x, tx = _pair((4, 3), "float32")
    new = {k: mg.tensor(np.full(tuple(v.shape), 0.5, "float32"))
           for k, v in model.named_parameters()}
    tnew = {k: torch.full(tuple(v.shape), 0.5) for k, v in tmodel.named_parameters()}
    _same(mf.functional_call(model, new, x), tf.functional_call(tmodel, tnew, tx), rtol=1e-6)
    _same(mf.functional_call(model, (new,), (x,)), tf.functional_call(tmodel, (tnew,), (tx,)),
          rtol=1e-6)
    _same(model(x), tmodel(tx), rtol=1e-6)  # the module's own weights are back
    original = model[0].weight
    with pytest.raises(RuntimeError):  # a shape error inside the call
        mf.functional_call(model, {"0.weight": mg.ones(5, 5)}, x)
    assert model[0].weight is original and isinstance(original, mg.nn.Parameter)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        tf.functional_call(tmodel, (tnew, tnew), tx)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        mf.functional_call(model, (new, new), x)
    with pytest.raises(RuntimeError, match="Missing key"):
        tf.functional_call(tmodel, {"0.weight": tnew["0.weight"]}, tx, strict=True)
    with pytest.raises(RuntimeError, match="Missing key"):
        mf.functional_call(model, {"0.weight": new["0.weight"]}, x, strict=True)


def test_grad_with_respect_to_a_dict_of_parameters_through_functional_call():
    model = mg.nn.Linear(3, 2).double()
    tmodel = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        tmodel.weight.copy_(torch.tensor(model.weight.detach().numpy()))
        tmodel.bias.copy_(torch.tensor(model.bias.detach().numpy()))
    x, tx = _pair((5, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}

    def loss(lib, functional_call, module, p, inputs):
        return functional_call(module, p, (inputs,)).pow(2).sum()

    _same(mf.grad(partial(loss, mg, mf.functional_call, model))(params, x),
          tf.grad(partial(loss, torch, tf.functional_call, tmodel))(tparams, tx))
    assert model.weight.grad is None


# ----------------------------------------------------------------------------- tutorials

def _per_sample_tutorial(torch, seed_weights):
    """PyTorch's "Per-sample gradients" tutorial (torch.func version), smaller sizes; the
    weights are copied in from ``seed_weights`` so both libraries start the same."""
    nn = torch.nn  # (the tutorial's `import torch.nn as nn`, for either library)
    F = torch.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    batch_size = 4
    data = torch.tensor(seed_weights["data"])
    targets = torch.tensor(seed_weights["targets"])
    model = SimpleCNN()
    model.load_state_dict({k: torch.tensor(v) for k, v in seed_weights["state"].items()})

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)

    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads,
                                                   ft_per_sample_grads.values()):
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    return [g.detach().numpy() for g in ft_per_sample_grads.values()]


def test_the_per_sample_gradients_tutorial_runs_with_the_import_changed():
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, 1), torch.nn.Conv2d(4, 8, 3, 1),
                                    torch.nn.Linear(32, 16), torch.nn.Linear(16, 10))
    names = ["conv1", "conv2", "fc1", "fc2"]
    state = {f"{names[int(k[0])]}{k[1:]}": v.numpy() for k, v in reference.state_dict().items()}
    seed = {"state": state, "data": RNG.standard_normal((4, 1, 8, 8)).astype("float32"),
            "targets": RNG.integers(0, 10, 4)}
    ours = _per_sample_tutorial(mg, seed)
    theirs = _per_sample_tutorial(torch, seed)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def _jacobians_tutorial(torch):
    """PyTorch's "Jacobians, Hessians, hvp, vhp, and more: composing function transforms",
    the parts without forward-mode AD machinery and timing, smaller sizes."""
    F = torch.nn.functional
    vmap, vjp, jacrev, jacfwd = torch.func.vmap, torch.func.vjp, torch.func.jacrev, \
        torch.func.jacfwd
    hessian, jvp, grad = torch.func.hessian, torch.func.jvp, torch.func.grad
    rng = np.random.default_rng(0)

    def randn(*shape):
        return torch.tensor(rng.standard_normal(shape).astype("float32"))

    results = {}

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 8
    weight, bias, x = randn(D, D), randn(D), randn(D)
    unit_vectors = torch.eye(D)

    def compute_jac(xp):
        jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    jacobian = compute_jac(xp)
    _, vjp_fn = vjp(partial(predict, weight, bias), x)
    ft_jacobian, = vmap(vjp_fn)(unit_vectors)
    assert torch.allclose(ft_jacobian, jacobian)
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(ft_jacobian, jacobian)
    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    results["jacobian"] = (jacobian, ft_jac_weight, ft_jac_bias)

    Din, Dout = 4, 12
    weight, bias, x = randn(Dout, Din), randn(Dout), randn(Din)
    using_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    using_bwd = jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(using_fwd, using_bwd, atol=1e-6)
    results["fwd"] = (using_fwd,)

    Din, Dout = 6, 3
    weight, bias, x = randn(Dout, Din), randn(Dout), randn(Din)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    assert torch.allclose(hess_api, hess_fwdfwd, atol=1e-6)
    assert torch.allclose(hess_api, hess_revrev, atol=1e-6)
    results["hessian"] = (hess_api,)

    batch_size, Din, Dout = 5, 3, 4
    weight, bias, x = randn(Dout, Din), randn(Dout), randn(batch_size, Din)
    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias,
                                                                    x).movedim(1, 0)
    assert torch.allclose(batch_jacobian0, batch_jacobian1)
    compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
    batch_hess = compute_batch_hessian(weight, bias, x)
    results["batch"] = (batch_jacobian0, batch_hess)

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    x, tangent = randn(16), randn(16)
    result = hvp(f, (x,), (tangent,))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    assert torch.allclose(result, result_hvp_revrev[0])
    results["hvp"] = (result, result_hvp_revrev[0])
    return results


def test_the_jacobians_and_hessians_tutorial_runs_with_the_import_changed():
    ours, theirs = _jacobians_tutorial(mg), _jacobians_tutorial(torch)
    assert ours.keys() == theirs.keys()
    for key in theirs:
        for a, b in zip(ours[key], theirs[key]):
            _same(a, b, rtol=1e-4, atol=1e-5)


def test_functional_call_replaces_a_tied_weight_under_both_names():
    class Tied(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = mg.nn.Linear(2, 2, bias=False)
            self.b = mg.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    class TorchTied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    x, tx = _pair((3, 2), "float32")
    w = RNG.standard_normal((2, 2)).astype("float32")
    ours = mf.functional_call(Tied(), {"a.weight": mg.tensor(w)}, x)
    theirs = tf.functional_call(TorchTied(), {"a.weight": torch.tensor(w)}, tx)
    _same(ours, theirs, rtol=1e-6)  # both layers use the given weight


def test_jacrev_chunk_size_is_accepted_and_changes_nothing():
    x, tx = _pair((5,))
    _same(mf.jacrev(lambda a: a.sin() * a.sum(), chunk_size=2)(x),
          tf.jacrev(lambda a: a.sin() * a.sum(), chunk_size=2)(tx))
