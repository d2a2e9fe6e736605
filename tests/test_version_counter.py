"""``t._version`` against PyTorch's: in-place ops on tensors and on views, optimizer steps,
``.data`` and ``detach()``; and backward refusing a saved tensor changed in place since,
with PyTorch's exception type and a message naming the node and both versions."""

import re

import numpy as np
import pytest

import minigrad as mg


def node_numbers(lib, name):
    """Run one sequence of in-place changes; return the versions it ends with."""
    x = lib.zeros(2, 3)
    if name == "add_ mul_ zero_ fill_ copy_":
        x.add_(1)
        x.mul_(2)
        x.zero_()
        x.fill_(3)
        x.copy_(lib.ones(2, 3))
        return [x._version]
    if name == "operators":
        x += 1
        x -= 1
        x *= 2
        x /= 2
        return [x._version]
    if name == "setitem":
        x[0] = 1
        x[:, 1] = lib.ones(2)
        x[x > 0] = 5
        return [x._version]
    if name == "views share the counter":
        v, r, t = x[1:], x.view(6), x.t()
        v.add_(1)
        r.mul_(2)
        t.zero_()
        return [x._version, v._version, r._version, t._version, x.unsqueeze(0)._version,
                x.expand(4, 2, 3)._version, x.reshape(3, 2)._version, x.T._version]
    if name == "a reshape that copies":
        y = x.t().reshape(6)  # not a view: numpy copies (as PyTorch does)
        y.add_(1)
        v = x.t().reshape(3, 2)  # a view
        v.add_(1)
        return [x._version, y._version, v._version, x[:, :2].reshape(4)._version]
    if name == "an advanced index copies":
        y = x[[0, 1]]
        y.add_(1)
        return [x._version, y._version]
    if name == "detach shares, .data does not":
        d = x.detach()
        d.add_(1)
        data = x.data
        data.add_(1)
        data.add_(1)
        return [x._version, d._version, data._version]
    if name == "x.data = t keeps the version":
        x.add_(1)
        x.data = lib.ones(4)
        return [x._version]
    if name == "addcmul_ addcdiv_ lerp_ clamp_ relu_ sub_ div_":
        x.addcmul_(x, x, value=2)
        x.addcdiv_(x, x + 1, value=0.5)
        x.lerp_(lib.ones(2, 3), 0.3)
        x.clamp_(0, 1)
        x.relu_()
        x.sub_(lib.ones(2, 3), alpha=0.5)
        x.div_(2)
        return [x._version]
    if name == "a 0-dim view of one element":
        e = x[0, 1]
        e.fill_(7)
        return [x._version, e._version]
    if name == "a new tensor and a result":
        return [lib.ones(3)._version, (x + 1)._version, x.clone()._version]
    raise ValueError(name)


SEQUENCES = ["add_ mul_ zero_ fill_ copy_", "operators", "setitem", "views share the counter",
             "a reshape that copies", "an advanced index copies", "detach shares, .data does not",
             "x.data = t keeps the version", "addcmul_ addcdiv_ lerp_ clamp_ relu_ sub_ div_",
             "a 0-dim view of one element", "a new tensor and a result"]


@pytest.mark.parametrize("name", SEQUENCES)
def test_versions_after_in_place_changes_match_pytorch(name, torch):
    assert node_numbers(mg, name) == node_numbers(torch, name)


OPTIMIZERS = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)),
              ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
              ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True)),
              ("AdamW", dict(lr=0.01)), ("RMSprop", dict(lr=0.01)),
              ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)), ("Adagrad", dict(lr=0.1))]


def _optimizer_versions(lib, kind, options):
    w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = getattr(lib.optim, kind)([w], **options)
    versions = []
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        versions.append(w._version)
    state = sorted((key, value._version) for key, value in opt.state[w].items()
                   if hasattr(value, "_version"))
    return versions, state, [round(v, 6) for v in w.tolist()]


@pytest.mark.parametrize("kind, options", OPTIMIZERS, ids=[f"{k}{o}" for k, o in OPTIMIZERS])
def test_an_optimizer_step_changes_parameters_and_state_in_place_as_pytorch(kind, options, torch):
    """Every step is one in-place change of each parameter (and its state tensors count
    theirs too), and the values stay PyTorch's."""
    assert _optimizer_versions(mg, kind, options) == _optimizer_versions(torch, kind, options)


def _refusal(lib, case):
    """Backward after a saved tensor changed: the exception (or None) it raises."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    try:
        if case == "a saved input, a result":
            a = x * 2
            out = a * a
            a.add_(1)
        elif case == "a saved input, a tensor without grad":
            w = lib.ones(2, 3)
            out = x * w
            w.mul_(2)
        elif case == "a saved input, a 0-dim double":
            w = lib.tensor(2.0, dtype=lib.float64)
            out = x * w
            w.fill_(3)
        elif case == "a saved input changed through a view":
            w = lib.ones(3)
            out = x * w
            w[1:].zero_()
        elif case == "a saved input changed by detach()":
            w = lib.ones(3)
            out = x * w
            w.detach().add_(1)
        elif case == "a saved input changed through .data":  # not seen, in both
            w = lib.ones(3)
            out = x * w
            w.data.add_(1)
        elif case == "a parameter, by optimizer.step()":
            out = x * x
            out.sum().backward(retain_graph=True)
            lib.optim.SGD([x], lr=0.1).step()
        elif case == "changed, then the forward pass again":
            w = lib.ones(3)
            w.add_(1)
            out = x * w
        elif case == "a saved output (softmax)":
            out = (x * 1).softmax(0)
            out.mul_(2)
        elif case == "a saved base of a power":
            a = x * 2
            out = a ** 2
            a.sub_(1)
        elif case == "an unsaved operand":
            w = lib.ones(3)
            out = x + w
            w.add_(1)
        else:
            raise ValueError(case)
        out.sum().backward()
    except Exception as error:
        return error
    return None


REFUSALS = ["a saved input, a result", "a saved input, a tensor without grad",
            "a saved input, a 0-dim double", "a saved input changed through a view",
            "a saved input changed by detach()", "a saved input changed through .data",
            "a parameter, by optimizer.step()", "changed, then the forward pass again",
            "a saved output (softmax)", "a saved base of a power", "an unsaved operand"]

_VERSIONS = re.compile(r"\[(\w+)\.(\w+) (\[[\d, ]*\])\](?:, which is output 0 of (\w+),)? "
                       r"is at version (\d+); expected version (\d+) instead")


@pytest.mark.parametrize("case", REFUSALS)
def test_backward_refuses_a_changed_saved_tensor_as_pytorch(case, torch):
    ours, theirs = _refusal(mg, case), _refusal(torch, case)
    assert type(ours) is type(theirs), (ours, theirs)
    if theirs is None:
        return
    assert "one of the variables needed for gradient computation has been modified by an " \
           "inplace operation" in str(ours)
    mine, pytorchs = _VERSIONS.search(str(ours)), _VERSIONS.search(str(theirs))
    assert mine and pytorchs, (str(ours), str(theirs))
    assert mine.group(1) == "minigrad" and mine.group(2) == pytorchs.group(2)  # FloatTensor
    assert mine.group(3) == pytorchs.group(3)  # the shape
    # the node that made the changed tensor: PyTorch prints it without "Backward0"
    assert (mine.group(4) is None) == (pytorchs.group(4) is None)
    if mine.group(4):
        assert mine.group(4).startswith(pytorchs.group(4)) and mine.group(4).endswith("Backward0")
    assert mine.groups()[4:] == pytorchs.groups()[4:]  # the versions
    assert "Hint:" in str(ours)


def test_a_saved_output_changed_in_place_names_its_own_node():
    """An Op that saved its output: the message names the op as the output's maker."""
    from minigrad.ops import Op

    class CubeBackward0(Op):
        __slots__ = ()

        def forward(self, a):
            out = a ** 3
            self.save_for_backward(a, out)
            return out

        def backward(self, grad, a, out):
            return grad * 3 * out / a

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = CubeBackward0.run((x,))
    assert y._version == 0
    y.mul_(2)
    assert y._version == 1
    with pytest.raises(RuntimeError, match=r"\[minigrad.FloatTensor \[2\]\], which is output 0 "
                                           r"of CubeBackward0, is at version 1; expected "
                                           r"version 0 instead"):
        y.sum().backward()


def test_a_view_op_shares_its_input_s_counter():
    """An Op whose class says ``is_view = True`` gives its output its input's counter, in
    grad mode or not. A change of the memory that is not recorded (made through a view made
    in no_grad mode) leaves the view's node as it was, and its gradient right: PyTorch,
    too, backwards through it (a view's backward needs no values)."""
    from minigrad.ops import Op

    class FlipViewBackward0(Op):
        __slots__ = ()
        is_view = True

        def forward(self, a):
            return a[::-1]

        def backward(self, grad):
            return grad[::-1]

    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 1
    v = FlipViewBackward0.run((h,))
    with mg.no_grad():
        u = FlipViewBackward0.run((h,))
        u.add_(1)  # (with grad mode on, refused: u requires grad as h does, as in PyTorch)
    assert h._version == v._version == u._version == 1
    (v * 2).sum().backward(retain_graph=True)
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    w = FlipViewBackward0.run((h,))  # made after the change: the same
    (w * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_replacing_data_keeps_the_version_but_refuses_a_graph_that_saved_the_old_array():
    w = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    w.data = mg.tensor([10.0, 20.0, 30.0])
    assert w._version == 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_in_place_ops_under_no_grad_take_the_direct_path_and_keep_pytorch_errors(torch):
    for lib in (mg, torch):
        w = lib.zeros(3)
        with pytest.raises(RuntimeError):
            w.add_(lib.ones(4))
        with pytest.raises(RuntimeError):
            lib.zeros(1).expand(3).add_(lib.ones(3))
        assert w._version == 0
        w.add_(lib.ones(1), alpha=2)
        assert w.tolist() == [2.0, 2.0, 2.0] and w._version == 1
        i = lib.zeros(3, dtype=lib.int64)
        i.add_(lib.ones(3, dtype=lib.int64), alpha=2)
        assert i.tolist() == [2, 2, 2]
    np.testing.assert_array_equal(mg.ones(3).lerp_(mg.zeros(3), 0.75).numpy(),
                                  torch.ones(3).lerp_(torch.zeros(3), 0.75).numpy())


def _changed_index_refuses(lib, name):
    """Change in place the index, mask or target an op saved (not an input of its gradient):
    does backward refuse?"""
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    mask = lib.tensor([[True, False, True], [False, True, False]])
    rows = lib.tensor([[0, 1, 0], [1, 0, 1]])
    vector = lib.tensor([0, 1])
    h = x * x
    made = {
        "masked_fill": lambda: (h.masked_fill(mask, 0.0), mask),
        "where": lambda: (lib.where(mask, h, x), mask),
        "embedding": lambda: (lib.nn.functional.embedding(vector, h), vector),
        "scatter": lambda: (h.scatter(0, rows, x), rows),
        "scatter_add": lambda: (h.scatter_add(0, rows, x), rows),
        "index_add": lambda: (h.index_add(0, vector, x), vector),
        "index_fill": lambda: (h.index_fill(1, vector, 0.0), vector),
        "index_select": lambda: (h.index_select(1, vector), vector),
        "take": lambda: (h.take(vector), vector),
        "masked_select": lambda: (h.masked_select(mask), mask),
        "nll_loss": lambda: (lib.nn.functional.nll_loss(h, vector), vector),
    }
    y, index = made[name]()
    with lib.no_grad():
        if index.dtype == lib.bool:
            index.fill_(True)
        else:
            index.mul_(1)
    try:
        (y * y).sum().backward()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False


@pytest.mark.parametrize("name", ["masked_fill", "where", "embedding", "scatter", "scatter_add",
                                  "index_add", "index_fill", "index_select", "take",
                                  "masked_select", "nll_loss"])
def test_changing_a_saved_index_mask_or_target_refuses_as_in_pytorch(name, torch):
    assert _changed_index_refuses(mg, name) == _changed_index_refuses(torch, name) is True
