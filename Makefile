VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: run test bench lint clean screenshots

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(STAMP)

$(DEVSTAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[dev]'
	touch $(DEVSTAMP)

run: $(STAMP)
	$(VENV)/bin/clustertwin plan --out out

test: $(DEVSTAMP)
	$(PY) -m pytest -q

bench: $(DEVSTAMP)
	$(PY) benchmarks/run_all.py

screenshots: $(STAMP)
	$(PY) scripts/screenshots.py --out docs/img

lint: $(DEVSTAMP)
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache
