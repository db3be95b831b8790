"""The admissionregistration kinds over HTTP, as kube-apiserver serves them: created, read and listed with their
defaults; a 422 in Kubernetes' words; `kubectl get` tables; discovery lists them, cluster-scoped, in
`api-extensions`; a policy's status written apart; generation counted.

The objects match a group nothing here serves (`example.com`), so whichever admission plug-ins read them never
act on the test's own requests."""

from __future__ import annotations

import pytest

from tests.support.rbac import ok
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")

BASE = "/apis/admissionregistration.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
RULE = {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}


def webhook_configuration(kind: str = "ValidatingWebhookConfiguration", **hook: object) -> dict[str, object]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "widgets"},
            "webhooks": [{"name": "check.widgets.example.com", "failurePolicy": "Ignore",
                          "clientConfig": {"url": "https://127.0.0.1:9/validate"}, "rules": [RULE],
                          "sideEffects": "None", "admissionReviewVersions": ["v1"], **hook}]}


def policy() -> dict[str, object]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "widget-size"},
            "spec": {"failurePolicy": "Ignore", "matchConstraints": {"resourceRules": [RULE]},
                     "validations": [{"expression": "object.spec.size <= 5"}]}}


@pytest.fixture
async def server(nursery, tmp_path, autojump_clock):
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


async def test_a_webhook_configuration_is_created_defaulted_and_listed(server):
    async with server.client() as c:
        made = await ok(await c.post(f"{BASE}/validatingwebhookconfigurations", json=webhook_configuration()), 201)
        hook = made["webhooks"][0]
        assert (hook["matchPolicy"], hook["timeoutSeconds"], hook["rules"][0]["scope"]) == ("Equivalent", 10, "*")
        assert made["metadata"]["generation"] == 1 and "namespace" not in made["metadata"]
        read = await ok(await c.get(f"{BASE}/validatingwebhookconfigurations/widgets"))
        assert read["webhooks"] == made["webhooks"]
        listed = await ok(await c.get(f"{BASE}/validatingwebhookconfigurations"))
        assert listed["kind"] == "ValidatingWebhookConfigurationList"
        assert [o["metadata"]["name"] for o in listed["items"]] == ["widgets"]


async def test_a_webhook_without_side_effects_is_422_in_kubes_words(server):
    body = webhook_configuration("MutatingWebhookConfiguration")
    del body["webhooks"][0]["sideEffects"]  # type: ignore[index]
    async with server.client() as c:
        answer = await ok(await c.post(f"{BASE}/mutatingwebhookconfigurations", json=body), 422)
    assert answer["reason"] == "Invalid"
    assert answer["message"] == ('MutatingWebhookConfiguration.admissionregistration.k8s.io "widgets" is invalid: '
                                 "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun")
    assert answer["details"]["causes"] == [{"reason": "FieldValueRequired", "field": "webhooks[0].sideEffects",
                                            "message": "Required value: must specify one of None, NoneOnDryRun"}]


async def test_kubectl_get_tables_show_kubes_columns(server):
    async with server.client() as c:
        await ok(await c.post(f"{BASE}/validatingwebhookconfigurations", json=webhook_configuration()), 201)
        await ok(await c.post(f"{BASE}/validatingadmissionpolicies", json=policy()), 201)
        await ok(await c.post(f"{BASE}/validatingadmissionpolicybindings", json={
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "widget-size"},
            "spec": {"policyName": "widget-size", "validationActions": ["Warn", "Audit"]}}), 201)
        hooks = await ok(await c.get(f"{BASE}/validatingwebhookconfigurations", headers=TABLE))
        policies = await ok(await c.get(f"{BASE}/validatingadmissionpolicies", headers=TABLE))
        bindings = await ok(await c.get(f"{BASE}/validatingadmissionpolicybindings", headers=TABLE))
    assert [d["name"] for d in hooks["columnDefinitions"]] == ["Name", "Webhooks", "Age"]
    assert hooks["rows"][0]["cells"][:2] == ["widgets", 1]
    assert [d["name"] for d in policies["columnDefinitions"]] == ["Name", "Validations", "ParamKind", "Age"]
    assert policies["rows"][0]["cells"][:3] == ["widget-size", 1, "<unset>"]
    assert bindings["rows"][0]["cells"][:3] == ["widget-size", "widget-size", "<unset>"]


async def test_discovery_lists_the_kinds_cluster_scoped_in_api_extensions(server):
    async with server.client() as c:
        resources = await ok(await c.get(BASE))
    served = {r["name"]: r for r in resources["resources"]}
    kinds = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
             "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"]
    assert [name for name in served if "/" not in name] == sorted(kinds)  # by name, as kube-apiserver's
    assert all(served[k]["namespaced"] is False and served[k]["categories"] == ["api-extensions"] for k in kinds)
    assert "validatingadmissionpolicies/status" in served


async def test_a_policy_status_is_written_apart_and_generation_counts_spec_changes(server):
    url = f"{BASE}/validatingadmissionpolicies/widget-size"
    merge = {"Content-Type": "application/merge-patch+json"}
    async with server.client() as c:
        made = await ok(await c.post(f"{BASE}/validatingadmissionpolicies",
                                     json={**policy(), "status": {"observedGeneration": 5}}), 201)
        assert "status" not in made and made["metadata"]["generation"] == 1
        status = await ok(await c.patch(f"{url}/status", json={"status": {"observedGeneration": 1}}, headers=merge))
        assert status["status"] == {"observedGeneration": 1} and status["metadata"]["generation"] == 1
        changed = await ok(await c.patch(url, json={"spec": {"failurePolicy": "Fail"}, "status": None},
                                         headers=merge))
    assert changed["metadata"]["generation"] == 2 and changed["status"] == {"observedGeneration": 1}


async def test_mutating_policies_and_bindings_are_served(server):
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "widget-label"},
            "spec": {"matchConstraints": {"resourceRules": [RULE]}, "reinvocationPolicy": "Never",
                     "failurePolicy": "Ignore",
                     "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                         "expression": "Object{metadata: Object.metadata{labels: {'checked': 'yes'}}}"}}]}}
    async with server.client() as c:
        made = await ok(await c.post(f"{BASE}/mutatingadmissionpolicies", json=body), 201)
        assert made["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
        await ok(await c.post(f"{BASE}/mutatingadmissionpolicybindings", json={
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "widget-label"}, "spec": {"policyName": "widget-label"}}), 201)
        refused = await ok(await c.post(f"{BASE}/mutatingadmissionpolicies", json={
            **body, "metadata": {"name": "other"}, "spec": {**body["spec"], "mutations": []}}), 422)  # type: ignore
    assert refused["message"] == ('MutatingAdmissionPolicy.admissionregistration.k8s.io "other" is invalid: '
                                  "spec.mutations: Required value: mutations must contain at least one item")


async def test_server_side_apply_keys_webhooks_by_name(server):
    url = f"{BASE}/validatingwebhookconfigurations/widgets"
    apply = {"Content-Type": "application/apply-patch+json"}
    first = webhook_configuration()
    second = webhook_configuration()
    second["webhooks"][0]["name"] = "audit.widgets.example.com"  # type: ignore[index]
    async with server.client() as c:
        await ok(await c.patch(url, json=first, headers=apply, params={"fieldManager": "alice"}), 201)
        merged = await ok(await c.patch(url, json=second, headers=apply, params={"fieldManager": "bob"}))
        again = await ok(await c.patch(url, json=first, headers=apply, params={"fieldManager": "alice"}))
    assert [h["name"] for h in merged["webhooks"]] == ["check.widgets.example.com", "audit.widgets.example.com"]
    assert again["webhooks"] == merged["webhooks"] and again["metadata"]["generation"] == 2
