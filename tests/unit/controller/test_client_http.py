"""HTTPClient rules beyond the shared contract: wire details, Protobuf framing, TLS and credentials."""

from __future__ import annotations

import json

import httpx
import pytest

from api.certs import ensure_pki, issue_client_cert
from runtime.client.kubeconfig import load_kubeconfig
from runtime.machinery import errors
from runtime.client.interface import DecodeError, TransportError
from runtime.client.http import HTTPClient, open_http_client
from runtime.client.kubeconfig import KubeConfig
from runtime.machinery.serializer import protobuf
from runtime.machinery.scheme import Scheme
from tests.support.server import start_server

CONFIG = KubeConfig("http://miniplane.test")


def mock_client(handler, **kw) -> HTTPClient:
    return HTTPClient(CONFIG, scheme=Scheme(), transport=httpx.MockTransport(handler), **kw)


async def test_list_with_a_resource_version_also_sends_resource_version_match():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return httpx.Response(200, json={"kind": "RoleList", "apiVersion": "rbac.authorization.svc.io/v1",
                                         "metadata": {"resourceVersion": "12"}, "items": []})

    async with mock_client(handler) as client:
        await client.list(client.scheme.by_kind("Role"), namespace="a", resource_version="10")
        await client.list(client.scheme.by_kind("Role"), namespace="a", resource_version="10",
                          resource_version_match="Exact")
        await client.list(client.scheme.by_kind("Role"), namespace="a")
    assert seen[0] == {"resourceVersion": "10", "resourceVersionMatch": "NotOlderThan"}
    assert seen[1] == {"resourceVersion": "10", "resourceVersionMatch": "Exact"}
    assert seen[2] == {}


async def test_protobuf_answer_without_the_k8s_prefix_is_rejected():
    role = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "r"}}
    body = protobuf.encode(role)

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Accept"].startswith("application/vnd.kubernetes.protobuf")
        raw = body if request.url.path.endswith("/good") else body[len(protobuf.PROTOBUF_PREFIX):]
        return httpx.Response(200, content=raw, headers={"Content-Type": "application/vnd.kubernetes.protobuf"})

    async with mock_client(handler, protobuf=True) as client:
        good = await client.get(client.scheme.by_kind("Role"), "good", namespace="a")
        assert good["metadata"]["name"] == "r"
        with pytest.raises(DecodeError):
            await client.get(client.scheme.by_kind("Role"), "bad", namespace="a")


async def test_error_answers_raise_the_class_of_their_status_reason_or_code():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/status-body"):
            return httpx.Response(409, json={"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                             "reason": "AlreadyExists", "code": 409, "message": "taken"})
        return httpx.Response(404, text="404 page not found")

    async with mock_client(handler) as client:
        with pytest.raises(errors.AlreadyExists, match="taken"):
            await client.get(client.scheme.by_kind("Role"), "status-body", namespace="a")
        with pytest.raises(errors.NotFound):
            await client.get(client.scheme.by_kind("Role"), "plain-body", namespace="a")


async def test_watch_error_event_carries_the_410_status():
    expired = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
               "message": "too old resource version: 1 (5)"}

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.params["watch"] == "1" and request.url.params["allowWatchBookmarks"] == "true"
        lines = [{"type": "BOOKMARK", "object": {"kind": "Role", "metadata": {"resourceVersion": "4"}}},
                 {"type": "ERROR", "object": expired}]
        return httpx.Response(200, content=b"".join(json.dumps(e).encode() + b"\n" for e in lines),
                              headers={"Content-Type": "application/json"})

    async with mock_client(handler) as client:
        async with client.watch(client.scheme.by_kind("Role"), resource_version="1",
                                allow_watch_bookmarks=True) as events:
            seen = [event async for event in events]
    assert [e.type for e in seen] == ["BOOKMARK", "ERROR"]
    assert seen[0].resource_version == "4"
    error = seen[1].error()
    assert isinstance(error, errors.Expired) and error.code == 410


async def test_protobuf_watch_frames_are_decoded_in_order():
    roles = [{"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
              "metadata": {"name": f"r{i}", "namespace": "a", "resourceVersion": str(i)}} for i in (1, 2)]
    stream = protobuf.encode_watch_event("ADDED", roles[0]) + protobuf.encode_watch_event("MODIFIED", roles[1])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=stream,
                              headers={"Content-Type": "application/vnd.kubernetes.protobuf;stream=watch"})

    async with mock_client(handler, protobuf=True) as client:
        async with client.watch(client.scheme.by_kind("Role"), namespace="a") as events:
            seen = [(e.type, e.object["metadata"]["name"]) async for e in events]
    assert seen == [("ADDED", "r1"), ("MODIFIED", "r2")]


async def test_client_certificate_from_the_config_authenticates(nursery, tmp_path):
    pki = ensure_pki(tmp_path / "data")
    server = await start_server(nursery, tmp_path, client_ca_file=str(pki.ca_cert_path))
    cert, key = issue_client_cert(pki, "cert-user", ["system:masters"])
    config = KubeConfig(server.url, ca_pem=server.ca_pem, client_cert_pem=cert, client_key_pem=key)
    async with open_http_client(config) as client:
        review = await client.create({"apiVersion": f"authentication.{client.scheme.domain}/v1",
                                      "kind": "SelfSubjectReview"})
    assert review["status"]["userInfo"]["username"] == "cert-user"


async def test_server_not_signed_by_the_config_ca_is_a_transport_error(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)
    other_ca = ensure_pki(tmp_path / "elsewhere").ca_cert_pem
    config = KubeConfig(server.url, ca_pem=other_ca, token=server.token)
    client = HTTPClient(config, scheme=Scheme(server.domain))
    try:
        with pytest.raises(TransportError):
            await client.list(client.scheme.by_kind("ClusterRole"))
    finally:
        await client.aclose()


async def test_open_http_client_discovers_the_api_domain(nursery, tmp_path):
    server = await start_server(nursery, tmp_path, api_domain="k8s.io")
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        assert client.scheme.domain == "k8s.io"
        page = await client.list(client.scheme.by_kind("ClusterRole"))
    assert page.items and all(r["apiVersion"] == "rbac.authorization.k8s.io/v1" for r in page.items)
