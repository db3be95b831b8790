"""The ValidatingAdmissionPolicy step (`runtime.server.admission.policies.validating`), as kube's validating
dispatcher: which policies and bindings apply, what each action does, kube's refusal and metrics; one test per
rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.policy_fakes import FakeContext, deployment, namespace, request, vap, vapb
from runtime.machinery import errors
from runtime.server.admission.policies import ValidatingPolicies
from runtime.server.admission.policies.validating import VALIDATION_FAILURE_ANNOTATION

LIMIT = [{"expression": "object.spec.replicas <= 5"}]


def context_with(*objects: dict[str, Any]) -> FakeContext:
    return FakeContext(namespace("default"), *objects)


async def refusal(context: FakeContext, obj: dict[str, Any], **kw: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as refused:
        await ValidatingPolicies(context).validate(request(obj, **kw))
    return refused.value


async def test_a_denial_is_kubes_forbidden_message_with_the_validations_reason_and_code():
    refused = await refusal(context_with(vap("demo", validations=LIMIT), vapb("demo-binding", "demo")),
                            deployment("nginx", 6))
    assert (refused.code, refused.reason) == (422, "Invalid")
    inner = ("ValidatingAdmissionPolicy 'demo' with binding 'demo-binding' denied request: failed expression: "
             "object.spec.replicas <= 5")
    assert refused.message == f'deployments.apps "nginx" is forbidden: {inner}'
    assert refused.status()["details"] == {"name": "nginx", "group": "apps", "kind": "deployments",
                                           "causes": [{"message": inner}]}


async def test_the_reason_forbidden_answers_403():
    refused = await refusal(context_with(vap(validations=[{"expression": "false", "reason": "Forbidden"}]), vapb()),
                            deployment())
    assert (refused.code, refused.reason) == (403, "Forbidden")


async def test_an_admitted_request_passes():
    await ValidatingPolicies(context_with(vap(validations=LIMIT), vapb())).validate(request(deployment("ok", 3)))


async def test_a_policy_without_a_binding_does_nothing():
    await ValidatingPolicies(context_with(vap(validations=LIMIT))).validate(request(deployment("x", 9)))


async def test_a_binding_of_a_missing_policy_is_skipped():
    await ValidatingPolicies(context_with(vapb(policy="gone"))).validate(request(deployment("x", 9)))


async def test_a_request_outside_the_match_constraints_is_not_evaluated():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}
    await ValidatingPolicies(context_with(vap(validations=[{"expression": "false"}]), vapb())).validate(request(cm))


async def test_exclude_resource_rules_exempt_a_request():
    policy = vap(validations=[{"expression": "false"}])
    policy["spec"]["matchConstraints"]["excludeResourceRules"] = [dict(
        policy["spec"]["matchConstraints"]["resourceRules"][0], resourceNames=["exempt"])]
    context = context_with(policy, vapb())
    await ValidatingPolicies(context).validate(request(deployment("exempt")))
    await refusal(context, deployment("other"))


async def test_a_bindings_namespace_selector_picks_the_namespaces_it_applies_to():
    binding = vapb(matchResources={"namespaceSelector": {"matchLabels": {"environment": "test"}}})
    context = FakeContext(namespace("default"), namespace("staging", environment="test"), vap(validations=LIMIT),
                          binding)
    await ValidatingPolicies(context).validate(request(deployment("big", 9)))
    await refusal(context, deployment("big", 9, namespace="staging"))


async def test_an_object_selector_matches_the_objects_labels():
    binding = vapb(matchResources={"objectSelector": {"matchLabels": {"checked": "yes"}}})
    context = context_with(vap(validations=LIMIT), binding)
    await ValidatingPolicies(context).validate(request(deployment("big", 9)))
    await refusal(context, deployment("big", 9, checked="yes"))


async def test_warn_answers_kubes_warning_and_admits():
    req = request(deployment("big", 9))
    await ValidatingPolicies(context_with(vap(validations=LIMIT), vapb(validationActions=["Warn"]))).validate(req)
    assert req.warnings == ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': failed "
                            "expression: object.spec.replicas <= 5"]


async def test_audit_records_the_validation_failure_annotation():
    req = request(deployment("big", 9))
    binding = vapb(validationActions=["Warn", "Audit"])
    await ValidatingPolicies(context_with(vap(validations=[{"expression": "true"}] + LIMIT), binding)).validate(req)
    assert json.loads(req.audit_annotations[VALIDATION_FAILURE_ANNOTATION]) == [{
        "message": "failed expression: object.spec.replicas <= 5", "policy": "p", "binding": "b",
        "expressionIndex": 1, "validationActions": ["Warn", "Audit"]}]
    assert req.audit_annotations[VALIDATION_FAILURE_ANNOTATION].startswith('[{"message":')


async def test_audit_annotations_are_published_under_the_policy_name():
    spec = {"validations": [{"expression": "true"}],
            "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}]}
    req = request(deployment("big", 9))
    await ValidatingPolicies(context_with(vap("demo", **spec), vapb(policy="demo"))).validate(req)
    assert req.audit_annotations == {"demo/replicas": "9"}


async def test_distinct_audit_values_of_several_bindings_are_joined():
    spec = {"validations": [{"expression": "true"}],
            "auditAnnotations": [{"key": "who", "valueExpression": "params.data.who"}],
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}
    cms = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "default"},
            "data": {"who": n}} for n in ("x", "y")]
    context = context_with(vap(**spec), *cms, vapb("b1", paramRef={"name": "x"}), vapb("b2", paramRef={"name": "y"}),
                           vapb("b3", paramRef={"name": "x"}))
    req = request(deployment())
    await ValidatingPolicies(context).validate(req)
    assert req.audit_annotations == {"p/who": "x, y"}


async def test_each_param_a_selector_selects_is_evaluated():
    spec = {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                             "messageExpression": "'at most ' + params.data.max"}]}
    cms = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "default",
                                                                  "labels": {"limit": "yes"}}, "data": {"max": m}}
           for n, m in (("loose", "10"), ("tight", "2"))]
    context = context_with(vap(**spec), *cms, vapb(paramRef={"selector": {"matchLabels": {"limit": "yes"}}}))
    refused = await refusal(context, deployment("web", 3))
    assert refused.message.endswith("denied request: at most 2")


async def test_a_missing_param_kind_is_a_policy_configuration_error():
    spec = {"paramKind": {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"}, "validations": LIMIT}
    refused = await refusal(context_with(vap(**spec), vapb(paramRef={"name": "x"})), deployment())
    assert refused.message.endswith("ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: "
                                    "failed to find resource referenced by paramKind: 'rules.example.com/v1, "
                                    "Kind=ReplicaLimit'")


async def test_a_missing_param_under_deny_is_a_binding_configuration_error():
    spec = {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "validations": LIMIT}
    binding = vapb(paramRef={"name": "absent", "parameterNotFoundAction": "Deny"})
    refused = await refusal(context_with(vap(**spec), binding), deployment())
    assert refused.message.endswith("ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to "
                                    "configure binding: no params found for policy binding with `Deny` "
                                    "parameterNotFoundAction")


async def test_configuration_errors_are_dropped_under_ignore():
    spec = {"failurePolicy": "Ignore", "paramKind": {"apiVersion": "v1", "kind": "Nope"}, "validations": LIMIT}
    await ValidatingPolicies(context_with(vap(**spec), vapb(paramRef={"name": "x"}))).validate(request(deployment()))


async def test_the_first_denial_is_the_answer():
    context = context_with(vap("a", validations=[{"expression": "false", "message": "first"}]), vapb("ba", "a"),
                           vap("b", validations=[{"expression": "false", "message": "second"}]), vapb("bb", "b"))
    assert (await refusal(context, deployment())).message.endswith("denied request: first")


async def test_namespace_object_and_variables_are_seen():
    spec = {"variables": [{"name": "environment", "expression": "'environment' in namespaceObject.metadata.labels ? "
                                                                 "namespaceObject.metadata.labels['environment'] : "
                                                                 "'prod'"}],
            "validations": [{"expression": "variables.environment == 'dev'",
                             "messageExpression": "'only ' + variables.environment + ' in ' + "
                                                  "namespaceObject.metadata.name"}]}
    context = FakeContext(namespace("default"), namespace("sandbox", environment="dev"), vap(**spec), vapb())
    await ValidatingPolicies(context).validate(request(deployment(namespace="sandbox")))
    assert (await refusal(context, deployment())).message.endswith("denied request: only prod in default")


async def test_the_authorizer_answers_for_the_requests_user():
    spec = {"validations": [{"expression": "authorizer.group('apps').resource('deployments').check('scale')"
                                           ".allowed()", "message": "may not scale"}]}
    context = context_with(vap(**spec), vapb())
    context.allow = lambda attrs: attrs.user.name == "root"
    assert (await refusal(context, deployment())).message.endswith("denied request: may not scale")


async def test_checks_are_counted_as_kubes_metric():
    context = context_with(vap(validations=LIMIT), vapb(validationActions=["Warn", "Audit"]))
    await ValidatingPolicies(context).validate(request(deployment("big", 9)))
    labels = {"policy": "p", "policy_binding": "b", "error_type": "internal_error"}
    sample = context.admission_metrics.sample
    assert [sample("apiserver_validating_admission_policy_check_total", {**labels, "enforcement_action": a})
            for a in ("warn", "audit", "deny")] == [1.0, 1.0, 0.0]


async def test_a_policy_is_compiled_once_per_resource_version():
    context = context_with(vap(validations=LIMIT), vapb())
    step = ValidatingPolicies(context)
    first = step.source.hooks()[0].compiled
    assert step.source.hooks()[0].compiled is first
    context.add(vap(validations=[{"expression": "true"}]))
    assert step.source.hooks()[0].compiled is not first


async def test_the_admission_kinds_are_never_validated():
    policy = vap(validations=[{"expression": "false"}])
    policy["spec"]["matchConstraints"]["resourceRules"] = [{"apiGroups": ["*"], "apiVersions": ["*"],
                                                            "operations": ["*"], "resources": ["*"]}]
    await ValidatingPolicies(context_with(policy, vapb())).validate(request(vap("other")))


async def test_a_match_condition_may_ask_the_authorizer_about_the_requester():
    exempt = [{"name": "not-a-deployer",
               "expression": "!authorizer.group('apps').resource('deployments').check('delete').allowed()"}]
    policy = vap("demo", validations=LIMIT, matchConditions=exempt)
    deployer = FakeContext(namespace("default"), policy, vapb("b", "demo"), allow=lambda a: a.verb == "delete")
    await ValidatingPolicies(deployer).validate(request(deployment("big", 9)))  # exempt: the policy is skipped
    assert deployer.asked[-1].verb == "delete"
    assert (await refusal(context_with(policy, vapb("b", "demo")), deployment("big", 9))).code == 422
