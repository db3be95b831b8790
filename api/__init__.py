"""miniplane's HTTP layer: the Quart-trio app, negotiation and codecs, authentication,
discovery, OpenAPI and the TLS material the server and its kubeconfig need.

Only HTTP concerns live here; every request is handed to `runtime.registry`.
"""
