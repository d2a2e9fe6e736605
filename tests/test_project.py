"""The project's own files agree with each other."""

import json
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# conda-forge name -> PyPI name, where they differ (checked against the conda-forge feedstocks:
# python-graphviz-feedstock, jupyterlab_rise-feedstock)
CONDA_NAMES = {"python-graphviz": "graphviz", "jupyterlab_rise": "jupyterlab-rise"}
CONDA_ONLY = {"python", "pip", "graphviz"}  # the interpreter, pip, and graphviz's `dot`


def _name(spec):
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_course_dependencies_of_pyproject():
    """conda users get what `make lab` installs: the package and its course extra, not the
    test tools (PyTorch would bring several GB of CUDA libraries)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(s): s for s in project["dependencies"] + project["optional-dependencies"]["course"]}

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


def _pins():
    from packaging.utils import canonicalize_name
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pairs = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pairs}


def test_constraints_pin_every_dependency_inside_its_range():
    """`make lab` and `make test` install with constraints.txt; `make lock` rewrites it. A
    dependency added to pyproject.toml without `make lock` would be installed unpinned."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    pins = _pins()
    for spec in specs:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in constraints.txt: run make lock"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {spec}"
    assert "minigrad" not in pins and not any("+" in v for v in pins.values())


def test_jupyterlab_overrides_use_settings_that_exist():
    """The news pop-up is switched off by settings JupyterLab really has (its own schemas)."""
    import sys
    overrides = json.loads((ROOT / "scripts" / "jupyterlab_overrides.json").read_text())
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    for plugin, values in overrides.items():
        package, name = plugin.split(":")
        schema = json.loads((schemas / package / f"{name}.json").read_text())
        for key, value in values.items():
            prop = schema["properties"][key]
            allowed = [choice["const"] for choice in prop.get("oneOf", [])]
            assert value in allowed if allowed else isinstance(value, {"boolean": bool, "string": str}[prop["type"]])
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_site_toc_lists_the_readme_lectures_in_order():
    """The website's chapters (site/toc.yml) are the README's course table, in its order,
    and every notebook is in both (scripts/build_site.py refuses to build otherwise)."""
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_site
    chapters = build_site.read_toc()
    numbers = [c["number"] for c in chapters]
    optional = [c["number"] for c in chapters if any("capstone" in s for s in c["lectures"])]
    assert [n for n in numbers if n not in optional] == [f"{n:02d}" for n in range(14)]
    assert optional == numbers[-1:], "the optional capstone comes last"
    assert all(stem.startswith(c["number"]) for c in chapters for stem in c["lectures"])


def test_make_test_installs_the_site_extra():
    makefile = (ROOT / "Makefile").read_text()
    test_install = makefile.split("$(TEST_STAMP): $(COURSE_STAMP)")[1].split("touch $@")[0]
    assert "site" in re.search(r"-e '\.\[([^\]]*)\]'", test_install)[1].split(",")
