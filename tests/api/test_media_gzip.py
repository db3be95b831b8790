"""Response compression (gate APIResponseCompression, on) and lists streamed item by item."""

from __future__ import annotations

import gzip
import hashlib
import json

import httpx
import pytest

from runtime.machinery.serializer import protobuf
from runtime.server.featuregates import DEFAULT_GATES
from tests.support.server import Server, start_in_process

GZIP = {"Accept-Encoding": "gzip"}
PLAIN = {"Accept-Encoding": "identity"}  # httpx asks for gzip unless told otherwise


async def raw_get(srv: Server, path: str, headers: dict[str, str], **params) -> tuple[httpx.Response, bytes]:
    """The answer and its body as sent (httpx would otherwise decompress)."""
    async with srv.client() as c:
        async with c.stream("GET", path, headers=headers, params=params) as r:
            body = b"".join([chunk async for chunk in r.aiter_raw()])
    return r, body


@pytest.mark.parametrize("accept", ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
                                    "application/json;as=Table;g=meta.k8s.io;v=v1"])
async def test_get_and_list_are_gzipped_when_the_client_accepts_it(server, accept):
    for path in (f"{server.rbac}/clusterroles/admin", f"{server.rbac}/clusterroles"):
        r, body = await raw_get(server, path, {**GZIP, "Accept": accept})
        plain, plain_body = await raw_get(server, path, {**PLAIN, "Accept": accept})
        assert r.headers["content-encoding"] == "gzip" and "Accept-Encoding" in r.headers["vary"]
        assert "content-encoding" not in plain.headers
        unzipped = gzip.decompress(body)
        if "Table" in accept or "protobuf" not in accept:
            assert len(unzipped) == len(plain_body)
        else:
            assert unzipped == plain_body


async def test_gzip_q_zero_is_a_refusal(server):
    r, _ = await raw_get(server, f"{server.rbac}/clusterroles", {"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in r.headers


async def test_compression_is_off_with_its_gate(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, feature_gates={**DEFAULT_GATES, "APIResponseCompression": False})
    r, body = await raw_get(srv, f"{srv.rbac}/clusterroles", GZIP)
    assert r.status_code == 200
    assert "content-encoding" not in r.headers and json.loads(body)["kind"] == "ClusterRoleList"


async def test_answers_smaller_than_min_compress_bytes_are_sent_plain(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, min_compress_bytes=1_000_000)
    small, _ = await raw_get(srv, f"{srv.rbac}/clusterroles/admin", GZIP)
    listed, body = await raw_get(srv, f"{srv.rbac}/clusterroles", GZIP)
    assert "content-encoding" not in small.headers and "content-encoding" not in listed.headers
    assert json.loads(body)["items"]


async def test_watch_and_errors_are_not_compressed(server, autojump_clock):
    r, _ = await raw_get(server, f"{server.rbac}/clusterroles", GZIP, watch="1", timeoutSeconds="1")
    missing, _ = await raw_get(server, f"{server.rbac}/clusterroles/missing", GZIP)
    assert "content-encoding" not in r.headers and "content-encoding" not in missing.headers


async def fill(srv: Server, count: int) -> None:
    async with srv.client() as c:
        for i in range(count):
            r = await c.post(f"{srv.rbac}/clusterroles", json={
                "apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
                "metadata": {"name": f"bulk-{i:04d}", "annotations": {
                    "pad": "".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest() for j in range(32))}},
                "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]})
            assert r.status_code == 201


@pytest.mark.parametrize("accept,encoding", [("application/json", PLAIN),
                                             ("application/vnd.kubernetes.protobuf", PLAIN),
                                             ("application/json", GZIP)])
async def test_large_lists_are_streamed_in_chunks(https_server, accept, encoding):
    # Over real HTTPS: chunked transfer encoding is Hypercorn's, and this is the smoke test of gzip on the wire.
    server = https_server
    await fill(server, 120)
    async with server.client() as c:
        async with c.stream("GET", f"{server.rbac}/clusterroles", headers={"Accept": accept, **encoding}) as r:
            assert r.headers.get("transfer-encoding") == "chunked" and "content-length" not in r.headers
            chunks = [chunk async for chunk in r.aiter_raw()]
    body = b"".join(chunks)
    if encoding is GZIP:
        assert r.headers["content-encoding"] == "gzip"
        body = gzip.decompress(body)
    doc = json.loads(body) if accept == "application/json" else protobuf.decode(body)
    assert len(doc["items"]) > 120 and len(body) > 240_000
    assert len(chunks) > 1


async def test_pretty_lists_are_one_indented_document(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", params={"pretty": "true"})
    assert r.text.startswith('{\n  "kind": "ClusterRoleList"') and r.json()["items"]
