"""``out=`` and the in-place forms (``x.exp_()``) against PyTorch: their errors and warnings
(issue 28; the values of each op's forms are checked by tests/opinfo).

``out=`` writes the result into a given tensor (cast to its dtype when it can hold it),
resizes one of another shape (with PyTorch's warning unless it is empty), and refuses to be
recorded; an in-place form keeps the tensor's dtype and shape, and refuses a result that
does not fit in them.
"""

import warnings

import numpy as np
import pytest

import minigrad as mg

# name -> call(lib, out) of a function with out=, on float inputs
OUT_CALLS = {
    "exp": lambda lib, x, out: lib.exp(x, out=out),
    "floor": lambda lib, x, out: lib.floor(x, out=out),
    "clamp": lambda lib, x, out: lib.clamp(x, -0.5, 0.5, out=out),
    "where": lambda lib, x, out: lib.where(x > 0, x, -x, out=out),
    "cumsum": lambda lib, x, out: lib.cumsum(x, 1, out=out),  # computed in out's dtype
    "sum": lambda lib, x, out: lib.sum(x, 0, out=out),
    "amax": lambda lib, x, out: lib.amax(x, 1, out=out),
    "addmm": lambda lib, x, out: lib.addmm(x, x, x.T @ x, out=out),
    "mv": lambda lib, x, out: lib.mv(x, x[0], out=out),
    "remainder": lambda lib, x, out: lib.remainder(x, 1.5, out=out),
    "addcmul": lambda lib, x, out: lib.addcmul(x, x, x, value=0.5, out=out),
    "tril": lambda lib, x, out: lib.tril(x, out=out),
    "logsumexp": lambda lib, x, out: lib.logsumexp(x, 1, out=out),
}

DATA = np.random.default_rng(0).standard_normal((3, 3))


def _outcome(call):
    """(result as an array or None, the exception's type or None, warnings' messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as error:  # noqa: BLE001  (compared with PyTorch's)
            return None, type(error), [str(w.message)[:40] for w in caught]
    value = result.detach().numpy() if hasattr(result, "detach") else result
    return np.array(value), None, [str(w.message)[:40] for w in caught]


def _same(statement, torch):
    ours = _outcome(lambda: statement(mg))
    theirs = _outcome(lambda: statement(torch))
    assert ours[1] is theirs[1], (ours[1], theirs[1])
    assert ours[2] == theirs[2]
    if theirs[0] is not None:
        assert ours[0].dtype == theirs[0].dtype
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)


@pytest.mark.parametrize("call", OUT_CALLS.values(), ids=OUT_CALLS.keys())
def test_out_returns_out_and_holds_the_result(torch, call):
    for lib in (mg, torch):
        x = lib.tensor(DATA)
        expected = call(lib, x, None)
        out = lib.zeros(tuple(expected.shape), dtype=expected.dtype)
        assert call(lib, x, out) is out
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
    _same(lambda lib: call(lib, lib.tensor(DATA), lib.zeros(0, dtype=lib.float64)), torch)


@pytest.mark.parametrize("call", OUT_CALLS.values(), ids=OUT_CALLS.keys())
def test_out_of_another_shape_is_resized_with_pytorch_s_warning(torch, call):
    _same(lambda lib: call(lib, lib.tensor(DATA), lib.zeros(2, 7, dtype=lib.float64)), torch)


@pytest.mark.parametrize("call", OUT_CALLS.values(), ids=OUT_CALLS.keys())
def test_out_of_a_dtype_that_cannot_hold_the_result_is_refused(torch, call):
    _same(lambda lib: call(lib, lib.tensor(DATA), lib.zeros(3, 3, dtype=lib.int64)), torch)


@pytest.mark.parametrize("call", OUT_CALLS.values(), ids=OUT_CALLS.keys())
def test_out_is_not_recorded_so_an_input_that_requires_grad_is_refused(torch, call):
    _same(lambda lib: call(lib, lib.tensor(DATA, requires_grad=True),
                           lib.zeros(3, 3, dtype=lib.float64)), torch)

    def under_no_grad(lib):
        with lib.no_grad():
            return call(lib, lib.tensor(DATA, requires_grad=True), lib.zeros(0, dtype=lib.float64))
    _same(under_no_grad, torch)


def test_out_that_requires_grad_is_refused(torch):
    _same(lambda lib: lib.exp(lib.tensor(DATA), out=lib.zeros(3, 3, dtype=lib.float64,
                                                              requires_grad=True)), torch)


def test_out_of_a_wider_dtype_takes_the_result(torch):
    _same(lambda lib: lib.floor(lib.tensor([1.5, -2.5]), out=lib.zeros(2, dtype=lib.float64)),
          torch)
    _same(lambda lib: lib.neg(lib.tensor([1, -2]), out=lib.zeros(2)), torch)


def test_out_that_is_not_a_tensor_is_a_type_error(torch):
    _same(lambda lib: lib.exp(lib.tensor(DATA), out=np.zeros((3, 3))), torch)


# ----------------------------------------------------------------- in-place forms

IN_PLACE = ["x.exp_()", "x.sqrt_()", "x.neg_()", "x.abs_()", "x.floor_()", "x.round_(decimals=1)",
            "x.sign_()", "x.sigmoid_()", "x.pow_(2)", "x.clamp_min_(0)", "x.clamp_max_(0)",
            "x.square_()", "x.fmod_(1.5)", "x.remainder_(1.5)", "x.atan2_(x + 1)",
            "x.nan_to_num_(0.0)", "x.reciprocal_()", "x.log1p_()",
            "x.true_divide_(2)", "x.floor_divide_(2)", "x.clamp_(lib.zeros(3), lib.ones(3))"]


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
@pytest.mark.parametrize("statement", IN_PLACE)
def test_an_in_place_form_keeps_the_tensor_and_its_dtype_or_refuses_as_pytorch(torch, statement,
                                                                              dtype):
    def run(lib):
        x = lib.tensor([[0.5, -2.0, 3.0], [4.0, 0.0, -1.5]]).to(getattr(lib, dtype))
        version = x._version
        result = eval(statement, {"x": x, "lib": lib})
        assert result is x and x._version == version + 1
        return x
    _same(run, torch)


@pytest.mark.parametrize("statement", ["x.exp_()", "x.mul_(2)", "x.pow_(x)"])
def test_an_in_place_form_on_a_leaf_that_requires_grad_is_refused(torch, statement):
    _same(lambda lib: eval(statement, {"x": lib.ones(2, requires_grad=True)}), torch)


def test_an_in_place_form_broadcast_beyond_the_tensor_is_refused(torch):
    _same(lambda lib: lib.ones(3).atan2_(lib.ones(2, 3)), torch)
