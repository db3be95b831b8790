"""Kubernetes' documented ValidatingAdmissionPolicy examples (kubernetes.io, "Validating Admission Policy"), each
in a test, on an in-process server with Kubernetes' names: what each is documented to answer, in kube's words.

The examples are the page's as published, but for the match-conditions example's `startWith` (a typo there: CEL
has `startsWith`) and the prod binding's `parameterNotFoundAction` (required in v1, which the page's example
predates). Warn and Audit are seen over HTTP: the Warning header and the audit log's event.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from runtime.server.rbac.user import UserInfo
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")

AR = "admissionregistration.k8s.io/v1"
DEPLOYMENT_RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["deployments"]}
REPLICA_LIMIT_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: replicalimits.rules.example.com
spec:
  group: rules.example.com
  scope: Namespaced
  names: {plural: replicalimits, singular: replicalimit, kind: ReplicaLimit}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          maxReplicas: {type: integer}
"""


def deployment(name: str, replicas: int, namespace: str = "default", image: str = "nginx",
               **labels: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": name, **labels}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def policy(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AR, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}


def binding(name: str, policy_name: str, actions: list[str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AR, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": policy_name, "validationActions": actions or ["Deny"], **spec}}


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


async def refused(create: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as caught:
        await create
    return caught.value


DEMO_POLICY = policy("demo-policy.example.com", failurePolicy="Fail",
                     matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
                     validations=[{"expression": "object.spec.replicas <= 5"}])
DEMO_BINDING = binding("demo-binding-test.example.com", "demo-policy.example.com",
                       matchResources={"namespaceSelector": {"matchLabels": {"environment": "test"}}})


async def test_the_basic_example_denies_six_replicas_in_a_test_namespace(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(namespace("testing", environment="test"))
        await env.client.create(DEMO_POLICY)
        await env.client.create(DEMO_BINDING)
        denied = await refused(env.client.create(deployment("nginx", 6, "testing")))
        assert (denied.code, denied.reason) == (422, "Invalid")
        assert denied.message == (
            "deployments.apps \"nginx\" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with "
            "binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5")
        await env.client.create(deployment("nginx", 5, "testing"))
        await env.client.create(deployment("nginx", 6))  # default is not a test namespace


async def test_a_replica_limit_param_per_environment_as_documented(autojump_clock: Any, tmp_path: Path) -> None:
    (tmp_path / "replicalimit.yaml").write_text(REPLICA_LIMIT_CRD)
    async with open_test_env(domain="k8s.io", crds=[tmp_path / "replicalimit.yaml"]) as env:
        await env.client.create(namespace("testing", environment="test"))
        await env.client.create(policy(
            "replicalimit-policy.example.com", failurePolicy="Fail",
            paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"},
            matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
            validations=[{"expression": "object.spec.replicas <= params.maxReplicas", "reason": "Invalid"}]))
        await env.client.create(binding(
            "replicalimit-binding-test.example.com", "replicalimit-policy.example.com",
            paramRef={"name": "replica-limit-test.example.com", "namespace": "default",
                      "parameterNotFoundAction": "Deny"},
            matchResources={"namespaceSelector": {"matchLabels": {"environment": "test"}}}))
        await env.client.create(binding(
            "replicalimit-binding-nontest", "replicalimit-policy.example.com",
            paramRef={"name": "replica-limit-prod.example.com", "namespace": "default",
                      "parameterNotFoundAction": "Allow"},  # v1 requires it; the page's binding predates that
            matchResources={"namespaceSelector": {"matchExpressions": [
                {"key": "environment", "operator": "NotIn", "values": ["test"]}]}}))
        missing = await refused(env.client.create(deployment("web", 1, "testing")))
        assert missing.message.endswith(
            "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding "
            "'replicalimit-binding-test.example.com' denied request: failed to configure binding: no params found "
            "for policy binding with `Deny` parameterNotFoundAction")
        await env.client.create(deployment("web", 500))  # no prod param yet: Allow evaluates nothing
        for name, limit in (("replica-limit-test.example.com", 3), ("replica-limit-prod.example.com", 100)):
            await env.client.create({"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
                                     "metadata": {"name": name, "namespace": "default"}, "maxReplicas": limit})
        await env.client.create(deployment("small", 3, "testing"))
        over = await refused(env.client.create(deployment("big", 4, "testing")))
        assert over.message.endswith("denied request: failed expression: object.spec.replicas <= params.maxReplicas")
        await env.client.create(deployment("big", 100))
        assert (await refused(env.client.create(deployment("huge", 101)))).code == 422


async def test_a_config_map_param_and_the_message_expression(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "replica-limit", "namespace": "default"},
                                 "data": {"maxReplicas": "3"}})
        await env.client.create(policy(
            "deploy-replica-policy.example.com", paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
            validations=[{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                          "messageExpression": "'object.spec.replicas must be no greater than ' + "
                                               "params.data.maxReplicas", "reason": "Invalid"}]))
        await env.client.create(binding("demo-binding-test.example.com", "deploy-replica-policy.example.com",
                                        paramRef={"name": "replica-limit", "parameterNotFoundAction": "Deny"}))
        denied = await refused(env.client.create(deployment("nginx", 5)))
        assert denied.message == (
            "deployments.apps \"nginx\" is forbidden: ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' "
            "with binding 'demo-binding-test.example.com' denied request: object.spec.replicas must be no greater "
            "than 3")


async def test_match_conditions_exclude_leases_node_requests_and_rbac(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(policy(
            "demo-policy.example.com", failurePolicy="Fail",
            matchConstraints={"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                                                 "operations": ["CREATE", "UPDATE"], "resources": ["*"]}]},
            matchConditions=[
                {"name": "exclude-leases", "expression": '!(request.resource.group == "coordination.k8s.io" && '
                                                         'request.resource.resource == "leases")'},
                {"name": "exclude-kubelet-requests", "expression": '!("system:nodes" in request.userInfo.groups)'},
                {"name": "rbac", "expression": 'request.resource.group != "rbac.authorization.k8s.io"'}],
            validations=[{"expression": "object.metadata.name.startsWith('demo')"}]))
        await env.client.create(binding("demo-binding", "demo-policy.example.com"))
        assert (await refused(env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": {"name": "other", "namespace": "default"}}))).code == 422
        await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "demo-config", "namespace": "default"}})
        await env.client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                 "metadata": {"name": "any-lease", "namespace": "default"}, "spec": {}})
        await env.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                 "metadata": {"name": "any-role"}, "rules": []})
        node = env.client_as(UserInfo("system:node:n1", groups=("system:nodes", "system:masters")))
        await node.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "from-kubelet", "namespace": "default"}})


async def test_variables_check_images_against_the_namespace_environment(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(namespace("sandbox", environment="dev"))
        await env.client.create(policy(
            "image-matches-namespace-environment.policy.example.com", failurePolicy="Fail",
            matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
            variables=[
                {"name": "environment", "expression": "'environment' in namespaceObject.metadata.labels ? "
                                                      "namespaceObject.metadata.labels['environment'] : 'prod'"},
                {"name": "exempt", "expression": "'exempt' in object.metadata.labels && "
                                                 "object.metadata.labels['exempt'] == 'true'"},
                {"name": "containers", "expression": "object.spec.template.spec.containers"},
                {"name": "containersToCheck",
                 "expression": "variables.containers.filter(c, c.image.contains('example.com'))"}],
            validations=[{"expression": "variables.exempt || variables.containersToCheck.all(c, "
                                        "c.image.startsWith(variables.environment + '.'))",
                          "messageExpression": "'only ' + variables.environment + ' images are allowed in "
                                               "namespace ' + namespaceObject.metadata.name"}]))
        await env.client.create(binding("demo-binding-test.example.com",
                                        "image-matches-namespace-environment.policy.example.com"))
        denied = await refused(env.client.create(deployment("invalid", 1, image="dev.example.com/nginx")))
        assert denied.message == (
            "deployments.apps \"invalid\" is forbidden: ValidatingAdmissionPolicy "
            "'image-matches-namespace-environment.policy.example.com' with binding 'demo-binding-test.example.com' "
            "denied request: only prod images are allowed in namespace default")
        await env.client.create(deployment("valid", 1, image="prod.example.com/nginx"))
        await env.client.create(deployment("exempted", 1, image="dev.example.com/nginx", exempt="true"))
        await env.client.create(deployment("dev", 1, "sandbox", image="dev.example.com/nginx"))


async def test_an_authorizer_check_refuses_a_user_without_the_permission(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(policy(
            "delete-guard.example.com", matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
            validations=[{"expression": "authorizer.group('apps').resource('deployments').namespace("
                                        "object.metadata.namespace).check('delete').allowed()",
                          "message": "only those who may delete deployments may create them",
                          "reason": "Forbidden"}]))
        await env.client.create(binding("delete-guard", "delete-guard.example.com"))
        await env.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                 "metadata": {"name": "creator", "namespace": "default"},
                                 "rules": [{"apiGroups": ["apps"], "resources": ["deployments"],
                                            "verbs": ["create"]}]})
        await env.client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                 "metadata": {"name": "creator", "namespace": "default"},
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                             "name": "creator"},
                                 "subjects": [{"kind": "User", "name": "carol"}]})
        await env.client.create(deployment("by-admin", 1))
        denied = await refused(env.client_as(UserInfo("carol")).create(deployment("by-carol", 1)))
        assert (denied.code, denied.reason) == (403, "Forbidden")
        assert denied.message.endswith("denied request: only those who may delete deployments may create them")


async def test_failure_policy_ignore_admits_when_an_expression_fails(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        for name, failure in (("ignore", "Ignore"), ("fail", "Fail")):
            await env.client.create(policy(
                f"{name}-policy.example.com", failurePolicy=failure,
                matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
                validations=[{"expression": "object.spec.missing > 0"}],
                matchConditions=[{"name": "named", "expression": f"object.metadata.name.startsWith('{name}')"}]))
            await env.client.create(binding(f"{name}-binding", f"{name}-policy.example.com"))
        await env.client.create(deployment("ignore-me", 1))
        denied = await refused(env.client.create(deployment("fail-me", 1)))
        assert denied.message.endswith("denied request: expression 'object.spec.missing > 0' resulted in error: "
                                       "no such key: missing")


AUDIT_POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"


async def audited(nursery: Any, tmp_path: Path) -> tuple[Any, Path]:
    (tmp_path / "audit-policy.yaml").write_text(AUDIT_POLICY)
    log = tmp_path / "audit.log"
    server = await start_in_process(nursery, tmp_path, api_domain="k8s.io",
                                    audit_policy_file=str(tmp_path / "audit-policy.yaml"), audit_log_path=str(log))
    return server, log


def events_for(log: Path, path_part: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in events if path_part in e.get("requestURI", "") and e.get("stage") == "ResponseComplete"]


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
POLICIES = f"/apis/{AR}/validatingadmissionpolicies"
BINDINGS = f"/apis/{AR}/validatingadmissionpolicybindings"


async def test_warn_and_audit_actions_answer_a_warning_and_an_audit_annotation(nursery: Any, tmp_path: Path) -> None:
    server, log = await audited(nursery, tmp_path)
    async with server.client() as c:
        assert (await c.post(POLICIES, json=DEMO_POLICY)).status_code == 201
        assert (await c.post(BINDINGS, json=binding("demo-binding-test.example.com", "demo-policy.example.com",
                                                     ["Warn", "Audit"]))).status_code == 201
        created = await c.post(DEPLOYMENTS, json=deployment("nginx", 6))
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
            "'demo-binding-test.example.com': failed expression: object.spec.replicas <= 5\""]
    [event] = events_for(log, DEPLOYMENTS)
    assert json.loads(event["annotations"]["validation.policy.admission.k8s.io/validation_failure"]) == [{
        "message": "failed expression: object.spec.replicas <= 5", "policy": "demo-policy.example.com",
        "binding": "demo-binding-test.example.com", "expressionIndex": 0, "validationActions": ["Warn", "Audit"]}]


async def test_an_audit_annotation_reaches_the_audit_event(nursery: Any, tmp_path: Path) -> None:
    server, log = await audited(nursery, tmp_path)
    async with server.client() as c:
        await c.post(POLICIES, json=policy(
            "demo-policy.example.com", failurePolicy="Fail", matchConstraints={"resourceRules": [DEPLOYMENT_RULE]},
            validations=[{"expression": "object.spec.replicas > 50",
                          "messageExpression": "'Deployment spec.replicas set to ' + string(object.spec.replicas)"}],
            auditAnnotations=[{"key": "high-replica-count",
                               "valueExpression": "'Deployment spec.replicas set to ' + "
                                                  "string(object.spec.replicas)"}]))
        await c.post(BINDINGS, json=binding("demo-binding", "demo-policy.example.com", ["Audit"]))
        assert (await c.post(DEPLOYMENTS, json=deployment("many", 128))).status_code == 201
    [event] = events_for(log, DEPLOYMENTS)
    assert event["annotations"]["demo-policy.example.com/high-replica-count"] == "Deployment spec.replicas set to 128"


async def test_checks_are_counted_on_the_servers_metrics(nursery: Any, tmp_path: Path) -> None:
    server = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with server.client() as c:
        await c.post(POLICIES, json=DEMO_POLICY)
        await c.post(BINDINGS, json=binding("demo-binding", "demo-policy.example.com"))
        assert (await c.post(DEPLOYMENTS, json=deployment("nginx", 6))).status_code == 422
        metrics = (await c.get("/metrics")).text
    assert ('apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="internal_error",'
            'policy="demo-policy.example.com",policy_binding="demo-binding"} 1.0') in metrics
