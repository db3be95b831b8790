# The two commands of the README: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: serve test bench bench-tools clean etcd etcd-path

# Reinstall when the distribution's shape changes (its metadata or its top-level packages).
$(STAMP): pyproject.toml $(wildcard runtime/__init__.py api/__init__.py controllers/__init__.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/miniplane serve $(ARGS)

test: $(STAMP) etcd
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP) bench-tools
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# What the benchmarks need beyond the test extra: wrk (Debian's package; the load of bench_scale.py)
# and matplotlib (the `bench` extra; its plots).
bench-tools: $(STAMP)
	@command -v wrk >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q wrk ) >&2; }
	@$(PY) -c "import matplotlib" 2>/dev/null || $(PY) -m pip install -q -e '.[test,bench]'

clean:
	rm -rf $(VENV) miniplane-data .pytest_cache

# etcd for the etcd store's tests: Debian's etcd-server, installed when no etcd is on PATH.
# A failed install does not stop `make test`: the tests that need etcd then fail and say why.
etcd:
	@command -v etcd >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q etcd-server ) >&2 \
	  || echo "make etcd: could not install etcd-server; the tests that need etcd will fail" >&2; }

# Prints the etcd binary's path (empty, and exit 1, when there is none).
etcd-path:
	@command -v etcd
