"""miniplane's HTTP layer: the Quart-trio app and the cached GETs' fast path in front of it
(`api.cachedgets`), negotiation and codecs, authentication, discovery, OpenAPI and the TLS material
the server and its kubeconfig need.

Contract: handlers are HTTP only and reach data through the `runtime.server.registry`
facade. `api.assembly` is the one module that opens a store and wires the
registry, the compactor, the built-in controllers and the app; `api.serving.server`
puts it behind Hypercorn and TLS; `api.cli` is the `miniplane` command.
"""

__all__: list[str] = []
