# Two entry points for a fresh clone on a machine with only python3 and make:
#   make demo   set everything up, open the app on the bundled demo data
#   make test   set everything up, run the whole test suite (what CI runs)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/hiermem-tui --demo

test: $(STAMP)
	$(PY) -m mypy
	$(PY) -m ruff check hiermem_tui bench lab scripts tests
	$(PY) -m pytest -n 2 -q

bench: $(STAMP)
	$(VENV)/bin/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
