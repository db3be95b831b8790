"""Rules of `runtime.server.storage.etcd.client`: the JSON it sends and reads, and the errors etcd's answers stand for.

Against a scripted loopback server (`tests.support.scripted_http`) that
answers as etcd's JSON gateway does, so each rule is checked on the bytes.
"""

from __future__ import annotations

import pytest

from runtime.server.storage import StoreError, StoreUnavailable
from runtime.server.storage.etcd.client import EtcdClient, EtcdRequestError
from tests.support.scripted_http import Answer, scripted_server


async def test_a_call_sends_compact_json_and_returns_the_decoded_answer() -> None:
    answer = b'{"header":{"revision":"7"},"kvs":[{"key":"L2s=","value":"w6k="}],"count":"1"}'
    async with scripted_server(lambda path, body: Answer(parts=[answer])) as server:
        client = EtcdClient([server.url])
        got = await client.call("/v3/kv/range", {"key": "L2s=", "limit": "1", "é": True}, idempotent=True)
        assert got == {"header": {"revision": "7"}, "kvs": [{"key": "L2s=", "value": "w6k="}], "count": "1"}
        assert server.requests == [("/v3/kv/range", '{"key":"L2s=","limit":"1","é":true}'.encode())]
        await client.aclose()


async def test_an_answer_that_is_not_json_is_a_store_error() -> None:
    async with scripted_server(lambda path, body: Answer(parts=[b"<html>"])) as server:
        client = EtcdClient([server.url])
        with pytest.raises(StoreError, match="answer is not JSON"):
            await client.call("/v3/kv/range", {}, idempotent=True)
        await client.aclose()


@pytest.mark.parametrize("status, body, error, code, message", [
    (400, b'{"error":"etcdserver: mvcc: required revision has been compacted","code":11,'
          b'"message":"etcdserver: mvcc: required revision has been compacted"}',
     EtcdRequestError, 11, "etcdserver: mvcc: required revision has been compacted"),
    (404, b"404 page not found\n", EtcdRequestError, 2, "404 page not found\n"),
    (503, b'{"code":14,"message":"etcdserver: no leader"}', StoreUnavailable, None, None),
])
async def test_an_error_answer_stands_for_the_error_etcd_named(
        status: int, body: bytes, error: type, code: int | None, message: str | None) -> None:
    async with scripted_server(lambda path, _: Answer(status=status, parts=[body])) as server:
        client = EtcdClient([server.url])
        with pytest.raises(error) as raised:
            await client.call("/v3/kv/txn", {}, idempotent=False)
        if code is not None:
            assert (raised.value.code, raised.value.message) == (code, message)
        await client.aclose()


async def test_a_stream_yields_each_lines_result_and_refuses_a_line_that_is_not_json() -> None:
    lines = [b'{"result":{"header":{"revision":"3"},"created":true}}\n',
             b'{"result":{"events":[{"kv":{"key":"L2s=","mod_revision":"4"}}]}}\n\n',
             b'{"result":{"header":{"revis',  # a line split across writes
             b'ion":"5"}}}\n',
             b"not json\n"]
    async with scripted_server(lambda path, body: Answer(parts=lines)) as server:
        client = EtcdClient([server.url])
        async with client.stream("/v3/watch", {"create_request": {"key": "L2s="}}) as messages:
            assert await messages.next() == {"header": {"revision": "3"}, "created": True}
            assert await messages.next() == {"events": [{"kv": {"key": "L2s=", "mod_revision": "4"}}]}
            assert await messages.next() == {"header": {"revision": "5"}}
            with pytest.raises(StoreError, match="a stream line is not JSON"):
                await messages.next()
        assert server.requests == [("/v3/watch", b'{"create_request":{"key":"L2s="}}')]
        await client.aclose()


async def test_an_error_line_in_a_stream_stands_for_the_error_it_names() -> None:
    line = b'{"error":{"grpc_code":9,"http_code":400,"message":"etcdserver: some refusal","http_status":"Bad Request"}}\n'
    async with scripted_server(lambda path, body: Answer(parts=[line])) as server:
        client = EtcdClient([server.url])
        async with client.stream("/v3/watch", {}) as messages:
            with pytest.raises(EtcdRequestError) as raised:
                await messages.next()
        assert (raised.value.code, raised.value.message) == (9, "etcdserver: some refusal")
        await client.aclose()
