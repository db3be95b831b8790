"""Valid admissionregistration objects and a strategy driver for the admissionregistration rule tests; the kinds'
objects in Kubernetes' canonical JSON form for the Protobuf tests (`PROTOBUF_OBJECTS`, by kind, lists too)."""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.models import catalog

SCHEME = Scheme("k8s.io")
API_VERSION = "admissionregistration.k8s.io/v1"


def kind(info: Any) -> ResourceType:
    return next(t for t in SCHEME.types if t.info is info)


VWC = kind(catalog.VALIDATING_WEBHOOK_CONFIGURATION)
MWC = kind(catalog.MUTATING_WEBHOOK_CONFIGURATION)
VAP = kind(catalog.VALIDATING_ADMISSION_POLICY)
VAPB = kind(catalog.VALIDATING_ADMISSION_POLICY_BINDING)
MAP = kind(catalog.MUTATING_ADMISSION_POLICY)
MAPB = kind(catalog.MUTATING_ADMISSION_POLICY_BINDING)

RULE = {"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}


def webhook(**fields: Any) -> dict[str, Any]:
    return {"name": "check.example.com", "clientConfig": {"url": "https://hook.example.com/validate"},
            "rules": [dict(RULE)], "sideEffects": "None", "admissionReviewVersions": ["v1"], **fields}


def policy_spec(**fields: Any) -> dict[str, Any]:
    return {"matchConstraints": {"resourceRules": [dict(RULE)]},
            "validations": [{"expression": "object.spec.replicas <= 5"}], **fields}


def mutating_spec(**fields: Any) -> dict[str, Any]:
    return {"matchConstraints": {"resourceRules": [dict(RULE)]}, "reinvocationPolicy": "Never",
            "mutations": [{"patchType": "ApplyConfiguration",
                           "applyConfiguration": {"expression": "Object{metadata: Object.metadata{}}"}}],
            **fields}


def binding_spec(**fields: Any) -> dict[str, Any]:
    return {"policyName": "replicas", "validationActions": ["Deny"], **fields}


def created(rt: ResourceType, name: str = "replicas", **fields: Any) -> dict[str, Any]:
    """A decoded, defaulted, prepared create of `rt`, as the registry makes it."""
    obj = rt.strategy.decode(Body({"apiVersion": API_VERSION, "kind": rt.kind, "metadata": {"name": name},
                                   **copy.deepcopy(fields)}), "Strict")[0]
    rt.strategy.default(obj)
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    rt.strategy.prepare_for_create(obj)
    return obj


def errors_of(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


def update_errors(rt: ResourceType, new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate_update(new, old)]


WEBHOOK = {"name": "check.example.com", "clientConfig": {"service": {"namespace": "hooks", "name": "svc",
                                                                     "path": "/validate", "port": 443},
                                                         "caBundle": "Y2E="},
           "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                      "scope": "*"}],
           "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
           "sideEffects": "None", "timeoutSeconds": 10, "admissionReviewVersions": ["v1"],
           "matchConditions": [{"name": "not-system", "expression": "true"}]}
POLICY = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "replicas"},
          "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                   "matchConstraints": {"namespaceSelector": {}, "objectSelector": {}, "matchPolicy": "Equivalent",
                                        "resourceRules": [{"resourceNames": ["web"], "operations": ["CREATE"],
                                                           "apiGroups": ["apps"], "apiVersions": ["v1"],
                                                           "resources": ["deployments"], "scope": "*"}]},
                   "validations": [{"expression": "object.spec.replicas <= 5", "reason": "Invalid",
                                    "messageExpression": "'too many'"}],
                   "failurePolicy": "Fail", "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}],
                   "variables": [{"name": "limit", "expression": "5"}]},
          "status": {"observedGeneration": 1, "typeChecking": {"expressionWarnings": [
              {"fieldRef": "spec.validations[0].expression", "warning": "none"}]}}}
BINDING = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "replicas"},
           "spec": {"policyName": "replicas", "paramRef": {"name": "limits", "namespace": "default",
                                                           "parameterNotFoundAction": "Deny"},
                    "validationActions": ["Deny", "Audit"]}}


def _with_list(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    items = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return {obj["kind"]: obj, f"{obj['kind']}List": {"apiVersion": API_VERSION, "kind": f"{obj['kind']}List",
                                                      "metadata": {"resourceVersion": "7"}, "items": [items]}}


PROTOBUF_OBJECTS: dict[str, dict[str, Any]] = {
    **_with_list({"apiVersion": API_VERSION, "kind": "ValidatingWebhookConfiguration",
                  "metadata": {"name": "hooks", "generation": 1}, "webhooks": [WEBHOOK]}),
    **_with_list({"apiVersion": API_VERSION, "kind": "MutatingWebhookConfiguration",
                  "metadata": {"name": "hooks", "generation": 1},
                  "webhooks": [{**WEBHOOK, "reinvocationPolicy": "IfNeeded"}]}),
    **_with_list(POLICY), **_with_list(BINDING),
}
