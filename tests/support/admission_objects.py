"""Valid admissionregistration objects and a strategy driver for the admissionregistration rule tests."""

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
