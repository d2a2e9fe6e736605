"""Views against PyTorch 2.13 (issue 28's gaps): writing into a view with no element, views
made in no_grad mode of a tensor that requires grad, ``as_strided``, and ``out=``, which
PyTorch's Tensor methods refuse while its functions take it.

Each case runs the same code with ``lib`` = minigrad and ``lib`` = torch; ``state`` reads
what a change leaves behind (versions, grad_fn names, requires_grad, values).
"""

import pytest

import minigrad as mg
from test_hunt28_fixes import assert_same, check, outcome

torch = pytest.importorskip("torch", reason="parity tests need PyTorch")


def node_name(t):
    return None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")


def state(base, view, result=None):
    return (result, base._version, view._version, node_name(view), node_name(base),
            view.requires_grad, base.requires_grad, view.is_leaf, base.is_leaf,
            base.detach().clone())


# ------------------------------------------------------------------ empty views

EMPTY_VIEWS = {
    "x[0:0]": lambda x: x[0:0], "x[:, 0:0]": lambda x: x[:, 0:0],
    "narrow": lambda x: x.narrow(0, 0, 0), "reshape": lambda x: x[0:0].reshape(0, 3),
    ".T": lambda x: x[0:0].T, "unsqueeze": lambda x: x[0:0].unsqueeze(0),
    "expand": lambda x: x[0:0].expand(0, 3), "diagonal": lambda x: x[0:0].diagonal(),
    "x[:, 1:1][0]": lambda x: x[:, 1:1][0], "flatten": lambda x: x[0:0].flatten(),
    "permute": lambda x: x[0:0].permute(1, 0), "as_strided": lambda x: x.as_strided((0,), (1,)),
}

WRITES = {
    "add_": lambda v, lib: v.add_(1), "mul_": lambda v, lib: v.mul_(2),
    "zero_": lambda v, lib: v.zero_(), "fill_": lambda v, lib: v.fill_(3),
    "copy_": lambda v, lib: v.copy_(lib.ones(v.shape)),
    "copy_ (broadcast)": lambda v, lib: v.copy_(lib.ones(())),
    "copy_ (bad shape)": lambda v, lib: v.copy_(lib.ones(2)),
    "+=": lambda v, lib: v.__iadd__(1), "clamp_": lambda v, lib: v.clamp_(0, 1),
    "relu_": lambda v, lib: v.relu_(), "exp_": lambda v, lib: v.exp_(),
    "v[...] = 1": lambda v, lib: v.__setitem__(..., 1.0),
    "masked_fill_": lambda v, lib: v.masked_fill_(lib.zeros(v.shape, dtype=lib.bool), 1.0),
    "add_ (grad)": lambda v, lib: v.add_(lib.ones(v.shape, requires_grad=True)),
    "fill_ (grad)": lambda v, lib: v.fill_(lib.tensor(1.0, requires_grad=True)),
    "copy_ (grad)": lambda v, lib: v.copy_(lib.ones(v.shape, requires_grad=True)),
}

BASES = {
    "leaf that requires grad": lambda lib: lib.ones(2, 3, requires_grad=True),
    "non-leaf": lambda lib: lib.ones(2, 3, requires_grad=True) * 1,
    "plain": lambda lib: lib.ones(2, 3),
    "empty non-leaf": lambda lib: lib.ones(0, 3, requires_grad=True) * 1,
}


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("write", WRITES)
def test_writing_into_a_view_with_no_element(base, write):
    """The versions, nodes and errors of an in-place op on a 0-element view, then backward.
    (The errors by type: for copy_ of a wrong shape into a view of a leaf that requires
    grad PyTorch names the leaf first, minigrad the shapes.)"""
    for name, make_view in EMPTY_VIEWS.items():
        def run(lib):
            x = BASES[base](lib)
            v = make_view(x)
            result = WRITES[write](v, lib)
            out = state(x, v, result if result is not None else "none")
            if x.requires_grad:
                (x.sum() + v.sum()).backward()
            return out
        check(run, f"{name}: {write}", words=write != "copy_ (bad shape)")


# ------------------------------------------------------------------ views made in no_grad mode

NO_GRAD_VIEWS = {
    "x[0]": lambda x: x[0], ".T": lambda x: x.T, "view": lambda x: x.view(-1),
    "expand": lambda x: x.expand(2, 2, 3), "diagonal": lambda x: x.diagonal(),
    "unsqueeze": lambda x: x.unsqueeze(0), "narrow": lambda x: x.narrow(1, 0, 2),
    "unbind": lambda x: x.unbind(0)[0], "split": lambda x: x.split(1)[0],
    "permute": lambda x: x.permute(1, 0), "x[...]": lambda x: x[...],
    "as_strided": lambda x: x.as_strided((2,), (1,)), "detach": lambda x: x.detach(),
}


@pytest.mark.parametrize("base", ["leaf", "non-leaf", "plain"])
def test_a_view_made_in_no_grad_mode_requires_grad_as_its_base(base):
    """PyTorch: requires_grad as the base, a leaf with no grad_fn, whose gradient goes
    nowhere (its own .grad stays None too); changed in place with grad mode on: refused."""
    make = {"leaf": lambda lib: lib.ones(2, 3, requires_grad=True),
            "non-leaf": lambda lib: lib.ones(2, 3, requires_grad=True) * 2,
            "plain": lambda lib: lib.ones(2, 3)}[base]
    for name, make_view in NO_GRAD_VIEWS.items():
        def made(lib):
            with lib.no_grad():
                v = make_view(make(lib))
            return v.requires_grad, v.is_leaf, node_name(v), v._version

        def used(lib):
            x = make(lib)
            with lib.no_grad():
                v = make_view(x)
            y = (v * 2).sum()
            if y.requires_grad:
                y.backward()
            leaf = x if x.is_leaf else None
            return y.requires_grad, None if leaf is None else leaf.grad, v.grad

        def changed(lib):
            x = make(lib)
            with lib.no_grad():
                v = make_view(x)
            v.mul_(2)
            return state(x, v)

        def changed_in_no_grad(lib):
            x = make(lib)
            with lib.no_grad():
                v = make_view(x)
                v.add_(1)
            return x.detach().clone(), x._version

        for fn in (made, used, changed, changed_in_no_grad):
            check(fn, f"{fn.__name__}: {name}")


def test_the_refusal_names_no_grad_mode():
    x = mg.ones(2, 3, requires_grad=True)
    with mg.no_grad():
        v = x[0]
    with pytest.raises(RuntimeError, match="created in no_grad mode"):
        v.add_(1)


# ------------------------------------------------------------------ as_strided

AS_STRIDED = [((2, 2), (1, 2)), ((3,), (1,), 0), ((3, 2), (1, 0)), ((7,), (1,)),
              ((2,), (-1,)), ((2,), (1,), 5), ((2,), (1,), -1), ((2, 3), (1,)),
              ((0,), (1,), 10), ((2,), (3,), 1), ((), (), 3), ((2,), (1,), 4), ((1, 6), (6, 1))]

SOURCES = {"x": lambda x: x, "x[:, :2]": lambda x: x[:, :2], "x.t()": lambda x: x.t(),
           "x.reshape(-1)[2:]": lambda x: x.reshape(-1)[2:]}


@pytest.mark.parametrize("source", SOURCES)
def test_as_strided_values_errors_and_gradients(source):
    """The view reads the memory (PyTorch's storage) of what it is made from, from that
    tensor's own offset by default; elements outside its source get no gradient, elements
    seen twice get it twice."""
    view_of = SOURCES[source]
    for args in AS_STRIDED:
        def values(lib):
            x = lib.arange(6.0).reshape(2, 3)
            return view_of(x).as_strided(*args), lib.as_strided(view_of(x), *args)

        def gradients(lib):
            x = lib.arange(6.0).reshape(2, 3).requires_grad_()
            z = view_of(x).as_strided(*args)
            (z * lib.arange(1.0, z.numel() + 1).reshape(z.shape)).sum().backward()
            return x.grad, node_name(z), z.requires_grad

        def written(lib):
            x = lib.arange(6.0).reshape(2, 3).requires_grad_()
            b = x * 1
            z = view_of(b).as_strided(*args)
            z.mul_(3)
            (b * lib.arange(6.0).reshape(2, 3)).sum().backward()
            return x.grad, state(b, z)

        def zeroed(lib):
            x = lib.arange(6.0).reshape(2, 3)
            z = view_of(x).as_strided(*args)
            z.zero_()
            return x, x._version

        for fn in (values, gradients, written, zeroed):
            check(fn, f"{fn.__name__}: {source}.as_strided{args}")


def test_as_strided_second_derivative():
    def run(lib):
        x = lib.arange(6.0).requires_grad_()
        y = (x.as_strided((3, 2), (1, 2)) ** 3).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    check(run)


# ------------------------------------------------------------------ out= is for functions

METHODS_WITH_OUT_FUNCTIONS = ["acos", "asin", "atan", "ceil", "cosh", "erf", "expm1", "floor",
                              "frac", "log10", "log1p", "log2", "logit", "rsqrt", "sinh",
                              "trunc", "round", "nan_to_num", "clamp_min", "tril", "triu"]


@pytest.mark.parametrize("name", METHODS_WITH_OUT_FUNCTIONS)
def test_tensor_methods_refuse_out_like_pytorchs(name):
    args = (0.5,) if name == "clamp_min" else ()

    def method(lib):
        return getattr(lib.full((2, 2), 0.5), name)(*args, out=lib.zeros(2, 2))

    def function(lib):
        out = lib.zeros(2, 2)
        result = getattr(lib, name)(lib.full((2, 2), 0.5), *args, out=out)
        return result is out, out

    ours = outcome(method, mg)
    assert isinstance(ours, TypeError) and "out" in str(ours), ours
    assert isinstance(outcome(method, torch), TypeError)
    check(function, name)
    in_place = name + "_"
    if hasattr(torch.Tensor, in_place) and hasattr(mg.Tensor, in_place):
        assert isinstance(outcome(lambda lib: getattr(lib.full((2, 2), 0.5), in_place)(
            *args, out=lib.zeros(2, 2)), mg), TypeError)
    assert_same(outcome(lambda lib: getattr(lib.full((2, 2), 0.5), name)(*args), mg),
                outcome(lambda lib: getattr(lib.full((2, 2), 0.5), name)(*args), torch))


# ------------------------------------------------------------------ writing into an expansion

@pytest.mark.parametrize("key", [-1, 0, (slice(None), 0), (0, 1), Ellipsis, (0, slice(0, 2))])
@pytest.mark.parametrize("value", ["tensor", "number"])
def test_writing_into_a_part_of_an_expanded_tensor(key, value):
    """PyTorch checks the part written for overlap: a row of ``x.expand(2, 3)`` may be
    written (the other row, which shares the memory, shows it too), a column may not."""
    def run(lib):
        x = lib.tensor([-0.5, -3.25, 2.0], dtype=lib.float64).expand(2, 3)
        x[key] = lib.tensor([-0.75, -1.75, 1e-5], dtype=lib.float64) if value == "tensor" \
            else 1.5
        return x, x._version
    check(run, f"x[{key!r}] = {value}", words=False)


def test_a_value_that_requires_grad_written_into_an_expansion_is_refused_by_name():
    x = mg.tensor([1.0, 2.0]).expand(2, 2)
    with pytest.raises(RuntimeError, match="expanded tensor cannot be recorded"):
        x[0] = mg.tensor([3.0, 4.0], requires_grad=True)


@pytest.mark.parametrize("which", range(8))
@pytest.mark.parametrize("assign", [False, True])
def test_an_integer_after_an_ellipsis_out_of_range_before_a_backward_slice(which, assign):
    """PyTorch applies the items of a key one at a time, the dims after an Ellipsis counted
    from the end: the integer out of range is its error (an IndexError naming the item's
    place in the key), before the backward slice's ValueError."""
    def run(lib):
        back = slice(None, None, -1)
        key = [(..., lib.tensor(3), lib.tensor([2]), None, slice(2, 1, -1)), (..., 5, back),
               (0, ..., 3, back), (..., lib.tensor(1), back), (None, ..., 7, None, back),
               (..., lib.tensor([True, False, True]), back), (..., 1, 1, back),
               (1, ..., 2, 5, back)][which]
        x = lib.zeros(3, 3, 3, 2)
        if assign:
            x[key] = -1
            return x
        return x[key]
    check(run, str(which))


def test_as_strided_of_an_expanded_or_overlapping_view_reads_the_memory_there_is():
    check(lambda lib: lib.arange(6.0).as_strided((3, 2), (1, 0)).as_strided((6,), (1,)))
    check(lambda lib: lib.arange(3.0).expand(2, 3).as_strided((3,), (1,)))
    check(lambda lib: lib.arange(3.0).expand(2, 3).as_strided((4,), (1,)))  # out of bounds
    check(lambda lib: lib.arange(6.0).as_strided((2, 2), (1, 1), 2).as_strided((3,), (1,)))
