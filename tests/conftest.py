"""Shared fixtures: an in-process registry, and a real HTTPS server on a free port."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from runtime.kubeconfig import load_kubeconfig
from api.assembly import ServeOptions
from api.server import serve
from runtime.bootstrap import bootstrap
from runtime.registry import Registry
from runtime.scheme import Scheme
from runtime.storage import MemoryStore


@pytest.fixture
async def registry(nursery):
    """A Registry over a memory store, bootstrapped (policy + default namespace)."""
    reg = Registry(MemoryStore(), Scheme())
    await nursery.start(reg.run)
    await bootstrap(reg)
    return reg


@dataclass
class Server:
    url: str
    data_dir: Path
    kubeconfig: Path
    token: str
    ca_pem: bytes
    domain: str

    def client(self, token: str | None = "admin", **kw) -> httpx.AsyncClient:
        """An httpx client trusting the server's CA; token "admin" means the admin token."""
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {self.token if token == 'admin' else token}"
        return httpx.AsyncClient(base_url=self.url, verify=ctx, headers=headers, timeout=30, **kw)

    @property
    def rbac(self) -> str:
        return f"/apis/rbac.authorization.{self.domain}/v1"

    @property
    def authz(self) -> str:
        return f"/apis/authorization.{self.domain}/v1"


async def start_server(nursery, tmp_path: Path, **options) -> Server:
    options.setdefault("store", "memory")
    options.setdefault("controllers", False)
    opts = ServeOptions(data_dir=str(tmp_path / "data"), port=0, **options)
    url = await nursery.start(serve, opts)
    kubeconfig = tmp_path / "data" / "admin.kubeconfig"
    cfg = load_kubeconfig(kubeconfig)
    return Server(url, tmp_path / "data", kubeconfig, cfg.token, cfg.ca_pem, opts.api_domain)


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    """A real HTTPS server (memory store, no controllers) under the default domain."""
    return await start_server(nursery, tmp_path)
