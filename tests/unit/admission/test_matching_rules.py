"""kube's admission rule matching (`runtime.server.admission.matching`): request facts, RuleWithOperations
(`predicates/rules`), the exempt admissionregistration kinds and matchPolicy Equivalent, one test per rule."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from runtime.machinery import errors
from runtime.machinery.scheme import Scheme
from runtime.server.admission.matching import Match, RequestFacts, equivalent, rule_matches
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
CONTEXT = SimpleNamespace(scheme=SCHEME)


def _request(group: str, version: str, plural: str, obj: dict[str, Any], *, operation: str = "create",
             subresource: str = "", old: dict[str, Any] | None = None) -> AdmissionRequest:
    rt = SCHEME.by_resource(group, version, plural)
    assert rt is not None
    return AdmissionRequest(UserInfo("alice"), rt, operation, obj, old, False, subresource=subresource)


def _pod(name: str = "p", namespace: str = "ns") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}}


def _rule(**kw: Any) -> dict[str, Any]:
    return {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], **kw}


def test_facts_name_the_resource_kind_and_operation_in_kubes_words():
    facts = RequestFacts.of(_request("", "v1", "pods", _pod(), operation="update", old=_pod()))
    assert (facts.gvr, facts.kind, facts.operation, facts.namespace, facts.name) == (
        ("", "v1", "pods"), ("", "v1", "Pod"), "UPDATE", "ns", "p")


def test_facts_of_a_scale_write_carry_the_scale_kind():
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}}
    facts = RequestFacts.of(_request("apps", "v1", "deployments", deploy, operation="update", old=deploy,
                                     subresource="scale"))
    assert (facts.subresource, facts.kind) == ("scale", ("autoscaling", "v1", "Scale"))


def test_a_namespace_update_names_itself_as_its_namespace():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    created = RequestFacts.of(_request("", "v1", "namespaces", ns))
    updated = RequestFacts.of(_request("", "v1", "namespaces", ns, operation="update", old=ns))
    assert (created.namespace, updated.namespace, updated.is_namespace) == ("", "team", True)


def test_the_admissionregistration_kinds_are_exempt():
    vwc = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
           "metadata": {"name": "v"}}
    assert RequestFacts.of(_request("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", vwc)).exempt
    assert not RequestFacts.of(_request("", "v1", "pods", _pod())).exempt


@pytest.mark.parametrize("operations,matches", [(["*"], True), (["CREATE"], True), (["UPDATE", "DELETE"], False)])
def test_operations_match_exactly_or_by_wildcard(operations, matches):
    facts = RequestFacts.of(_request("", "v1", "pods", _pod()))
    assert rule_matches(_rule(operations=operations), facts) is matches


@pytest.mark.parametrize("groups,versions,matches", [
    (["apps"], ["*"], True), ([""], ["*"], False), (["*"], ["v1"], True), (["apps"], ["v1beta1"], False)])
def test_api_groups_and_versions_match_exactly_or_by_wildcard(groups, versions, matches):
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}}
    facts = RequestFacts.of(_request("apps", "v1", "deployments", deploy))
    assert rule_matches(_rule(apiGroups=groups, apiVersions=versions), facts) is matches


@pytest.mark.parametrize("resources,subresource,matches", [
    (["pods"], "", True), (["pods"], "status", False), (["pods/status"], "status", True),
    (["*"], "status", False), (["*/*"], "status", True), (["*/*"], "", True), (["*/status"], "status", True),
    (["*/status"], "", False), (["pods/*"], "", True), (["configmaps"], "", False)])
def test_resources_match_resource_and_subresource(resources, subresource, matches):
    facts = RequestFacts.of(_request("", "v1", "pods", _pod(), operation="update", old=_pod(),
                                     subresource=subresource))
    assert rule_matches(_rule(resources=resources), facts) is matches


@pytest.mark.parametrize("scope,plural,obj,matches", [
    ("Namespaced", "pods", _pod(), True),
    ("Cluster", "pods", _pod(), False),
    ("Cluster", "namespaces", {"kind": "Namespace", "metadata": {"name": "team"}}, True),
    ("Namespaced", "namespaces", {"kind": "Namespace", "metadata": {"name": "team"}}, False),
    ("*", "nodes", {"kind": "Node", "metadata": {"name": "n"}}, True),
    ("Namespaced", "nodes", {"kind": "Node", "metadata": {"name": "n"}}, False)])
def test_scope_tells_namespaced_from_cluster_requests_a_namespace_being_cluster_scoped(scope, plural, obj, matches):
    facts = RequestFacts.of(_request("", "v1", plural, obj, operation="update", old=obj))
    assert rule_matches(_rule(scope=scope), facts) is matches


def test_resource_names_restrict_a_named_rule():
    facts = RequestFacts.of(_request("", "v1", "pods", _pod("a")))
    assert rule_matches(_rule(resourceNames=["a", "b"]), facts)
    assert not rule_matches(_rule(resourceNames=["b"]), facts)
    assert rule_matches(_rule(resourceNames=["b"]), facts, names=False)


def _hpa_v1_request() -> AdmissionRequest:
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "h", "namespace": "ns"},
           "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"},
                    "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}}
    return _request("autoscaling", "v1", "horizontalpodautoscalers", hpa)


def test_an_exact_match_comes_first():
    facts = RequestFacts.of(_hpa_v1_request())
    match = equivalent(facts, [_rule(apiVersions=["v2"]), _rule(apiVersions=["v1"])], CONTEXT, "Equivalent")
    assert match is not None and match.resource == ("autoscaling", "v1", "horizontalpodautoscalers")
    assert not match.equivalent


def test_match_policy_exact_does_not_match_another_version():
    facts = RequestFacts.of(_hpa_v1_request())
    assert equivalent(facts, [_rule(apiVersions=["v2"])], CONTEXT, "Exact") is None


def test_match_policy_equivalent_matches_another_version_of_the_same_storage():
    request = _hpa_v1_request()
    facts = RequestFacts.of(request)
    match = equivalent(facts, [_rule(apiVersions=["v2"])], CONTEXT, "Equivalent")
    assert isinstance(match, Match) and match.equivalent
    assert (match.resource, match.kind) == (("autoscaling", "v2", "horizontalpodautoscalers"),
                                            ("autoscaling", "v2", "HorizontalPodAutoscaler"))


def test_an_equivalent_version_without_the_subresource_is_an_internal_error():
    facts = RequestFacts.of(_hpa_v1_request())
    moved = facts.__class__(**{**facts.__dict__, "subresource": "nonesuch"})
    with pytest.raises(errors.InternalError, match="unable to convert to autoscaling/v2, "
                                                   "Resource=horizontalpodautoscalers: unknown kind"):
        equivalent(moved, [_rule(apiVersions=["v2"], resources=["*/*"])], CONTEXT, "Equivalent")


def test_the_equivalent_version_shows_the_stored_object_in_its_own_version():
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "h", "namespace": "ns"},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"},
                   "maxReplicas": 3, "metrics": []}}
    request = _request("autoscaling", "v1", "horizontalpodautoscalers", v2, operation="update", old=v2)
    match = equivalent(RequestFacts.of(request), [_rule(apiVersions=["v1"])], CONTEXT, "Equivalent")
    assert match is not None and match.present(v2)["apiVersion"] == "autoscaling/v1"
