"""Helpers that tests share; the only place they live (tests/unit/test_test_layout.py checks it).

A test module imports helpers from here, never from another test module or a
conftest.py (which hold fixtures only). One concept per module:

- `server`: a control plane for a test, in process (`start_in_process`,
  through `asgi`) or behind real HTTPS (`start_server`); the `Server` handle.
- `asgi`: the streaming trio ASGI transport for httpx that serves in process.
- `serverproc`: `miniplane serve` as a child process (crash tests, benches).
- `smalldisk`: a small tmpfs of a child's own, to fill up (a full disk).
- `workers`: several workers of one SQLite data directory in process (`--workers`).
- `kubectl`: the real kubectl against a test's server.
- `rbac`: token users and RBAC grants written through a `Server`.
- `objects`: ClusterRole bodies and collection versions for the API tests.
- `rbac_objects`: pure builders of RBAC objects and indexes (rbac insight tests).
- `event_objects`: events in Kubernetes' JSON form (core/v1 and events.k8s.io/v1).
- `mock_http`: the runtime's HTTP client over a scripted transport.
- `stores`: the types of the storage tests' fixtures.
- `etcd`: a real etcd child process; fresh key prefixes; raw reads of its keys.
- `history`: a checker of concurrent histories (lost writes, order, stale reads, watch gaps).
- `threaded`: a control plane in process on a thread of its own, for synchronous callers
  (Hypothesis, schemathesis, `requests`).
- `load`: a mixed load (writers, watchers, readers, hostile clients) against a real server, and
  the checks that it lost nothing.
"""
