# Every command the README names. `make lab` and `make test` set everything up first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
# JupyterLab refuses to start as root unless told it is fine.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# This machine's pip prints a warning per package about a missing local index; drop those.
QUIET_PIP := grep -v "is ignored: it is neither a file nor a directory" || true

.PHONY: setup system lab test test-unit test-notebooks browser-test notebooks figures slides student bench clean

setup: $(STAMP) system

$(STAMP): pyproject.toml
	@scripts/system_packages.sh python
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[course,test]' 2>&1 | $(QUIET_PIP)
	$(PY) -c "import minigrad, numpy, pytest"  # fail here, not later, if the install broke
	touch $@

system:
	@scripts/system_packages.sh graphviz

lab: setup
	$(VENV)/bin/jupyter lab notebooks/ $(ROOT_FLAG)

test: setup test-unit test-notebooks browser-test-if-possible

test-unit: setup
	$(PY) -m pytest -q tests

test-notebooks: setup
ifneq ($(NOTEBOOKS),)
	$(PY) -c "import matplotlib.pyplot"  # build the font cache before nbval compares stderr
	$(PY) -m pytest -q -n 2 --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg notebooks/
else
	@echo "no notebooks yet: nothing for nbval to run"
endif

notebooks: setup  ## re-execute every notebook in place (after a change to what the package prints)
	$(PY) -c "import matplotlib.pyplot"
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
		--NotebookExporter.preprocessors=nbconvert.preprocessors.CoalesceStreamsPreprocessor $(NOTEBOOKS)

figures: setup
	$(PY) -m minigrad.teach.figures figures

slides: setup  ## offline reveal.js decks in build/slides (npm fetches reveal.js once)
	@scripts/system_packages.sh npm
	$(PY) scripts/build_slides.py

student: setup  ## the course without solutions, in build/student
	$(PY) scripts/make_student.py

browser-test: setup slides  ## every chapter run in JupyterLab in headless Chromium, every deck shown
	@scripts/system_packages.sh chromium
	$(PY) scripts/browser_check.py --decks

# Part of `make test` where Chromium is (or can be) installed; otherwise say so and go on.
browser-test-if-possible: setup
	@if scripts/system_packages.sh chromium && scripts/system_packages.sh npm; then \
		$(MAKE) --no-print-directory browser-test; \
	else echo "SKIPPED browser test: Chromium or npm is missing (see above)"; fi

bench: setup
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build .pytest_cache
