"""kube's namespace and object selectors for admission hooks (`predicates/namespace`, `predicates/object`),
one test per rule."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from runtime.server.admission.matching import RequestFacts, namespace_selector_matches, object_selector_matches
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo

TEAM = {"matchLabels": {"team": "a"}}


def _request(env: Any, plural: str, obj: dict[str, Any], *, operation: str = "create",
             old: dict[str, Any] | None = None) -> AdmissionRequest:
    rt = env.registry.scheme.by_resource("", "v1", plural)
    return AdmissionRequest(UserInfo("alice"), rt, operation, obj, old, False)


def _cm(namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": namespace, **({"labels": labels} if labels else {})}}


async def _namespace(env: Any, name: str, labels: dict[str, str]) -> None:
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})


async def test_a_namespace_selector_matches_the_labels_of_the_objects_namespace():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        await _namespace(env, "ours", {"team": "a"})
        await _namespace(env, "theirs", {"team": "b"})
        for namespace, expected in (("ours", True), ("theirs", False)):
            request = _request(env, "configmaps", _cm(namespace))
            assert await namespace_selector_matches(TEAM, RequestFacts.of(request), request, env.registry) is expected


async def test_a_cluster_scoped_object_always_matches_a_namespace_selector():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        request = _request(env, "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
        assert await namespace_selector_matches(TEAM, RequestFacts.of(request), request, env.registry)


async def test_a_namespace_written_is_matched_by_its_own_new_labels():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        await _namespace(env, "ns1", {"team": "b"})
        old = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "b"}}}
        new = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}}
        request = _request(env, "namespaces", new, operation="update", old=old)
        assert await namespace_selector_matches(TEAM, RequestFacts.of(request), request, env.registry)


async def test_a_namespace_deleted_is_matched_by_its_stored_labels():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        await _namespace(env, "ns1", {"team": "a"})
        stored = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}}
        request = _request(env, "namespaces", stored, operation="delete", old=stored)
        assert await namespace_selector_matches(TEAM, RequestFacts.of(request), request, env.registry)


async def test_a_missing_namespace_is_kubes_404():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        request = _request(env, "configmaps", _cm("nowhere"))
        with pytest.raises(errors.NotFound, match='namespaces "nowhere" not found'):
            await namespace_selector_matches(TEAM, RequestFacts.of(request), request, env.registry)


async def test_an_empty_namespace_selector_matches_without_reading_the_namespace():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        request = _request(env, "configmaps", _cm("nowhere"))
        assert await namespace_selector_matches({}, RequestFacts.of(request), request, env.registry)
        assert await namespace_selector_matches(None, RequestFacts.of(request), request, env.registry)


async def test_a_selector_that_does_not_parse_is_an_internal_error():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        request = _request(env, "configmaps", _cm("default"))
        bad = {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}
        with pytest.raises(errors.InternalError, match="Internal error occurred: "):
            await namespace_selector_matches(bad, RequestFacts.of(request), request, env.registry)
        with pytest.raises(errors.InternalError):
            object_selector_matches(bad, request)


async def test_an_object_selector_matches_the_new_or_the_old_objects_labels():
    async with open_test_env(controllers=False, domain="k8s.io") as env:
        assert object_selector_matches(TEAM, _request(env, "configmaps", _cm("d", {"team": "a"})))
        assert not object_selector_matches(TEAM, _request(env, "configmaps", _cm("d", {"team": "b"})))
        relabelled = _request(env, "configmaps", _cm("d", {"team": "b"}), operation="update",
                              old=_cm("d", {"team": "a"}))
        assert object_selector_matches(TEAM, relabelled)
        assert object_selector_matches({}, _request(env, "configmaps", _cm("d")))
