"""Label selectors parsed as apimachinery's parser; metadata-only answers as the spec says (issue 16)."""

from __future__ import annotations

from tests.support.rbac import ok


def cr(srv, name: str, **labels: str) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels}, "rules": []}


async def test_label_selector_in_with_an_empty_value_between_commas_matches_the_empty_value(server):
    async with server.client() as c:
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cr(server, "empty", x="")), 201)
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cr(server, "b", x="b")), 201)
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cr(server, "c", x="c")), 201)
        listed = await ok(await c.get(f"{server.rbac}/clusterroles", params={"labelSelector": "x in (a,,b)"}))
        assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["b", "empty"]


async def test_label_selector_in_ending_with_two_commas_is_refused(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", params={"labelSelector": "x in (a,,)"})
        assert r.status_code == 400
        assert r.json()["message"].endswith("found ')', expected: ',', or identifier")


def metadata_only(srv, as_kind: str) -> str:
    return f"application/json;as={as_kind};g=meta.{srv.domain};v=v1"


async def test_accept_partial_object_metadata_on_a_collection_answers_a_list(server):
    async with server.client() as c:
        for as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            r = await c.get(f"{server.rbac}/clusterroles", headers={"Accept": metadata_only(server, as_kind)})
            assert r.status_code == 200 and r.json()["kind"] == "PartialObjectMetadataList"
            assert r.json()["items"] and {i["kind"] for i in r.json()["items"]} == {"PartialObjectMetadata"}


async def test_a_form_the_answer_cannot_take_falls_back_to_the_next_accepted_type(server):
    async with server.client() as c:
        alone = await c.get(f"{server.rbac}/clusterroles/admin",
                            headers={"Accept": metadata_only(server, "PartialObjectMetadataList")})
        assert alone.status_code == 406
        accept = metadata_only(server, "PartialObjectMetadataList") + ", application/json;q=0.9"
        r = await c.get(f"{server.rbac}/clusterroles/admin", headers={"Accept": accept})
        assert r.status_code == 200 and r.json()["kind"] == "ClusterRole"
