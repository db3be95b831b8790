"""Discovery documents: the shapes kubectl reads from /version, /api, /apis and group-versions."""

from __future__ import annotations

import re

import pytest

from api.discovery import (
    aggregated_discovery, api_group, api_group_list, api_resource_list, api_versions,
    storage_version_hash, version_info,
)
from runtime.machinery.scheme import Scheme


@pytest.fixture
def scheme() -> Scheme:
    return Scheme("svc.io")


def _resource(doc: dict, name: str) -> dict:
    return next(r for r in doc["resources"] if r["name"] == name)


def test_version_reports_kubernetes_1_32_for_kubectls_launcher() -> None:
    info = version_info("0.1.0+dirty", git_commit="abc")
    assert (info["major"], info["minor"]) == ("1", "32")
    assert re.fullmatch(r"v1\.32\.0-miniplane\.[0-9A-Za-z.-]+", info["gitVersion"])
    assert {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} <= info.keys()


def test_api_versions_serves_core_v1_only() -> None:
    doc = api_versions("127.0.0.1:6443")
    assert doc["kind"] == "APIVersions" and doc["versions"] == ["v1"]
    assert doc["serverAddressByClientCIDRs"] == [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]


def test_group_list_excludes_core_group(scheme: Scheme) -> None:
    doc = api_group_list(scheme)
    names = [g["name"] for g in doc["groups"]]
    assert doc["kind"] == "APIGroupList" and "" not in names
    assert set(names) == {"rbac.authorization.svc.io", "authorization.svc.io", "authentication.svc.io",
                          "coordination.svc.io", "events.svc.io", "apiextensions.svc.io", "insight.svc.io",
                          # Kubernetes' legacy groups have no domain; the newer ones take it
                          "apps", "autoscaling", "batch", "policy", "networking.svc.io", "discovery.svc.io",
                          "scheduling.svc.io", "storage.svc.io", "admissionregistration.svc.io"}


def test_group_prefers_its_only_version(scheme: Scheme) -> None:
    doc = api_group(scheme, "rbac.authorization.svc.io")
    assert doc is not None and doc["kind"] == "APIGroup"
    v1 = {"groupVersion": "rbac.authorization.svc.io/v1", "version": "v1"}
    assert doc["versions"] == [v1] and doc["preferredVersion"] == v1


def test_unserved_group_is_none(scheme: Scheme) -> None:
    assert api_group(scheme, "rbac.authorization.k8s.io") is None
    assert api_group(scheme, "") is None
    assert api_resource_list(scheme, "apps/v2") is None
    assert api_resource_list(scheme, "extensions/v1beta1") is None


def test_autoscaling_prefers_v2_and_serves_v1(scheme: Scheme) -> None:
    doc = api_group(scheme, "autoscaling")
    assert doc is not None
    assert [v["version"] for v in doc["versions"]] == ["v2", "v1"]
    assert doc["preferredVersion"] == {"groupVersion": "autoscaling/v2", "version": "v2"}


def test_group_names_follow_the_domain() -> None:
    names = [g["name"] for g in api_group_list(Scheme("k8s.io"))["groups"]]
    assert "rbac.authorization.k8s.io" in names and "authorization.k8s.io" in names


def test_storage_version_hash_matches_kubernetes() -> None:
    # The value a Kubernetes 1.32 API server reports for namespaces.
    assert storage_version_hash("", "v1", "Namespace") == "Q3oi5N2YM8M="


def test_configmaps_and_secrets_are_discovered_as_kube_apiserver_lists_them(scheme: Scheme) -> None:
    doc = api_resource_list(scheme, "v1")
    assert doc is not None
    cm, secret = _resource(doc, "configmaps"), _resource(doc, "secrets")
    assert (cm["kind"], cm["singularName"], cm["namespaced"], cm["shortNames"]) == ("ConfigMap", "configmap", True,
                                                                                    ["cm"])
    assert (secret["kind"], secret["singularName"], secret["namespaced"]) == ("Secret", "secret", True)
    assert "shortNames" not in secret
    assert cm["verbs"] == secret["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch",
                                              "update", "watch"]
    assert (cm["storageVersionHash"], secret["storageVersionHash"]) == ("qFsyl6wFWjQ=", "S6u1pOWzb84=")


def test_core_resource_list_has_namespace_and_its_subresources(scheme: Scheme) -> None:
    doc = api_resource_list(scheme, "v1")
    assert doc is not None and doc["kind"] == "APIResourceList" and doc["groupVersion"] == "v1"
    # kube-apiserver's list, less what needs a kubelet or a controller miniplane does not run (pods/log, exec,
    # attach, portforward, proxy; replicationcontrollers, podtemplates, componentstatuses, bindings)
    assert [r["name"] for r in doc["resources"]] == [
        "configmaps", "endpoints", "events", "limitranges", "namespaces", "namespaces/finalize", "namespaces/status",
        "nodes", "nodes/status", "persistentvolumeclaims", "persistentvolumeclaims/status", "persistentvolumes",
        "persistentvolumes/status", "pods", "pods/binding", "pods/ephemeralcontainers", "pods/eviction",
        "pods/status", "resourcequotas", "resourcequotas/status", "secrets", "serviceaccounts",
        "serviceaccounts/token", "services", "services/status"]
    ns = _resource(doc, "namespaces")
    assert ns["singularName"] == "namespace" and ns["namespaced"] is False and ns["kind"] == "Namespace"
    assert ns["shortNames"] == ["ns"] and ns["storageVersionHash"] == "Q3oi5N2YM8M="
    assert _resource(doc, "namespaces/status")["verbs"] == ["get", "patch", "update"]
    assert _resource(doc, "namespaces/finalize")["verbs"] == ["update"]
    assert _resource(doc, "namespaces/status")["singularName"] == ""


def test_rbac_resource_list_is_sorted_and_complete(scheme: Scheme) -> None:
    doc = api_resource_list(scheme, "rbac.authorization.svc.io/v1")
    assert doc is not None
    assert [r["name"] for r in doc["resources"]] == ["clusterrolebindings", "clusterroles", "rolebindings", "roles"]
    roles = _resource(doc, "roles")
    assert roles["namespaced"] is True and roles["kind"] == "Role"
    assert roles["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    assert roles["storageVersionHash"] == storage_version_hash("rbac.authorization.svc.io", "v1", "Role")


def test_empty_short_names_and_categories_are_omitted(scheme: Scheme) -> None:
    roles = _resource(api_resource_list(scheme, "rbac.authorization.svc.io/v1") or {}, "roles")
    assert "shortNames" not in roles and "categories" not in roles


def test_reviews_are_create_only_and_unstored(scheme: Scheme) -> None:
    doc = api_resource_list(scheme, "authorization.svc.io/v1")
    assert doc is not None
    assert {r["name"] for r in doc["resources"]} >= {"subjectaccessreviews", "localsubjectaccessreviews"}
    for r in doc["resources"]:
        assert r["verbs"] == ["create"] and "storageVersionHash" not in r
    assert _resource(doc, "localsubjectaccessreviews")["namespaced"] is True


def test_aggregated_core_document_holds_only_the_core_group(scheme: Scheme) -> None:
    doc = aggregated_discovery(scheme, core=True)
    assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert [item["metadata"]["name"] for item in doc["items"]] == [""]


def test_aggregated_apis_document_matches_the_v2_types(scheme: Scheme) -> None:
    doc = aggregated_discovery(scheme, core=False)
    assert "" not in [item["metadata"]["name"] for item in doc["items"]]
    rbac = next(i for i in doc["items"] if i["metadata"]["name"] == "rbac.authorization.svc.io")
    (version,) = rbac["versions"]
    assert version["version"] == "v1" and version["freshness"] == "Current"
    roles = next(r for r in version["resources"] if r["resource"] == "roles")
    assert roles == {
        "resource": "roles",
        "responseKind": {"group": "rbac.authorization.svc.io", "version": "v1", "kind": "Role"},
        "scope": "Namespaced",
        "singularResource": "role",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    }


def test_aggregated_subresources_carry_kind_and_verbs(scheme: Scheme) -> None:
    (core,) = aggregated_discovery(scheme, core=True)["items"]
    ns = next(r for r in core["versions"][0]["resources"] if r["resource"] == "namespaces")
    assert ns["scope"] == "Cluster" and ns["shortNames"] == ["ns"]
    kind = {"group": "", "version": "v1", "kind": "Namespace"}
    assert ns["subresources"] == [
        {"subresource": "finalize", "responseKind": kind, "verbs": ["update"]},
        {"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]},
    ]


def test_aggregated_v2beta1_differs_only_in_api_version(scheme: Scheme) -> None:
    v2 = aggregated_discovery(scheme, core=False)
    beta = aggregated_discovery(scheme, core=False, version="v2beta1")
    assert beta["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert {**beta, "apiVersion": v2["apiVersion"]} == v2


def test_aggregated_unknown_version_is_refused(scheme: Scheme) -> None:
    with pytest.raises(ValueError):
        aggregated_discovery(scheme, core=True, version="v1")


def test_serviceaccounts_and_their_token_subresource_are_listed_as_kubernetes_lists_them() -> None:
    doc = api_resource_list(Scheme("k8s.io"), "v1")
    sa = _resource(doc, "serviceaccounts")
    assert sa["shortNames"] == ["sa"] and sa["namespaced"] is True and sa["storageVersionHash"] == "pbx9ZvyFpBE="
    token = _resource(doc, "serviceaccounts/token")
    assert token == {"name": "serviceaccounts/token", "singularName": "", "namespaced": True, "verbs": ["create"],
                     "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}
    core = aggregated_discovery(Scheme("k8s.io"), core=True)["items"][0]["versions"][0]["resources"]
    entry = next(r for r in core if r["resource"] == "serviceaccounts")
    assert entry["subresources"] == [{"subresource": "token", "verbs": ["create"], "responseKind": {
        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}}]


def test_a_subresource_of_another_kind_names_its_group_and_version_only_when_they_differ() -> None:
    # kube-apiserver's APIResource: pods/binding (a core v1 Binding) names none; pods/eviction policy/v1; a scale
    # autoscaling/v1.
    scheme = Scheme("k8s.io")
    core = {r["name"]: r for r in api_resource_list(scheme, "v1")["resources"]}
    assert core["pods/binding"] == {"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                                    "verbs": ["create"]}
    assert (core["pods/eviction"]["group"], core["pods/eviction"]["version"], core["pods/eviction"]["kind"]) == (
        "policy", "v1", "Eviction")
    assert "group" not in core["pods/status"] and core["pods/status"]["kind"] == "Pod"
    apps = {r["name"]: r for r in api_resource_list(scheme, "apps/v1")["resources"]}
    assert (apps["deployments/scale"]["group"], apps["deployments/scale"]["kind"]) == ("autoscaling", "Scale")
