# Two commands do everything on a fresh machine: `make reproduce` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA ?= data/synthetic
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

install: $(STAMP)

reproduce: $(STAMP)
	$(BIN)/voxmem-analysis reproduce --data $(DATA) --out $(OUT) --jobs $(JOBS)

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

synth: $(STAMP)
	$(BIN)/voxmem-analysis synth --out $(DATA) --check

supplement: reproduce
	$(BIN)/voxmem-analysis supplement --data $(DATA) --out $(OUT) --from $(OUT)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_bootstrap.py
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_reproduce.py

clean:
	rm -rf $(VENV) build *.egg-info
