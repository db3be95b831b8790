"""Custom resources over HTTP (in process, with the built-in controllers): each rule of the issue, one test."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from tests.support.crds import GROUP, WIDGET_SCHEMA, crd_path, established, watch_crd, widget, widget_crd, widgets_path
from tests.support.server import Server, start_in_process

CRDS = crd_path()
WIDGETS = widgets_path()
crd = widget_crd


@pytest.fixture
async def crd_server(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, controllers=True)


async def test_a_crd_is_established_and_its_kind_is_served_with_discovery(crd_server):
    async with crd_server.client() as c:
        r = await c.post(CRDS, json=crd())
        assert r.status_code == 201, r.text
        done = await established(c)
        assert done["status"]["acceptedNames"]["kind"] == "Widget"
        assert {x["type"] for x in done["status"]["conditions"]} >= {"NamesAccepted", "Established"}
        resources = (await c.get(f"/apis/{GROUP}/v1")).json()["resources"]
        names = {r["name"]: r for r in resources}
        assert names["widgets"]["shortNames"] == ["wd"] and names["widgets"]["categories"] == ["all", "gadgets"]
        assert {"widgets/status", "widgets/scale"} <= set(names)
        created = await c.post(WIDGETS, json=widget("w1", color="red"))
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["maxSize"] == 10  # defaulted
        assert (await c.get(f"{WIDGETS}/w1")).json()["spec"]["color"] == "red"


async def test_schema_violations_and_cel_rules_are_422_with_their_messages(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        bad_type = await c.post(WIDGETS, json=widget("w", size="big"))
        assert bad_type.status_code == 422 and bad_type.json()["details"]["causes"][0]["field"] == "spec.size"
        cel = await c.post(WIDGETS, json=widget("w", size=20))
        assert cel.status_code == 422 and "size must not exceed maxSize" in cel.text
        enum = await c.post(WIDGETS, json=widget("w", color="green"))
        assert enum.status_code == 422 and "spec.color" in enum.text


@pytest.mark.parametrize("level,code,warned", [("Strict", 400, False), ("Warn", 201, True), ("Ignore", 201, False)])
async def test_unknown_fields_are_pruned_warned_or_refused_by_the_field_validation_level(crd_server, level, code, warned):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        r = await c.post(WIDGETS, params={"fieldValidation": level}, json=widget("w", bogus=1))
        assert r.status_code == code, r.text
        assert ('unknown field \\"spec.bogus\\"' in r.headers.get("Warning", "")) == warned
        if code == 201:
            assert "bogus" not in r.json()["spec"]
        else:
            assert 'unknown field "spec.bogus"' in r.json()["message"]


async def test_strategic_merge_patch_of_a_custom_kind_is_415_naming_the_patch_types_it_takes(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("w"))
        smp = await c.patch(f"{WIDGETS}/w", json={"spec": {"size": 2}},
                            headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert smp.status_code == 415 and smp.json()["reason"] == "UnsupportedMediaType"
        assert "application/merge-patch+json" in smp.json()["message"]
        assert "strategic" not in smp.json()["message"].split("include:")[1]
        assert (await c.get(f"{WIDGETS}/w")).json()["spec"]["size"] == 1


async def test_protobuf_is_refused_for_custom_kinds_406_for_answers_and_415_for_bodies(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("w"))
        only = await c.get(f"{WIDGETS}/w", headers={"Accept": "application/vnd.kubernetes.protobuf"})
        assert only.status_code == 406
        fallback = await c.get(f"{WIDGETS}/w", headers={"Accept": "application/vnd.kubernetes.protobuf, "
                                                                  "application/json"})
        assert fallback.status_code == 200 and fallback.headers["Content-Type"].startswith("application/json")
        listed = await c.get(WIDGETS, headers={"Accept": "application/vnd.kubernetes.protobuf"})
        assert listed.status_code == 406
        body = await c.post(WIDGETS, content=b"k8s\x00\x0a\x00",
                            headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
        assert body.status_code == 415 and body.json()["reason"] == "UnsupportedMediaType"


async def test_merge_json_and_apply_patches_use_the_schema(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("w", ports=[{"name": "a", "port": 1}]))
        merged = await c.patch(f"{WIDGETS}/w", json={"spec": {"color": "blue"}},
                               headers={"Content-Type": "application/merge-patch+json"})
        assert merged.json()["spec"]["color"] == "blue"
        jsonp = await c.patch(f"{WIDGETS}/w", json=[{"op": "replace", "path": "/spec/size", "value": 3}],
                              headers={"Content-Type": "application/json-patch+json"})
        assert jsonp.json()["spec"]["size"] == 3
        applied = await c.patch(f"{WIDGETS}/w", params={"fieldManager": "me"},
                                json={"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"},
                                      "spec": {"size": 3, "ports": [{"name": "b", "port": 2}]}},
                                headers={"Content-Type": "application/apply-patch+yaml"})
        assert applied.status_code == 200, applied.text
        # A list-map merges by its keys: the other manager's port stays.
        assert [p["name"] for p in applied.json()["spec"]["ports"]] == ["a", "b"]


async def test_status_and_spec_are_written_apart_and_generation_counts_spec(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        w = (await c.post(WIDGETS, json=dict(widget("w"), status={"ready": True}))).json()
        assert "status" not in w and w["metadata"]["generation"] == 1
        w["status"] = {"ready": True}
        w["spec"]["size"] = 5
        status = (await c.put(f"{WIDGETS}/w/status", json=w)).json()
        assert status["status"] == {"ready": True} and status["spec"]["size"] == 1
        assert status["metadata"]["generation"] == 1
        status["spec"]["size"] = 2
        status["status"] = {"ready": False}
        main = (await c.put(f"{WIDGETS}/w", json=status)).json()
        assert main["spec"]["size"] == 2 and main["status"] == {"ready": True}
        assert main["metadata"]["generation"] == 2


async def test_without_a_status_subresource_every_change_but_metadata_counts_a_generation(crd_server):
    # Kubernetes' custom resource strategy: generation 1 on create (whatever was sent), then one more
    # for each change outside metadata, status included when no subresource writes it.
    plain = crd()
    del plain["spec"]["versions"][0]["subresources"]
    async with crd_server.client() as c:
        await c.post(CRDS, json=plain)
        await established(c)
        w = (await c.post(WIDGETS, json=dict(widget("w"), metadata={"name": "w", "generation": 9}))).json()
        assert w["metadata"]["generation"] == 1
        w["metadata"]["labels"] = {"only": "metadata"}
        labelled = (await c.put(f"{WIDGETS}/w", json=w)).json()
        labelled["status"] = {"ready": True}
        ready = (await c.put(f"{WIDGETS}/w", json=labelled)).json()
        assert ready["status"] == {"ready": True}
        assert [labelled["metadata"]["generation"], ready["metadata"]["generation"]] == [1, 2]


async def test_the_scale_subresource_reads_and_writes_replicas(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("w", replicas=1, selector="app=w"))
        scale = (await c.get(f"{WIDGETS}/w/scale")).json()
        assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
        assert scale["spec"] == {"replicas": 1} and scale["status"]["selector"] == "app=w"
        scale["spec"]["replicas"] = 4
        put = await c.put(f"{WIDGETS}/w/scale", json=scale)
        assert put.status_code == 200 and put.json()["spec"]["replicas"] == 4
        patched = await c.patch(f"{WIDGETS}/w/scale", json={"spec": {"replicas": 6}},
                                headers={"Content-Type": "application/merge-patch+json"})
        assert patched.json()["spec"]["replicas"] == 6
        assert (await c.get(f"{WIDGETS}/w")).json()["spec"]["replicas"] == 6


async def test_printer_columns_and_selectable_fields(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("a", color="red", size=2))
        await c.post(WIDGETS, json=widget("b", color="blue"))
        table = (await c.get(WIDGETS, headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"})).json()
        assert [d["name"] for d in table["columnDefinitions"]] == ["Name", "Size", "Color"]
        assert [r["cells"] for r in table["rows"]] == [["a", 2, "red"], ["b", 1, "blue"]]
        red = (await c.get(WIDGETS, params={"fieldSelector": "spec.color=red"})).json()
        assert [o["metadata"]["name"] for o in red["items"]] == ["a"]
        unknown = await c.get(WIDGETS, params={"fieldSelector": "spec.size=2"})
        assert unknown.status_code == 400


async def test_served_versions_share_storage_and_deprecated_ones_warn(crd_server):
    v2 = {"name": "v2", "served": True, "storage": False, "deprecated": True,
          "deprecationWarning": "v2 is going away", "schema": {"openAPIV3Schema": WIDGET_SCHEMA}}
    body = crd()
    body["spec"]["versions"].append(v2)
    async with crd_server.client() as c:
        assert (await c.post(CRDS, json=body)).status_code == 201
        await established(c)
        await c.post(WIDGETS, json=widget("w"))
        read = await c.get(f"/apis/{GROUP}/v2/namespaces/default/widgets/w")
        assert read.json()["apiVersion"] == f"{GROUP}/v2"
        created = await c.post(f"/apis/{GROUP}/v2/namespaces/default/widgets",
                               json=dict(widget("x"), apiVersion=f"{GROUP}/v2"))
        assert created.status_code == 201 and "v2 is going away" in created.headers.get("Warning", "")
        assert (await c.get(f"{WIDGETS}/x")).json()["apiVersion"] == f"{GROUP}/v1"


async def test_crd_validation_refuses_bad_definitions(crd_server):
    async with crd_server.client() as c:
        two = crd()
        two["spec"]["versions"].append(dict(copy.deepcopy(two["spec"]["versions"][0]), name="v2"))
        r = await c.post(CRDS, json=two)
        assert r.status_code == 422 and "must have exactly one version marked as storage version" in r.text
        misnamed = crd()
        misnamed["metadata"]["name"] = "other.example.com"
        r = await c.post(CRDS, json=misnamed)
        assert r.status_code == 422 and 'must be spec.names.plural+\\".\\"+spec.group' in r.text


async def test_deleting_a_crd_deletes_its_objects_then_stops_serving(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        for name in ("a", "b"):
            await c.post(WIDGETS, json=widget(name))
        deleted = await c.delete(f"{CRDS}/widgets.{GROUP}")
        assert deleted.status_code == 200
        await watch_crd(c, lambda o: o is None)
        assert (await c.get(WIDGETS)).status_code == 404
        assert GROUP not in [g["name"] for g in (await c.get("/apis")).json()["groups"]]


async def test_custom_objects_are_authorized_by_rbac(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        await c.post(WIDGETS, json=widget("w"))
        headers = {"Impersonate-User": "mallory"}
        assert (await c.get(f"{WIDGETS}/w", headers=headers)).status_code == 403
        await c.post("/apis/rbac.authorization.svc.io/v1/namespaces/default/roles", json={
            "apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "widgets"},
            "rules": [{"apiGroups": [GROUP], "resources": ["widgets"], "verbs": ["get"]}]})
        await c.post("/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings", json={
            "apiVersion": "rbac.authorization.svc.io/v1", "kind": "RoleBinding", "metadata": {"name": "widgets"},
            "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "Role", "name": "widgets"},
            "subjects": [{"kind": "User", "name": "mallory"}]})
        assert (await c.get(f"{WIDGETS}/w", headers=headers)).status_code == 200


async def test_custom_kinds_page_watch_dry_run_and_answer_yaml_and_partial_metadata_as_built_in_ones(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        start = (await c.get(WIDGETS)).json()["metadata"]["resourceVersion"]
        for i in range(3):
            body = widget(f"w{i}")
            body["metadata"]["labels"] = {"odd": str(i % 2 == 1).lower()}
            assert (await c.post(WIDGETS, json=body)).status_code == 201
        first = (await c.get(WIDGETS, params={"limit": 2})).json()
        assert [o["metadata"]["name"] for o in first["items"]] == ["w0", "w1"]
        assert first["metadata"]["remainingItemCount"] == 1
        rest = (await c.get(WIDGETS, params={"limit": 2, "continue": first["metadata"]["continue"]})).json()
        assert [o["metadata"]["name"] for o in rest["items"]] == ["w2"]
        odd = (await c.get(WIDGETS, params={"labelSelector": "odd=true"})).json()["items"]
        assert [o["metadata"]["name"] for o in odd] == ["w1"]
        watched = await c.get(WIDGETS, params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "1"})
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in map(json.loads, watched.text.splitlines())] \
            == [("ADDED", "w0"), ("ADDED", "w1"), ("ADDED", "w2")]
        dry = await c.post(WIDGETS, params={"dryRun": "All"}, json=widget("dry"))
        assert dry.status_code == 201 and (await c.get(f"{WIDGETS}/dry")).status_code == 404
        as_yaml = await c.get(f"{WIDGETS}/w0", headers={"Accept": "application/yaml"})
        assert as_yaml.headers["Content-Type"] == "application/yaml" and \
            yaml.safe_load(as_yaml.text)["spec"]["maxSize"] == 10
        meta = (await c.get(WIDGETS, headers={
            "Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"})).json()
        assert meta["kind"] == "PartialObjectMetadataList" and set(meta["items"][0]) == {"kind", "apiVersion",
                                                                                       "metadata"}


async def test_a_custom_object_with_a_finalizer_waits_for_it_when_deleted(crd_server):
    async with crd_server.client() as c:
        await c.post(CRDS, json=crd())
        await established(c)
        held = widget("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(WIDGETS, json=held)
        deleted = await c.delete(f"{WIDGETS}/held")
        assert deleted.status_code == 200 and deleted.json()["metadata"]["deletionTimestamp"]
        assert (await c.get(f"{WIDGETS}/held")).status_code == 200
        await c.patch(f"{WIDGETS}/held", json={"metadata": {"finalizers": None}},
                      headers={"Content-Type": "application/merge-patch+json"})
        assert (await c.get(f"{WIDGETS}/held")).status_code == 404
