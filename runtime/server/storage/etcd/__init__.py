"""The etcd v3 backend, over etcd's JSON gateway, as kube-apiserver stores its objects.

Modules: `store` (`EtcdStore`), `client` (the gateway's calls, JSON through
orjson), `http` (kept-alive HTTP/1.1 connections, answers parsed by
httptools). Internal to `runtime.server.storage`, which opens it
(`open_store("etcd://HOST:PORT")`).
"""

__all__: list[str] = []
