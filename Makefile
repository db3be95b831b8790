# The two commands of the README: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: serve serve-ha test bench bench-tools clean etcd etcd-path kopf-examples chromium

# Reinstall when the distribution's shape changes (its metadata or its top-level packages).
$(STAMP): pyproject.toml $(wildcard runtime/__init__.py api/__init__.py controllers/__init__.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# oscrypto 1.3.0 (PyPI's last, for certbuilder/certvalidator) cannot parse OpenSSL 3.0.10+'s version;
	# elements-oscrypto is oscrypto's fixed source under the same module: laid over it, no dependency changed
	$(PY) -m pip install -q --no-deps --force-reinstall 'elements-oscrypto==1.4.0b1'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/miniplane serve $(ARGS)

# An etcd and two API servers on it, to try several servers (README: "Several servers on etcd"). Both use
# one data directory (one CA, one admin token) and write their own kubeconfig there; ARGS go to both.
# Ctrl-C stops all three.
HA_DIR ?= ./miniplane-ha
HA_PORTS ?= 6443 6444
HA_ETCD_PORTS ?= 2379 2380
serve-ha: $(STAMP) etcd
	@set -e; mkdir -p $(HA_DIR); set -- $(HA_ETCD_PORTS); client=http://127.0.0.1:$$1; peer=http://127.0.0.1:$$2; \
	pids=; etcd=; trap 'kill $$pids 2>/dev/null; wait $$pids; kill $$etcd 2>/dev/null; wait' EXIT INT TERM; \
	etcd --name ha --data-dir $(HA_DIR)/etcd --listen-client-urls $$client --advertise-client-urls $$client \
	  --listen-peer-urls $$peer --initial-advertise-peer-urls $$peer --initial-cluster ha=$$peer \
	  --log-level warn >$(HA_DIR)/etcd.log 2>&1 & etcd=$$!; \
	until $(PY) -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=1)' $$client/health 2>/dev/null; do \
	  kill -0 $$etcd 2>/dev/null || { echo "etcd did not start: see $(HA_DIR)/etcd.log" >&2; exit 1; }; sleep 0.2; done; \
	echo "etcd serving at $$client (data in $(HA_DIR)/etcd)"; \
	for port in $(HA_PORTS); do \
	  rm -f $(HA_DIR)/$$port.kubeconfig; \
	  $(VENV)/bin/miniplane serve --store etcd://127.0.0.1:$${client##*:} --data-dir $(HA_DIR) --port $$port \
	    --kubeconfig-out $(HA_DIR)/$$port.kubeconfig $(ARGS) & pid=$$!; pids="$$pids $$pid"; \
	  until test -f $(HA_DIR)/$$port.kubeconfig; do \
	    kill -0 $$pid 2>/dev/null || { echo "the server on port $$port did not start" >&2; exit 1; }; sleep 0.2; done; \
	done; \
	wait

# The suite runs in TEST_WORKERS processes (pytest-xdist; each with its own etcd): much of it waits on
# real stores, servers and kubectl, so two workers finish it in about half the time on two cores.
TEST_WORKERS ?= 2
test: $(STAMP) etcd kopf-examples chromium
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

bench: $(STAMP) bench-tools
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# What the benchmarks need beyond the test extra: wrk and h2load (Debian's wrk and nghttp2-client; the
# HTTP/1.1 and HTTP/2 load of bench_scale.py and bench_get.py) and matplotlib (the `bench` extra; its plots).
bench-tools: $(STAMP)
	@{ command -v wrk && command -v h2load; } >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q wrk nghttp2-client ) >&2; }
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

# kopf's own example operators, for the e2e test of an unmodified operator framework
# (tests/e2e/test_crd_clients.py): they ship in kopf's source distribution on PyPI, not in its wheel.
# Unpacked under .venv/kopf-examples/kopf-<the installed version>/examples; nothing is copied into the repository.
KOPF_EXAMPLES := $(VENV)/kopf-examples
kopf-examples: $(STAMP)
	@version=$$($(PY) -c "import importlib.metadata as m; print(m.version('kopf'))"); \
	test -d $(KOPF_EXAMPLES)/kopf-$$version/examples || { \
	  rm -rf $(KOPF_EXAMPLES) && mkdir -p $(KOPF_EXAMPLES) && \
	  $(PY) -m pip download -q --no-deps --no-binary :all: -d $(KOPF_EXAMPLES) "kopf==$$version" && \
	  tar -xzf $(KOPF_EXAMPLES)/kopf-$$version.tar.gz -C $(KOPF_EXAMPLES) kopf-$$version/examples; } \
	|| echo "make kopf-examples: could not fetch kopf's examples; the kopf e2e test will fail" >&2

# Debian's chromium for the browser tests (tests/browser: Playwright drives /usr/bin/chromium; no browser
# download). A failed install does not stop `make test`: the browser tests then fail and say why.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium ) >&2 \
	  || echo "make chromium: could not install Debian's chromium; the browser tests will fail" >&2; }
