"""kubeconfig files: written for kubectl and other clients, read back by miniplane's HTTP client.

`write_kubeconfig` writes one cluster, one user and one context, current,
with the CA and client credentials inline (`*-data`, base64) so the file is
self-contained; mode 0600 because it holds credentials.

`load_kubeconfig` reads a context (the current one by default) into a
`KubeConfig` value. It understands the inline `*-data` forms and the file
forms (`certificate-authority`, `client-certificate`, `client-key`,
`tokenFile`, relative to the kubeconfig's folder). Exec and auth-provider
plugins are not supported.

`ssl_context(config)` is the TLS context a client of `config` connects with:
its CA (the system's when it names none), its client certificate, or no
verification when the context says `insecure-skip-tls-verify`.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["KubeConfig", "KubeConfigError", "write_kubeconfig", "load_kubeconfig", "ssl_context"]


class KubeConfigError(ValueError):
    """The kubeconfig is malformed or lacks the requested context, cluster or user."""


@dataclass(frozen=True)
class KubeConfig:
    """What a client needs to reach one server as one user."""

    server: str
    ca_pem: bytes | None = None
    token: str | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    insecure: bool = False


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_kubeconfig(path: str | os.PathLike[str], server_url: str, ca_pem: bytes | None,
                     token: str | None = None, client_cert_pem: bytes | None = None,
                     client_key_pem: bytes | None = None, user_name: str = "admin",
                     cluster_name: str = "miniplane", context_name: str = "miniplane",
                     *, insecure_skip_tls_verify: bool = False) -> Path:
    """Write a kubeconfig with one cluster, user and (current) context; return its path.

    The parent folder is created if missing; the file is replaced atomically
    with mode 0600. Raises ValueError when only one of client cert and key is given.
    """
    if (client_cert_pem is None) != (client_key_pem is None):
        raise ValueError("client_cert_pem and client_key_pem go together")
    cluster: dict[str, Any] = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    if insecure_skip_tls_verify:
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {}
    if token is not None:
        user["token"] = token
    if client_cert_pem is not None and client_key_pem is not None:
        user["client-certificate-data"] = _b64(client_cert_pem)
        user["client-key-data"] = _b64(client_key_pem)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": context_name, "context": {"cluster": cluster_name, "user": user_name}}],
        "current-context": context_name,
        "preferences": {},
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    os.chmod(tmp, 0o600)
    os.replace(tmp, target)
    return target


def _named(config: dict[str, Any], section: str, name: str, key: str) -> dict[str, Any]:
    for entry in config.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(key) or {}
            if not isinstance(value, dict):
                raise KubeConfigError(f"{section} entry {name!r} is malformed")
            return value
    raise KubeConfigError(f"no {key} named {name!r} in the kubeconfig")


def _data(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    """The bytes of `<key>-data` (base64) or of the file named by `<key>`."""
    if entry.get(f"{key}-data"):
        try:
            return base64.b64decode(entry[f"{key}-data"], validate=True)
        except ValueError as exc:
            raise KubeConfigError(f"{key}-data is not valid base64") from exc
    if entry.get(key):
        return (base / os.path.expanduser(entry[key])).read_bytes()
    return None


def load_kubeconfig(path: str | os.PathLike[str], context: str | None = None) -> KubeConfig:
    """Read one context of a kubeconfig (the current context when context is None).

    Raises KubeConfigError when the file is not a kubeconfig, no context is
    chosen, or the context names a missing cluster or user; OSError when a
    referenced file cannot be read.
    """
    source = Path(path)
    config = yaml.safe_load(source.read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise KubeConfigError(f"{source} is not a kubeconfig")
    name = context or config.get("current-context")
    if not name:
        raise KubeConfigError(f"{source} has no current-context")
    ctx = _named(config, "contexts", name, "context")
    cluster = _named(config, "clusters", ctx.get("cluster", ""), "cluster")
    user = _named(config, "users", ctx.get("user", ""), "user") if ctx.get("user") else {}
    if not cluster.get("server"):
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} has no server")
    base = source.parent
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (base / os.path.expanduser(user["tokenFile"])).read_text(encoding="utf-8").strip()
    return KubeConfig(
        server=cluster["server"],
        ca_pem=_data(cluster, "certificate-authority", base),
        token=token or None,
        client_cert_pem=_data(user, "client-certificate", base),
        client_key_pem=_data(user, "client-key", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
    )


def ssl_context(config: KubeConfig) -> ssl.SSLContext:
    """The TLS context of a client of `config`: its CA (else the system's), its client certificate if any."""
    context = ssl.create_default_context(cadata=config.ca_pem.decode("ascii") if config.ca_pem else None)
    if config.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.client_cert_pem and config.client_key_pem:
        # ssl loads certificates only from files: a private folder, removed at once.
        with tempfile.TemporaryDirectory() as folder:
            cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
            for path, data in ((cert, config.client_cert_pem), (key, config.client_key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            context.load_cert_chain(cert, key)
    return context
