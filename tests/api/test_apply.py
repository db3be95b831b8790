"""Server-side apply (application/apply-patch+yaml), field managers, managedFields and generation."""

from __future__ import annotations

import copy
import json

from tests.support.rbac import ok

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]
OTHER_RULES = [{"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]}]
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def config(server, name: str = "reader", **fields) -> dict:
    body = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole", "metadata": {"name": name}}
    body.update(copy.deepcopy(fields))
    return body


async def apply(c, server, body: dict, manager: str | None, name: str = "reader", headers=APPLY, **params):
    if manager is not None:
        params["fieldManager"] = manager
    return await c.patch(f"{server.rbac}/clusterroles/{name}", content=json.dumps(body), headers=headers,
                         params=params)


def managers(obj: dict) -> dict[tuple[str, str], dict]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


async def test_apply_creates_a_missing_object_with_201_and_records_the_manager(server):
    async with server.client() as c:
        r = await apply(c, server, config(server, rules=RULES), "alice")
        assert r.status_code == 201, r.text
        obj = r.json()
        assert obj["rules"] == RULES and obj["metadata"]["uid"] and "generation" not in obj["metadata"]
        assert managers(obj) == {("alice", "Apply"): {"f:rules": {}}}
        entry = obj["metadata"]["managedFields"][0]
        assert entry["fieldsType"] == "FieldsV1" and entry["apiVersion"] == f"rbac.authorization.{server.domain}/v1"
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).json() == obj


async def test_apply_needs_a_field_manager(server):
    async with server.client() as c:
        r = await apply(c, server, config(server, rules=RULES), None)
        assert r.status_code == 422
        assert r.json()["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                                       "required for apply patch")
        assert r.json()["details"]["causes"] == [{"reason": "FieldValueRequired", "field": "fieldManager",
                                                  "message": "Required value: is required for apply patch"}]


async def test_apply_patch_json_content_type_is_accepted(server):
    async with server.client() as c:
        r = await apply(c, server, config(server, rules=RULES), "alice",
                        headers={"Content-Type": "application/apply-patch+json"})
        assert r.status_code == 201, r.text


async def test_apply_takes_yaml(server):
    body = (f"apiVersion: rbac.authorization.{server.domain}/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n"
            "rules:\n- verbs: [get]\n  apiGroups: ['']\n  resources: [namespaces]\n")
    async with server.client() as c:
        r = await c.patch(f"{server.rbac}/clusterroles/reader", content=body, headers=APPLY,
                          params={"fieldManager": "alice"})
        assert r.status_code == 201 and r.json()["rules"] == RULES


async def test_two_managers_share_an_object(server):
    async with server.client() as c:
        await apply(c, server, config(server, rules=RULES), "alice")
        r = await apply(c, server, config(server, metadata={"name": "reader", "labels": {"team": "b"}}), "bob")
        assert r.status_code == 200, r.text
        assert r.json()["rules"] == RULES and r.json()["metadata"]["labels"] == {"team": "b"}
        assert managers(r.json()) == {("alice", "Apply"): {"f:rules": {}},
                                      ("bob", "Apply"): {"f:metadata": {"f:labels": {"f:team": {}}}}}


async def test_apply_conflict_is_409_listing_each_field_and_manager(server):
    async with server.client() as c:
        created = (await apply(c, server, config(server, rules=RULES), "alice")).json()
        r = await apply(c, server, config(server, rules=OTHER_RULES), "bob")
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"
        assert r.json()["message"] == 'Apply failed with 1 conflict: conflict with "alice": .rules'
        assert r.json()["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                                  "message": 'conflict with "alice"', "field": ".rules"}]
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).json() == created


async def test_apply_conflict_with_an_update_manager_names_its_api_version(server):
    async with server.client() as c:
        body = config(server, rules=RULES)
        await c.post(f"{server.rbac}/clusterroles", json=body, params={"fieldManager": "creator"})
        r = await apply(c, server, config(server, rules=OTHER_RULES), "alice")
        assert r.status_code == 409
        assert r.json()["message"] == ('Apply failed with 1 conflict: conflict with "creator" using '
                                       f'rbac.authorization.{server.domain}/v1: .rules')


async def test_apply_with_force_takes_the_conflicting_fields(server):
    async with server.client() as c:
        await apply(c, server, config(server, rules=RULES, metadata={"name": "reader", "labels": {"a": "1"}}),
                    "alice")
        r = await apply(c, server, config(server, rules=OTHER_RULES), "bob", force="true")
        assert r.status_code == 200, r.text
        assert r.json()["rules"] == OTHER_RULES
        assert managers(r.json()) == {("alice", "Apply"): {"f:metadata": {"f:labels": {"f:a": {}}}},
                                      ("bob", "Apply"): {"f:rules": {}}}


async def test_reapplying_the_same_configuration_changes_nothing(server):
    async with server.client() as c:
        first = (await apply(c, server, config(server, rules=RULES), "alice")).json()
        again = await apply(c, server, config(server, rules=RULES), "alice")
        assert again.status_code == 200 and again.json() == first


async def test_a_field_left_out_of_the_next_apply_is_removed(server):
    async with server.client() as c:
        labels = {"name": "reader", "labels": {"a": "1", "b": "2"}}
        await apply(c, server, config(server, rules=RULES, metadata=labels), "alice")
        r = await apply(c, server, config(server, rules=RULES, metadata={"name": "reader", "labels": {"a": "1"}}),
                        "alice")
        assert r.json()["metadata"]["labels"] == {"a": "1"}


async def test_apply_of_another_kind_is_400(server):
    async with server.client() as c:
        body = config(server, rules=RULES)
        body["kind"] = "Role"
        r = await apply(c, server, body, "alice")
        assert r.status_code == 400


async def test_apply_carrying_managed_fields_is_400(server):
    async with server.client() as c:
        await apply(c, server, config(server, rules=RULES), "alice")
        body = config(server, rules=RULES, metadata={"name": "reader", "managedFields": [
            {"manager": "x", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}]})
        r = await apply(c, server, body, "alice")
        assert r.status_code == 400 and r.json()["message"] == "metadata.managedFields must be nil"


async def test_apply_that_creates_needs_create_permission(server):
    async with server.client() as c:
        group = f"rbac.authorization.{server.domain}"
        for verbs, user in ((["patch"], "pat"), (["patch", "create"], "cat")):
            role = config(server, f"{user}-role", rules=[{"verbs": verbs, "apiGroups": [group],
                                                         "resources": ["clusterroles"]}])
            assert (await c.post(f"{server.rbac}/clusterroles", json=role)).status_code == 201
            binding = {"apiVersion": f"{group}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": user},
                       "roleRef": {"kind": "ClusterRole", "name": f"{user}-role", "apiGroup": group},
                       "subjects": [{"kind": "User", "name": user}]}
            assert (await c.post(f"{server.rbac}/clusterrolebindings", json=binding)).status_code == 201
        target = config(server, "empty", rules=[])
        denied = await c.patch(f"{server.rbac}/clusterroles/empty", content=json.dumps(target), headers=dict(
            APPLY, **{"Impersonate-User": "pat"}), params={"fieldManager": "pat"})
        # Allowed to patch, not to create: kube's create check inside admission, the authorizer's reason only.
        assert denied.status_code == 403 and denied.json()["message"] == f'clusterroles.{group} "empty" is forbidden: '
        allowed = await c.patch(f"{server.rbac}/clusterroles/empty", content=json.dumps(target), headers=dict(
            APPLY, **{"Impersonate-User": "cat"}), params={"fieldManager": "cat"})
        assert allowed.status_code == 201, allowed.text


# ---- managers of other writes ----------------------------------------------------------------------

async def test_create_records_its_field_manager_as_an_update(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=config(server, rules=RULES),
                         params={"fieldManager": "creator"})
        assert managers(r.json()) == {("creator", "Update"): {"f:rules": {}}}


async def test_a_write_without_field_manager_records_the_user_agent_up_to_its_slash(server):
    async with server.client(headers={"User-Agent": "kubectl-replace/v1.32.0 (linux/amd64) kubernetes/abc"}) as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=config(server, rules=RULES))
        assert set(managers(r.json())) == {("kubectl-replace", "Update")}


async def test_update_records_its_field_manager(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=config(server, rules=RULES),
                                params={"fieldManager": "creator"})).json()
        changed = dict(created, rules=OTHER_RULES)
        changed["metadata"] = dict(created["metadata"], labels={"a": "b"})
        r = await c.put(f"{server.rbac}/clusterroles/reader", json=changed, params={"fieldManager": "editor"})
        assert managers(r.json()) == {("editor", "Update"): {"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                                                             "f:rules": {}}}


async def test_managed_fields_sent_with_a_create_are_ignored(server):
    async with server.client() as c:
        body = config(server, rules=RULES, metadata={"name": "reader", "managedFields": [
            {"manager": "forged", "operation": "Apply", "apiVersion": f"rbac.authorization.{server.domain}/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:rules": {}}}]})
        r = await c.post(f"{server.rbac}/clusterroles", json=body, params={"fieldManager": "creator"})
        assert set(managers(r.json())) == {("creator", "Update")}


async def test_managed_fields_are_writable_by_update_and_reset_by_an_empty_list_as_kubernetes(server):
    # apiserver's field manager takes managed fields sent with an update when they decode, and an
    # empty list resets them (issue 16).
    async with server.client() as c:
        created = (await apply(c, server, config(server, rules=RULES), "alice")).json()
        forged = [{"manager": "mallory", "operation": "Apply", "apiVersion": f"rbac.authorization.{server.domain}/v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:rules": {}}}]
        put = dict(created)
        put["metadata"] = dict(created["metadata"], managedFields=forged)
        r = await c.put(f"{server.rbac}/clusterroles/reader", json=put)
        assert r.status_code == 200 and [e["manager"] for e in r.json()["metadata"]["managedFields"]] == ["mallory"]
        r = await c.patch(f"{server.rbac}/clusterroles/reader", headers={"Content-Type": "application/merge-patch+json"},
                          content=json.dumps({"metadata": {"managedFields": []}}))
        assert r.status_code == 200 and "managedFields" not in r.json()["metadata"]


# ---- generation ------------------------------------------------------------------------------------

async def test_generation_is_left_to_the_kind_and_no_write_changes_it_on_rbac_kinds(server):
    # Kubernetes' generic store sets no generation (BeforeCreate) and keeps the stored one on every
    # update (BeforeUpdate); only a kind's strategy counts it, and the RBAC strategies do not.
    async with server.client() as c:
        url = f"{server.rbac}/clusterroles/reader"
        merge = {"Content-Type": "application/merge-patch+json"}
        created = (await c.post(f"{server.rbac}/clusterroles", json=config(server, rules=RULES))).json()
        labelled = await c.patch(url, headers=merge, content='{"metadata":{"labels":{"a":"b"}}}')
        updated = await c.put(url, json=dict(labelled.json(), rules=OTHER_RULES))
        applied = await apply(c, server, config(server, rules=RULES), "alice", force="true")
        forged = await c.patch(url, headers=merge, content='{"metadata":{"generation":42}}')
        assert [r["metadata"].get("generation") for r in (created, labelled.json(), updated.json(),
                                                           applied.json(), forged.json())] == [None] * 5
        assert updated.json()["rules"] == OTHER_RULES and applied.json()["rules"] == RULES
        # What a create sent is kept (validated), and no update changes it either.
        roles, sent_url = f"{server.rbac}/clusterroles", f"{server.rbac}/clusterroles/sent"
        sent = await ok(await c.post(roles, json=config(server, rules=RULES,
                                                        metadata={"name": "sent", "generation": 7})), 201)
        changed = await c.put(sent_url, json=dict(sent, rules=OTHER_RULES))
        reset = await c.patch(sent_url, headers=merge, content='{"metadata":{"generation":null}}')
        assert [sent["metadata"]["generation"], changed.json()["metadata"]["generation"],
                reset.json()["metadata"]["generation"]] == [7, 7, 7]
        negative = await c.post(roles, json=config(server, metadata={"name": "n", "generation": -1}))
        assert negative.status_code == 422 and negative.json()["details"]["causes"] == [
            {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0",
             "field": "metadata.generation"}]
