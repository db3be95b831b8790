"""miniplane's library: object model, kinds and scheme, registry, storage, watch cache, client and controller runtime.

Contract: `runtime` imports neither `api` nor `controllers`; within it,
storage imports nothing but storage, and clients (`runtime.client_http`)
load no server code (tests/unit/test_layout.py checks every rule of
docs/design.md).
"""

__all__: list[str] = []
