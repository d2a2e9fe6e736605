"""Property tests: random compositions of ops have the gradient finite differences give."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.autograd import gradcheck

# Every op keeps the (3, 3) shape, so any sequence of them composes.
UNARY = {
    "exp": lambda t: (t * 0.5).exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "sin": lambda t: t.sin(),
    "square": lambda t: t ** 2,
    "softplus_like": lambda t: (t.exp() + 1).log(),
    "sqrt_pos": lambda t: (t * t + 1).sqrt(),
    "softmax": lambda t: t.softmax(-1),
    "log_softmax": lambda t: t.log_softmax(0),
    "sum_keep": lambda t: t.sum(dim=-1, keepdim=True) * t,
    "mean0": lambda t: t - t.mean(dim=0, keepdim=True),
    "transpose": lambda t: t.T.reshape(t.shape),
    "index": lambda t: t[[0, 0, 1]].sum(0, keepdim=True) + t,
    "neg_div": lambda t: -t / 3,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "maximum_smooth": lambda a, b: a * 0.5 + b.tanh(),
    "matmul": lambda a, b: (a @ b.T) @ a / 4,
    "cat_sum": lambda a, b: mg.cat([a, b], dim=0)[:3] + mg.stack([a, b]).sum(0) * 0.1,
    "where": lambda a, b: mg.where(a.detach() > 0, a, b),
}

steps = st.lists(
    st.one_of(st.tuples(st.just("u"), st.sampled_from(sorted(UNARY)), st.just(0)),
              st.tuples(st.just("b"), st.sampled_from(sorted(BINARY)), st.integers(0, 1))),
    min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(steps=steps, seed=st.integers(0, 2**16))
def test_random_compositions_pass_gradcheck(steps, seed):
    rng = np.random.default_rng(seed)
    inputs = [mg.tensor(rng.uniform(-1, 1, (3, 3)), dtype=mg.float64, requires_grad=True)
              for _ in range(2)]

    def composed(a, b):
        value = a
        for kind, name, which in steps:
            if kind == "u":
                value = UNARY[name](value)
            else:
                value = BINARY[name](value, (a, b)[which])
        return value

    assert gradcheck(composed, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


@settings(max_examples=40, deadline=None)
@given(shape_a=st.lists(st.integers(1, 3), min_size=0, max_size=3),
       drop=st.integers(0, 3), seed=st.integers(0, 1000))
def test_broadcast_gradients_sum_back_to_each_shape(shape_a, drop, seed):
    rng = np.random.default_rng(seed)
    shape_b = [1 if i % 2 else n for i, n in enumerate(shape_a)][drop:]
    a = mg.tensor(rng.standard_normal(shape_a), dtype=mg.float64, requires_grad=True)
    b = mg.tensor(rng.standard_normal(shape_b), dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda x, y: x * y + y, (a, b))
