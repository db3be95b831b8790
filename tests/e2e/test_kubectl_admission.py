"""The real kubectl against admission: a real HTTPS webhook (tests/support/webhookserver.py) and CEL policies.

Webhooks: a validating webhook's denial reads as kubectl prints kube's
(`admission webhook "x" denied the request: ...`), its warnings as `Warning:`
lines on stderr, a mutating webhook's JSON patch shows in `kubectl get -o
yaml`, and `kubectl apply --dry-run=server` reaches a NoneOnDryRun webhook
with `dryRun: true` and stores nothing. Policies: Kubernetes' documented
replicas-limit ValidatingAdmissionPolicy, applied with `kubectl apply -f`,
refuses a Deployment in a namespace its Deny binding selects with kube's
words, and a Warn binding's failure shows as a warning.
"""

from __future__ import annotations

import base64
import json

import yaml

from tests.support.kubectl import Kubectl
from tests.support.webhookserver import WebhookRequest, start_webhook_server

PATCH = [{"op": "add", "path": "/data/injected", "value": "by-webhook"}]


async def admit(request: WebhookRequest) -> dict:
    """Denies at /deny, warns at /warn, patches at /mutate: kube's AdmissionReview v1 answers."""
    uid = request.json()["request"]["uid"]
    response: dict = {"uid": uid, "allowed": True}
    if request.path.startswith("/deny"):
        response = {"uid": uid, "allowed": False, "status": {"code": 403, "message": "configmaps named so are banned"}}
    elif request.path.startswith("/warn"):
        response["warnings"] = ["this configmap is watched"]
    elif request.path.startswith("/mutate"):
        response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(PATCH).encode()).decode())
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def webhook(name: str, label: str, client_config: dict, side_effects: str = "None") -> dict:
    return {"name": name, "sideEffects": side_effects, "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
            "clientConfig": client_config, "objectSelector": {"matchLabels": {"webhook": label}},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]}


def configmap(name: str, label: str) -> bytes:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"},
                           "metadata": {"name": name, "namespace": "default", "labels": {"webhook": label}}}).encode()


async def test_webhooks_deny_warn_and_mutate_as_kubectl_shows_kubes_answers(nursery, kubectl: Kubectl):
    hooks = await start_webhook_server(nursery, admit)
    configurations = [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "checks"}, "webhooks": [
             webhook("deny.example.com", "deny", hooks.client_config("/deny")),
             webhook("warn.example.com", "warn", hooks.client_config("/warn")),
             webhook("dry.example.com", "dry", hooks.client_config("/deny"), "NoneOnDryRun")]},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "inject"}, "webhooks": [
             webhook("inject.example.com", "mutate", hooks.client_config("/mutate"))]}]
    await kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(configurations).encode())

    denied = await kubectl("apply", "-f", "-", stdin=configmap("banned", "deny"), check=False)
    assert denied.code == 1
    assert ('Error from server: error when creating "STDIN": admission webhook "deny.example.com" denied the '
            'request: configmaps named so are banned') in denied.err

    warned = await kubectl("apply", "-f", "-", stdin=configmap("watched", "warn"))
    assert "Warning: this configmap is watched" in warned.err.splitlines()
    assert "configmap/watched created" in warned.out

    await kubectl("apply", "-f", "-", stdin=configmap("patched", "mutate"))
    stored = yaml.safe_load((await kubectl("get", "configmap", "patched", "-o", "yaml")).out)
    assert stored["data"] == {"a": "b", "injected": "by-webhook"}

    calls = len(hooks.requests)
    dry = await kubectl("apply", "--dry-run=server", "-f", "-", stdin=configmap("dry", "dry"), check=False)
    assert dry.code == 1 and 'admission webhook "dry.example.com" denied the request' in dry.err
    (review,) = [r.json()["request"] for r in hooks.requests[calls:]]
    assert review["dryRun"] is True and review["name"] == "dry" and review["operation"] == "CREATE"
    missing = await kubectl("get", "configmap", "dry", check=False)
    assert missing.code == 1 and 'configmaps "dry" not found' in missing.err


POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-staging.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: staging
"""


def deployment(namespace: str, replicas: int) -> bytes:
    labels = {"app": "nginx"}
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment",
                           "metadata": {"name": "nginx", "namespace": namespace},
                           "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
                               "metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}).encode()


async def test_the_documented_replicas_limit_policy_denies_and_warns_as_kubectl_shows(kubectl: Kubectl):
    for namespace, environment in (("test", "test"), ("staging", "staging")):
        await kubectl("create", "namespace", namespace)
        await kubectl("label", "namespace", namespace, f"environment={environment}")
    await kubectl("apply", "-f", "-", stdin=POLICY.encode())

    denied = await kubectl("apply", "-f", "-", stdin=deployment("test", 6), check=False)
    assert denied.code == 1, denied
    # kube's 422 Invalid with an empty field path, as the policy page shows kubectl printing it
    assert denied.err.splitlines() == [
        "The deployments \"nginx\" is invalid: : ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
        "'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5"]
    await kubectl("apply", "-f", "-", stdin=deployment("test", 5))

    warned = await kubectl("apply", "-f", "-", stdin=deployment("staging", 6))
    assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
            "'demo-binding-staging.example.com': failed expression: object.spec.replicas <= 5") \
        in warned.err.splitlines()
    assert "deployment.apps/nginx created" in warned.out
