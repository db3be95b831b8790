"""A control plane for a test: in process through the streaming ASGI transport, or behind real HTTPS.

Contract: both `start_in_process(nursery, tmp_path, **options)` and
`start_server(nursery, tmp_path, **options)` start a control plane in
`nursery` with `ServeOptions(data_dir=tmp_path/"data", **options)` (the
default store and no controllers unless the options say otherwise) and
return a `Server` once it serves; cancelling `nursery` stops it.

The default store is memory; `use_store("sqlite")` or
`use_store("etcd://HOST:PORT", prefix="/p")` changes it until the next call
(tests/api/conftest.py runs every API test on each). Under etcd each data
directory gets its own key prefix below `prefix`, as each gets its own
SQLite file: servers of one directory share their objects, others do not;
a test's `compaction_interval` is then etcd's too.

- `start_in_process` opens `api.assembly.open_control_plane` and serves its
  ASGI app through `tests.support.asgi.ASGITransport`: no socket, no TLS,
  base URL `http://miniplane`. The registry and store are at hand
  (`server.plane`). The peer certificate is none, the server address the
  scope's `miniplane:80`.
- `start_server` runs `api.serving.server.serve`: Hypercorn, TLS with the server's
  own CA, a free port on 127.0.0.1. For what needs a socket or TLS: client
  certificates, Hypercorn's limits, connection behaviour, kubectl, other
  processes.

`Server.client(token=...)` is an httpx.AsyncClient on either; the
runtime's HTTP client reaches either with
`open_http_client(load_kubeconfig(server.kubeconfig), transport=server.transport)`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import httpx
import trio

from api.assembly import ControlPlane, ServeOptions, open_control_plane
from api.serving.server import serve
from runtime.client.kubeconfig import load_kubeconfig, write_kubeconfig
from runtime.server.registry import AdmissionPlugin, Registry
from tests.support.asgi import ASGITransport

__all__ = ["Server", "start_in_process", "start_server", "STARTERS", "IN_PROCESS_URL", "use_store"]

#: The base URL of an in-process server (any host would do: nothing resolves it).
IN_PROCESS_URL = "http://miniplane"
_IN_PROCESS_ADDRESS = "miniplane:80"


@dataclass
class Server:
    """A running control plane, as a test reaches it.

    url: the base URL; data_dir, kubeconfig: its data directory and admin
    kubeconfig; token: the admin token; domain: the API domain; ca_pem: the
    CA of its serving certificate (HTTPS only); transport: the in-process
    transport (None over HTTPS: the network); plane: the `ControlPlane`
    (in process only).
    """

    url: str
    data_dir: Path
    kubeconfig: Path
    token: str
    domain: str
    ca_pem: bytes | None = None
    transport: httpx.AsyncBaseTransport | None = None
    plane: ControlPlane | None = None

    @property
    def in_process(self) -> bool:
        return self.transport is not None

    @property
    def registry(self) -> Registry:
        """The server's registry (in process only; raises AttributeError over HTTPS)."""
        if self.plane is None:
            raise AttributeError("a server behind HTTPS runs its registry out of reach")
        return self.plane.registry

    def client(self, token: str | None = "admin", **kw: Any) -> httpx.AsyncClient:
        """An httpx client of the server; token "admin" means the admin token, None sends none.

        Over HTTPS it trusts the server's CA; in process it uses the transport.
        """
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {self.token if token == 'admin' else token}"
        kw.setdefault("timeout", 30)
        if self.transport is not None:
            return httpx.AsyncClient(base_url=self.url, transport=self.transport, headers=headers, **kw)
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode()) if self.ca_pem else True
        return httpx.AsyncClient(base_url=self.url, verify=ctx, headers=headers, **kw)

    async def raw_tls(self) -> trio.SSLStream[trio.SocketStream]:
        """A bare TLS connection to the server (HTTPS only), trusting its CA: for bytes on the wire."""
        assert self.ca_pem is not None, "in process: there is no wire"
        host, port = self.url.split("://", 1)[1].rsplit(":", 1)
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        return await trio.open_ssl_over_tcp_stream(host, int(port), ssl_context=context, https_compatible=True)

    @property
    def rbac(self) -> str:
        return f"/apis/rbac.authorization.{self.domain}/v1"

    @property
    def authz(self) -> str:
        return f"/apis/authorization.{self.domain}/v1"


_default = {"store": "memory", "prefix": ""}
_prefixes: dict[str, str] = {}


def use_store(store: str, *, prefix: str = "") -> None:
    """Make `store` the default of the control planes started from now on (see the module doc)."""
    _default.update(store=store, prefix=prefix)
    _prefixes.clear()


def _options(tmp_path: Path, options: dict[str, Any]) -> ServeOptions:
    data_dir = str(tmp_path / "data")
    if "store" not in options:
        options["store"] = _default["store"]
        if options["store"].startswith("etcd"):
            prefix = _prefixes.setdefault(data_dir, f"{_default['prefix']}/{len(_prefixes)}")
            options.setdefault("etcd_prefix", prefix)
            if "compaction_interval" in options:  # on etcd the shared compactor's (kube's) interval
                options.setdefault("etcd_compaction_interval", options["compaction_interval"])
    options.setdefault("controllers", False)
    return ServeOptions(data_dir=data_dir, port=0, **options)


async def _run_in_process(options: ServeOptions, admission: Sequence[AdmissionPlugin], *,
                          task_status: trio.TaskStatus[tuple[ControlPlane, trio.Nursery]] = trio.TASK_STATUS_IGNORED
                          ) -> None:
    async with open_control_plane(options, admission=admission) as plane:
        plane.state.server_address = _IN_PROCESS_ADDRESS  # what `serve` sets from Hypercorn's bind
        async with trio.open_nursery() as requests:  # the requests' tasks end before the plane closes
            task_status.started((plane, requests))
            await trio.sleep_forever()


async def start_in_process(nursery: trio.Nursery, tmp_path: Path, *, admission: Sequence[AdmissionPlugin] = (),
                           **options: Any) -> Server:
    """A control plane served in process (see the module docstring), its registry admitting with
    `admission`; returns once it serves."""
    opts = _options(tmp_path, options)
    plane, requests = await nursery.start(_run_in_process, opts, admission)
    kubeconfig = Path(opts.kubeconfig_path or plane.data_dir / "admin.kubeconfig")
    write_kubeconfig(kubeconfig, IN_PROCESS_URL, None, token=plane.admin_token)
    transport = ASGITransport(plane.app, requests, server=("miniplane", 80))
    return Server(IN_PROCESS_URL, plane.data_dir, kubeconfig, plane.admin_token, opts.api_domain,
                  transport=transport, plane=plane)


async def start_server(nursery: trio.Nursery, tmp_path: Path, **options: Any) -> Server:
    """A real HTTPS server (`api.serving.server.serve`) on a free port; returns once it accepts connections."""
    opts = _options(tmp_path, options)
    url = await nursery.start(serve, opts)
    kubeconfig = Path(opts.kubeconfig_path or Path(opts.data_dir) / "admin.kubeconfig")
    cfg = load_kubeconfig(kubeconfig)
    return Server(url, Path(opts.data_dir), kubeconfig, cfg.token, opts.api_domain, ca_pem=cfg.ca_pem)


#: Both ways to start one, by name: for tests that prove the two paths answer alike.
STARTERS = {"in-process": start_in_process, "https": start_server}
