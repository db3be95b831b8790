"""Server-side Tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): columns, rows, lists, watches."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from runtime.server.kinds import age
from runtime.machinery.scheme import Scheme
from tests.support.server import Server

TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


def table_of(g: str = "meta.k8s.io", v: str = "v1", media: str = "application/json") -> dict:
    return {"Accept": f"{media};as=Table;g={g};v={v}"}


async def seed(srv: Server) -> None:
    rbac = f"rbac.authorization.{srv.domain}"
    async with srv.client() as c:
        await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "team"}})
        await c.post(f"{srv.rbac}/namespaces/team/roles", json={
            "apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": []})
        await c.post(f"{srv.rbac}/namespaces/team/rolebindings", json={
            "apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "apiGroup": rbac, "name": "alice"},
                         {"kind": "User", "apiGroup": rbac, "name": "bob"},
                         {"kind": "Group", "apiGroup": rbac, "name": "devs"},
                         {"kind": "ServiceAccount", "name": "robot", "namespace": "team"}]})


def names(table: dict) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


async def test_default_columns_are_name_and_created_at(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles/admin", headers=table_of())
        plain = (await c.get(f"{server.rbac}/clusterroles/admin")).json()
    table = r.json()
    assert r.status_code == 200 and table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["columnDefinitions"][0] == {
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": table["columnDefinitions"][0]["description"]}
    assert table["columnDefinitions"][1]["type"] == "date" and names(table) == ["Name", "Created At"]
    assert table["rows"][0]["cells"] == ["admin", plain["metadata"]["creationTimestamp"]]
    assert table["metadata"] == {"resourceVersion": plain["metadata"]["resourceVersion"]}


async def test_binding_columns_are_kubectls_with_subjects_at_priority_one(server):
    await seed(server)
    async with server.client() as c:
        table = (await c.get(f"{server.rbac}/namespaces/team/rolebindings", headers=table_of())).json()
    assert names(table) == ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    assert [col["priority"] for col in table["columnDefinitions"]] == [0, 0, 0, 1, 1, 1]
    (row,) = table["rows"]
    name, role, row_age, users, groups, sas = row["cells"]
    assert (name, role, users, groups, sas) == ("rb", "Role/r", "alice, bob", "devs", "team/robot")
    assert row_age.endswith("s")


async def test_cluster_role_binding_and_namespace_columns(server):
    async with server.client() as c:
        crb = (await c.get(f"{server.rbac}/clusterrolebindings/cluster-admin", headers=table_of())).json()
        ns = (await c.get("/api/v1/namespaces", headers=table_of())).json()
    assert names(crb) == ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    assert crb["rows"][0]["cells"][1] == "ClusterRole/cluster-admin"
    assert crb["rows"][0]["cells"][4] == "system:masters"
    assert names(ns) == ["Name", "Status", "Age"]
    assert ["default", "Active"] in [row["cells"][:2] for row in ns["rows"]]


@pytest.mark.parametrize("kind", ["ClusterRole", "Role", "SubjectAccessReview"])
def test_roles_and_kinds_without_own_columns_show_name_and_created_at(kind):
    assert [c["name"] for c in Scheme().by_kind(kind).strategy.columns.definitions] == ["Name", "Created At"]


async def test_each_row_object_is_partial_object_metadata_with_its_namespace(server):
    await seed(server)
    async with server.client() as c:
        table = (await c.get(f"{server.rbac}/roles", headers=table_of())).json()
    (row,) = [r for r in table["rows"] if r["cells"][0] == "r"]
    obj = row["object"]
    assert obj["kind"] == "PartialObjectMetadata" and obj["apiVersion"] == "meta.k8s.io/v1"
    assert obj["metadata"]["namespace"] == "team" and set(obj) == {"kind", "apiVersion", "metadata"}


@pytest.mark.parametrize("include,check", [
    ("None", lambda o: o is None),
    ("Object", lambda o: o["kind"] == "ClusterRole" and "rules" in o),
    ("Metadata", lambda o: o["kind"] == "PartialObjectMetadata"),
])
async def test_include_object_chooses_what_each_row_carries(server, include, check):
    async with server.client() as c:
        table = (await c.get(f"{server.rbac}/clusterroles", params={"includeObject": include},
                             headers=table_of())).json()
    assert table["rows"] and all(check(row["object"]) for row in table["rows"])


async def test_unknown_include_object_is_400(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", params={"includeObject": "Everything"}, headers=table_of())
    assert r.status_code == 400 and "includeObject" in r.json()["message"]


@pytest.mark.parametrize("g,v", [("meta.k8s.io", "v1"), ("meta.k8s.io", "v1beta1"), ("meta.svc.io", "v1")])
async def test_the_answers_api_version_is_the_group_version_asked(server, g, v):
    async with server.client() as c:
        table = (await c.get(f"{server.rbac}/clusterroles", headers=table_of(g, v))).json()
    assert table["apiVersion"] == f"{g}/{v}"
    assert table["rows"][0]["object"]["apiVersion"] == f"{g}/{v}"


async def test_a_paged_table_carries_continue_and_remaining_item_count(server):
    async with server.client() as c:
        first = (await c.get(f"{server.rbac}/clusterroles", params={"limit": "2"}, headers=table_of())).json()
        rest = (await c.get(f"{server.rbac}/clusterroles", params={"continue": first["metadata"]["continue"]},
                            headers=table_of())).json()
        plain = (await c.get(f"{server.rbac}/clusterroles")).json()
    assert len(first["rows"]) == 2 and first["metadata"]["remainingItemCount"] == len(plain["items"]) - 2
    assert [r["cells"][0] for r in first["rows"] + rest["rows"]] == [i["metadata"]["name"] for i in plain["items"]]


async def test_a_table_can_be_answered_in_yaml(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles/admin", headers=table_of(media="application/yaml"))
    assert r.headers["content-type"] == "application/yaml" and yaml.safe_load(r.content)["kind"] == "Table"


async def test_table_alone_where_it_cannot_be_served_is_406_and_json_is_the_fallback(server):
    async with server.client() as c:
        alone = await c.get(f"{server.rbac}/clusterroles", headers=table_of(g="meta.example.com"))
        fallback = await c.get(f"{server.rbac}/clusterroles",
                               headers={"Accept": "application/json;as=Table;g=meta.example.com;v=v1, "
                                                  "application/json"})
    assert alone.status_code == 406 and alone.json()["kind"] == "Status"
    assert fallback.status_code == 200 and fallback.json()["kind"] == "ClusterRoleList"


async def test_watch_events_carry_tables_with_columns_on_the_first_only(server, autojump_clock):
    async with server.client() as c:
        async with c.stream("GET", f"{server.rbac}/clusterroles", params={"watch": "1", "timeoutSeconds": "1"},
                            headers={"Accept": TABLE}) as r:
            assert r.headers["content-type"] == "application/json"
            events = [json.loads(line) async for line in r.aiter_lines() if line]
    assert len(events) > 2 and all(e["object"]["kind"] == "Table" for e in events)
    assert events[0]["object"]["columnDefinitions"][0]["name"] == "Name"
    assert all(e["object"]["columnDefinitions"] is None for e in events[1:])
    assert all(len(e["object"]["rows"]) == 1 for e in events if e["type"] == "ADDED")


def test_ages_read_as_kubectl_prints_them():
    now = datetime(2024, 1, 10, 12, 0, 0, tzinfo=timezone.utc)

    def ago(**delta) -> str:
        return age((now - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ"), now)

    assert [ago(seconds=5), ago(seconds=119), ago(minutes=3, seconds=20), ago(minutes=7), ago(minutes=45),
            ago(hours=4, minutes=12), ago(hours=5), ago(hours=30), ago(days=3, hours=2), ago(days=40),
            ago(days=800), ago(days=365 * 9)] == [
        "5s", "119s", "3m20s", "7m", "45m", "4h12m", "5h", "30h", "3d2h", "40d", "2y70d", "9y"]
    assert age(None) == "<unknown>" and ago(seconds=-10) == "<invalid>"
