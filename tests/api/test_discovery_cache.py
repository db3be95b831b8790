"""Aggregated discovery is cacheable as kube-apiserver serves it: an entity tag, `Vary: Accept`,
`Cache-Control: public`, and 304 when the client names the document it holds (kubectl's discovery cache
revalidates with `If-None-Match`). The legacy documents carry none of it."""

from __future__ import annotations

import hashlib
import json

from tests.support.crds import crd_path, established, widget_crd
from tests.support.server import start_in_process

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList"


async def test_aggregated_discovery_has_an_etag_and_answers_304_for_the_document_held(server):
    async with server.client() as c:
        for path in ("/api", "/apis"):
            r = await c.get(path, headers={"Accept": AGGREGATED.format("v2")})
            body = json.dumps(r.json(), separators=(",", ":")).encode()
            assert r.headers["etag"] == '"' + hashlib.sha512(body).hexdigest().upper() + '"'
            assert (r.headers["vary"], r.headers["cache-control"]) == ("Accept", "public")
            beta = await c.get(path, headers={"Accept": AGGREGATED.format("v2beta1")})
            assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
            assert beta.headers["etag"] == r.headers["etag"]  # one tag for both versions, as Kubernetes
            held = await c.get(path, headers={"Accept": AGGREGATED.format("v2"), "If-None-Match": r.headers["etag"]})
            assert (held.status_code, held.content) == (304, b"")
            assert (held.headers["etag"], held.headers["vary"]) == (r.headers["etag"], "Accept")
            assert "content-type" not in held.headers  # a cache keeps the held document's
            other = await c.get(path, headers={"Accept": AGGREGATED.format("v2"), "If-None-Match": '"0"'})
            assert other.status_code == 200 and other.json() == r.json()
            legacy = await c.get(path)
            assert "etag" not in legacy.headers and legacy.headers["cache-control"] == "no-cache, private"


async def test_a_new_group_changes_the_etag_of_apis_only(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c:
        async def etags() -> list[str]:
            return [(await c.get(p, headers={"Accept": AGGREGATED.format("v2")})).headers["etag"]
                    for p in ("/api", "/apis")]

        core, apis = await etags()
        assert (await c.post(crd_path(server.domain), json=widget_crd(server.domain))).status_code == 201
        await established(c, domain=server.domain)
        core_now, apis_now = await etags()
        assert core_now == core and apis_now != apis
        held = await c.get("/apis", headers={"Accept": AGGREGATED.format("v2"), "If-None-Match": apis})
        assert held.status_code == 200  # the document held is stale: the new one comes
