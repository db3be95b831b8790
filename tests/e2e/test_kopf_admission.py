"""kopf's own admission example, unmodified, registering its webhooks with miniplane; the real kubectl meets them.

`examples/17-admission/example.py` of kopf's source distribution (see
tests/support/kopfexamples.py) runs with `kopf run --standalone` against a
served miniplane under `--api-domain k8s.io`, with kopf's `examples/crd.yaml`
for its `kex` kind. It sets `settings.admission.server =
kopf.WebhookAutoServer()`, which guesses the cluster from the API server's
certificate and `/version` (k3s, minikube, Docker Desktop, else a plain local
cluster: a server on this machine, `https://localhost:PORT`, with a
self-signed certificate as its caBundle), and `settings.admission.managed =
'auto.kopf.dev'`, so kopf writes a ValidatingWebhookConfiguration and a
MutatingWebhookConfiguration of that name through miniplane's API. miniplane
then calls kopf's handlers on every write of a `kex`, and kubectl shows what
kube-apiserver's answers would show: the denials in kopf's words (one with
kopf's code 555), the mutation stored, kopf's warnings on stderr.
"""

from __future__ import annotations

import json

import pytest
import yaml

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.controller.testing import wait_for_object
from runtime.machinery.scheme import ResourceType
from tests.support.kopfexamples import install_kopf_crd, kopf_examples_dir, run_kopf
from tests.support.kubectl import Kubectl
from tests.support.server import Server, start_server

MANAGED = "auto.kopf.dev"
VALIDATING = ResourceType.of("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
                             "validatingwebhookconfigurations", namespaced=False)
MUTATING = ResourceType.of("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
                           "mutatingwebhookconfigurations", namespaced=False)


@pytest.fixture
async def kopf_server(nursery, tmp_path) -> Server:
    return await start_server(nursery, tmp_path, api_domain="k8s.io", controllers=True)


@pytest.fixture
def kubectl(kopf_server, tmp_path) -> Kubectl:
    return Kubectl(kopf_server, str(tmp_path / "kube-cache"))


def kex(name: str, field: str, labels: dict[str, str] | None = None) -> bytes:
    obj = {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
           "metadata": {"name": name, "labels": labels or {}}, "spec": {"field": field}}
    return yaml.safe_dump(obj).encode()


async def wait_for_webhook_configurations(server: Server) -> tuple[dict, dict]:
    """kopf's two managed configurations, once both are stored with a webhook that names a URL."""
    def registered(config: dict | None) -> bool:
        return bool(config and config.get("webhooks"))
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        validating = await wait_for_object(client, VALIDATING, MANAGED, registered)
        mutating = await wait_for_object(client, MUTATING, MANAGED, registered)
    return validating, mutating


async def test_kopfs_admission_example_registers_its_webhooks_and_kubectl_meets_them(
        kopf_server, kubectl, tmp_path):
    examples = kopf_examples_dir()
    await install_kopf_crd(kubectl, examples)
    seen: dict[str, object] = {}

    async def admitted() -> None:
        seen["validating"], seen["mutating"] = await wait_for_webhook_configurations(kopf_server)
        seen["wrong"] = await kubectl("apply", "-f", "-", stdin=kex("kex-wrong", "wrong"), check=False)
        seen["lazy"] = await kubectl("apply", "-f", "-", stdin=kex("kex-lazy", "not-allowed"), check=False)
        async with kopf_server.client() as http:  # the code kubectl does not print
            seen["lazy-code"] = await http.post("/apis/kopf.dev/v1/namespaces/default/kopfexamples",
                                                content=json.dumps(yaml.safe_load(kex("kex-lazy", "not-allowed"))),
                                                headers={"Content-Type": "application/json"})
        seen["mutated"] = await kubectl("apply", "-f", "-", stdin=kex(
            "kex-mutated", "value", {"somelabel": "somevalue"}))
        seen["stored"] = json.loads((await kubectl("get", "kex", "kex-mutated", "-o", "json")).out)

    await run_kopf(kopf_server, examples / "17-admission" / "example.py", tmp_path / "kopf.log", admitted)

    # kopf's configurations, stored as it wrote them: a plain local server, trusted through its caBundle
    validating, mutating = seen["validating"], seen["mutating"]
    names = sorted(hook["name"] for hook in validating["webhooks"])
    assert names == ["authhook.auto.kopf.dev", "validate-subresources.auto.kopf.dev", "validate1.auto.kopf.dev",
                     "validate2.spec.field.auto.kopf.dev"]
    assert [hook["name"] for hook in mutating["webhooks"]] == ["mutate1.auto.kopf.dev"]
    for hook in (*validating["webhooks"], *mutating["webhooks"]):
        assert hook["clientConfig"]["url"].startswith("https://localhost:") and hook["clientConfig"]["caBundle"]

    wrong = seen["wrong"]
    assert wrong.code == 1 and 'Error from server: error when creating "STDIN": admission webhook ' \
        '"validate1.auto.kopf.dev" denied the request: Meh! I don\'t like it. Change the field.' in wrong.err
    lazy = seen["lazy"]
    assert lazy.code == 1 and 'Error from server: error when creating "STDIN": admission webhook ' \
        '"validate2.spec.field.auto.kopf.dev" denied the request: I\'m too lazy anyway. Go away!' in lazy.err
    answer = seen["lazy-code"]
    assert answer.status_code == 555 and answer.json()["code"] == 555
    assert answer.json()["message"] == ('admission webhook "validate2.spec.field.auto.kopf.dev" denied the request: '
                                        "I'm too lazy anyway. Go away!")

    mutated = seen["mutated"]
    assert "kopfexample.kopf.dev/kex-mutated created" in mutated.out
    assert seen["stored"]["spec"] == {"field": "value", "injected": 123}
    # kopf's warnings, as kube-apiserver's Warning headers reach kubectl: miniplane calls as kube-apiserver
    warnings = [line for line in mutated.err.splitlines() if line.startswith("Warning: ")]
    assert sorted(warnings) == sorted([
        "Warning: Accessing as user-agent: kube-apiserver-admission", "Warning: SSL peer is not identified.",
        "Warning: Also update status.field to match spec.field: 'value' != None"])
