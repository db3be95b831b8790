"""End-to-end fixtures: the real kubectl against a server started by the test."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import pytest
import trio

from tests.conftest import Server, start_server

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def pytest_collection_modifyitems(config, items):
    if shutil.which("kubectl") is None:
        skip = pytest.mark.skip(reason="the real kubectl is not on this machine (expected at /usr/bin/kubectl)")
        for item in items:
            if "tests/e2e" in str(item.fspath):
                item.add_marker(skip)


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Kubectl:
    server: Server
    cache_dir: str

    async def __call__(self, *args: str, stdin: bytes | None = None, check: bool = True) -> Result:
        cmd = [KUBECTL, "--kubeconfig", str(self.server.kubeconfig), "--cache-dir", self.cache_dir,
               "--request-timeout", "30s", *args]
        proc = await trio.run_process(cmd, stdin=stdin, capture_stdout=True, capture_stderr=True, check=False)
        result = Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
        if check and result.code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.code}): {result.err}{result.out}")
        return result


@pytest.fixture
async def k8s_server(nursery, tmp_path) -> Server:
    """A server under `--api-domain k8s.io`, so kubectl's typed commands work."""
    return await start_server(nursery, tmp_path, api_domain="k8s.io")


@pytest.fixture
def kubectl(k8s_server, tmp_path) -> Kubectl:
    return Kubectl(k8s_server, str(tmp_path / "kube-cache"))


@pytest.fixture
def kubectl_svc(server, tmp_path) -> Kubectl:
    """kubectl against a server under the default `svc.io` domain."""
    return Kubectl(server, str(tmp_path / "kube-cache-svc"))
