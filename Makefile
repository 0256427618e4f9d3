# Two commands do everything on a fresh machine: `make reproduce` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# JupyterLab settings of this environment only (never the user's home): .py notebooks open as notebooks
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.d/voxmem-analysis.json
DATA ?= data/synthetic
AMC_DATA ?= data/synthetic-amc
OUT ?= figures
JOBS ?= 2

.PHONY: reproduce test install clean synth bench supplement

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

install: $(STAMP) $(LAB_SETTINGS)

reproduce: $(STAMP)
	$(BIN)/voxmem-analysis reproduce --data $(DATA) --out $(OUT) --jobs $(JOBS)

test: $(STAMP) $(LAB_SETTINGS)
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

synth: $(STAMP)
	$(BIN)/voxmem-analysis synth --out $(DATA) --check
	$(BIN)/voxmem-analysis synth --benchmark amc --out $(AMC_DATA) --check

supplement: reproduce
	$(BIN)/voxmem-analysis supplement --data $(DATA) --out $(OUT) --from $(OUT)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_bootstrap.py
	$(BIN)/python benchmarks/bench_gee.py
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_load_parts.py
	$(BIN)/python benchmarks/bench_figures.py
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_reproduce.py

# JupyterLab in the repository, with the project's kernel and settings (see README, "Working in JupyterLab").
.PHONY: lab lab-settings
lab-settings: $(LAB_SETTINGS)

$(LAB_SETTINGS): jupyterlab/overrides.json | $(STAMP)
	mkdir -p $(dir $@)
	cp $< $@

# make lab LAB_ARGS="--port=8890 --no-browser" passes options on to JupyterLab
lab: $(STAMP) $(LAB_SETTINGS)
	env -u JUPYTERLAB_DIR JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" \
	    $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
