"""miniplane's library, in layers: machinery, models, server, client, controller.

- `runtime.machinery`: what every side shares (the scheme of kinds, errors,
  stored objects, request options, selectors, patch engines, validation
  rules, serializers).
- `runtime.models`: the kinds' pydantic models (the API types).
- `runtime.server`: the API server's library (registry, kinds and their
  strategies, storage, watch cache, RBAC, the custom-resource schema engine,
  tokens, the bootstrap).
- `runtime.client`: talking to a server (over HTTP, or in-process), typed
  objects, kubeconfig files.
- `runtime.controller`: writing controllers (informers, work queue,
  controllers, manager, leader election, events, the test env).

Contract: `runtime` imports neither `api` nor `controllers`; machinery and
models import no other layer at import time (the scheme imports the server's
kinds late, to bind a built-in kind's strategy when first asked for); the
client and controller layers import no server module (their in-process
parts, `runtime.client.local` and `runtime.controller.testing`, excepted);
storage imports nothing but storage. tests/unit/test_layout.py checks every
rule of docs/design.md.
"""

__all__: list[str] = []
