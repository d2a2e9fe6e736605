"""PyTorch's tutorial "Forward-mode Automatic Differentiation (Beta)" run with its imports
changed to minigrad: dual tensors (``dual_level``, ``make_dual``, ``unpack_dual``), modules
made dual parameter by parameter and through ``functional_call``, a custom Function with a
``jvp`` (checked by ``gradcheck(check_forward_ad=True)``) and the functional API
(``torch.func.jvp``), with functions and modules. What it prints must be PyTorch's numbers.

The tutorial's random draws (``torch.randn``, a layer's initial weights) would differ between
the libraries, so they come from numpy (``DATA``) and each ``nn.Linear`` gets the same weights
(``same_weights``); everything else is the tutorial's code, with prints of what it computes.
The prints detach the tangents: PyTorch's tangent of an output whose primal requires grad
has a ``grad_fn`` even where it does not depend on anything that requires grad (its
formulas add terms of zero tangents times primals); minigrad's rules leave those terms out,
so the values are the same and only that flag differs.
"""

import contextlib
import io
import re

import numpy as np
import torch

import minigrad

RNG = np.random.default_rng(13)
DATA = {name: RNG.standard_normal(shape).astype("float32") for name, shape in (
    ("primal", (10, 10)), ("tangent", (10, 10)), ("plain", (10, 10)), ("input", (16, 5)),
    ("primal0", (10, 10)), ("tangent0", (10, 10)), ("primal1", (10, 10)),
    ("tangent1", (10, 10)), ("y", (10, 10)), ("weight", (5, 5)), ("bias", (5,)))}
DATA["uniform_weight"] = RNG.uniform(size=(5, 5)).astype("float32")
DATA["uniform_bias"] = RNG.uniform(size=(5,)).astype("float32")

PRELUDE = '''
def same_weights(model):
    with torch.no_grad():
        model.weight.copy_(torch.tensor(DATA["weight"]))
        model.bias.copy_(torch.tensor(DATA["bias"]))
    return model

def rand_like(p):  # torch.rand_like, drawn from numpy
    return torch.tensor(DATA["uniform_" + ("weight" if p.dim() == 2 else "bias")])
'''

TUTORIAL = '''
import torch
import torch.autograd.forward_ad as fwAD

primal = torch.tensor(DATA["primal"])
tangent = torch.tensor(DATA["tangent"])

def fn(x, y):
    return x ** 2 + y ** 2

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    plain_tensor = torch.tensor(DATA["plain"])
    dual_output = fn(dual_input, plain_tensor)

    jvp = fwAD.unpack_dual(dual_output).tangent
    print("jvp", jvp[:2, :4])

assert fwAD.unpack_dual(dual_output).tangent is None

import torch.nn as nn

model = same_weights(nn.Linear(5, 5))
input = torch.tensor(DATA["input"])

params = {name: p for name, p in model.named_parameters()}
tangents = {name: rand_like(p) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent
print("module jvp", jvp[:3].detach())

from torch.func import functional_call

model = same_weights(nn.Linear(5, 5))

dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent

assert torch.allclose(jvp, jvp2)
print("functional_call jvp", jvp2[:3].detach())

class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO

fn = Fn.apply

primal = torch.tensor(DATA["primal"], dtype=torch.double, requires_grad=True)
tangent = torch.tensor(DATA["tangent"])

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
print("custom jvp", jvp[:2, :4].detach())

print("gradcheck", torch.autograd.gradcheck(Fn.apply, (primal[:2, :3],), check_forward_ad=True,
                                           check_backward_ad=False, check_undefined_grad=False,
                                           check_batched_grad=False))

import torch.func as ft

primal0 = torch.tensor(DATA["primal0"])
tangent0 = torch.tensor(DATA["tangent0"])
primal1 = torch.tensor(DATA["primal1"])
tangent1 = torch.tensor(DATA["tangent1"])

def fn(x, y):
    return x ** 2 + y ** 2

primal_out, tangent_out = ft.jvp(fn, (primal0, primal1), (tangent0, tangent1))
print("ft.jvp", primal_out[0, :4], tangent_out[0, :4])

primal = torch.tensor(DATA["primal"])
tangent = torch.tensor(DATA["tangent"])
y = torch.tensor(DATA["y"])

import functools
new_fn = functools.partial(fn, y=y)
primal_out, tangent_out = ft.jvp(new_fn, (primal,), (tangent,))
print("partial", primal_out[0, :4], tangent_out[0, :4])

model = same_weights(nn.Linear(5, 5))
input = torch.tensor(DATA["input"])
params = dict(model.named_parameters())
tangents = {name: rand_like(p) for name, p in params.items()}

def func_params_only(params):
    return functional_call(model, params, input)

model_output, jvp_out = ft.jvp(func_params_only, (params,), (tangents,))
print("module ft.jvp", model_output[:2].detach(), jvp_out[:2].detach())
'''

NUMBER = re.compile(r"-?\d+\.?\d*(?:e[+-]?\d+)?")


def with_minigrad(source):
    """The tutorial with its imports changed, as a user would change them."""
    source = re.sub(r"^import torch$", "import minigrad as torch", source, flags=re.M)
    source = re.sub(r"^import torch\.(\S+) as", r"import minigrad.\1 as", source, flags=re.M)
    return re.sub(r"^from torch(\S*) import", r"from minigrad\1 import", source, flags=re.M)


def run(source, lib):
    names = {"DATA": DATA, "torch": lib}
    exec(compile(PRELUDE, "<prelude>", "exec"), names)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "<tutorial>", "exec"), names)
    return printed.getvalue()


def _numbers(text):
    return [float(n) for n in NUMBER.findall(text)]


def test_the_forward_mode_tutorial_prints_pytorchs_numbers():
    theirs = run(TUTORIAL, torch)
    ours = run(with_minigrad(TUTORIAL), minigrad)
    words = lambda text: re.sub(r"\s+", " ", NUMBER.sub("#", text.replace("minigrad", "torch")))
    assert words(ours) == words(theirs), (ours, theirs)
    np.testing.assert_allclose(_numbers(ours), _numbers(theirs), rtol=1e-4, atol=1e-5)
    assert "gradcheck True" in ours
