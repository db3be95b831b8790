"""HTTP/2 answers (`api.serving.http2.Http2Protocol`): one of known length is one write,
and what Hypercorn's HTTP/2 did otherwise still holds (a watch's head at once, flow control, many streams).

Over real HTTPS with httpx's HTTP/2 (kubectl's and client-go's protocol). The server's writes are counted at
its TLS stream (`trio.SSLStream.send_all` of a server-side stream). Hypercorn's HTTP/2 wrote
a GET's answer in three (its head, its data, an empty frame ending the stream): the first test fails on it.
"""

from __future__ import annotations

import json
import ssl

import httpx
import pytest
import trio

from tests.support.server import Server

pytestmark = pytest.mark.stores("memory")  # the HTTP layer's: any store answers the same

ROLES = "/apis/rbac.authorization.svc.io/v1/clusterroles"


def _client(srv: Server) -> httpx.AsyncClient:
    context = ssl.create_default_context(cadata=srv.ca_pem.decode())
    return httpx.AsyncClient(base_url=srv.url, verify=context, http2=True, timeout=30,
                             headers={"Authorization": f"Bearer {srv.token}"})


@pytest.fixture
def server_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the server's TLS writes, from now on."""
    writes: list[int] = []
    send_all = trio.SSLStream.send_all

    async def counted(self: trio.SSLStream, data: bytes) -> None:
        if self.server_side:  # httpx's HTTP/2 on trio writes through trio's SSLStream too
            writes.append(len(data))
        await send_all(self, data)
    monkeypatch.setattr(trio.SSLStream, "send_all", counted)
    return writes


@pytest.mark.parametrize("accept", ["application/json", "application/vnd.kubernetes.protobuf"])
async def test_an_answer_of_known_length_over_http2_is_one_write(https_server: Server, server_writes: list[int],
                                                                 accept: str) -> None:
    async with _client(https_server) as client:
        first = await client.get(f"{ROLES}/admin", headers={"Accept": accept})  # the connection's set-up
        assert (first.status_code, first.http_version) == (200, "HTTP/2")
        server_writes.clear()
        again = await client.get(f"{ROLES}/admin", headers={"Accept": accept})
        assert again.status_code == 200 and again.content == first.content
        missing = await client.get(f"{ROLES}/missing")
        assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"
    assert len(server_writes) == 2, server_writes  # one per answer (then the connection's close: not counted)


async def test_a_watch_over_http2_gets_its_head_before_any_event(https_server: Server) -> None:
    async with _client(https_server) as client:
        listed = (await client.get(ROLES)).json()
        with trio.fail_after(20):  # a guard: the head must come with no event to carry it
            async with client.stream("GET", ROLES, params={"watch": "1", "resourceVersion":
                                                           listed["metadata"]["resourceVersion"]}) as watch:
                assert watch.status_code == 200
                created = await client.post(ROLES, json={"metadata": {"name": "watched"}, "rules": []})
                assert created.status_code == 201
                async for line in watch.aiter_lines():
                    event = json.loads(line)
                    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "watched")
                    break


async def test_an_answer_past_the_flow_control_window_arrives_whole(https_server: Server) -> None:
    data = {f"key-{i}": "v" * 1000 for i in range(300)}  # about 300 KiB: past HTTP/2's 64 KiB initial window
    async with _client(https_server) as client:
        created = await client.post("/api/v1/namespaces/default/configmaps",
                                    json={"metadata": {"name": "big"}, "data": data})
        assert created.status_code == 201
        got = await client.get("/api/v1/namespaces/default/configmaps/big")
        assert got.status_code == 200 and got.json()["data"] == data


async def test_an_answer_of_many_frames_within_the_windows_is_one_write(https_server: Server,
                                                                        server_writes: list[int]) -> None:
    # Hypercorn's h2 handed every answer to its send task, which wrote each DATA frame on its own.
    data = {f"key-{i}": "v" * 1000 for i in range(30)}  # about 30 KiB: two DATA frames, within the window
    async with _client(https_server) as client:
        created = await client.post("/api/v1/namespaces/default/configmaps",
                                    json={"metadata": {"name": "mid"}, "data": data})
        assert created.status_code == 201
        server_writes.clear()
        got = await client.get("/api/v1/namespaces/default/configmaps/mid", headers={"Accept-Encoding": "identity"})
        assert len(got.content) > 16384  # past HTTP/2's default frame size
        assert got.status_code == 200 and got.json()["data"] == data
        head = await client.head(f"{ROLES}/admin")
        assert head.status_code == 200 and head.content == b""
    assert len(server_writes) == 2, server_writes  # the GET's, the HEAD's


async def test_many_streams_on_one_http2_connection_are_each_answered(https_server: Server) -> None:
    answers: dict[int, int] = {}
    async with _client(https_server) as client:
        async def get(i: int) -> None:
            answers[i] = (await client.get(f"{ROLES}/{'admin' if i % 2 else 'missing'}")).status_code
        async with trio.open_nursery() as nursery:
            for i in range(60):
                nursery.start_soon(get, i)
    assert answers == {i: 200 if i % 2 else 404 for i in range(60)}
