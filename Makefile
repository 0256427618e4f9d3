# Two commands do everything on a fresh machine: `make reproduce` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# JupyterLab settings of this environment only (never the user's home): .py notebooks open as notebooks,
# and the server may write their hidden paired notebooks (notebooks/.NN_name.ipynb, see jupytext.toml)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.d/voxmem-analysis.json
SERVER_SETTINGS := $(VENV)/etc/jupyter/jupyter_server_config.json
DATA ?= data/synthetic
AMC_DATA ?= data/synthetic-amc
OUT ?= figures
JOBS ?= 2

.PHONY: reproduce test install clean synth bench supplement lock

# The environment is pinned: constraints.txt lists the exact version of every package (and of pip and
# the build tools), so a reproduction in a year installs what it installs today. `make lock` renews it.
CONSTRAINTS := constraints.txt

# uv installs the pinned environment in about 10 s where pip takes 40-110 s; it reads the same
# constraints file, so the versions installed are the same.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(BIN)/uv: $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS) pip uv
	touch $@

# --compile-bytecode: write the installed packages' .pyc files once (as pip does by default), so no process
# (a notebook kernel, a reproduce worker, a test's subprocess) compiles pandas or SciPy again when
# PYTHONDONTWRITEBYTECODE is set or site-packages is read-only.
$(STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -c $(CONSTRAINTS) --build-constraints $(CONSTRAINTS) -e '.[test]'
	touch $(STAMP)

# The notebooks' kernel, named as their headers name it ("python3", "Python 3"): JupyterLab writes the
# running kernel's display name back into a notebook it saves, so any other name (ipykernel's default is
# "Python 3 (ipykernel)") would change the tracked .py header on every save.
KERNEL_SPEC := $(VENV)/share/jupyter/kernels/python3/kernel.json
KERNEL_DISPLAY_NAME := Python 3
$(KERNEL_SPEC): Makefile $(STAMP)   # after every install: ipykernel's wheel ships its own kernel.json
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "$(KERNEL_DISPLAY_NAME)" >/dev/null
	touch $@

$(LAB_SETTINGS): jupyterlab/overrides.json | $(STAMP)
	mkdir -p $(dir $@)
	cp $< $@

$(SERVER_SETTINGS): jupyterlab/jupyter_server_config.json | $(STAMP)
	mkdir -p $(dir $@)
	cp $< $@

# Every target that creates the environment installs the project, its kernel and its JupyterLab settings.
ENV := $(STAMP) $(KERNEL_SPEC) $(LAB_SETTINGS) $(SERVER_SETTINGS)

install: $(ENV)

reproduce: $(ENV)
	$(BIN)/voxmem-analysis reproduce --data $(DATA) --out $(OUT) --jobs $(JOBS)

test: $(ENV)
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

# Renew constraints.txt: the newest versions pyproject.toml allows, installed into a fresh environment.
LOCK_VENV := .lock-venv
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip setuptools wheel uv
	$(LOCK_VENV)/bin/python -m pip install --quiet -e '.[test]'
	{ echo "# The exact environment \`make\` installs (uv pip install -c constraints.txt --build-constraints constraints.txt)."; \
	  echo "# Made by \`make lock\` on $$(date +%Y-%m-%d) with $$($(LOCK_VENV)/bin/python --version); renew it after changing"; \
	  echo "# the dependencies in pyproject.toml."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --all --exclude-editable; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf $(LOCK_VENV)

synth: $(ENV)
	$(BIN)/voxmem-analysis synth --out $(DATA) --check
	$(BIN)/voxmem-analysis synth --benchmark amc --out $(AMC_DATA) --check

supplement: reproduce
	$(BIN)/voxmem-analysis supplement --data $(DATA) --out $(OUT) --from $(OUT)

bench: $(ENV)
	$(BIN)/python benchmarks/bench_bootstrap.py
	$(BIN)/python benchmarks/bench_gee.py
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_load_parts.py
	$(BIN)/python benchmarks/bench_figures.py
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_reproduce.py

# JupyterLab in the repository, with the project's kernel and settings (see README, "Working in JupyterLab").
.PHONY: lab lab-settings
lab-settings: $(KERNEL_SPEC) $(LAB_SETTINGS) $(SERVER_SETTINGS)

# make lab LAB_ARGS="--port=8890 --no-browser" passes options on to JupyterLab; each notebook gets its hidden
# pair first, so that it opens clean (not marked unsaved)
lab: $(ENV)
	$(BIN)/python jupyterlab/pair_notebooks.py notebooks/[0-9][0-9]_*.py
	env -u JUPYTERLAB_DIR JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" \
	    $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf $(VENV) $(LOCK_VENV) build *.egg-info
