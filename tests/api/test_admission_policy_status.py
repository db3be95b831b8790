"""A ValidatingAdmissionPolicy's status as Kubernetes documents it ("Validating Admission Policy", type checking):
the built-in controller type checks a new generation's expressions and says what it found, read back through the
API as a user reads it."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from runtime.controller.testing import open_test_env
from runtime.models.catalog import VALIDATING_ADMISSION_POLICY
pytestmark = pytest.mark.stores("memory")

DEPLOYMENT_RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["deployments"]}


def policy(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": spec}


async def _status(env: Any, name: str, generation: int) -> dict[str, Any]:
    while True:
        got = await env.client.get(env.scheme.by_kind(VALIDATING_ADMISSION_POLICY.kind), name)
        status = got.get("status") or {}
        if status.get("observedGeneration") == generation:
            return status
        await trio.sleep(0.1)


async def test_the_documented_undefined_field_warning_and_its_fix(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(policy("deploy-replica-policy.example.com",
                                       matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
                                       validations=[{"expression": "object.replicas > 1",
                                                     "reason": "Invalid"}]))
        status = await _status(env, "deploy-replica-policy.example.com", 1)
        assert status["typeChecking"] == {"expressionWarnings": [{
            "fieldRef": "spec.validations[0].expression",
            "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n"
                       " | object.replicas > 1\n"
                       " | ......^"}]}
        await env.client.patch(env.scheme.by_kind(VALIDATING_ADMISSION_POLICY.kind), "deploy-replica-policy.example.com",
                               {"spec": {"validations": [{"expression": "object.spec.replicas > 1"}]}})
        fixed = await _status(env, "deploy-replica-policy.example.com", 2)
        assert not fixed.get("typeChecking", {}).get("expressionWarnings")
