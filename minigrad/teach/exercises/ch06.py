"""Exercise checks for chapter 6 (modules): ``from minigrad.teach.exercises import ch06``.

Each function takes the learner's answer, builds the right answer itself with minigrad and
returns a ``CheckResult`` (prints ✓ or ✗ with a hint); none of them raises.
"""


from ... import nn
from ...creation import randn
from ...graph import no_grad
from ...random import Generator
from ...tensor import Tensor
from ..checks import CheckResult, check
from ..checks import keeps_random_state as _leaves_rng_alone, no_answer as _no_answer

__all__ = ["exercise_mlp", "exercise_nested_model", "check_parameter_count",
           "check_parameter_names", "check_two_layer_net"]


def exercise_mlp():
    """Exercise 1's network: 3 inputs, two hidden layers of 8, one output."""
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))


@_leaves_rng_alone
def check_parameter_count(n_params):
    """Exercise 1: how many numbers does ``exercise_mlp()`` learn?"""
    expected = sum(p.numel() for p in exercise_mlp().parameters())
    if not _no_answer(n_params) and isinstance(n_params, (int, float, Tensor)):
        value = float(n_params.item() if isinstance(n_params, Tensor) else n_params)
        weights_only = sum(p.numel() for name, p in exercise_mlp().named_parameters()
                           if name.endswith("weight"))
        if value == weights_only:
            return CheckResult(False, f"parameter count: {value:g} counts the weight matrices "
                                      "only. Hint: every Linear here also has a bias vector.")
    return check("parameter count", n_params, expected, tol=0,
                 hint="a Linear(n_in, n_out) holds a weight of shape (n_out, n_in) and a bias "
                      "of shape (n_out,); Tanh learns nothing.")


def exercise_nested_model():
    """Exercise 2's model: a Sequential with a Sequential inside."""
    return nn.Sequential(
        nn.Linear(4, 3),
        nn.ReLU(),
        nn.Sequential(nn.Linear(3, 3), nn.Tanh()),
        nn.Linear(3, 1, bias=False),
    )


@_leaves_rng_alone
def check_parameter_names(names):
    """Exercise 2: the names ``named_parameters()`` gives, in order."""
    title = "parameter names"
    if _no_answer(names):
        return CheckResult(False, f"{title}: no answer yet. Write the list in the cell above "
                                  "and run it, then run this check again.")
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        return CheckResult(False, f"{title}: expected a list of strings such as "
                                  "['a.weight', ...].")
    names = list(names)
    expected = [name for name, _ in exercise_nested_model().named_parameters()]
    if names == expected:
        return CheckResult(True, f"{title}: correct!")
    if sorted(names) == sorted(expected):
        return CheckResult(False, f"{title}: the right names, in the wrong order. Hint: "
                                  "named_parameters() walks the modules in the order they were "
                                  "added, and a layer's weight comes before its bias.")
    if len(names) != len(expected):
        return CheckResult(False, f"{title}: {len(names)} name(s), but the model has "
                                  f"{len(expected)} parameter tensors. Hint: ReLU and Tanh hold "
                                  "no parameters, and look at the last layer's bias argument.")
    wrong = [n for n, e in zip(names, expected) if n != e]
    return CheckResult(False, f"{title}: {wrong[0]!r} is not right yet. Hint: a name is the "
                              "path of positions from the outer Sequential down to the layer, "
                              "joined by dots, then the parameter's own name.")


@_leaves_rng_alone
def check_two_layer_net(net_class):
    """Exercise 3: ``TwoLayerNet(in_features, hidden, out_features)``, a Linear, ReLU, Linear."""
    title = "TwoLayerNet"
    if _no_answer(net_class):
        return CheckResult(False, f"{title}: define the class in the cell above and run it.")
    if not (isinstance(net_class, type) and issubclass(net_class, nn.Module)):
        return CheckResult(False, f"{title}: expected a class that inherits from nn.Module "
                                  "(class TwoLayerNet(nn.Module): ...).")
    try:
        net = net_class(3, 5, 2)
    except Exception as error:  # the learner's code: report, never crash the notebook
        return CheckResult(False, f"{title}(3, 5, 2) raised {type(error).__name__}: {error}")
    shapes = {name: tuple(p.shape) for name, p in net.named_parameters()}
    expected_shapes = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (2, 5),
                       "fc2.bias": (2,)}
    if not shapes:
        return CheckResult(False, f"{title}: the model has no parameters. Hint: assign the "
                                  "layers as attributes (self.fc1 = ...) after "
                                  "super().__init__(); a plain Python list hides the layers "
                                  "in it (nn.ModuleList does not).")
    if set(shapes) != set(expected_shapes):
        return CheckResult(False, f"{title}: its parameters are named {list(shapes)}; "
                                  f"expected {list(expected_shapes)}. Hint: name the layers "
                                  "fc1 and fc2.")
    for name, shape in expected_shapes.items():
        if shapes[name] != shape:
            return CheckResult(False, f"{title}(3, 5, 2): {name} has shape {shapes[name]}, "
                                      f"expected {shape}. Hint: nn.Linear(in_features, "
                                      "out_features).")
    # Known weights and a batch big enough that every mistake shows in the output.
    generator = Generator().manual_seed(1)
    with no_grad():
        for _, p in sorted(net.named_parameters()):
            p.copy_(randn(*p.shape, generator=generator))
    x = randn(16, 3, generator=generator)
    try:
        out = net(x)
    except Exception as error:
        return CheckResult(False, f"{title}: calling it on a batch of shape (16, 3) raised "
                                  f"{type(error).__name__}: {error}")
    if not isinstance(out, Tensor) or tuple(out.shape) != (16, 2):
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        return CheckResult(False, f"{title}: a batch of shape (16, 3) gave {shape}, expected "
                                  "(16, 2). Hint: forward must return the output tensor.")
    expected = net.fc2(net.fc1(x).relu())
    if not check(title, out, expected, tol=1e-5):
        return CheckResult(False, f"{title}: the output has the right shape but not the right "
                                  "values. Hint: fc1, then ReLU, then fc2 (no ReLU at the end).")
    if out.requires_grad:
        net.zero_grad()
        out.sum().backward()
    if not out.requires_grad or any(p.grad is None for p in net.parameters()):
        return CheckResult(False, f"{title}: some parameters got no gradient from backward(). "
                                  "Hint: compute the output from the input with the layers, "
                                  "without .detach() or .numpy().")
    return CheckResult(True, f"{title}: correct! Parameters {list(shapes)}, output shape (16, 2) for 16 inputs.")
