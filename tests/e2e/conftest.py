"""End-to-end fixtures: the real kubectl against a real HTTPS server started by the test."""

from __future__ import annotations

import shutil

import pytest

from tests.support.kubectl import Kubectl
from tests.support.server import Server, start_server


def pytest_collection_modifyitems(config, items):
    if shutil.which("kubectl") is None:
        skip = pytest.mark.skip(reason="the real kubectl is not on this machine (expected at /usr/bin/kubectl)")
        for item in items:
            if "tests/e2e" in str(item.fspath):
                item.add_marker(skip)


@pytest.fixture
async def k8s_server(nursery, tmp_path) -> Server:
    """A server under `--api-domain k8s.io`, so kubectl's typed commands work."""
    return await start_server(nursery, tmp_path, api_domain="k8s.io")


@pytest.fixture
def kubectl(k8s_server, tmp_path) -> Kubectl:
    return Kubectl(k8s_server, str(tmp_path / "kube-cache"))


@pytest.fixture
def kubectl_svc(https_server, tmp_path) -> Kubectl:
    """kubectl against a server under the default `svc.io` domain."""
    return Kubectl(https_server, str(tmp_path / "kube-cache-svc"))
