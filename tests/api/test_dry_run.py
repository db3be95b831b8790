"""Dry run: every stage runs, nothing is persisted, no event, the resourceVersion does not move."""

from __future__ import annotations

import json

import pytest

from runtime.server.bootstrap import SYSTEM_USER, bootstrap
from runtime.machinery import errors
from runtime.machinery.options import Body, WriteOptions
from runtime.machinery.scheme import Scheme
from runtime.server.registry import AdmissionPlugin, Registry
from runtime.server.storage import MemoryStore

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]


def cr(server, name: str = "reader", **extra) -> dict:
    body = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": RULES}
    body.update(extra)
    return json.loads(json.dumps(body))


async def snapshot(c, server) -> tuple[str, dict]:
    """The store as clients see it: the global revision and every object of every kind."""
    content = {}
    revision = ""
    for path in (f"{server.rbac}/clusterroles", f"{server.rbac}/clusterrolebindings", f"{server.rbac}/roles",
                 f"{server.rbac}/rolebindings", "/api/v1/namespaces"):
        r = await c.get(path)
        assert r.status_code == 200, r.text
        content[path] = r.json()["items"]
        revision = r.json()["metadata"]["resourceVersion"]
    return revision, content


def mine(request) -> bool:
    """Whether an admission request is the test's own write (not one of the bootstrap's)."""
    return request.obj["metadata"].get("name") == "x"


async def registry_admitting(nursery, plugin: AdmissionPlugin) -> Registry:
    """A bootstrapped registry over a memory store whose admission chain is `plugin`."""
    registry = Registry(MemoryStore(), Scheme(), admission=[plugin])
    await nursery.start(registry.run)
    await bootstrap(registry)
    return registry


async def test_dry_run_create_answers_201_with_the_object_and_stores_nothing(server):
    async with server.client() as c:
        before = await snapshot(c, server)
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": "All"}, json=cr(server))
        assert r.status_code == 201, r.text
        obj = r.json()
        assert obj["metadata"]["name"] == "reader" and obj["metadata"]["uid"] and obj["rules"] == RULES
        assert "resourceVersion" not in obj["metadata"]
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).status_code == 404
        assert await snapshot(c, server) == before


async def test_bare_dry_run_parameter_means_dry_run(server):
    async with server.client() as c:
        before = await snapshot(c, server)
        r = await c.post(f"{server.rbac}/clusterroles?dryRun&pretty=true", json=cr(server))
        assert r.status_code == 201, r.text
        assert await snapshot(c, server) == before


async def test_dry_run_create_with_generate_name_generates_a_name(server):
    async with server.client() as c:
        body = cr(server)
        body["metadata"] = {"generateName": "gen-"}
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": "All"}, json=body)
        assert r.status_code == 201 and r.json()["metadata"]["name"].startswith("gen-")


async def test_dry_run_create_of_a_taken_name_is_409_already_exists(server):
    async with server.client() as c:
        assert (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).status_code == 201
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": "All"}, json=cr(server))
        assert r.status_code == 409 and r.json()["reason"] == "AlreadyExists"


async def test_dry_run_create_runs_validation(server):
    async with server.client() as c:
        bad = cr(server, rules=[{"verbs": [], "apiGroups": [""], "resources": ["pods"]}])
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": "All"}, json=bad)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"


async def test_dry_run_create_runs_defaulting(server):
    async with server.client() as c:
        binding = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
                   "subjects": [{"kind": "User", "name": "ann"}]}
        r = await c.post(f"{server.rbac}/clusterrolebindings", params={"dryRun": "All"}, json=binding)
        assert r.status_code == 201, r.text
        assert r.json()["roleRef"]["apiGroup"] == f"rbac.authorization.{server.domain}"
        assert r.json()["subjects"][0]["apiGroup"] == f"rbac.authorization.{server.domain}"


async def test_dry_run_runs_admission_escalation_check(server):
    # bob may create ClusterRoles but holds no other permission: granting more is refused, dry run or not.
    async with server.client() as c:
        writer = cr(server, "role-writer", rules=[{"verbs": ["create"], "apiGroups": [f"rbac.authorization.{server.domain}"],
                                                   "resources": ["clusterroles"]}])
        assert (await c.post(f"{server.rbac}/clusterroles", json=writer)).status_code == 201
        binding = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "bob-writes"}, "roleRef": {"kind": "ClusterRole", "name": "role-writer"},
                   "subjects": [{"kind": "User", "name": "bob"}]}
        assert (await c.post(f"{server.rbac}/clusterrolebindings", json=binding)).status_code == 201
        as_bob = {"Impersonate-User": "bob"}
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": "All"}, json=cr(server, "sneaky"),
                         headers=as_bob)
        assert r.status_code == 403 and "attempting to grant RBAC permissions" in r.json()["message"]


async def test_dry_run_update_answers_the_new_object_at_the_stored_version_and_stores_nothing(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        before = await snapshot(c, server)
        changed = dict(created, rules=[{"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]}])
        r = await c.put(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"}, json=changed)
        assert r.status_code == 200, r.text
        assert r.json()["rules"] == changed["rules"]
        assert "generation" not in r.json()["metadata"]  # RBAC kinds count none, as Kubernetes'
        assert r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert await snapshot(c, server) == before


async def test_dry_run_unconditional_update_answers_the_stored_resource_version(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        r = await c.put(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"},
                        json=cr(server, rules=[{"verbs": ["*"], "nonResourceURLs": ["/x"]}]))
        assert r.status_code == 200
        assert r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_dry_run_put_of_a_missing_object_answers_201_and_creates_nothing(server):
    async with server.client() as c:
        before = await snapshot(c, server)
        r = await c.put(f"{server.rbac}/clusterroles/fresh", params={"dryRun": "All"}, json=cr(server, "fresh"))
        assert r.status_code == 201
        assert await snapshot(c, server) == before


async def test_dry_run_update_with_a_stale_resource_version_is_409(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        await c.put(f"{server.rbac}/clusterroles/reader", json=dict(created, rules=[]))
        r = await c.put(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"}, json=created)
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"


@pytest.mark.parametrize("content_type,patch", [
    ("application/json-patch+json", [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]),
    ("application/merge-patch+json", {"metadata": {"labels": {"a": "b"}}}),
    ("application/strategic-merge-patch+json", {"metadata": {"finalizers": ["x/y"]}}),
    ("application/apply-patch+yaml", None),
])
async def test_dry_run_patch_answers_the_patched_object_and_stores_nothing(server, content_type, patch):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        before = await snapshot(c, server)
        if patch is None:
            patch = cr(server, rules=[{"verbs": ["watch"], "apiGroups": [""], "resources": ["namespaces"]}])
        params = {"dryRun": "All", "fieldManager": "tester"}
        if "apply" in content_type:
            params["force"] = "true"  # the creator owns .rules
        r = await c.patch(f"{server.rbac}/clusterroles/reader", params=params, content=json.dumps(patch),
                          headers={"Content-Type": content_type})
        assert r.status_code == 200, r.text
        assert r.json() != created
        assert r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert await snapshot(c, server) == before


async def test_dry_run_apply_of_a_missing_object_answers_201_and_creates_nothing(server):
    async with server.client() as c:
        before = await snapshot(c, server)
        r = await c.patch(f"{server.rbac}/clusterroles/applied", params={"dryRun": "All", "fieldManager": "m"},
                          content=json.dumps(cr(server, "applied")),
                          headers={"Content-Type": "application/apply-patch+yaml"})
        assert r.status_code == 201, r.text
        assert r.json()["metadata"]["managedFields"][0]["manager"] == "m"
        assert await snapshot(c, server) == before


async def test_dry_run_patch_producing_an_invalid_object_is_422(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        r = await c.patch(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"},
                          content=json.dumps({"rules": [{"verbs": []}]}),
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 422


async def test_dry_run_delete_answers_success_and_deletes_nothing(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        before = await snapshot(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"})
        assert r.status_code == 200 and r.json()["status"] == "Success", r.text
        assert await snapshot(c, server) == before


async def test_dry_run_delete_with_dry_run_in_the_body_deletes_nothing(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        before = await snapshot(c, server)
        r = await c.request("DELETE", f"{server.rbac}/clusterroles/reader",
                            json={"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})
        assert r.status_code == 200, r.text
        assert await snapshot(c, server) == before


async def test_dry_run_delete_of_an_object_with_finalizers_answers_it_terminating_and_changes_nothing(server):
    async with server.client() as c:
        body = cr(server)
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(f"{server.rbac}/clusterroles", json=body)
        before = await snapshot(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"})
        assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]
        assert await snapshot(c, server) == before
        assert "deletionTimestamp" not in (await c.get(f"{server.rbac}/clusterroles/reader")).json()["metadata"]


async def test_dry_run_delete_still_checks_preconditions(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        r = await c.request("DELETE", f"{server.rbac}/clusterroles/reader", params={"dryRun": "All"},
                            json={"preconditions": {"uid": "not-it"}})
        assert r.status_code == 409


async def test_dry_run_deletecollection_deletes_nothing(server):
    async with server.client() as c:
        for name in ("a", "b"):
            body = cr(server, name)
            body["metadata"]["labels"] = {"team": "x"}
            await c.post(f"{server.rbac}/clusterroles", json=body)
        before = await snapshot(c, server)
        r = await c.delete(f"{server.rbac}/clusterroles", params={"dryRun": "All", "labelSelector": "team=x"})
        assert r.status_code == 200 and r.json()["status"] == "Success"
        assert await snapshot(c, server) == before


async def test_no_dry_run_request_of_any_verb_changes_the_store(server):
    """Every verb, dry run: the revision and every object are as before (the acceptance check)."""
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        body = cr(server, "held")
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(f"{server.rbac}/clusterroles", json=body)
        before = await snapshot(c, server)
        dry = {"dryRun": "All", "fieldManager": "dry"}
        url = f"{server.rbac}/clusterroles"
        answers = [
            await c.post(url, params=dry, json=cr(server, "new")),
            await c.put(f"{url}/reader", params=dry, json=dict(created, rules=[])),
            await c.put(f"{url}/missing", params=dry, json=cr(server, "missing")),
            await c.patch(f"{url}/reader", params=dry, content='[{"op":"remove","path":"/rules"}]',
                          headers={"Content-Type": "application/json-patch+json"}),
            await c.patch(f"{url}/reader", params=dry, content='{"metadata":{"labels":{"a":"b"}}}',
                          headers={"Content-Type": "application/merge-patch+json"}),
            await c.patch(f"{url}/reader", params=dry, content='{"metadata":{"finalizers":["a/b"]}}',
                          headers={"Content-Type": "application/strategic-merge-patch+json"}),
            await c.patch(f"{url}/reader", params=dict(dry, force="true"), content=json.dumps(cr(server)),
                          headers={"Content-Type": "application/apply-patch+yaml"}),
            await c.patch(f"{url}/other", params=dry, content=json.dumps(cr(server, "other")),
                          headers={"Content-Type": "application/apply-patch+yaml"}),
            await c.delete(f"{url}/reader", params=dry),
            await c.delete(f"{url}/held", params=dry),
            await c.delete(url, params=dry),
        ]
        assert [a.status_code for a in answers] == [201, 200, 201, 200, 200, 200, 200, 201, 200, 200, 200]
        assert await snapshot(c, server) == before


async def test_dry_run_writes_emit_no_watch_event(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr(server))).json()
        start = created["metadata"]["resourceVersion"]
        dry = {"dryRun": "All"}
        await c.post(f"{server.rbac}/clusterroles", params=dry, json=cr(server, "dry"))
        await c.put(f"{server.rbac}/clusterroles/reader", params=dry, json=dict(created, rules=[]))
        await c.delete(f"{server.rbac}/clusterroles/reader", params=dry)
        await c.post(f"{server.rbac}/clusterroles", json=cr(server, "marker"))
        async with c.stream("GET", f"{server.rbac}/clusterroles",
                            params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "5"}) as r:
            events = []
            async for line in r.aiter_lines():
                events.append(json.loads(line))
                break  # the first event after the dry runs is the marker's
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "marker")]


@pytest.mark.parametrize("value", ["Some", "all", "true"])
async def test_unknown_dry_run_value_is_422(server, value):
    async with server.client() as c:
        before = await snapshot(c, server)
        r = await c.post(f"{server.rbac}/clusterroles", params={"dryRun": value}, json=cr(server))
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        assert r.json()["details"]["causes"] == [{"reason": "FieldValueNotSupported", "field": "dryRun",
                                                  "message": f'Unsupported value: []string{{"{value}"}}: '
                                                             'supported values: "All"'}]
        assert r.json()["message"] == ('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                       f'[]string{{"{value}"}}: supported values: "All"')
        assert await snapshot(c, server) == before


async def test_unknown_dry_run_value_on_delete_names_delete_options(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        r = await c.delete(f"{server.rbac}/clusterroles/reader", params={"dryRun": "Nope"})
        assert r.status_code == 422 and r.json()["message"].startswith('DeleteOptions.meta.k8s.io "" is invalid')
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).status_code == 200


async def test_dry_run_fails_when_an_admission_plugin_has_side_effects(nursery):
    calls: list[bool] = []
    def sink(request) -> None:
        if mine(request):
            calls.append(request.dry_run)
    registry = await registry_admitting(nursery, AdmissionPlugin("audit-sink", sink, side_effects=True))
    rt = registry.scheme.by_kind("ClusterRole")
    body = {"metadata": {"name": "x"}, "rules": RULES}
    revision = await registry.store.current_revision()
    with pytest.raises(errors.BadRequest) as err:
        await registry.create(SYSTEM_USER, rt, "", Body(body), WriteOptions(dry_run=True))
    assert err.value.message == 'admission plugin "audit-sink" does not support dry run'
    assert calls == [] and await registry.store.current_revision() == revision
    await registry.create(SYSTEM_USER, rt, "", Body(body), WriteOptions())
    assert calls == [False]


async def test_admission_plugin_without_side_effects_runs_on_dry_run_and_is_told(nursery):
    seen: list[tuple[str, bool]] = []
    def observer(request) -> None:
        if mine(request):
            seen.append((request.operation, request.dry_run))
    registry = await registry_admitting(nursery, AdmissionPlugin("observer", observer))
    rt = registry.scheme.by_kind("ClusterRole")
    await registry.create(SYSTEM_USER, rt, "", Body({"metadata": {"name": "x"}, "rules": RULES}),
                          WriteOptions(dry_run=True))
    assert seen == [("create", True)]
