"""Paging (limit/continue) and selectors on lists, watches and deletecollection, through real HTTPS."""

from __future__ import annotations

import base64

import pytest
import trio

from tests.support.objects import cr
from tests.support.server import start_in_process


def role(ns: str, name: str) -> dict:
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": ns}, "rules": []}


@pytest.fixture
async def srv(nursery, tmp_path, autojump_clock):
    return await start_in_process(nursery, tmp_path)


async def make_roles(c, srv, names, **labels) -> None:
    for name in names:
        r = await c.post(f"{srv.rbac}/clusterroles", json=cr(name, **labels))
        assert r.status_code == 201, r.text


async def pages(c, path: str, params: dict) -> list[dict]:
    """Every page of a paged list, following continue until it is empty."""
    out = []
    token = ""
    while True:
        r = await c.get(path, params=dict(params, **({"continue": token} if token else {})))
        assert r.status_code == 200, r.text
        out.append(r.json())
        token = r.json()["metadata"].get("continue", "")
        if not token:
            return out


def names(doc: dict) -> list[str]:
    return [i["metadata"]["name"] for i in doc["items"]]


async def test_limit_returns_at_most_limit_items_and_a_continue_token(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b", "p-c"])
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "2"})).json()
    assert len(doc["items"]) == 2 and doc["metadata"]["continue"]


async def test_following_continue_lists_every_item_once_in_key_order(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, [f"p-{i:02d}" for i in range(7)])
        full = names((await c.get(f"{srv.rbac}/clusterroles")).json())
        paged = [n for page in await pages(c, f"{srv.rbac}/clusterroles", {"limit": "3"}) for n in names(page)]
    assert paged == full == sorted(full)


async def test_every_page_carries_the_first_pages_resource_version_and_hides_later_changes(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b", "p-c", "p-d"])
        first = (await c.get(f"{srv.rbac}/clusterroles", params={"labelSelector": "", "limit": "1"})).json()
        await make_roles(c, srv, ["p-bb"])  # would sort into a later page
        await c.delete(f"{srv.rbac}/clusterroles/p-d")
        rest = []
        token = first["metadata"]["continue"]
        while token:
            doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "2", "continue": token})).json()
            assert doc["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
            rest += names(doc)
            token = doc["metadata"].get("continue", "")
    seen = names(first) + rest
    assert "p-bb" not in seen and "p-d" in seen


async def test_remaining_item_count_is_the_number_of_items_not_in_this_page(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        total = len((await c.get(f"{srv.rbac}/clusterroles")).json()["items"])
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "3"})).json()
    assert doc["metadata"]["remainingItemCount"] == total - 3


async def test_remaining_item_count_is_omitted_on_the_last_page(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a"])
        docs = await pages(c, f"{srv.rbac}/clusterroles", {"limit": "4"})
    assert len(docs) > 1
    assert "remainingItemCount" not in docs[-1]["metadata"] and "continue" not in docs[-1]["metadata"]


@pytest.mark.parametrize("selector", [{"labelSelector": "team=a"}, {"fieldSelector": "metadata.name!=p-x"}])
async def test_remaining_item_count_is_omitted_with_selectors(srv, selector, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-1", "p-2", "p-3"], team="a")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", **selector})).json()
    assert doc["metadata"]["continue"] and "remainingItemCount" not in doc["metadata"]


async def test_paging_with_a_label_selector_returns_only_matches_in_full_pages(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-1", "p-3", "p-5"], team="a")
        await make_roles(c, srv, ["p-2", "p-4"], team="b")
        docs = await pages(c, f"{srv.rbac}/clusterroles", {"limit": "2", "labelSelector": "team=a"})
    assert [names(d) for d in docs] == [["p-1", "p-3"], ["p-5"]]


async def test_paging_a_namespace_lists_only_that_namespace(srv, autojump_clock):
    async with srv.client() as c:
        for ns in ("ns-a", "ns-b"):
            await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            for i in range(3):
                r = await c.post(f"{srv.rbac}/namespaces/{ns}/roles", json=role(ns, f"r{i}"))
                assert r.status_code == 201, r.text
        docs = await pages(c, f"{srv.rbac}/namespaces/ns-a/roles", {"limit": "2"})
        everywhere = await pages(c, f"{srv.rbac}/roles", {"limit": "2"})
    assert [names(d) for d in docs] == [["r0", "r1"], ["r2"]]
    assert docs[0]["metadata"]["remainingItemCount"] == 1
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for d in everywhere for i in d["items"]} >= {
        (ns, f"r{i}") for ns in ("ns-a", "ns-b") for i in range(3)}


async def test_continue_token_is_opaque(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
    assert "clusterroles" not in token and "/" not in token


async def test_a_modified_continue_token_is_400_not_a_crash(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
        raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        raw[10] ^= 1
        forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
        for bad in (forged, "not-a-token", "", "%%%"):
            if not bad:
                continue
            r = await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "continue": bad})
            assert r.status_code == 400, (bad, r.text)
            assert r.json()["reason"] == "BadRequest"
            assert r.json()["message"].startswith("invalid continue token: continue key is not valid")


async def test_a_continue_token_expires_after_the_continue_ttl_with_410_expired(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, continue_ttl=60)
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
        await trio.sleep(30)
        assert (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "continue": token})).status_code == 200
        await trio.sleep(31)
        r = await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "continue": token})
    assert r.status_code == 410
    assert r.json()["reason"] == "Expired"
    assert r.json()["message"].startswith("The provided continue parameter is too old")


async def test_a_continue_token_expires_when_its_version_is_compacted(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, watch_history=5, compaction_interval=1, continue_ttl=3600)
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
        await make_roles(c, srv, ["p-c"])
        await trio.sleep(30)
        r = await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1", "continue": token})
    assert r.status_code == 410 and r.json()["reason"] == "Expired"


async def test_a_continue_token_of_one_collection_pages_within_another_only(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["p-a", "p-b"])
        token = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()["metadata"]["continue"]
        r = await c.get(f"{srv.rbac}/clusterrolebindings", params={"limit": "1", "continue": token})
    assert r.status_code == 200
    assert all(i["kind"] == "ClusterRoleBinding" or "roleRef" in i for i in r.json()["items"])
    assert not {"p-a", "p-b"} & set(names(r.json()))


# ---- selectors -------------------------------------------------------------------------------------

async def test_label_selector_filters_a_list(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["l-1"], a="b")
        await make_roles(c, srv, ["l-2"], a="c")
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"labelSelector": "a=b"})).json()
    assert names(doc) == ["l-1"]


async def test_field_selector_on_metadata_name_lists_one_object(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["f-1", "f-2"])
        doc = (await c.get(f"{srv.rbac}/clusterroles", params={"fieldSelector": "metadata.name=f-2"})).json()
    assert names(doc) == ["f-2"]


MALFORMED = [
    ({"labelSelector": "a in (b"}, None),
    ({"labelSelector": "!!a"}, None),
    ({"fieldSelector": "metadata.name"}, "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ({"fieldSelector": "spec.x=y"},
     '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'),
]


@pytest.mark.parametrize("params,message", MALFORMED)
@pytest.mark.parametrize("how", ["list", "watch", "deletecollection"])
async def test_malformed_selectors_are_400_on_list_watch_and_deletecollection(
        srv, params, message, how, autojump_clock):
    async with srv.client() as c:
        if how == "deletecollection":
            r = await c.request("DELETE", f"{srv.rbac}/clusterroles", params=params)
        else:
            extra = {"watch": "1"} if how == "watch" else {}
            r = await c.get(f"{srv.rbac}/clusterroles", params=dict(params, **extra))
    assert r.status_code == 400, r.text
    assert r.json()["reason"] == "BadRequest"
    if message:
        assert r.json()["message"] == message


async def test_deletecollection_deletes_only_what_the_selector_matches(srv, autojump_clock):
    async with srv.client() as c:
        await make_roles(c, srv, ["d-1", "d-2"], doomed="yes")
        await make_roles(c, srv, ["d-3"], doomed="no")
        r = await c.request("DELETE", f"{srv.rbac}/clusterroles", params={"labelSelector": "doomed=yes"})
        assert r.status_code == 200, r.text
        left = names((await c.get(f"{srv.rbac}/clusterroles", params={"labelSelector": "doomed"})).json())
    assert left == ["d-3"]


async def test_continue_token_survives_a_server_restart(nursery, tmp_path):
    """The signing key lives in the data directory and tokens carry wall-clock time, so a restarted
    server continues a list from its store's log (a forged token is still 400)."""
    with trio.CancelScope() as first:
        async with trio.open_nursery() as inner:
            srv = await start_in_process(inner, tmp_path, store="sqlite")
            async with srv.client() as c:
                for i in range(3):
                    await c.post(f"{srv.rbac}/clusterroles", json={
                        "apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": f"page-{i}", "labels": {"p": "y"}}, "rules": []})
                page = (await c.get(f"{srv.rbac}/clusterroles", params={"limit": "1"})).json()
            token = page["metadata"]["continue"]
            inner.cancel_scope.cancel()
    assert not first.cancelled_caught
    again = await start_in_process(nursery, tmp_path, store="sqlite")
    async with again.client() as c:
        r = await c.get(f"{again.rbac}/clusterroles", params={"limit": "1", "continue": token})
        assert r.status_code == 200, r.text
        assert r.json()["metadata"]["resourceVersion"] == page["metadata"]["resourceVersion"]
        assert [i["metadata"]["name"] for i in r.json()["items"]] != [i["metadata"]["name"] for i in page["items"]]
        forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        assert (await c.get(f"{again.rbac}/clusterroles", params={"limit": "1", "continue": forged})).status_code == 400
