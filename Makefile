# Every command the README names. `make lab` and `make test` set everything up first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
# The versions CI saw (`make lock` writes them); `make test-latest` leaves them out on purpose.
CONSTRAINTS ?= -c constraints.txt
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check --progress-bar off $(CONSTRAINTS)
# This machine's pip warns once per package about a missing local wheel folder; drop only
# those lines (sed never fails, so pipefail still reports a failed install).
PIP_OUTPUT := sed -u -e '/is ignored: it is neither a file nor a directory/d' -e '/^Requirement already satisfied/d'
# JupyterLab refuses to start as root unless told it is fine.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
NBVAL := $(PY) -m pytest -q -n 2 --dist loadfile --nbval --nbval-current-env \
	--nbval-sanitize-with tests/nbval_sanitize.cfg
# Lab-wide settings for this venv: no "news" pop-up, no update check.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json

.PHONY: setup setup-course system lab test test-lint test-unit test-notebooks \
	test-notebooks-other-blas test-blas-kernels browser-test browser-test-if-possible \
	test-latest lock notebooks figures slides site site-test student nbgrader bench clean

# Two stamps: the course (what a student needs) and the tests on top (PyTorch, Playwright).
COURSE_STAMP := $(VENV)/.course-installed
TEST_STAMP := $(VENV)/.test-installed
GRADE_STAMP := $(VENV)/.grade-installed
SITE_STAMP := $(VENV)/.site-installed

setup-course: $(COURSE_STAMP) $(LAB_OVERRIDES) system
setup: $(TEST_STAMP) $(LAB_OVERRIDES) system

$(PY):
	@scripts/system_packages.sh python
	@echo "== creating $(VENV) =="
	$(PYTHON) -m venv $(VENV)

$(COURSE_STAMP): pyproject.toml constraints.txt | $(PY)
	@echo "== installing minigrad and the course's packages (versions from constraints.txt) =="
	$(PIP_INSTALL) -e '.[course]' 2>&1 | $(PIP_OUTPUT)
	$(PY) -c "import minigrad, jupyterlab, matplotlib, ipywidgets, graphviz"  # fail here if the install broke
	touch $@

$(TEST_STAMP): $(COURSE_STAMP)
	@echo "== installing the test tools: pytest, nbval, PyTorch (CPU), Playwright, nbgrader, Sphinx =="
	$(PIP_INSTALL) -e '.[course,test,grade,site]' 2>&1 | $(PIP_OUTPUT)
	$(PY) -c "import pytest, nbval, torch, playwright, nbgrader, sphinx, myst_nb, sphinx_book_theme"  # fail here if the install broke
	touch $@

# nbgrader for instructors (its own extra: students never install it).
$(GRADE_STAMP): $(COURSE_STAMP)
	@echo "== installing nbgrader =="
	$(PIP_INSTALL) -e '.[course,grade]' 2>&1 | $(PIP_OUTPUT)
	$(PY) -c "import nbgrader"  # fail here if the install broke
	touch $@

# Sphinx, myst-nb and sphinx-book-theme for the course website (`make site`).
$(SITE_STAMP): $(COURSE_STAMP)
	@echo "== installing Sphinx, myst-nb and sphinx-book-theme =="
	$(PIP_INSTALL) -e '.[course,site]' 2>&1 | $(PIP_OUTPUT)
	$(PY) -c "import sphinx, myst_nb, sphinx_book_theme"  # fail here if the install broke
	touch $@

$(LAB_OVERRIDES): scripts/jupyterlab_overrides.json | $(PY)
	mkdir -p $(dir $@)
	cp $< $@

system:
	@scripts/system_packages.sh graphviz

lab: setup-course
	$(VENV)/bin/jupyter lab notebooks/ $(ROOT_FLAG)

# Every step runs even when one before it fails; the summary names the failed ones.
TEST_STEPS := test-lint test-unit test-notebooks test-notebooks-other-blas browser-test-if-possible
# The tests must leave the tree as they found it (scripts/tree_state.sh): a step that
# rewrites a tracked file, or leaves a new one behind, fails `make test`.
test: setup
	@before=$$(scripts/tree_state.sh); failed=""; for step in $(TEST_STEPS); do \
		echo "== make $$step =="; start=$$SECONDS; \
		$(MAKE) --no-print-directory $$step || failed="$$failed $$step"; \
		echo "== make $$step: $$((SECONDS - start)) s =="; \
	done; \
	if [ "$$before" != "$$(scripts/tree_state.sh)" ]; then \
		echo "== the tests changed the tree (git status before and after):"; \
		diff <(echo "$$before") <(scripts/tree_state.sh) || true; failed="$$failed tree-unchanged"; fi; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "all test steps passed: $(TEST_STEPS), and the tree is as it was"

# The notebooks' own rules, then ruff (code) and import-linter (layers, no import cycles).
test-lint: setup
	$(PY) scripts/lint_notebooks.py notebooks
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/lint-imports --no-cache

test-unit: setup
	$(PY) -m pytest -q -n 2 tests

test-notebooks: setup
ifneq ($(NOTEBOOKS),)
	$(PY) -c "import matplotlib.pyplot"  # build the font cache before nbval compares stderr
	$(NBVAL) notebooks/
else
	@echo "no notebooks yet: nothing for nbval to run"
endif

# The stored outputs must not depend on the CPU's BLAS kernel or the thread count: run them
# again with an old kernel on one thread, which sums in another order than most machines.
test-notebooks-other-blas: setup
	OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=1 $(NBVAL) notebooks/

# Slower, for when a chapter's numbers change: three kernels, one and two threads each.
test-blas-kernels: setup
	@for core in Prescott Sandybridge Haswell; do for threads in 1 2; do \
		echo "== nbval with OPENBLAS_CORETYPE=$$core OPENBLAS_NUM_THREADS=$$threads =="; \
		OPENBLAS_CORETYPE=$$core OPENBLAS_NUM_THREADS=$$threads $(NBVAL) notebooks/; \
	done; done

# Against the newest releases, in a new .venv-latest each time, so that drift is seen on purpose.
test-latest:
	rm -rf .venv-latest
	$(MAKE) --no-print-directory VENV=.venv-latest CONSTRAINTS= test-unit test-notebooks

# Rewrite constraints.txt from a fresh install of the newest versions the extras allow.
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --disable-pip-version-check --progress-bar off -e '.[course,test,grade,site]' 2>&1 | $(PIP_OUTPUT)
	.venv-lock/bin/python scripts/write_constraints.py > constraints.txt
	rm -rf .venv-lock
	@echo "constraints.txt rewritten: run make test, then commit it"

notebooks: setup  ## re-execute every notebook in place (after a change to what the package prints)
	$(PY) -c "import matplotlib.pyplot"
	MINIGRAD_WRITE_FIGURES=1 $(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False \
		--NotebookExporter.preprocessors=nbconvert.preprocessors.CoalesceStreamsPreprocessor $(NOTEBOOKS)

figures: setup-course
	$(PY) -m minigrad.teach.figures figures

slides: setup-course  ## offline reveal.js decks in build/slides (npm fetches reveal.js once)
	@scripts/system_packages.sh npm
	$(PY) scripts/build_slides.py

# The decks it links to are built first where missing or stale; npm is needed only while
# build/vendor/ lacks a package (build_site.py installs it then): after one `make slides`,
# the site builds offline.
site: $(SITE_STAMP)  ## the course as a static website in build/site (Sphinx + myst-nb)
	$(PY) scripts/build_site.py

site-test: setup site  ## every page of build/site in headless Chromium, at a phone's width
	@scripts/system_packages.sh chromium
	$(PY) scripts/site_check.py

student: setup-course  ## the course without solutions, in build/student
	$(PY) scripts/make_student.py

nbgrader: $(GRADE_STAMP)  ## an nbgrader course folder in build/nbgrader (README: For instructors)
	$(PY) scripts/make_nbgrader.py
	@echo "next: cd build/nbgrader && PATH=$(abspath $(VENV))/bin:\$$PATH nbgrader generate_assignment LECTURE"

browser-test: setup slides  ## every chapter run in JupyterLab in headless Chromium, every deck and site page shown
	@scripts/system_packages.sh chromium
	@status=0; $(PY) scripts/browser_check.py --decks || status=1; \
	echo "== the website: make site-test =="; \
	$(MAKE) --no-print-directory site-test || status=1; exit $$status

# Part of `make test` where Chromium is (or can be) installed; otherwise say so and go on.
browser-test-if-possible: setup
	@if scripts/system_packages.sh chromium && scripts/system_packages.sh npm; then \
		$(MAKE) --no-print-directory browser-test; \
	else echo "SKIPPED browser test: Chromium or npm is missing (see above)"; fi

bench: setup
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .venv-latest .venv-lock build .pytest_cache
