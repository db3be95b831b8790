"""miniplane's library: object model, scheme, registry, storage, watch cache, client and controller runtime.

`runtime` imports neither `api` nor `controllers` (a test checks it).
"""
