"""The ValidatingAdmissionPolicy status controller's rules (controllers.policystatus; kube's
validatingadmissionpolicy-status): once per generation, the type checking written through the status subresource,
custom kinds checked by their CRD's schema."""

from __future__ import annotations

from typing import Any

from controllers.policystatus import PolicyStatusController
from runtime.client.interface import ObjectKey
from runtime.machinery.scheme import Scheme
from tests.support.controller_fakes import FakeInformer, UpdateRecorder

SCHEME = Scheme("k8s.io")


def _policy(expression: str, generation: int = 1, status: dict[str, Any] | None = None,
            rule: tuple[str, str, str] = ("apps", "v1", "deployments")) -> dict[str, Any]:
    group, version, resource = rule
    return {"metadata": {"name": "p", "generation": generation, "resourceVersion": "9"},
            "spec": {"matchConstraints": {"resourceRules": [
                {"apiGroups": [group], "apiVersions": [version], "resources": [resource]}]},
                "validations": [{"expression": expression}]},
            **({"status": status} if status is not None else {})}


def _controller(policy: dict[str, Any], *crds: dict[str, Any]) -> tuple[PolicyStatusController, UpdateRecorder]:
    client = UpdateRecorder()
    return PolicyStatusController(client, FakeInformer(policy), FakeInformer(*crds), SCHEME), client  # type: ignore


async def test_a_new_generation_gets_its_warnings_and_observed_generation_through_the_status_subresource():
    controller, client = _controller(_policy("object.replicas > 1", generation=2))
    await controller.reconcile(ObjectKey("", "p"))
    [(written, subresource)] = client.updates
    assert subresource == "status" and written["metadata"]["resourceVersion"] == "9"
    assert written["status"]["observedGeneration"] == 2
    [warning] = written["status"]["typeChecking"]["expressionWarnings"]
    assert warning["fieldRef"] == "spec.validations[0].expression"
    assert warning["warning"].startswith("apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'")


async def test_a_policy_without_warnings_gets_an_empty_type_checking():
    controller, client = _controller(_policy("object.spec.replicas > 1"))
    await controller.reconcile(ObjectKey("", "p"))
    [(written, _)] = client.updates
    assert written["status"] == {"observedGeneration": 1, "typeChecking": {}}


async def test_an_observed_generation_is_not_checked_again():
    controller, client = _controller(_policy("object.replicas > 1", 3, {"observedGeneration": 3}))
    assert await controller.reconcile(ObjectKey("", "p")) is None
    assert client.updates == []


async def test_a_gone_policy_is_nothing_to_do():
    controller, client = _controller(_policy("true"))
    assert await controller.reconcile(ObjectKey("", "other")) is None and client.updates == []


WIDGETS = {"metadata": {"name": "widgets.example.com"}, "spec": {
    "group": "example.com", "names": {"plural": "widgets", "kind": "Widget"},
    "versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}}


async def test_a_custom_kind_is_checked_by_its_crds_schema():
    crd = WIDGETS
    controller, client = _controller(_policy("object.spec.size > 1 && object.spec.sise > 1",
                                             rule=("example.com", "v1", "widgets")), crd)
    await controller.reconcile(ObjectKey("", "p"))
    [(written, _)] = client.updates
    [warning] = written["status"]["typeChecking"]["expressionWarnings"]
    assert warning["warning"].startswith("example.com/v1, Kind=Widget: ERROR: <input>:1:36: undefined field 'sise'")


async def test_params_are_checked_as_the_paramkind_a_crds_or_a_built_in_kind():
    for param_kind, good, bad in ((("example.com/v1", "Widget"), "params.spec.size", "params.spec.sise"),
                                  (("v1", "ConfigMap"), "params.data.x", "params.dta")):
        policy = _policy(f"object.spec.replicas > {good} && {bad} == 1")
        policy["spec"]["paramKind"] = {"apiVersion": param_kind[0], "kind": param_kind[1]}
        controller, client = _controller(policy, WIDGETS)
        await controller.reconcile(ObjectKey("", "p"))
        [(written, _)] = client.updates
        [warning] = written["status"]["typeChecking"]["expressionWarnings"]
        assert f"undefined field '{bad.split('.')[-1]}'" in warning["warning"]
        assert warning["warning"].count("undefined field") == 1


async def test_an_unknown_paramkind_is_dyn():
    policy = _policy("params.anything == 1 && object.nope")
    policy["spec"]["paramKind"] = {"apiVersion": "nowhere.io/v1", "kind": "Nothing"}
    controller, client = _controller(policy)
    await controller.reconcile(ObjectKey("", "p"))
    [(written, _)] = client.updates
    [warning] = written["status"]["typeChecking"]["expressionWarnings"]
    assert warning["warning"].count("undefined field") == 1 and "undefined field 'nope'" in warning["warning"]
