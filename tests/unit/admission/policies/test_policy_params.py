"""A policy's params (`runtime.server.admission.policies.params`): kube's `CollectParams` and the paramKind
lookup, in kube's words; one test per rule."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.policy_fakes import SCHEME, FakeContext
from runtime.server.admission.policies.params import ParamError, ParamKindError, collect_params, param_type

CONFIG_MAPS = SCHEME.by_api_version_kind("v1", "ConfigMap")
CLUSTER_ROLES = SCHEME.by_api_version_kind("rbac.authorization.k8s.io/v1", "ClusterRole")


def config_map(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                  "labels": dict(labels)}, "data": {"max": "3"}}


def names(params: list[Any]) -> list[str]:
    return [p["metadata"]["name"] for p in params]


def test_a_param_kind_names_a_served_kind():
    assert param_type(SCHEME, {"apiVersion": "v1", "kind": "ConfigMap"}) is CONFIG_MAPS


def test_an_unknown_param_kind_is_kubes_configuration_error():
    with pytest.raises(ParamKindError) as failed:
        param_type(SCHEME, {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"})
    assert str(failed.value) == "failed to find resource referenced by paramKind: 'rules.example.com/v1, Kind=ReplicaLimit'"


async def test_without_a_param_ref_the_policy_runs_once_without_params():
    assert await collect_params(FakeContext(), CONFIG_MAPS, None, "default") == [None]
    assert await collect_params(FakeContext(), None, {"name": "x"}, "default") == [None]


async def test_a_named_param_is_read_in_the_requests_namespace():
    context = FakeContext(config_map("limits", "team"), config_map("limits", "other"))
    found = await collect_params(context, CONFIG_MAPS, {"name": "limits"}, "team")
    assert [p["metadata"]["namespace"] for p in found] == ["team"]


async def test_a_param_refs_namespace_wins_over_the_requests():
    context = FakeContext(config_map("limits", "policies"))
    assert names(await collect_params(context, CONFIG_MAPS, {"name": "limits", "namespace": "policies"}, "team")) == [
        "limits"]


async def test_a_named_param_not_yet_cached_is_read_from_the_store():
    context = FakeContext()
    context.add(config_map("limits"), cached=False)
    assert names(await collect_params(context, CONFIG_MAPS, {"name": "limits"}, "default")) == ["limits"]


async def test_a_selector_selects_every_matching_param():
    context = FakeContext(config_map("a", tier="x"), config_map("b", tier="y"), config_map("c", tier="x"))
    found = await collect_params(context, CONFIG_MAPS, {"selector": {"matchLabels": {"tier": "x"}}}, "default")
    assert names(found) == ["a", "c"]
    assert len(await collect_params(context, CONFIG_MAPS, {"selector": {}}, "default")) == 3


async def test_a_namespaced_param_needs_a_namespace():
    with pytest.raises(ParamError, match="^cannot use namespaced paramRef in policy binding that matches "
                                         "cluster-scoped resources$"):
        await collect_params(FakeContext(), CONFIG_MAPS, {"name": "limits"}, "")


async def test_a_cluster_scoped_param_refuses_a_namespace():
    with pytest.raises(ParamError, match="^paramRef.namespace must not be provided for a cluster-scoped `paramKind`$"):
        await collect_params(FakeContext(), CLUSTER_ROLES, {"name": "r", "namespace": "ns"}, "")


async def test_no_param_found_under_deny_is_an_error():
    with pytest.raises(ParamError, match="^no params found for policy binding with `Deny` parameterNotFoundAction$"):
        await collect_params(FakeContext(), CONFIG_MAPS, {"name": "missing", "parameterNotFoundAction": "Deny"},
                             "default")


async def test_no_param_found_under_allow_evaluates_nothing():
    assert await collect_params(FakeContext(), CONFIG_MAPS, {"name": "missing", "parameterNotFoundAction": "Allow"},
                                "default") == []
