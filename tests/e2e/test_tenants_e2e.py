"""The Tenant operator out of process, both versions, against one `miniplane serve` (k8s.io, controllers on).

- `miniplane controllers --module examples.tenants --builtin false` and
- kopf's `KopfRunner` running `examples/tenants_kopf.py` (`kopf run
  --standalone --all-namespaces`, in a thread of the test),

each with a kubeconfig holding the token of the ServiceAccount of
manifests/tenants-controller-rbac.yaml (`kubectl create token`), pass
`check_tenant_lifecycle` (tests/support/tenants.py): owned namespace,
RoleBinding and ServiceAccount, Ready and its observedGeneration, events,
and a deletion held by the finalizer until the namespace is gone. Nothing
either does is refused but `miniplane controllers`' list of CRDs, which the
ClusterRole does not grant: its log says once that it will not follow custom kinds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import kubernetes
import pytest

import examples.tenants as example
from runtime.client.http import open_http_client
from runtime.client.interface import Client
from runtime.client.kubeconfig import load_kubeconfig, write_kubeconfig
from runtime.machinery import errors
from tests.support.kopfrunner import kopf_runner
from tests.support.tenants import check_tenant_lifecycle, install_crd, rbac_objects
from tests.support.kubectl import Kubectl
from tests.support.served import served
from tests.support.server import Server
from tests.support.serverproc import ROOT, controllers_process, stop_cleanly

#: Real seconds a deleted Tenant is watched staying while its namespace is held: past one requeue.
SETTLE = example.WAIT_SECONDS + 1


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with served(tmp_path_factory.mktemp("tenants") / "data", "--api-domain", "k8s.io",
                "--controllers", "true") as server:
        yield server


async def create_all(client: Client, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        try:
            await client.create(obj)
        except errors.AlreadyExists:
            pass  # the module's server is shared: the test before applied it


async def prepare(server: Server, client: Client, tmp_path: Path) -> Path:
    """Install the CRD and the RBAC of the operator (once per server); return a kubeconfig of its ServiceAccount."""
    crds = client.scheme.by_kind("CustomResourceDefinition")
    try:
        await client.get(crds, "tenants.example.com")
    except errors.NotFound:
        await install_crd(client)
    await create_all(client, rbac_objects())
    kubectl = Kubectl(server, str(tmp_path / "kube-cache"))
    token = (await kubectl("create", "token", "tenant-controller", "-n", "tenants-system",
                           "--duration", "1h")).out.strip()
    return write_kubeconfig(tmp_path / "tenant-controller.kubeconfig", server.url, server.ca_pem, token=token,
                            user_name="tenant-controller")


async def test_miniplane_controllers_runs_the_tenant_operator_as_its_service_account(server, tmp_path):
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        kubeconfig = await prepare(server, client, tmp_path)
        log = tmp_path / "controllers.log"
        async with controllers_process(kubeconfig, "examples.tenants", log) as process:
            await check_tenant_lifecycle(client, "shop", settle=SETTLE)
            await stop_cleanly(process, log)
    # Refused only the CRD list (no rule for it): the custom-kinds follower said once it will not follow them.
    refused = [line for line in log.read_text().splitlines() if "forbidden" in line.lower()]
    assert len(refused) == 1 and "will not follow the server's custom kinds" in refused[0], log.read_text()


async def test_kopf_runs_the_tenant_operator_as_its_service_account(server, tmp_path, monkeypatch):
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        kubeconfig = str(await prepare(server, client, tmp_path))
        monkeypatch.setenv("KUBECONFIG", kubeconfig)
        # The official client read $KUBECONFIG when imported (before this test): tell it too.
        monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", kubeconfig)
        operator = str(ROOT / "examples" / "tenants_kopf.py")
        with kopf_runner(operator) as runner:
            await check_tenant_lifecycle(client, "kopf-shop", settle=SETTLE)
    assert runner.exception is None and runner.exit_code == 0, runner.output
    assert "Handler 'release' succeeded" in runner.output  # kopf's log: it released its finalizer
    assert "forbidden" not in runner.output.lower(), runner.output
