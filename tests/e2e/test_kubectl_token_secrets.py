"""Service account token Secrets through the real kubectl, against a server running its built-in controllers.

`kubectl apply` of a Secret of type `kubernetes.io/service-account-token`
naming a ServiceAccount; the server's token controller fills it (`token`,
`ca.crt`: the CA kubectl's kubeconfig trusts, `namespace`); kubectl then
authenticates with that token (`auth whoami --token`) until the Secret is
deleted.
"""

from __future__ import annotations

import base64
import json

import pytest
import trio

from tests.support.kubectl import Kubectl
from tests.support.server import Server, start_server

SECRET = b"""apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: robot-token
  namespace: default
  annotations:
    kubernetes.io/service-account.name: robot
"""


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    return await start_server(nursery, tmp_path, api_domain="k8s.io", controllers=True)


async def test_kubectl_applies_a_token_secret_and_authenticates_with_its_token_until_it_is_deleted(server, tmp_path):
    kubectl = Kubectl(server, str(tmp_path / "kube-cache"))
    await kubectl("create", "serviceaccount", "robot", "-n", "default")
    await kubectl("apply", "-f", "-", stdin=SECRET)
    data: dict[str, str] = {}
    with trio.fail_after(60):  # a real server: real time, bounded
        while "token" not in data:
            data = json.loads((await kubectl("get", "secret", "robot-token", "-n", "default", "-o", "json")).out
                              ).get("data") or {}
            await trio.sleep(0.1)
    assert base64.b64decode(data["namespace"]) == b"default"
    assert base64.b64decode(data["ca.crt"]) == server.ca_pem
    token = base64.b64decode(data["token"]).decode()
    me = json.loads((await kubectl("auth", "whoami", "-o", "json", "--token", token)).out)
    assert me["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    assert "system:serviceaccounts:default" in me["status"]["userInfo"]["groups"]
    await kubectl("delete", "secret", "robot-token", "-n", "default")
    with trio.fail_after(60):
        while (refused := await kubectl("auth", "whoami", "--token", token, check=False)).code == 0:
            await trio.sleep(0.1)
    assert "Unauthorized" in refused.err
