"""Chapter 13's build exercise: the learner's ``checkpoint``, PyTorch's
``torch.utils.checkpoint.checkpoint``, a custom Function that saves only its inputs and
recomputes the forward in backward, plugged in behind ``minigrad.utils.checkpoint.checkpoint``
by ``teach.use(checkpoint=...)`` and checked by ``teach.check_piece("checkpoint", ...)``.

Each wrong answer below is the notebook's own solution with one typical mistake made in its
source, so every test shows that one mistake is caught, and named."""

import inspect

import numpy as np
import pytest
import torch
from build_checks import deterministic, passes, refused
from build_cells import build_cells, solution

import minigrad as mg
from minigrad import nn, teach
from minigrad.teach import build
from minigrad.teach.checkpointing import saved_bytes
from minigrad.teach.exercises import ch13  # noqa: F401  (registers the piece)
from minigrad.utils import checkpoint as checkpoint_module

checkpoint = solution("13", "checkpoint")
OWN = checkpoint_module.checkpoint
SOURCE = "\n".join(build_cells("13"))


def variant(old, new, count=1):
    """The notebook's build cell with ``old`` replaced by ``new``: one mistake."""
    assert SOURCE.count(old) >= 1, old
    names = {"__name__": "__build__"}
    exec(compile(build.PRELUDE + SOURCE.replace(old, new, count), "<variant>", "exec"), names)
    return names["checkpoint"]


def message(answer):
    return refused("checkpoint", answer)


# ---------------------------------------------------------------- right answers

def test_the_notebooks_checkpoint_passes_its_check():
    passes("checkpoint", checkpoint, "8 cases", "training steps")


def test_the_check_is_deterministic_and_leaves_the_random_stream_alone():
    deterministic("checkpoint", checkpoint)


def _pair(seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((6, 4)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    return ((mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)),
            (torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_notebooks_answer_gives_pytorchs_values_and_gradients(dtype):
    (x, w), (tx, tw) = _pair(3, dtype)
    out = checkpoint(lambda a, b, shift: (a @ b + shift).tanh(), x, w, shift=0.5)
    want = torch.utils.checkpoint.checkpoint(lambda a, b, shift: (a @ b + shift).tanh(), tx, tw,
                                             shift=0.5, use_reentrant=False)
    assert str(out.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert np.allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    weights = np.random.default_rng(4).standard_normal((6, 5)).astype(dtype)
    (out * mg.tensor(weights)).sum().backward()
    (want * torch.tensor(weights)).sum().backward()
    for ours, theirs in ((x, tx), (w, tw)):
        assert np.allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_the_notebooks_answer_keeps_only_the_inputs():
    (x, w), _ = _pair(5)
    def block(a, b):
        return (a @ b).tanh().exp().sin()
    plain = block(x, w)
    kept = checkpoint(block, x, w)
    inputs = x.detach().numpy().nbytes + w.detach().numpy().nbytes
    assert saved_bytes(kept) == inputs < saved_bytes(plain)
    assert saved_bytes(OWN(block, x, w, use_reentrant=False)) >= inputs


def test_use_plugs_the_piece_in_behind_utils_checkpoint_and_puts_minigrads_back():
    calls = []

    def spy(function, *args, **kwargs):
        calls.append(function)
        return checkpoint(function, *args, **kwargs)

    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3), nn.Tanh())
    x = mg.ones(2, 3, requires_grad=True)
    with teach.use(checkpoint=spy):
        mg.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False).sum().backward()
    assert len(calls) == 1 and x.grad is not None
    assert checkpoint_module.checkpoint is OWN


# ---------------------------------------------------------------- wrong answers

WRONG = {
    "runs the function plainly (keeps the whole graph)": (
        "    return Recompute.apply(run, preserve_rng_state, *args)",
        "    return run(*args)", "the graph keeps"),
    "keeps the outputs too": (
        "        return run(*args)                       # forward runs without a graph",
        "        out = run(*args)\n        ctx.extra = out\n"
        "        ctx.save_for_backward(*[a for a in args if isinstance(a, mg.Tensor)], "
        "*(out if isinstance(out, tuple) else (out,)))\n        return out",
        "more than the inputs"),
    "reruns without grad mode": (
        "            with mg.enable_grad():\n                outputs = ctx.run(*args)",
        "            outputs = ctx.run(*args)", "grad mode off"),
    "forgets requires_grad on the rerun's inputs": (
        "next(saved).requires_grad_(need) if other", "next(saved) if other",
        "requires_grad"),
    "does not restore the random state": (
        "        if ctx.rng_state is not None:           # the same random numbers as the "
        "first run\n            mg.default_generator.set_state(ctx.rng_state)\n",
        "", "dropout masks"),
    "restores the state but does not put the stream back": (
        "            mg.default_generator.set_state(now)  # the stream goes on where it was",
        "            pass", "random stream"),
    "restores the state even with preserve_rng_state=False": (
        "mg.default_generator.get_state() if preserve_rng_state else None",
        "mg.default_generator.get_state()", "preserve_rng_state=False"),
    "ignores the keyword arguments": (
        "        return function(*inputs, **kwargs)", "        return function(*inputs)",
        "differs from the plain call"),
    "returns too few gradients": (
        "        return (None, None) + tuple(", "        return tuple(", "one gradient per argument"),
    "saves every argument, numbers too": (
        "ctx.save_for_backward(*[a for a in args if isinstance(a, mg.Tensor)])",
        "ctx.save_for_backward(*args)", "tensors only"),
    "asks for the inputs' gradients only (the weights get none)": (
        "        mg.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])\n"
        "        return (None, None) + tuple(a.grad if isinstance(a, mg.Tensor) else None\n"
        "                                    for a in args)",
        "        wanted = [a for a in args if isinstance(a, mg.Tensor) and a.requires_grad]\n"
        "        found = iter(mg.autograd.grad([o for o, _ in pairs], wanted, "
        "[g for _, g in pairs]))\n"
        "        return (None, None) + tuple(next(found) if isinstance(a, mg.Tensor) and "
        "a.requires_grad else None for a in args)",
        "weights"),
    "handles one output only": (
        "        outputs = outputs if isinstance(outputs, tuple) else (outputs,)\n"
        "        pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]\n"
        "        mg.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])\n",
        "        outputs.backward(grads[0])\n", "several outputs"),
    "runs the function twice in forward": (
        "        return run(*args)                       # forward runs without a graph",
        "        run(*args)\n        return run(*args)", "times during the forward pass"),
    "returns the output's gradient as the input's": (
        "        mg.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])\n"
        "        return (None, None) + tuple(a.grad if isinstance(a, mg.Tensor) else None\n"
        "                                    for a in args)",
        "        return (None, None) + tuple(grads[0] if isinstance(a, mg.Tensor) else None "
        "for a in args)", "the gradient with respect to that argument"),
}


@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_each_typical_mistake_is_caught_and_named(mistake):
    old, new, said = WRONG[mistake]
    text = message(variant(old, new))
    assert said in text, text


def test_at_least_twelve_wrong_answers():
    assert len(WRONG) >= 12


def test_minigrads_own_checkpoint_is_refused():
    assert "minigrad's own" in message(OWN)

    def wrapper(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs):
        return mg.utils.checkpoint.checkpoint(function, *args, use_reentrant=False, **kwargs)
    assert "minigrad's own" in message(wrapper)

    def sequential(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs):
        return checkpoint_module.checkpoint_sequential([function], 1, *args,
                                                       use_reentrant=False)
    assert "minigrad's own" in message(sequential)


class Mine(checkpoint_module.Checkpoint):
    pass


def test_a_subclass_of_minigrads_own_function_is_refused():
    def uses(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs):
        return Mine.apply(function, *args)
    assert "minigrad's own" in message(uses)


def test_no_answer_and_not_a_function_are_told_apart():
    assert "not written yet" in teach.check_piece("checkpoint", None).message
    assert "expected a function" in message(3)


def test_the_build_cell_defines_a_function_with_pytorchs_signature():
    signature = inspect.signature(checkpoint)
    assert list(signature.parameters) == ["function", "args", "use_reentrant",
                                          "preserve_rng_state", "kwargs"]
    assert signature.parameters["use_reentrant"].default is False
    assert signature.parameters["preserve_rng_state"].default is True
