"""The workload kinds on every store (issue 38): each kind's sample is created, read, listed, updated unchanged
(the same resourceVersion), watched and deleted over HTTP on memory, SQLite and etcd alike. The kinds' own rules
are tested once, on the memory store (tests/kinds/, tests/unit/kinds/): what differs between stores is the
store, which its conformance suite tests; this checks that nothing of the kinds depends on it (their keys,
their allocation reservations, the HPA's two versions over one storage)."""

from __future__ import annotations

import json

from tests.support.rbac import ok
from tests.support.server import start_in_process
from tests.support.workloads import SAMPLE_KINDS, sample


def _collection(srv, api_version: str, kind: str, namespaced: bool) -> str:
    rt = srv.registry.scheme.by_api_version_kind(api_version, kind)
    base = f"/api/{rt.version}" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    return f"{base}/namespaces/default/{rt.plural}" if namespaced else f"{base}/{rt.plural}"


async def test_every_workload_kind_is_created_read_listed_watched_and_deleted(nursery, tmp_path, autojump_clock):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with srv.client() as c:
        for api_version, kind in SAMPLE_KINDS:
            obj = sample(api_version, kind, f"s-{kind.lower()}"[:50])
            collection = _collection(srv, api_version, kind, "namespace" in obj["metadata"])
            made = await ok(await c.post(collection, json=obj), 201)
            name, rv = made["metadata"]["name"], made["metadata"]["resourceVersion"]
            read = await ok(await c.get(f"{collection}/{name}"))
            assert read == made, kind
            again = await ok(await c.put(f"{collection}/{name}", json=read))
            assert again["metadata"]["resourceVersion"] == rv, kind
            listed = await ok(await c.get(collection, params={"fieldSelector": f"metadata.name={name}"}))
            assert [o["metadata"]["name"] for o in listed["items"]] == [name], kind
            watched = await c.get(collection, params={"watch": "1", "resourceVersion": "0",
                                                      "fieldSelector": f"metadata.name={name}",
                                                      "timeoutSeconds": "1"})
            events = [json.loads(line) for line in watched.text.splitlines() if line]
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events][:1] == [("ADDED", name)], kind
            await ok(await c.delete(f"{collection}/{name}", params={"gracePeriodSeconds": "0",
                                                                     "propagationPolicy": "Background"}))
            assert (await c.get(f"{collection}/{name}")).status_code == 404, kind
