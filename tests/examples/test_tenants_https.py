"""The Tenant operator over HTTPS, both versions, against the in-process env (`open_test_env(https=True)`).

- examples/tenants.py run by a `Manager` on an `HTTPClient` authenticated
  as the least-privilege ServiceAccount of manifests/tenants-controller-rbac.yaml
  (its token from a TokenRequest, the `serviceaccounts/token` subresource);
- examples/tenants_kopf.py run by kopf's `KopfRunner` (its own thread and
  asyncio loop) with a kubeconfig of that token;

each passes `check_tenant_lifecycle` (tests/support/tenants.py), asked over
HTTPS by the env's admin, and nothing either does is refused. The same
checks run in process (tests/examples/test_tenants.py) and against
`miniplane serve` (tests/e2e/test_tenants_e2e.py).

Real clock: the env serves real sockets (autojump_clock cannot be used);
`trio.fail_after` bounds each test.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path
from typing import AsyncIterator

import httpx
import kubernetes
import pytest
import trio

import examples.tenants as example
from runtime.client.http import HTTPClient
from runtime.client.kubeconfig import KubeConfig, write_kubeconfig
from runtime.controller import Manager
from runtime.controller.testing import TestEnv, open_test_env
from runtime.machinery.scheme import Scheme
from tests.support.kopfrunner import kopf_runner
from tests.support.tenants import check_tenant_lifecycle, install_crd, rbac_objects

__all__: list[str] = []

#: Wall-clock bound of each test (a loaded 2-core machine; the lifecycle itself takes some 10 s).
TEST_DEADLINE = 150
#: Real seconds a deleted Tenant is watched staying while its namespace is held: past one requeue.
SETTLE = example.WAIT_SECONDS + 1
OPERATOR = Path(__file__).resolve().parents[2] / "examples" / "tenants_kopf.py"


@pytest.fixture
async def env() -> AsyncIterator[TestEnv]:
    """A k8s.io env served over HTTPS, with the Tenant CRD and the controller's RBAC applied."""
    async with open_test_env(domain="k8s.io", https=True) as env:
        with trio.fail_after(TEST_DEADLINE):
            await install_crd(env.client)
            for doc in rbac_objects():
                await env.client.create(doc)
        yield env


async def controller_token(env: TestEnv) -> str:
    """A token of the controller's ServiceAccount, from a TokenRequest over HTTPS (`kubectl create token`)."""
    verify = ssl.create_default_context(cadata=(env.ca_pem or b"").decode())
    async with httpx.AsyncClient(base_url=env.url or "", verify=verify,
                                 headers={"Authorization": f"Bearer {env.token}"}) as admin:
        answer = await admin.post("/api/v1/namespaces/tenants-system/serviceaccounts/tenant-controller/token",
                                  json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                        "spec": {"expirationSeconds": 3600}})
    assert answer.status_code == 201, answer.text
    return answer.json()["status"]["token"]


async def test_the_toolkit_operator_runs_over_https_as_its_service_account(env, caplog):
    caplog.set_level(logging.WARNING)
    config = env.kube_config()
    as_controller = KubeConfig(config.server, ca_pem=config.ca_pem, token=await controller_token(env))
    # Its own scheme, as out of process: the Tenant kind is known by its binding (bind_kind), not the server's.
    async with HTTPClient(as_controller, scheme=Scheme("k8s.io"), field_manager=example.FIELD_MANAGER) as client, \
            env.http_client() as admin:
        manager = Manager(client, name=example.FIELD_MANAGER)
        example.setup(manager)
        with trio.fail_after(TEST_DEADLINE):
            async with trio.open_nursery() as nursery:
                await nursery.start(manager.run)
                await check_tenant_lifecycle(admin, "https-shop", settle=SETTLE)
                nursery.cancel_scope.cancel()
    assert manager.statistics().controllers["tenants"].reconciles > 0
    refused = [r.getMessage() for r in caplog.records if "forbidden" in r.getMessage().lower()]
    assert not refused, refused


async def test_the_kopf_operator_runs_over_https_as_its_service_account(env, tmp_path, monkeypatch):
    kubeconfig = str(write_kubeconfig(tmp_path / "tenant-controller.kubeconfig", env.url, env.ca_pem,
                                      token=await controller_token(env), user_name="tenant-controller"))
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    # The official client (kopf's login, the example's calls) read $KUBECONFIG when imported: tell it too.
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", kubeconfig)
    runner = kopf_runner(str(OPERATOR))
    async with env.http_client() as admin:
        with trio.fail_after(TEST_DEADLINE):
            await trio.to_thread.run_sync(runner.__enter__)  # its thread serves while this trio run serves it
            try:
                await check_tenant_lifecycle(admin, "kopf-https-shop", settle=SETTLE)
            finally:
                await trio.to_thread.run_sync(runner.__exit__, None, None, None)
    assert runner.exception is None and runner.exit_code == 0, runner.output
    assert "Handler 'release' succeeded" in runner.output  # kopf's log: it released its finalizer
    assert "forbidden" not in runner.output.lower(), runner.output
