"""Who may point a policy at params (kube's `authz.go` of the policy kinds and bindings): a writer needs read
access to the paramKind, and to what a binding's paramRef names; the refusal is kube's 422 with a Forbidden cause
at `spec.paramKind` / `spec.paramRef`, in kube's words."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from runtime.server.rbac.user import UserInfo

pytestmark = pytest.mark.stores("memory")

AR = "admissionregistration.k8s.io/v1"
RBAC = "rbac.authorization.k8s.io/v1"
ALICE = UserInfo("alice", groups=("system:authenticated",))
RULES = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                            "resources": ["secrets"]}]}
CONFIGMAP_PARAMS = {"apiVersion": "v1", "kind": "ConfigMap"}


def policy(name: str, kind: str = "ValidatingAdmissionPolicy", param_kind: dict[str, str] | None = None,
           **spec: Any) -> dict[str, Any]:
    body = {"matchConstraints": RULES, **spec}
    if kind == "ValidatingAdmissionPolicy":
        body["validations"] = [{"expression": "true"}]
    else:
        body.update(reinvocationPolicy="Never", mutations=[{"patchType": "JSONPatch", "jsonPatch": {
            "expression": "[]"}}])
    if param_kind:
        body["paramKind"] = param_kind
    return {"apiVersion": AR, "kind": kind, "metadata": {"name": name}, "spec": body}


def binding(name: str, policy_name: str, param_ref: dict[str, Any] | None,
            kind: str = "ValidatingAdmissionPolicyBinding") -> dict[str, Any]:
    spec: dict[str, Any] = {"policyName": policy_name}
    if kind == "ValidatingAdmissionPolicyBinding":
        spec["validationActions"] = ["Deny"]
    if param_ref is not None:
        spec["paramRef"] = param_ref
    return {"apiVersion": AR, "kind": kind, "metadata": {"name": name}, "spec": spec}


async def grant(env: Any, name: str, verbs: list[str], resources: list[str] = ["configmaps"],
                names: list[str] | None = None) -> None:
    """Let alice write admission policies and `verbs` the `resources`."""
    rule: dict[str, Any] = {"apiGroups": [""], "resources": resources, "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    await env.client.create({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": [
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["*"], "verbs": ["*"]}, rule]})
    await env.client.create({"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": name},
                             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                         "name": name},
                             "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]})


async def refused(write: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as caught:
        await write
    return caught.value


def cause(error: errors.StatusError) -> tuple[str, str, str]:
    (only,) = error.status()["details"]["causes"]
    return only["reason"], only["field"], only["message"]


@pytest.mark.parametrize("kind", ["ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"])
async def test_a_policy_with_a_param_kind_needs_get_on_every_object_of_it(kind: str) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await grant(env, "writer", ["list"])
        alice = env.client_as(ALICE)
        denied = await refused(alice.create(policy("p", kind, CONFIGMAP_PARAMS)))
        assert denied.code == 422
        assert cause(denied) == (
            "FieldValueForbidden", "spec.paramKind",
            'Forbidden: user &{alice  [system:authenticated] map[]} must have "get" permission on all objects of the '
            "referenced paramKind (kind=ConfigMap, apiVersion=v1)")
        await alice.create(policy("no-params", kind))  # nothing to authorize
        await grant(env, "reader", ["get"])
        await alice.create(policy("p", kind, CONFIGMAP_PARAMS))


async def test_a_param_kind_that_does_not_resolve_needs_get_on_every_resource_of_its_group() -> None:
    async with open_test_env(domain="k8s.io") as env:
        await grant(env, "reader", ["get"])
        alice = env.client_as(ALICE)
        unknown = {"apiVersion": "v1", "kind": "NoSuchKind"}
        denied = await refused(alice.create(policy("p", param_kind=unknown)))
        assert "kind=NoSuchKind, apiVersion=v1" in cause(denied)[2]
        await grant(env, "everything", ["get"], resources=["*"])
        await alice.create(policy("p", param_kind=unknown))


async def test_an_update_that_keeps_the_param_kind_is_not_authorized_again() -> None:
    async with open_test_env(domain="k8s.io") as env:
        stored = await env.client.create(policy("p", param_kind=CONFIGMAP_PARAMS))
        await grant(env, "writer", ["watch"])
        alice = env.client_as(ALICE)
        # Unconditional updates: the status controller writes the policy's status meanwhile.
        del stored["metadata"]["resourceVersion"]
        stored["spec"]["validations"] = [{"expression": "1 == 1"}]
        stored = await alice.update(stored)
        del stored["metadata"]["resourceVersion"]
        stored["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "Secret"}
        assert cause(await refused(alice.update(stored)))[1] == "spec.paramKind"


async def test_a_malformed_policy_gets_its_validation_errors_not_the_authorization() -> None:
    async with open_test_env(domain="k8s.io") as env:
        await grant(env, "writer", ["watch"])
        malformed = policy("p", param_kind=CONFIGMAP_PARAMS, failurePolicy="Sometimes")
        denied = await refused(env.client_as(ALICE).create(malformed))
        assert cause(denied)[1] == "spec.failurePolicy"


@pytest.mark.parametrize("kind", ["ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBinding"])
async def test_a_binding_with_a_param_ref_needs_get_on_the_named_param_or_list_for_a_selector(kind: str) -> None:
    policy_kind = kind.removesuffix("Binding")
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(policy("p", policy_kind, CONFIGMAP_PARAMS))
        await grant(env, "writer", ["get"], names=["other"])
        alice = env.client_as(ALICE)
        named = {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}
        denied = await refused(alice.create(binding("b", "p", named, kind)))
        assert denied.code == 422
        assert cause(denied) == (
            "FieldValueForbidden", "spec.paramRef",
            'Forbidden: user get does not have "&{alice  [system:authenticated] map[]}" permission on the object referenced '
            "by paramRef")
        selected = {"namespace": "default", "selector": {}, "parameterNotFoundAction": "Deny"}
        await grant(env, "named", ["get"], names=["limits"])
        await alice.create(binding("b", "p", named, kind))
        assert cause(await refused(alice.create(binding("b2", "p", selected, kind))))[2].startswith(
            "Forbidden: user list does not have")
        await grant(env, "lister", ["list"])
        await alice.create(binding("b2", "p", selected, kind))


async def test_system_masters_skip_the_param_checks() -> None:
    async with open_test_env(domain="k8s.io") as env:
        root = env.client_as(UserInfo("root", groups=("system:masters",)))
        await root.create(policy("p", param_kind=CONFIGMAP_PARAMS))
        await root.create(binding("b", "p", {"name": "x", "namespace": "default",
                                             "parameterNotFoundAction": "Deny"}))
