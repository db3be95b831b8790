"""Browser fixtures: a real HTTPS server (kubectl's typed commands need `--api-domain k8s.io`) and kubectl."""

from __future__ import annotations

import pytest

from tests.support.kubectl import Kubectl
from tests.support.rbac import token_file
from tests.support.server import Server, start_server


@pytest.fixture
async def ui_server(nursery, tmp_path) -> Server:
    """A server with the test token users and the built-in controllers (aggregation fills view/edit/admin)."""
    return await start_server(nursery, tmp_path, api_domain="k8s.io", controllers=True,
                              token_auth_file=token_file(tmp_path))


@pytest.fixture
def kubectl(ui_server, tmp_path) -> Kubectl:
    return Kubectl(ui_server, str(tmp_path / "kube-cache"))
