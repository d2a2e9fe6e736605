"""The project's own files agree with each other."""

import json
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"python-graphviz": "graphviz"}  # conda-forge name -> PyPI name
CONDA_ONLY = {"python", "pip", "graphviz"}  # the interpreter, pip, and graphviz's `dot`


def _name(spec):
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(s): s for s in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted.update({_name(s): s for s in extra})

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    listed, pip = {}, []
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip = dep["pip"]
        elif _name(dep) not in CONDA_ONLY:
            listed[CONDA_NAMES.get(_name(dep), _name(dep))] = dep
    listed.update({_name(s): s for s in pip if not s.startswith("-e")})
    assert "-e ." in pip, "Binder and conda users install the package itself with pip"
    assert "graphviz" in {_name(d) for d in conda}, "environment.yml must bring the dot binary"
    assert set(listed) == set(wanted)
    for name, spec in wanted.items():
        version = spec[len(name):].strip()
        assert listed[name].endswith(version), f"{name}: {listed[name]} vs {spec}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme.split("\n## ")[0], "README opens with the test command"
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_core_imports_no_plotting_or_widget_library():
    core = [p for p in (ROOT / "minigrad").rglob("*.py") if "teach" not in p.parts]
    for path in core:
        text = path.read_text()
        for lib in ("matplotlib", "graphviz", "ipywidgets", "IPython"):
            assert not re.search(rf"^\s*(import|from) {lib}", text, re.M), f"{path.name} imports {lib}"


def test_graph_layer_knows_nothing_of_tensor():
    text = (ROOT / "minigrad" / "graph.py").read_text()
    assert not re.search(r"^\s*(from|import) .*tensor", text, re.M)


def test_stored_outputs_print_each_cell_in_one_piece():
    """A cell's prints are one output, however the kernel happened to flush them (make
    notebooks coalesces them): a split output renders with gaps and changes slide heights."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            kinds = [(o["output_type"], o.get("name")) for o in cell.get("outputs", [])]
            assert not any(k == nxt and k[0] == "stream" for k, nxt in zip(kinds, kinds[1:])), \
                f"{path.name} cell {i}: one print split into several outputs"
