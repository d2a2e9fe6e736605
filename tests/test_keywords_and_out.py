"""PyTorch's keyword forms: creation functions with ``size=``, functions called with
PyTorch's argument names (``mg.matmul(input=a, other=b)``), and ``out=``."""

import warnings

import numpy as np
import pytest

import minigrad as mg
from parity import errors_of_both


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert ours.requires_grad == theirs.requires_grad


CREATION = [
    "lib.randn(size=(2, 3))", "lib.randn(size=[4])", "lib.zeros(size=(2, 3))", "lib.ones(size=(2,))",
    "lib.rand(size=(2, 3), generator=lib.Generator().manual_seed(1))", "lib.empty(size=(3, 1))",
    "lib.full(size=(2,), fill_value=3)", "lib.full(size=(2, 2), fill_value=1.5)",
    "lib.arange(start=1, end=7, step=2)", "lib.arange(end=4)", "lib.arange(0.5, end=2)",
    "lib.randint(low=0, high=5, size=(3,))", "lib.randint(5, size=(3,))",
    "lib.randint(high=5, size=(2, 2))", "lib.randint(2, 5, (3,), dtype=lib.int32)",
    "lib.zeros(size=(2, 3), dtype=lib.float64, requires_grad=True)",
    "lib.ones(2, 3, dtype=lib.float64, requires_grad=True)",
    "lib.randn(2, 3, dtype=lib.float64, requires_grad=True)",
    "lib.rand((2, 3), requires_grad=True)", "lib.empty(2, dtype=lib.int64)",
    "lib.full((2,), 7, dtype=lib.float32, requires_grad=True)",
    "lib.linspace(start=0, end=1, steps=3)", "lib.eye(n=2, m=3)",
    "lib.zeros_like(input=lib.ones(2), dtype=lib.float64)", "lib.tensor(data=[1.0, 2.0])",
]


@pytest.mark.parametrize("expression", CREATION)
def test_creation_keywords_as_pytorch(expression, torch):
    ours, theirs = eval(expression, {"lib": mg}), eval(expression, {"lib": torch})
    _same(ours, theirs)
    if "rand" not in expression and "empty" not in expression:  # random or garbage
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize("expression", [
    "lib.zeros(2, size=(2,))", "lib.ones(size=3)", "lib.rand((2, 3), size=(2,))",
])
def test_creation_keyword_mistakes_raise_pytorchs_exception(expression, torch):
    with pytest.raises(TypeError):
        eval(expression, {"lib": torch})
    with pytest.raises(TypeError):
        eval(expression, {"lib": mg})


A = np.arange(6.0).reshape(2, 3) / 5
B = np.arange(6.0).reshape(3, 2) - 2.5
V = np.array([0.5, -1.0, 2.0])

KEYWORDS = [
    "lib.matmul(input=a, other=b)", "lib.mm(input=a, mat2=b)", "lib.add(input=a, other=a, alpha=2)",
    "lib.add(a, 3, alpha=2)", "lib.sub(input=a, other=v, alpha=3)", "lib.mul(input=a, other=v)",
    "lib.div(input=a, other=2.0)", "lib.sum(input=a, dim=0)", "lib.sum(a, dim=(0, 1), keepdim=True)",
    "lib.mean(input=a, dim=1, keepdim=True)", "lib.cat(tensors=[a, a], dim=0)",
    "lib.stack(tensors=[a, a], dim=1)", "lib.reshape(input=a, shape=(3, 2))",
    "lib.permute(input=a, dims=(1, 0))", "lib.transpose(input=a, dim0=0, dim1=1)",
    "lib.split(tensor=v, split_size_or_sections=2)", "lib.max(input=a, dim=1).values",
    "lib.argmax(input=a, dim=1, keepdim=True)", "lib.softmax(input=a, dim=0)",
    "lib.clamp(input=a, min=0.2, max=0.8)", "lib.where(condition=a > 0.5, input=a, other=a * 2)",
    "lib.pow(input=a, exponent=2)", "lib.exp(input=a)", "lib.unsqueeze(input=v, dim=0)",
    "lib.flatten(input=a, start_dim=0, end_dim=-1)", "lib.bmm(input=a[None], mat2=b[None])",
    "lib.dot(input=v, tensor=v)", "lib.log1p(input=a)",
]


@pytest.mark.parametrize("expression", KEYWORDS)
def test_functions_take_pytorchs_keyword_names(expression, torch):
    results = []
    for lib in (mg, torch):
        names = {"lib": lib, "a": lib.tensor(A), "b": lib.tensor(B), "v": lib.tensor(V)}
        results.append(eval(expression, names))
    ours, theirs = results
    _same(ours, theirs)
    for x, y in zip(ours if isinstance(ours, tuple) else [ours],
                    theirs if isinstance(theirs, tuple) else [theirs]):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12)


def test_bmm_matches_pytorch_with_gradients(torch):
    r = np.random.default_rng(0)
    a, b, up = r.standard_normal((3, 2, 4)), r.standard_normal((3, 4, 5)), r.standard_normal((3, 2, 5))
    results = []
    for lib in (mg, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.bmm(x, y)
        out.backward(lib.tensor(up))
        results.append((out, x.grad, y.grad))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    assert results[0][0].grad_fn.name() == results[1][0].grad_fn.name()
    for call in ("lib.bmm(lib.ones(2, 3), lib.ones(2, 3, 1))",
                 "lib.bmm(lib.ones(2, 2, 3), lib.ones(3, 3, 1))"):
        with pytest.raises(RuntimeError):
            eval(call, {"lib": torch})
        with pytest.raises(RuntimeError):
            eval(call, {"lib": mg})


# --------------------------------------------------------------------------- out=

OUT_CALLS = [
    ("add", "lib.add(a, a, alpha=2, out=out)"), ("sub", "lib.sub(a, v, out=out)"),
    ("mul", "lib.mul(a, v, out=out)"), ("matmul", "lib.matmul(a, b, out=out)"),
    ("mm", "lib.mm(a, b, out=out)"), ("sum", "lib.sum(a, 1, out=out)"),
    ("sum_keepdim", "lib.sum(a, dim=0, keepdim=True, out=out)"),
    ("mean", "lib.mean(a, 0, out=out)"), ("cat", "lib.cat([a, a], 1, out=out)"),
    ("stack", "lib.stack([a, a], out=out)"), ("div", "lib.div(a, 4.0, out=out)"),
]


@pytest.mark.parametrize("name,call", OUT_CALLS)
@pytest.mark.parametrize("out_shape", ["empty", "same", "other"])
def test_out_writes_into_the_tensor_as_pytorch(name, call, out_shape, torch):
    results = []
    for lib in (mg, torch):
        names = {"lib": lib, "a": lib.tensor(A), "b": lib.tensor(B), "v": lib.tensor(V)}
        expected = eval(call.replace(", out=out", ""), names)
        shape = {"empty": (0,), "same": tuple(expected.shape), "other": (7,)}[out_shape]
        out = lib.zeros(shape, dtype=lib.float64)
        names["out"] = out
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = eval(call, names)
        assert result is out
        results.append((out, [str(w.message) for w in caught if w.category is UserWarning]))
    (ours, our_warnings), (theirs, their_warnings) = results
    _same(ours, theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert len(our_warnings) == len(their_warnings) == (out_shape == "other")
    assert [w.split("PyTorch")[0] for w in our_warnings] == \
        [w.split("PyTorch")[0] for w in their_warnings]


def test_out_of_the_same_shape_keeps_its_memory_and_casts(torch):
    for lib in (mg, torch):
        base = lib.zeros(2, 3)
        column = base[:, 1]  # a view: out= writes through it into base
        lib.add(lib.tensor([1, 2]), lib.tensor([10, 20]), out=column)
        assert base[:, 1].tolist() == [11.0, 22.0] and column.dtype == lib.float32
        x = lib.ones(3)
        assert lib.mul(x, 2, out=x) is x and x.tolist() == [2.0, 2.0, 2.0]


OUT_MISTAKES = {
    "a float result into an int out": lambda lib: lib.add(lib.ones(2), 1.5,
                                                          out=lib.zeros(2, dtype=lib.int64)),
    "an input that requires grad": lambda lib: lib.add(lib.ones(2, requires_grad=True),
                                                       lib.ones(2), out=lib.zeros(2)),
    "an out that requires grad": lambda lib: lib.mul(lib.ones(2), 2,
                                                     out=lib.zeros(2, requires_grad=True)),
    "a float matmul into an int out": lambda lib: lib.matmul(lib.ones(2, 2), lib.ones(2, 2),
                                                             out=lib.zeros(0, dtype=lib.int64)),
}


@pytest.mark.parametrize("mistake", sorted(OUT_MISTAKES))
def test_out_mistakes_raise_pytorchs_exception_and_leave_out_alone(mistake, torch):
    ours, theirs = errors_of_both(OUT_MISTAKES[mistake], torch)
    assert type(ours) is type(theirs), (ours, theirs)


def test_out_under_no_grad_is_allowed_and_the_result_has_no_graph():
    w = mg.ones(2, requires_grad=True)
    out = mg.zeros(2)
    with mg.no_grad():
        mg.add(w, 1, out=out)
    assert out.tolist() == [2.0, 2.0] and out.grad_fn is None and not out.requires_grad
