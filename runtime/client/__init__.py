"""Talking to a miniplane (or any Kubernetes) API server: one async `Client` interface.

Modules: `interface` (`Client` = `Reader` + `Writer`, `ObjectList`,
`WatchEvent`), `http` (`HTTPClient`, `open_http_client`: over HTTP(S) with
httpx), `local` (`LocalClient`: straight to an in-process registry),
`typed` (your pydantic models bound to kinds), `kubeconfig` (reading and
writing kubeconfig files).

Contract: imports no `runtime.server` module but `local`, which is the
in-process transport (checked); a fresh interpreter importing
`runtime.client.http` loads no strategy, CEL, JWT, RE2 or cryptography module
(counted in tests/unit/test_layout.py).
"""

__all__: list[str] = []
