"""Delete options (body or query parameters), preconditions, propagation, deletecollection."""

from __future__ import annotations

import json

import pytest

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]


def cr(server, name: str = "reader", **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole",
            "metadata": dict(name=name, **meta), "rules": RULES}


async def make(c, server, name: str = "reader", **meta) -> dict:
    r = await c.post(f"{server.rbac}/clusterroles", json=cr(server, name, **meta))
    assert r.status_code == 201, r.text
    return r.json()


async def delete(c, url: str, body: dict | None = None, **params):
    return await c.request("DELETE", url, params=params, content=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json"} if body is not None else {})


async def exists(c, server, name: str = "reader") -> bool:
    return (await c.get(f"{server.rbac}/clusterroles/{name}")).status_code == 200


# ---- preconditions -------------------------------------------------------------------------------

async def test_uid_precondition_that_does_not_match_is_409(server):
    async with server.client() as c:
        created = await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"preconditions": {"uid": "other"}})
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"
        uid = created["metadata"]["uid"]
        # Kubernetes' rest.BeforeDelete: on the kind, not the resource.
        assert r.json()["message"] == (
            f'Operation cannot be fulfilled on ClusterRole.rbac.authorization.{server.domain} "reader": '
            f"the UID in the precondition (other) does not match the UID in record ({uid}). The object might "
            "have been deleted and then recreated")
        assert r.json()["details"] == {"name": "reader", "group": f"rbac.authorization.{server.domain}",
                                       "kind": "ClusterRole"}
        assert await exists(c, server)


async def test_resource_version_precondition_that_does_not_match_is_409(server):
    async with server.client() as c:
        created = await make(c, server)
        rv = created["metadata"]["resourceVersion"]
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"preconditions": {"resourceVersion": "1"}})
        assert r.status_code == 409
        assert r.json()["message"].endswith(f"the ResourceVersion in the precondition (1) does not match the "
                                            f"ResourceVersion in record ({rv}). The object might have been modified")
        assert await exists(c, server)


async def test_matching_preconditions_delete(server):
    async with server.client() as c:
        meta = (await make(c, server))["metadata"]
        pre = {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"preconditions": pre})
        assert r.status_code == 200 and r.json()["status"] == "Success"
        assert r.json()["details"] == {"name": "reader", "group": f"rbac.authorization.{server.domain}",
                                       "kind": "clusterroles", "uid": meta["uid"]}
        assert not await exists(c, server)


async def test_preconditions_are_checked_for_an_object_with_finalizers(server):
    async with server.client() as c:
        await make(c, server, finalizers=["x/hold"])
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"preconditions": {"uid": "other"}})
        assert r.status_code == 409
        assert "deletionTimestamp" not in (await c.get(f"{server.rbac}/clusterroles/reader")).json()["metadata"]


# ---- propagation, orphanDependents, gracePeriodSeconds ---------------------------------------------

@pytest.mark.parametrize("policy", ["Orphan", "Background", "Foreground"])
async def test_each_propagation_policy_is_accepted(server, policy):
    # Background removes at once; Orphan and Foreground hold the object with the garbage
    # collector's finalizer until the collector (not running in this fixture) releases it.
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"propagationPolicy": policy})
        assert r.status_code == 200
        if policy == "Background":
            assert not await exists(c, server)
        else:
            held = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}[policy]
            assert r.json()["metadata"]["finalizers"] == [held] and r.json()["metadata"]["deletionTimestamp"]


@pytest.mark.parametrize("policy,finalizer", [("Orphan", "orphan"), ("Foreground", "foregroundDeletion")])
async def test_orphan_and_foreground_add_the_garbage_collector_finalizer(server, policy, finalizer):
    async with server.client() as c:
        await make(c, server, finalizers=["x/hold"])
        r = await delete(c, f"{server.rbac}/clusterroles/reader", propagationPolicy=policy)
        assert r.status_code == 200 and r.json()["metadata"]["finalizers"] == ["x/hold", finalizer]
        assert r.json()["metadata"]["deletionTimestamp"]


async def test_unknown_propagation_policy_is_422(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", propagationPolicy="Sideways")
        assert r.status_code == 422
        assert r.json()["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                                       '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"')
        assert await exists(c, server)


async def test_orphan_dependents_with_propagation_policy_is_422(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"orphanDependents": True,
                                                                   "propagationPolicy": "Orphan"})
        assert r.status_code == 422
        assert r.json()["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: '
                                       '"Orphan": orphanDependents and deletionPropagation cannot be both set')


async def test_orphan_dependents_false_on_an_object_that_stays_answers_202(server):
    async with server.client() as c:
        await make(c, server, finalizers=["x/hold"])
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"orphanDependents": False})
        assert r.status_code == 202 and r.json()["metadata"]["deletionTimestamp"]


async def test_grace_period_is_accepted_and_the_object_goes_at_once(server):
    async with server.client() as c:
        await make(c, server)
        await make(c, server, "other")
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"gracePeriodSeconds": 30})
        assert r.status_code == 200 and not await exists(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/other", gracePeriodSeconds="30")
        assert r.status_code == 200 and not await exists(c, server, "other")


async def test_a_terminating_object_records_no_grace_period(server):
    async with server.client() as c:
        await make(c, server, finalizers=["x/hold"])
        r = await delete(c, f"{server.rbac}/clusterroles/reader", gracePeriodSeconds="30")
        assert r.json()["metadata"]["deletionGracePeriodSeconds"] == 0


# ---- query parameters and the body ---------------------------------------------------------------

async def test_every_delete_option_is_accepted_as_a_query_parameter(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", gracePeriodSeconds="0",
                         propagationPolicy="Background", dryRun="All",
                         ignoreStoreReadErrorWithClusterBreakingPotential="false")
        assert r.status_code == 200 and await exists(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", orphanDependents="false")
        assert r.status_code == 200 and not await exists(c, server)


async def test_the_body_wins_over_the_query(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"propagationPolicy": "Background"},
                         propagationPolicy="Sideways")
        assert r.status_code == 200 and not await exists(c, server)


async def test_a_query_value_that_does_not_parse_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", gracePeriodSeconds="soon")
        assert r.status_code == 400
        assert r.json()["message"] == 'strconv.ParseInt: parsing "soon": invalid syntax'


async def test_a_body_field_of_the_wrong_type_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"gracePeriodSeconds": "soon"})
        assert r.status_code == 400
        assert r.json()["message"] == ("json: cannot unmarshal string into Go struct field "
                                       "DeleteOptions.gracePeriodSeconds of type int64")
        assert await exists(c, server)


async def test_a_body_of_another_kind_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await delete(c, f"{server.rbac}/clusterroles/reader", {"kind": "ClusterRole"})
        assert r.status_code == 400 and await exists(c, server)


# ---- deletecollection ----------------------------------------------------------------------------

async def seed(c, server) -> None:
    for name, team in (("a", "x"), ("b", "x"), ("c", "x"), ("d", "y")):
        await make(c, server, name, labels={"team": team})


async def names(c, server) -> set[str]:
    items = (await c.get(f"{server.rbac}/clusterroles", params={"labelSelector": "team"})).json()["items"]
    return {o["metadata"]["name"] for o in items}


async def test_deletecollection_deletes_what_the_label_selector_matches_and_answers_success(server):
    async with server.client() as c:
        await seed(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team=x"})
        assert r.status_code == 200
        assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200,
                            "details": {"kind": "ClusterRole"}}
        assert await names(c, server) == {"d"}


async def test_deletecollection_takes_a_field_selector(server):
    async with server.client() as c:
        await seed(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles", params={"fieldSelector": "metadata.name=b"})
        assert r.status_code == 200 and await names(c, server) == {"a", "c", "d"}


async def test_deletecollection_with_limit_deletes_one_page_and_continue_the_next(server):
    async with server.client() as c:
        await seed(c, server)
        page = (await c.get(f"{server.rbac}/clusterroles", params={"labelSelector": "team", "limit": "2"})).json()
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team", "limit": "2"})
        assert r.status_code == 200 and await names(c, server) == {"c", "d"}
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team",
                                                                  "continue": page["metadata"]["continue"]})
        assert r.status_code == 200 and await names(c, server) == set()


async def test_deletecollection_takes_every_listed_parameter(server):
    async with server.client() as c:
        await seed(c, server)
        params = {"labelSelector": "team=y", "fieldSelector": "metadata.name=d", "limit": "10",
                  "resourceVersion": "0", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "5",
                  "gracePeriodSeconds": "0", "propagationPolicy": "Background", "pretty": "true",
                  "ignoreStoreReadErrorWithClusterBreakingPotential": "false"}
        r = await c.delete(f"{server.rbac}/clusterroles", params=dict(params, dryRun="All"))
        assert r.status_code == 200 and await names(c, server) == {"a", "b", "c", "d"}
        r = await c.delete(f"{server.rbac}/clusterroles", params=params)
        assert r.status_code == 200 and await names(c, server) == {"a", "b", "c"}


async def test_deletecollection_refuses_send_initial_events_as_a_list_does(server):
    async with server.client() as c:
        await seed(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team", "sendInitialEvents": "true"})
        assert r.status_code == 422 and "sendInitialEvents" in r.json()["message"]
        assert await names(c, server) == {"a", "b", "c", "d"}


async def test_deletecollection_validates_the_delete_options(server):
    async with server.client() as c:
        await seed(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team", "propagationPolicy": "No"})
        assert r.status_code == 422 and await names(c, server) == {"a", "b", "c", "d"}


async def test_deletecollection_of_objects_with_finalizers_marks_them_terminating(server):
    async with server.client() as c:
        await make(c, server, "held", labels={"team": "z"}, finalizers=["x/hold"])
        r = await c.delete(f"{server.rbac}/clusterroles", params={"labelSelector": "team=z"})
        assert r.status_code == 200
        assert (await c.get(f"{server.rbac}/clusterroles/held")).json()["metadata"]["deletionTimestamp"]


async def test_deletecollection_of_namespaced_objects_stays_in_the_namespace(server):
    async with server.client() as c:
        await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        for ns in ("default", "other"):
            role = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "Role",
                    "metadata": {"name": "r", "namespace": ns}, "rules": RULES}
            assert (await c.post(f"{server.rbac}/namespaces/{ns}/roles", json=role)).status_code == 201
        r = await c.delete(f"{server.rbac}/namespaces/default/roles")
        assert r.status_code == 200
        assert (await c.get(f"{server.rbac}/namespaces/default/roles/r")).status_code == 404
        assert (await c.get(f"{server.rbac}/namespaces/other/roles/r")).status_code == 200
