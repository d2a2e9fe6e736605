"""The package's layout rules that import-linter and ruff do not cover (issue "one home per
op"): no private name imported across modules, no module-level name set from another
module, no module over 650 lines, and every op family's declaration matches what
``minigrad`` and ``Tensor`` expose.

import-linter (layers, no cycles: `make test-lint`) and ruff check the rest.
"""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import minigrad as mg

PACKAGE = Path(mg.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 650
MAX_PRIVATE_IMPORTS = 5


def _trees():
    for path in MODULES:
        yield path, ast.parse(path.read_text())


def private_imports():
    """``from minigrad.x import _y`` (relative or absolute), anywhere in a module."""
    found = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or "").startswith("minigrad")):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} "
                                     f"imports {alias.name}")
    return found


def test_at_most_five_private_names_are_imported_across_modules():
    found = private_imports()
    assert len(found) <= MAX_PRIVATE_IMPORTS, "\n".join(found)


def test_the_private_import_scan_sees_one(tmp_path):
    """The scan above can fail: it finds a private import written the usual way."""
    tree = ast.parse("from ..graph import _hidden\n")
    node = tree.body[0]
    assert node.level == 2 and node.names[0].name == "_hidden"


def test_no_module_is_over_650_lines():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in MODULES
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do): {long}"


def names_set_on_other_modules():
    """Statements ``module.name = value`` or ``setattr(module, ...)`` where ``module`` is an
    imported minigrad module: a name injected into another module."""
    found = []
    for path, tree in _trees():
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or "").startswith("minigrad")):
                for alias in node.names:
                    imported.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("minigrad"):
                        imported.add(alias.asname or alias.name.split(".")[0])
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id in imported
                        and _is_module(path, target.value.id)):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} sets "
                                 f"{target.value.id}.{target.attr}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "setattr" and node.args
                    and isinstance(node.args[0], ast.Name) and node.args[0].id in imported
                    and _is_module(path, node.args[0].id)):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} setattr on "
                             f"{node.args[0].id}")
    return found


def _is_module(path, name):
    """Is ``name``, as imported in ``path``, a module (not a class or function)?"""
    module_name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if module_name.endswith(".__init__"):
        module_name = module_name[: -len(".__init__")]
    value = getattr(importlib.import_module(module_name), name, None)
    return type(value).__name__ == "module"


def test_no_module_level_name_is_injected_from_another_module():
    assert not names_set_on_other_modules()


# ------------------------------------------------------------------ one declaration per op

FAMILIES = list(mg.ops.FAMILIES) + [mg.creation]


def test_every_module_of_ops_with_public_functions_is_a_family():
    """A family module left out of ops.FAMILIES would have its methods silently missing."""
    for path in (PACKAGE / "ops").glob("*.py"):
        module = importlib.import_module(f"minigrad.ops.{path.stem}")
        if hasattr(module, "METHODS"):
            assert module in mg.ops.FAMILIES, path.stem


@pytest.mark.parametrize("family", FAMILIES, ids=lambda m: m.__name__)
def test_each_declared_function_is_minigrads_and_each_declared_method_is_the_same_function(
        family):
    for name in family.FUNCTIONS:
        assert getattr(mg, name) is getattr(family, name), f"mg.{name}"
        assert name in mg.__all__, name
    for name in family.METHODS:  # (a method need not be a function of minigrad: x.tril_())
        function = getattr(family, name)
        assert callable(function), f"{family.__name__}.METHODS: {name} is no function"
        # (the method is the function without out=, which PyTorch's methods refuse)
        method = getattr(function, "without_out", function)
        assert inspect.unwrap(getattr(mg.Tensor, name)) is method, f"Tensor.{name}"


def test_the_installer_refuses_a_method_defined_twice():
    from minigrad import methods

    class Target:
        def floor(self):
            return "mine"

    with pytest.raises(TypeError, match="defined twice"):
        methods.install_functions(Target, [mg.ops.rounding])
    assert Target().floor() == "mine"
