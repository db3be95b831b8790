"""The real kubectl on the admissionregistration kinds: apply (its client-side validation reads our OpenAPI), get
with the server's columns, the `api-extensions` category, api-resources, and a 422 as kubectl shows it."""

from __future__ import annotations

POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: widget-size
spec:
  failurePolicy: Ignore
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {operations: [CREATE], apiGroups: [example.com], apiVersions: [v1], resources: [widgets]}
  validations:
  - expression: "object.spec.size <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: widget-size
spec:
  policyName: widget-size
  validationActions: [Warn, Audit]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Allow}
"""

WEBHOOK = """apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: widgets
webhooks:
- name: label.widgets.example.com
  failurePolicy: Ignore
  sideEffects: {side_effects}
  admissionReviewVersions: [v1]
  clientConfig: {{url: "https://127.0.0.1:9/mutate"}}
  rules:
  - {{operations: [CREATE], apiGroups: [example.com], apiVersions: [v1], resources: [widgets]}}
"""


def header(out: str) -> list[str]:
    return [title.strip() for title in out.splitlines()[0].split("  ") if title.strip()]


async def test_apply_and_get_policies_show_kubes_columns(kubectl):
    await kubectl("apply", "-f", "-", stdin=POLICY.encode())
    policies = (await kubectl("get", "validatingadmissionpolicies")).out
    assert header(policies) == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert policies.splitlines()[1].split()[:3] == ["widget-size", "1", "v1/ConfigMap"]
    bindings = (await kubectl("get", "validatingadmissionpolicybindings")).out
    assert header(bindings) == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert bindings.splitlines()[1].split()[:3] == ["widget-size", "widget-size", "default/limits"]


async def test_the_kinds_are_api_extensions_and_listed_by_api_resources(kubectl):
    await kubectl("apply", "-f", "-", stdin=WEBHOOK.format(side_effects="None").encode())
    listed = (await kubectl("get", "api-extensions", "-o", "name")).out.split()
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/widgets" in listed
    resources = (await kubectl("api-resources", "--api-group", "admissionregistration.k8s.io", "-o", "name")).out
    assert sorted(resources.split()) == sorted(f"{r}.admissionregistration.k8s.io" for r in (
        "mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "mutatingwebhookconfigurations",
        "validatingadmissionpolicies", "validatingadmissionpolicybindings", "validatingwebhookconfigurations"))
    hooks = (await kubectl("get", "mutatingwebhookconfigurations")).out
    assert header(hooks) == ["NAME", "WEBHOOKS", "AGE"] and hooks.splitlines()[1].split()[:2] == ["widgets", "1"]


async def test_a_webhook_with_side_effects_is_refused_as_kubectl_shows_a_422(kubectl):
    result = await kubectl("apply", "-f", "-", stdin=WEBHOOK.format(side_effects="Some").encode(), check=False)
    assert result.code != 0
    assert ('The MutatingWebhookConfiguration "widgets" is invalid: webhooks[0].sideEffects: Unsupported value: '
            '"Some": supported values: "None", "NoneOnDryRun"') in result.err
