"""The check every op's second derivative is held to: the same function, run in minigrad
and in PyTorch on the same inputs, must give the same output, the same first derivatives
(computed with create_graph=True) and the same second derivatives."""

import numpy as np

import minigrad as mg


def _first_and_second(lib, fn, values, wanted, seed_out, seed_grads):
    inputs = [lib.tensor(v, requires_grad=(i in wanted)) for i, v in enumerate(values)]
    out = fn(lib, *inputs)
    targets = [inputs[i] for i in wanted]
    firsts = lib.autograd.grad(out, targets, grad_outputs=lib.tensor(seed_out),
                               create_graph=True, allow_unused=True)
    # one number from the first derivatives, differentiated again: a Hessian-vector product
    total = sum((g * lib.tensor(v)).sum() for g, v in zip(firsts, seed_grads) if g is not None)
    if not getattr(total, "requires_grad", False):
        seconds = [None] * len(targets)  # the first derivatives are constant
    else:
        seconds = lib.autograd.grad(total, targets, allow_unused=True)
    as_array = lambda t: None if t is None else np.asarray(t.detach().numpy())  # noqa: E731
    return (as_array(out), [as_array(g) for g in firsts], [as_array(g) for g in seconds],
            [None if g is None else g.requires_grad for g in firsts])


def assert_second_derivatives_match(torch, fn, *values, wanted=None, rtol=1e-7, atol=1e-9,
                                    seed=0):
    """``fn(lib, *tensors)`` -> a tensor, for lib = minigrad and torch. ``values``: the
    inputs (numpy arrays; float64 is best); ``wanted``: which of them require grad (all by
    default). Compares out, the first derivatives under create_graph=True and the second
    derivatives (the gradient of sum(first * v) for random v)."""
    values = [np.asarray(v) for v in values]
    wanted = list(range(len(values))) if wanted is None else list(wanted)
    rng = np.random.default_rng(seed)
    probe = fn(mg, *[mg.tensor(v) for v in values])
    seed_out = rng.standard_normal(probe.shape).astype(probe.numpy().dtype)
    seed_grads = [rng.standard_normal(values[i].shape).astype(values[i].dtype) for i in wanted]
    ours = _first_and_second(mg, fn, values, wanted, seed_out, seed_grads)
    theirs = _first_and_second(torch, fn, values, wanted, seed_out, seed_grads)
    names = ("output", "first derivatives", "second derivatives")
    for name, a, b in zip(names, ours[:3], theirs[:3]):
        pairs = [(a, b)] if name == "output" else list(zip(a, b))
        for k, (x, y) in enumerate(pairs):
            assert (x is None) == (y is None), f"{name} [{k}]: minigrad {x}, PyTorch {y}"
            if x is not None:
                assert x.dtype == y.dtype, f"{name} [{k}]: dtype {x.dtype} vs {y.dtype}"
                np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True,
                                           err_msg=f"{name} [{k}]")
    assert ours[3] == theirs[3], f"which first derivatives have a graph: {ours[3]} vs {theirs[3]}"
