"""A GET over HTTP/2 (what kubectl and client-go send) does only what the same GET over HTTP/1.1 does, counted.

Over the server's own HTTP/2 layer in process (`tests.support.wire2`), once the caches are warm:
- a GET of a cached object makes at most `MAX_CALLS` Python calls (the fewest over `SEEDS` scheduling
  orders under pytest, plus 4%): a change that adds work to every HTTP/2 request fails here;
- it encodes nothing: the object's bytes come from its encode cache, as over HTTP/1.1;
- a new connection's request whose header block another connection sent over an equal table is not
  decoded again (kubectl's every command is a new connection);
- the GETs of `tests.support.cached_gets.CASES` (JSON, protobuf, Table, a 404, a 403, the admin's) answer
  over HTTP/2 what they answer over HTTP/1.1: the status, the headers in order (but Date, Audit-Id and
  Server, which names the protocol) and the body, byte for byte, cold and warm.
The HTTP/1.1 counts are `test_cached_get_fast_path.py`'s; the frame layer's rules `test_http2_protocol.py`'s.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import trio

from api.serving import http2_request
from tests.support.cached_gets import CASES, CLUSTER_ROLE, PROTOBUF, ROLE, encodes_counted, get_request, start_cached_gets
from tests.support.callcount import count_calls
from tests.support.wire import open_wire, parse_answer
from tests.support.wire2 import open_wire2

#: Python calls of one warm GET over HTTP/2 (the request's HEADERS frame read to the answer's frames
#: written), by whom and of what: the fewest over `SEEDS` orders under pytest, plus 4%. Measured at
#: 2de0fba's code: 433-434 (HTTP/1.1's: 404-405, the same GETs); 414-415 once the answer's header block
#: was encoded without a call per field (stop 57); 377-378 once each stream's app was given its request by
#: `api.serving.app_exchange` rather than Hypercorn's `HTTPStream` and its channel (stop 61; HTTP/1.1's
#: 368-369), 376-377 once an answer's fields were checked and encoded in one pass. What is left above
#: HTTP/1.1's is mostly this wire's own framing (the test client's, counted with the server's: about 6 calls
#: more than `tests.support.wire`'s).
MAX_CALLS = {
    ("alice-token", CLUSTER_ROLE): 392,
    ("alice-token", ROLE): 392,
    ("root-token", CLUSTER_ROLE): 392,
}
SEEDS = range(8)
WARM = 5
#: Headers that differ between two answers of the same GET: its time, its audit ID, and Hypercorn's
#: Server header, which names the protocol (hypercorn-h11, hypercorn-h2).
_UNCOMPARED = ("date", "audit-id", "server")


def _comparable(answer: tuple[int, list[tuple[str, str]], bytes]) -> tuple[int, list[tuple[str, str]], bytes]:
    status, headers, body = answer
    return status, [(n, v) for n, v in headers if n not in _UNCOMPARED], body


@pytest.mark.parametrize(("token", "path"), list(MAX_CALLS))
async def test_an_http2_get_of_a_cached_object_makes_at_most_its_measured_python_calls(
        tmp_path: Path, token: str, path: str) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        async with open_wire2(srv.plane.app) as wire:
            for _ in range(WARM):
                assert wire.answer(await wire.exchange(wire.get_frames(path, token)))[0] == 200
            counts = []
            for seed in SEEDS:
                frames = wire.get_frames(path, token)  # the client's encoding is not the server's work
                counts.append(await count_calls(lambda: wire.exchange(frames), seed=seed))
                assert wire.answer(counts[-1].result)[0] == 200
        fewest = min(c.calls for c in counts)
        assert fewest <= MAX_CALLS[(token, path)], [c.calls for c in counts]
        nursery.cancel_scope.cancel()


async def test_an_http2_get_of_a_cached_object_encodes_nothing(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    encodes = encodes_counted(monkeypatch)
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        async with open_wire2(srv.plane.app) as wire:
            for accept in ("application/json", PROTOBUF):
                assert wire.answer(await wire.exchange(wire.get_frames(CLUSTER_ROLE, "alice-token", accept)))[0] == 200
                encodes.clear()
                for _ in range(3):
                    frames = wire.get_frames(CLUSTER_ROLE, "alice-token", accept)
                    assert wire.answer(await wire.exchange(frames))[0] == 200
                assert encodes == [], accept
        nursery.cancel_scope.cancel()


async def test_a_new_connections_request_another_connection_sent_is_not_decoded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    parse = http2_request.parse_request

    def counted(fields: list[tuple[bytes, bytes]]) -> Any:
        parsed.extend(value for name, value in fields if name == b":path")
        return parse(fields)

    monkeypatch.setattr(http2_request, "parse_request", counted)
    path = f"/api/v1/namespaces/fresh-{uuid.uuid4().hex}"  # a path no earlier test of this process sent
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        for _ in range(3):
            async with open_wire2(srv.plane.app) as wire:
                for _ in range(3):  # the first block adds its fields to the table; the others index them
                    assert wire.answer(await wire.exchange(wire.get_frames(path, "root-token")))[0] == 404
        nursery.cancel_scope.cancel()
    assert parsed == [path.encode()] * 4  # each connection's first block, and the first connection's second


async def test_the_same_gets_answer_the_same_over_http2_as_over_http1(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        srv = await start_cached_gets(nursery, tmp_path)
        async with open_wire(srv.plane.app) as h1, open_wire2(srv.plane.app) as h2:
            for round_ in range(WARM):  # the first round cold, the later ones through the warm caches
                for name, path, token, accept in CASES:
                    over_h1 = parse_answer(await h1.exchange(get_request(path, token, accept)))
                    over_h2 = h2.answer(await h2.exchange(h2.get_frames(path, token, accept)))
                    assert _comparable(over_h2) == _comparable(over_h1), (round_, name)
                    assert over_h2[0] in (200, 403, 404) and over_h2[2], name
        nursery.cancel_scope.cancel()
