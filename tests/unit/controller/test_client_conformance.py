"""One client contract, two transports: every test runs in-process, over HTTP+JSON and HTTP+Protobuf."""

from __future__ import annotations

import pytest
import trio

from runtime.client.kubeconfig import KubeConfig, load_kubeconfig
from runtime import models
from runtime.machinery import errors
from runtime.client.interface import (
    APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, Client, ObjectKey, ignore_not_found,
)
from runtime.client.http import HTTPClient, open_http_client
from runtime.machinery.options import PATCH_TYPES, PatchType
from runtime.client.local import LocalClient
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.server.bootstrap import bootstrap as bootstrap_registry
from runtime.controller.testing import ADMIN
from runtime.client.typed import CustomResource, bind_kind
from tests.support.server import start_server


@pytest.fixture(params=["local", "http-json", "http-protobuf"])
async def client(request, nursery, tmp_path):
    if request.param == "local":
        registry = Registry(MemoryStore(), Scheme())
        await nursery.start(registry.run)
        await bootstrap_registry(registry)
        yield LocalClient(registry, ADMIN, field_manager="conformance")
        return
    server = await start_server(nursery, tmp_path)
    http = HTTPClient(load_kubeconfig(server.kubeconfig), scheme=Scheme(server.domain),
                      protobuf=request.param == "http-protobuf", field_manager="conformance")
    yield http
    await http.aclose()


def namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def role(name: str, ns: str = "default", labels: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]}


def rt(client: Client, kind: str):
    return client.scheme.by_kind(kind)


async def test_both_transports_implement_the_client_protocol(client):
    assert isinstance(client, Client)


async def test_create_then_get_returns_the_stored_object(client):
    created = await client.create(role("reader"))
    assert created["metadata"]["resourceVersion"]
    got = await client.get(rt(client, "Role"), "reader", namespace="default")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert got["rules"] == created["rules"]
    assert got["kind"] == "Role" and got["apiVersion"] == "rbac.authorization.svc.io/v1"


async def test_get_of_a_missing_object_raises_not_found(client):
    with pytest.raises(errors.NotFound):
        await client.get(rt(client, "Role"), "nope", namespace="default")


async def test_create_of_a_taken_name_raises_already_exists(client):
    await client.create(role("twice"))
    with pytest.raises(errors.AlreadyExists):
        await client.create(role("twice"))


async def test_typed_kinds_take_and_return_model_instances(client):
    created = await client.create(models.Role.model_validate(role("typed")))
    assert isinstance(created, models.Role)
    got = await client.get(models.Role, "typed", namespace="default")
    assert isinstance(got, models.Role) and got.metadata.uid == created.metadata.uid
    page = await client.list(models.Role, namespace="default")
    assert [r.metadata.name for r in page.items] == ["typed"]


async def test_update_with_a_stale_resource_version_raises_conflict(client):
    created = await client.create(role("stale"))
    fresh = dict(created, rules=[{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}])
    updated = await client.update(fresh)
    assert updated["rules"][0]["verbs"] == ["list"]
    with pytest.raises(errors.Conflict):
        await client.update(created)


async def test_list_returns_the_namespace_and_label_selection(client):
    await client.create(namespace("other"))
    await client.create(role("a", labels={"team": "x"}))
    await client.create(role("b"))
    await client.create(role("c", ns="other", labels={"team": "x"}))
    in_default = await client.list(rt(client, "Role"), namespace="default")
    assert [r["metadata"]["name"] for r in in_default.items] == ["a", "b"]
    labelled = await client.list(rt(client, "Role"), label_selector="team=x")
    assert sorted(str(ObjectKey(r["metadata"]["namespace"], r["metadata"]["name"])) for r in labelled.items) \
        == ["default/a", "other/c"]
    assert int(labelled.resource_version) >= int(in_default.resource_version)


async def test_list_at_a_resource_version_is_not_older_than_it(client):
    created = await client.create(role("rv"))
    page = await client.list(rt(client, "Role"), namespace="default",
                             resource_version=created["metadata"]["resourceVersion"])
    assert int(page.resource_version) >= int(created["metadata"]["resourceVersion"])
    assert [r["metadata"]["name"] for r in page.items] == ["rv"]


async def test_list_pages_with_limit_and_continue(client):
    for name in ("p1", "p2", "p3"):
        await client.create(role(name))
    first = await client.list(rt(client, "Role"), namespace="default", limit=2)
    assert len(first.items) == 2 and first.continue_token and first.remaining_item_count == 1
    rest = await client.list(rt(client, "Role"), namespace="default", limit=2, continue_token=first.continue_token)
    assert [r["metadata"]["name"] for r in rest.items] == ["p3"] and not rest.continue_token
    assert rest.resource_version == first.resource_version


@pytest.mark.parametrize("patch_type,patch", [
    (MERGE_PATCH, {"metadata": {"labels": {"patched": "merge"}}}),
    (JSON_PATCH, [{"op": "add", "path": "/metadata/labels", "value": {"patched": "json"}}]),
    (STRATEGIC_MERGE_PATCH, {"metadata": {"labels": {"patched": "strategic"}}}),
])
async def test_each_patch_type_changes_the_object(client, patch_type, patch):
    await client.create(role("patched"))
    result = await client.patch(rt(client, "Role"), "patched", patch, patch_type=patch_type, namespace="default")
    assert result["metadata"]["labels"]["patched"] in ("merge", "json", "strategic")
    assert result["rules"] == role("patched")["rules"]


async def test_apply_patch_creates_then_updates_the_object(client):
    body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "applied"},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]}
    created = await client.patch(rt(client, "ClusterRole"), "applied", body, patch_type=APPLY_PATCH,
                                 field_manager="tester", force=True)
    assert created["rules"][0]["verbs"] == ["get"]
    body["rules"][0]["verbs"] = ["get", "list"]
    updated = await client.patch(rt(client, "ClusterRole"), "applied", body, patch_type=APPLY_PATCH,
                                 field_manager="tester", force=True)
    assert updated["rules"][0]["verbs"] == ["get", "list"]
    assert any(m["manager"] == "tester" for m in updated["metadata"]["managedFields"])


def label_patch(kind: PatchType, value: str) -> object:
    if kind is PatchType.JSON:
        return [{"op": "add", "path": "/metadata/labels", "value": {"patched": value}}]
    if kind is PatchType.APPLY:
        return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "named", "labels": {"patched": value}}}
    return {"metadata": {"labels": {"patched": value}}}


@pytest.mark.parametrize("form", ["enum", "value"])
@pytest.mark.parametrize("kind", list(PatchType), ids=[k.value for k in PatchType])
async def test_a_patch_type_is_named_by_the_enum_or_its_value(client, kind, form):
    await client.create({"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": "named"}, "rules": []})
    named = kind if form == "enum" else kind.value
    result = await client.patch(rt(client, "ClusterRole"), "named", label_patch(kind, kind.value), patch_type=named)
    assert result["metadata"]["labels"] == {"patched": kind.value}


@pytest.mark.parametrize("bad", ["application/json", "Merge", "yaml", "", None, 3])
async def test_an_unknown_patch_type_is_a_client_side_type_error_naming_the_accepted_ones(client, bad):
    with pytest.raises(TypeError) as raised:
        await client.patch(rt(client, "ClusterRole"), "named", {}, patch_type=bad)
    message = str(raised.value)
    assert all(f"{name!r}" in message for name in ("json", "merge", "strategic", "apply", *PATCH_TYPES))


async def test_merge_patch_with_a_stale_resource_version_raises_conflict(client):
    created = await client.create(role("cond"))
    await client.patch(rt(client, "Role"), "cond", {"metadata": {"labels": {"a": "1"}}}, namespace="default")
    with pytest.raises(errors.Conflict):
        await client.patch(rt(client, "Role"), "cond",
                           {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"],
                                         "labels": {"a": "2"}}}, namespace="default")


async def test_status_subresource_update_changes_only_status(client):
    ns = await client.create(namespace("withstatus"))
    ns["status"]["conditions"] = [{"type": "Example", "status": "True", "reason": "Test", "message": "m"}]
    ns["metadata"]["labels"] = {"ignored": "yes"}
    updated = await client.update(ns, subresource="status")
    assert updated["status"]["conditions"][0]["type"] == "Example"
    assert "ignored" not in (updated["metadata"].get("labels") or {})


async def test_delete_without_finalizers_removes_the_object(client):
    await client.create(role("gone"))
    answer = await client.delete(rt(client, "Role"), "gone", namespace="default")
    assert answer["kind"] == "Status" and answer["status"] == "Success"
    with pytest.raises(errors.NotFound):
        await client.get(rt(client, "Role"), "gone", namespace="default")
    with ignore_not_found():
        await client.delete(rt(client, "Role"), "gone", namespace="default")


async def test_delete_with_finalizers_marks_the_object_terminating(client):
    obj = role("held")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(obj)
    answer = await client.delete(rt(client, "Role"), "held", namespace="default")
    assert answer["kind"] == "Role" and answer["metadata"]["deletionTimestamp"]


async def test_delete_with_a_wrong_uid_precondition_raises_conflict(client):
    await client.create(role("pre"))
    with pytest.raises(errors.Conflict):
        await client.delete(rt(client, "Role"), "pre", namespace="default", preconditions={"uid": "not-it"})


async def test_delete_collection_removes_the_selected_objects(client):
    await client.create(role("k1", labels={"sweep": "yes"}))
    await client.create(role("k2"))
    await client.delete_collection(rt(client, "Role"), namespace="default", label_selector="sweep=yes")
    left = await client.list(rt(client, "Role"), namespace="default")
    assert [r["metadata"]["name"] for r in left.items] == ["k2"]


async def test_watch_from_a_list_version_sees_every_later_change_in_order(client):
    roles = rt(client, "Role")
    page = await client.list(roles, namespace="default")
    async with client.watch(roles, namespace="default", resource_version=page.resource_version) as events:
        created = await client.create(role("w"))
        await client.patch(roles, "w", {"metadata": {"labels": {"x": "y"}}}, namespace="default")
        await client.delete(roles, "w", namespace="default")
        seen = []
        with trio.fail_after(10):
            async for event in events:
                seen.append((event.type, event.object["metadata"]["name"]))
                if event.type == "DELETED":
                    break
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    assert created["metadata"]["resourceVersion"]


async def test_watch_with_initial_events_ends_them_with_a_bookmark(client):
    roles = rt(client, "Role")
    await client.create(role("initial"))
    async with client.watch(roles, namespace="default", send_initial_events=True,
                            allow_watch_bookmarks=True) as events:
        with trio.fail_after(10):
            first = await events.__anext__()
            second = await events.__anext__()
    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "initial")
    assert second.type == "BOOKMARK" and second.resource_version
    assert second.object["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"


async def test_a_user_without_rules_is_forbidden(client):
    # In process: an authenticated user RBAC grants nothing. Over HTTP with no credentials and anonymous
    # authentication on (the server's default): system:anonymous, authorized like anyone, so 403 as
    # kube-apiserver answers, never 401.
    if isinstance(client, LocalClient):
        nobody = client.with_user(UserInfo("nobody", groups=("system:authenticated",)))
    else:
        nobody = HTTPClient(KubeConfig(client.config.server, ca_pem=client.config.ca_pem, token=None),
                            scheme=client.scheme)
    try:
        with pytest.raises(errors.Forbidden):
            await nobody.list(rt(client, "Role"), namespace="default")
    finally:
        if isinstance(nobody, HTTPClient):
            await nobody.aclose()


async def test_no_credentials_with_anonymous_auth_off_is_unauthorized(nursery, tmp_path):
    server = await start_server(nursery, tmp_path, anonymous_auth=False)
    config = load_kubeconfig(server.kubeconfig)
    async with open_http_client(KubeConfig(config.server, ca_pem=config.ca_pem, token=None),
                                domain=server.domain) as nobody:
        with pytest.raises(errors.Unauthorized):
            await nobody.list(nobody.scheme.by_kind("Role"), namespace="default")


# ---- a kind bound by bind_kind but not served (no CRD yet) ------------------------------------------

class Gadget(CustomResource):
    spec: dict = {}


#: A group no server here serves: the kind is bound in the client only.
GADGETS = bind_kind(Gadget, "unserved.example.com/v1", "gadgets", namespaced=False)


def gadget(name: str) -> dict:
    return {"apiVersion": "unserved.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": {}}


async def test_every_verb_on_a_bound_kind_not_served_raises_not_found_dict_or_typed(client):
    async def watch_one() -> None:
        async with client.watch(GADGETS) as events:
            await events.__anext__()
    calls = {
        "create dict": lambda: client.create(gadget("a")),
        "create typed": lambda: client.create(Gadget.model_validate(gadget("a"))),
        "update dict": lambda: client.update(gadget("a")),
        "update typed": lambda: client.update(Gadget.model_validate(gadget("a"))),
        "get": lambda: client.get(GADGETS, "a"),
        "get typed": lambda: client.get(Gadget, "a"),
        "list": lambda: client.list(Gadget),
        "watch": watch_one,
        "patch": lambda: client.patch(GADGETS, "a", {"spec": {}}),
        "delete": lambda: client.delete(Gadget, "a"),
        "delete_collection": lambda: client.delete_collection(GADGETS),
    }
    answers = {}
    for verb, call in calls.items():
        with pytest.raises(errors.NotFound) as raised:
            await call()
        answers[verb] = str(raised.value)
    assert len(set(answers.values())) == 1, answers


def test_ignore_conflict_suppresses_a_conflict_only():
    from runtime.client.interface import ignore_conflict

    with ignore_conflict():
        raise errors.Conflict('roles "r" is being modified')
    with pytest.raises(errors.AlreadyExists), ignore_conflict():
        raise errors.AlreadyExists('roles "r" already exists')  # also a 409, but not a Conflict
    with pytest.raises(errors.NotFound), ignore_conflict():
        raise errors.NotFound('roles "r" not found')
