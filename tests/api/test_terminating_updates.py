"""A terminating object's updates as kube-apiserver's generic store treats them (issue 35, point 11).

An update of an object being deleted deletes it only when it leaves no finalizer (`deleteOnUpdate`
in the generic registry's Update): removing one of two finalizers, or changing a label, keeps it
present and terminating; removing the last one deletes it. On a built-in kind (ClusterRole) and a
custom one (Widget), by merge patch, JSON patch and PUT.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.support.crds import crd_path, established, widget, widget_crd, widgets_path
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
HOLDS = ["example.com/first", "example.com/second"]


@dataclass
class Held:
    """A server and the URL of an object on it that two finalizers hold, deleted (terminating)."""

    server: Server
    url: str


@pytest.fixture(params=["ClusterRole", "Widget"])
async def held(request, nursery, tmp_path) -> Held:
    if request.param == "ClusterRole":
        server = await start_in_process(nursery, tmp_path)
        collection = f"{server.rbac}/clusterroles"
        body = {"metadata": {"name": "held", "finalizers": HOLDS}, "rules": []}
    else:
        server = await start_in_process(nursery, tmp_path, controllers=True)  # the CRD becomes Established
        collection = widgets_path()
        body = widget("held")
        body["metadata"]["finalizers"] = HOLDS
    async with server.client() as c:
        if request.param == "Widget":
            await ok(await c.post(crd_path(), json=widget_crd()), 201)
            await established(c)
        await ok(await c.post(collection, json=body), 201)
        deleted = await ok(await c.delete(f"{collection}/held"))
        assert deleted["metadata"]["deletionTimestamp"] and deleted["metadata"]["finalizers"] == HOLDS
    return Held(server, f"{collection}/held")


async def terminating(c, url: str) -> dict:
    """The object at `url`, asserted present and terminating."""
    obj = await ok(await c.get(url))
    assert obj["metadata"]["deletionTimestamp"]
    return obj


async def test_removing_one_of_two_finalizers_by_merge_patch_keeps_the_object_terminating(held):
    async with held.server.client() as c:
        stamp = (await terminating(c, held.url))["metadata"]["deletionTimestamp"]
        await ok(await c.patch(held.url, json={"metadata": {"finalizers": HOLDS[1:]}}, headers=MERGE))
        kept = await terminating(c, held.url)
        assert kept["metadata"]["finalizers"] == HOLDS[1:] and kept["metadata"]["deletionTimestamp"] == stamp


async def test_removing_one_of_two_finalizers_by_put_keeps_the_object_terminating(held):
    async with held.server.client() as c:
        current = await terminating(c, held.url)
        current["metadata"]["finalizers"] = HOLDS[:1]
        await ok(await c.put(held.url, json=current))
        assert (await terminating(c, held.url))["metadata"]["finalizers"] == HOLDS[:1]


async def test_relabelling_a_terminating_object_keeps_it_terminating(held):
    async with held.server.client() as c:
        await ok(await c.patch(held.url, json={"metadata": {"labels": {"team": "a"}}}, headers=MERGE))
        kept = await terminating(c, held.url)
        assert kept["metadata"]["labels"] == {"team": "a"} and kept["metadata"]["finalizers"] == HOLDS
        kept["metadata"]["labels"] = {"team": "b"}
        await ok(await c.put(held.url, json=kept))
        assert (await terminating(c, held.url))["metadata"]["labels"] == {"team": "b"}


async def test_removing_the_finalizers_one_by_one_deletes_the_object_with_the_last(held):
    async with held.server.client() as c:
        await ok(await c.patch(held.url, json=[{"op": "remove", "path": "/metadata/finalizers/0"}],
                               headers=JSON_PATCH))
        assert (await terminating(c, held.url))["metadata"]["finalizers"] == HOLDS[1:]
        await ok(await c.patch(held.url, json=[{"op": "remove", "path": "/metadata/finalizers/0"}],
                               headers=JSON_PATCH))
        assert (await c.get(held.url)).status_code == 404
